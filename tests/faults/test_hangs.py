"""What hangs is bounded by a deadline: a seat that ignores SIGTERM (the `hang` stand-in, here
for an hour) is killed by the run step's TERM-then-KILL stop, and a verifier that never returns
(`sleep 3600` as tests/test.sh, verifier timeout 5 s, from a ConfigMap dataset) is stopped by
the verifier deadline. Both trials end and their pods are gone.

Prints: hang seat: <phase> in <s>s; hanging verifier: <phase>/<reason> in <s>s; pods left 0.
"""

from __future__ import annotations

import time
from pathlib import Path

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.sweep import DEFAULT_TASK_IMAGE_REGISTRY
from buzz_operator.dataset import builtin_dataset_path, load_dataset
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner

from .conftest import ROOT, list_trials, operator_args, settled, wait_for

HANG_FOR_S = "3600"
VERIFIER_TIMEOUT_S = 5


def hang_condition(body: dict) -> None:  # type: ignore[type-arg]
    """Every seat on standin/hang, which ignores SIGTERM for HANG_FOR_S seconds."""
    spec = body["spec"]
    manifest = spec["condition"]["inline"]
    manifest["condition"] = "standin-hang"
    for entry in manifest["roster"]:
        entry["endpoint"] = "standin/hang"
    manifest["prices"] = {"standin/hang": next(iter(manifest["prices"].values()))}
    spec["endpoints"]["config"] = {"standin/hang": {"provider": "standin", "api_key_env": "STANDIN_API_KEY",
                                                    "env": {"BUZZ_STANDIN_HANG_SECONDS": HANG_FOR_S}}}


def hanging_verifier_task() -> dict[str, str]:
    """hello-file with a verifier that never returns, as ConfigMap data (paths with '__')."""
    source = ROOT / "tasks" / "hello-file"
    hello = next(t for t in load_dataset(builtin_dataset_path(), ["hello-file"], []) if t.name == "hello-file")
    image = hello.image_ref(DEFAULT_TASK_IMAGE_REGISTRY, "builtin")
    toml = (source / "task.toml").read_text().replace("[verifier]\ntimeout_sec = 30.0",
                                                     f"[verifier]\ntimeout_sec = {VERIFIER_TIMEOUT_S}.0")
    assert f"timeout_sec = {VERIFIER_TIMEOUT_S}.0" in toml
    toml = toml.replace("[environment]\n", f'[environment]\ndocker_image = "{image}"\n')
    return {
        "hang-verifier__task.toml": toml,
        "hang-verifier__instruction.md": (source / "instruction.md").read_text(),
        "hang-verifier__environment__Dockerfile": (source / "environment" / "Dockerfile").read_text(),
        "hang-verifier__tests__test.sh": "#!/usr/bin/env bash\nsleep 3600\n",
    }


async def test_hanging_seat_and_verifier_are_bounded(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    await kube.core.create_namespaced_config_map(namespace, {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "hang-tasks"}, "data": hanging_verifier_task()})
    seat = make_sweep("hangseat", store_url=f"file://{store}", tasks=["user-mention"], cpuRequestFraction=0.2,
                      retry={"maxRetries": 0})
    hang_condition(seat)
    verifier = make_sweep("hangverifier", store_url=f"file://{store}", tasks=["hang-verifier"],
                          cpuRequestFraction=0.2, retry={"maxRetries": 0})
    verifier["spec"]["dataset"] = {"configMapRef": {"name": "hang-tasks"}}
    started = time.monotonic()
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        for body in (seat, verifier):
            await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)

        async def all_settled() -> list[dict] | None:  # type: ignore[type-arg]
            found = await list_trials(kube, namespace)
            return found if len(found) == 2 and all(settled(t) for t in found) else None

        trials = {t["spec"]["sweepName"]: t for t in await wait_for(all_settled, 480, "both trials settled")}
    assert runner.exception is None, runner.output[-3000:]
    elapsed = time.monotonic() - started

    def seconds(status: dict, start: str, end: str) -> float:  # type: ignore[type-arg]
        from datetime import datetime

        times = status.get("phaseTimes") or {}
        parse = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))  # noqa: E731
        return (parse(times[end]) - parse(times[start])).total_seconds()

    hs, hv = trials["hangseat"]["status"], trials["hangverifier"]["status"]
    pods = await kube.core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/component=trial-pod")
    left = [p.metadata.name for p in pods.items if not p.metadata.deletion_timestamp]
    print(f"\nhang seat (ignores SIGTERM {HANG_FOR_S}s): {hs.get('phase')} reward {hs.get('reward')}, "
          f"Running->Collecting {seconds(hs, 'running', 'collecting'):.0f}s; hanging verifier (deadline "
          f"{VERIFIER_TIMEOUT_S}s): {hv.get('phase')}/{hv.get('reason')} reward {hv.get('reward')}, "
          f"Grading->Bundling {seconds(hv, 'grading', 'bundling'):.0f}s; pods left {len(left)} ({elapsed:.0f}s)")
    # Both settled inside the wait's net (480 s), which is shorter than the seat's hang (3600 s) and
    # the verifier's sleep: only the KILL and the verifier deadline can have ended them. Their
    # figures are printed above, not asserted.
    assert hs["phase"] in ("Succeeded", "Failed") and "collecting" in (hs.get("phaseTimes") or {}), hs
    assert hs.get("reward") == 1.0, hs  # the seat solved the task before it hung; the kill cost nothing
    assert hv["phase"] == "Failed" and hv.get("reason") == "VerifierTimeout" and hv.get("reward") is None, hv
    assert left == []
