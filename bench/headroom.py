"""Headroom: one sweep of memory-hungry tasks run at 1× and at 3× task.toml's limits on the local
cluster (docs/resources.md#headroom), and what the results say each did — the pass rate, the
infra rate, the pressure rate and the retried rate, each with its 95 % interval.

The dataset is tests/support/hungry_tasks.py's: `oom-container` (the container goes down with a
command that wants 640 MiB of the task's 384: OOMKilled, infra, retried), `oom-process` (only
the command dies: scored 0 under ResourcePressure) and `calm` (the control). Both sweeps run
with the stand-in oracle at the same time, from one operator, so they share the machine's load.
Every figure is information: nothing here is judged, the point is what differed.

    .venv/bin/python bench/headroom.py [--attempts 3] [--multiples 1 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube import client as kube_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
from cluster import kubectl, stage, sweep_body  # noqa: E402
from figures import INFO, Figure, record  # noqa: E402

from tests.support.hungry_tasks import COMMANDS, hungry_tasks  # noqa: E402

RATES = ("infra_rate", "pressure_rate", "retried_rate")


def _results(name: str, namespace: str, store: Path) -> dict[str, Any]:
    shown = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "buzzctl"), "sweep", "results", name, "-n", namespace,
         "--store", f"file://{store}", "-o", "json"], capture_output=True, text=True, check=True)
    (row,) = json.loads(shown.stdout)["conditions"]
    return row


async def _settled(namespace: str, count: int, timeout_s: float) -> list[dict[str, Any]]:
    deadline, trials = time.monotonic() + timeout_s, []
    while time.monotonic() < deadline:
        trials = json.loads(kubectl("-n", namespace, "get", "buzztrials", "-o", "json").stdout)["items"]
        phases = [(t.get("status") or {}).get("phase") for t in trials]
        if len(trials) == count and all(p in ("Succeeded", "Failed") for p in phases):
            return trials
        await asyncio.sleep(2)
    raise TimeoutError(f"{len(trials)} trials, not all settled after {timeout_s:.0f} s")


def _interval(figure: dict[str, float] | None) -> str:
    return "-" if figure is None else f"{figure['estimate']:.2f} [{figure['low']:.2f}, {figure['high']:.2f}]"


async def run(args: argparse.Namespace, tmp: Path) -> dict[int, dict[str, Any]]:
    kube = await kube_client.connect()
    store = tmp / "store"
    log_path = Path(tempfile.gettempdir()) / "bench-headroom-operator.log"
    try:
        async with stage(kube, "bench-headroom") as where:
            namespace = where.namespace
            kubectl("-n", namespace, "create", "configmap", "hungry-tasks",
                    *(f"--from-literal={k}={v}" for k, v in hungry_tasks().items()))
            with log_path.open("wb") as log:
                operator = subprocess.Popen(  # noqa: ASYNC220 -- Popen only forks
                    [sys.executable, "-m", "kopf", "run", "--standalone", "-n", namespace, "-m",
                     "buzz_operator.handlers"], stdout=log, stderr=subprocess.STDOUT,
                    env={**os.environ, "PYTHONPATH": str(ROOT / "operator")})
            try:
                for multiple in args.multiples:
                    body = sweep_body(f"x{multiple}", store_url=f"file://{store}", tasks=sorted(COMMANDS),
                                      attempts=args.attempts, retry={"maxRetries": 1},
                                      resources={"limitMultiple": multiple}, parallelism=args.parallelism)
                    body["spec"]["dataset"] = {"configMapRef": {"name": "hungry-tasks"}}
                    await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
                started = time.monotonic()
                await _settled(namespace, len(args.multiples) * len(COMMANDS) * args.attempts, args.timeout)
                print(f"both sweeps settled in {time.monotonic() - started:.0f} s", flush=True)
            finally:
                operator.terminate()
                operator.wait(timeout=30)
            return {m: _results(f"x{m}", namespace, store) for m in args.multiples}
    finally:
        await kube.close()
        print(f"operator log: {log_path}")


def report(rows: dict[int, dict[str, Any]]) -> None:
    for multiple, row in rows.items():
        stats, box = row["statistics"], row["statistics"]["box"]
        print(f"{multiple}×: pass {_interval(stats['pass_rate'])} over {stats['scored']} scored; "
              + "; ".join(f"{name} {_interval(box[name])}" for name in RATES)
              + f"; {box['trials']} trials, {box['failed_tries']} failed tries", flush=True)
        if stats["pass_rate"] is not None:
            record(Figure(f"headroom {multiple}×: pass rate", "share", [stats["pass_rate"]["estimate"]], INFO,
                          decimals=2, note=_interval(stats["pass_rate"])))
        for name in RATES:
            if box[name] is not None:
                record(Figure(f"headroom {multiple}×: {name.replace('_', ' ')}", "share", [box[name]["estimate"]],
                              INFO, decimals=2, note=_interval(box[name])))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--attempts", type=int, default=3)
    parser.add_argument("--multiples", type=int, nargs="+", default=[1, 3])
    parser.add_argument("--parallelism", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=1500.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-headroom-") as tmp:
        report(asyncio.run(run(args, Path(tmp))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
