"""`make demo`: the embedded default stack running the sample sweeps end to end.

hack/demo.sh brings up the cluster, Postgres and the images; this module does the rest, as a
kind user would: the CRDs, the dev relay and its Postgres behind Services in a `buzz-demo`
namespace, the scripted model endpoint behind a Service, the stand-in and scripted conditions as
ConfigMaps, the operator, the sample sweeps (manifests/sweeps/demo.yaml), a watch to the end, the
results table. hack/demo.sh then prints each sweep's summary from storage and ends with the
comparison of the two stand-in conditions that differ (`buzzctl compare demo-oracle
demo-naive`, COMPARED here, docs/statistics.md).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import asyncpg
import yaml
from kubernetes_asyncio.client.exceptions import ApiException
from rich.console import Console
from rich.table import Table

from buzz_operator.api.common import GROUP
from buzz_operator.dev import deploy_model, deploy_relay
from buzz_operator.dev.localstack import with_database
from buzz_operator.kube.client import Kube, connect
from buzz_operator.kube.objects import create_secret, read_secret, secret_body
from buzz_operator.relay.nostr import Keypair

ROOT = Path(__file__).resolve().parents[3]
NAMESPACE = "buzz-demo"
RELAY_URL = "ws://localhost:3600"
RELAY_DB = "buzz_demo_relay"
SWEEPS = ("demo-oracle", "demo-toplevel", "demo-naive", "demo-scripted-oracle", "demo-scripted-naive")
# the comparison the demo ends with: the oracle solves every task, the naive team fails each of
# Block's five newest on the mistake it exists to catch — a difference with its interval and the
# verifier dimensions that fell
COMPARED = ("demo-oracle", "demo-naive")
CONDITIONS = {"standin-oracle": "standin-oracle.yaml", "standin-toplevel": "standin-toplevel.yaml",
              "standin-naive": "standin-naive.yaml", "scripted-oracle": "scripted-oracle.yaml",
              "scripted-naive": "scripted-naive.yaml"}
console = Console(width=140)


def kubectl(*args: str, stdin: str | None = None, check: bool = True) -> str:
    done = subprocess.run(["kubectl", *args], input=stdin, capture_output=True, text=True)
    if check and done.returncode:
        raise SystemExit(f"kubectl {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


async def ensure_database(dsn: str, database: str = RELAY_DB) -> None:
    conn = await asyncpg.connect(dsn)
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_database WHERE datname = $1", database):
            await conn.execute(f'CREATE DATABASE "{database}"')
    finally:
        await conn.close()


async def postgres_service(kube: Kube, host_ip: str, port: int, namespace: str = NAMESPACE) -> str:
    """Postgres runs on the host; a selector-less Service with hand-made Endpoints puts it behind a
    ClusterIP, so the relay and the operator reach it the way they would an in-cluster database."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "buzz-dev-postgres"},
               "spec": {"ports": [{"name": "postgres", "port": 5432, "targetPort": port}]}}
    endpoints = {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "buzz-dev-postgres"},
                 "subsets": [{"addresses": [{"ip": host_ip}], "ports": [{"name": "postgres", "port": port}]}]}
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                   "items": [service, endpoints]}))
    svc = await kube.core.read_namespaced_service("buzz-dev-postgres", namespace)
    cluster_ip = str(svc.spec.cluster_ip)
    # kube-proxy programs a new ClusterIP a moment after the Endpoints appear; a relay started
    # before that fails its first connection and waits out a crash-loop back-off
    for _ in range(120):
        try:
            _, writer = await asyncio.wait_for(asyncio.open_connection(cluster_ip, 5432), 2)
            writer.close()
            return cluster_ip
        except OSError:
            await asyncio.sleep(0.5)
    raise SystemExit(f"Postgres is not reachable through its Service {cluster_ip}:5432")


def condition_config_map(name: str, manifest_file: str) -> dict[str, Any]:
    manifest_path = ROOT / "manifests" / manifest_file
    manifest = yaml.safe_load(manifest_path.read_text())
    data = {"manifest.yaml": manifest_path.read_text()}
    for entry in manifest["roster"]:
        prompt = entry["prompt"]["path"]
        data[prompt.replace("/", "__")] = (ROOT / "manifests" / prompt).read_text()
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


async def owner_key(kube: Kube, dsn: str, namespace: str = NAMESPACE) -> Keypair:
    """Kept across demo runs, so the seeded directory's identities stay the same (docs/tenant.md#directory)."""
    try:
        stored = await read_secret(kube, namespace, "buzz-dev-relay", key="owner-key")
        return Keypair.from_secret(stored["owner-key"])
    except ApiException as exc:
        if exc.status != 404:
            raise
    owner = Keypair.generate()
    await create_secret(kube, namespace, secret_body(
        "buzz-dev-relay", {"owner-key": owner.secret_hex, "postgres-dsn": dsn}, labels={}, owner=None))
    return owner


async def set_up(pg_dsn: str, host_ip: str, namespace: str = NAMESPACE, relay_db: str = RELAY_DB) -> None:
    """Everything the demo sweeps refer to, in `namespace` (the e2e test uses its own)."""
    kubectl("apply", "-f", str(ROOT / "crds"))
    for crd in ("buzzsweeps", "buzztrials"):
        kubectl("wait", "--for=condition=Established", f"crd/{crd}.{GROUP}", "--timeout=60s")
    if f"namespace/{namespace}" not in kubectl("get", "namespaces", "-o", "name").split():
        kubectl("create", "namespace", namespace)
    await ensure_database(pg_dsn, relay_db)
    async with await connect() as kube:
        cluster_ip = await postgres_service(kube, host_ip, urlsplit(pg_dsn).port or 5432, namespace)
        relay_dsn = with_database(pg_dsn, relay_db, host=cluster_ip, port=5432)
        owner = await owner_key(kube, relay_dsn, namespace)
        relay = await deploy_relay.deploy(kube, namespace, name="buzz-dev-relay", relay_url=RELAY_URL,
                                          owner_pubkey=owner.pubkey_hex, relay_secret_hex=secrets.token_hex(32),
                                          database_url=relay_dsn)
        console.print(f"dev relay {RELAY_URL} at {relay.target}, Postgres at {cluster_ip}:5432")
        await create_secret(kube, namespace, secret_body(
            "standin-api-keys", {"STANDIN_API_KEY": f"standin-{secrets.token_hex(16)}"}, labels={}, owner=None))
        model = await deploy_model.deploy(kube, namespace)
        console.print(f"scripted model endpoint at {model.base_url}")
        # the scripted model checks no key, but the seat carries one exactly as with a real provider
        await create_secret(kube, namespace, secret_body(
            "scripted-api-keys", {"OPENAI_COMPAT_API_KEY": f"scripted-{secrets.token_hex(16)}"}, labels={}, owner=None))
    items = [condition_config_map(name, file) for name, file in CONDITIONS.items()]
    items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "standin-endpoints"},
                  "data": {"standin.json": (ROOT / "manifests/endpoints/standin.json").read_text()}})
    items.append(scripted_endpoints(model.base_url))
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List",
                                                                   "items": items}))


def scripted_endpoints(base_url: str) -> dict[str, Any]:
    """manifests/endpoints/scripted.json as a ConfigMap, its base URLs naming the model Service by
    ClusterIP: there is no cluster DNS to resolve `buzz-scripted-model`."""
    config = json.loads((ROOT / "manifests/endpoints/scripted.json").read_text())
    pointed = deploy_model.point_endpoints(config, base_url)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "scripted-endpoints"},
            "data": {"scripted.json": json.dumps(pointed, indent=2) + "\n"}}


def demo_sweeps(storage_url: str | None = None) -> list[dict[str, Any]]:
    """manifests/sweeps/demo.yaml, with its storage moved to `storage_url` when given."""
    bodies = [b for b in yaml.safe_load_all((ROOT / "manifests/sweeps/demo.yaml").read_text()) if b]
    if storage_url is not None:
        for body in bodies:
            body["spec"]["storage"] = {"url": storage_url}
    return bodies


def start_operator(log_path: Path, namespace: str = NAMESPACE) -> subprocess.Popen[bytes]:
    log_path.parent.mkdir(parents=True, exist_ok=True)
    exe = Path(sys.executable).with_name("buzz-operator")
    log = log_path.open("ab")
    return subprocess.Popen([str(exe), "-n", namespace, "--liveness", ""], stdout=log, stderr=log,
                            stdin=subprocess.DEVNULL)


def sweeps() -> list[dict[str, Any]]:
    out = json.loads(kubectl("-n", NAMESPACE, "get", f"buzzsweeps.{GROUP}", "-o", "json"))
    return [s for s in out["items"] if s["metadata"]["name"] in SWEEPS]


def complete(sweep: dict[str, Any]) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in sweep.get("status", {}).get("conditions", []))


def progress_line(items: list[dict[str, Any]]) -> str:
    parts = []
    for s in items:
        st = s.get("status", {})
        parts.append(f"{s['metadata']['name']}: {st.get('succeeded', 0) + st.get('failed', 0) + st.get('broken', 0)}"
                     f"/{st.get('total', '?')} done, {st.get('running', 0)} running")
    return "; ".join(parts)


def trial_outcomes(sweep: str) -> tuple[dict[str, int], dict[str, int]]:
    """Outcome counts, and `task: failed dimensions` counts for trials scored below 1."""
    out = json.loads(kubectl("-n", NAMESPACE, "get", f"buzztrials.{GROUP}", "-l", f"{GROUP}/sweep={sweep}",
                             "-o", "json"))
    outcomes: dict[str, int] = {}
    misses: dict[str, int] = {}
    for trial in out["items"]:
        status = trial.get("status", {})
        outcome = status.get("outcome") or "unfinished"
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if outcome == "ok" and status.get("reward") is not None and status["reward"] < 1:
            failed = sorted(k for k, v in (status.get("rewards") or {}).items() if k != "reward" and v < 1)
            key = f"{trial['spec']['task']}: {', '.join(failed) or 'reward'}"
            misses[key] = misses.get(key, 0) + 1
    return outcomes, misses


def results_table(items: list[dict[str, Any]]) -> Table:
    table = Table(title="buzz-operator demo — results per condition")
    for column in ("condition", "hash", "trials", "pass rate", "pass@k", "$ floor", "$ ceiling", "flags",
                   "failed (task: dimensions)"):
        table.add_column(column)
    for s in items:
        st = s.get("status", {})
        outcomes, misses = trial_outcomes(s["metadata"]["name"])
        flags = ", ".join(f"{k}×{v}" for k, v in sorted(outcomes.items()) if k != "ok") or "-"
        missed = "\n".join(f"{k} ×{v}" for k, v in sorted(misses.items())) or "-"
        mean = st.get("meanReward")
        cost = st.get("costUSD", {})
        table.add_row(
            (st.get("conditionShort") or "?").split("@")[0], (st.get("conditionHash") or "")[:8],
            str(st.get("total", 0)), "-" if mean is None else f"{mean:.2f}",
            " ".join(f"@{k}={v:.2f}" for k, v in sorted(st.get("passAtK", {}).items(), key=lambda kv: int(kv[0]))),
            f"{cost.get('floor', 0):.4f}", f"{cost.get('ceiling', 0):.4f}", flags, missed,
        )
    return table


DEMO_STORE = Path("/var/lib/buzz-operator/bundles")  # manifests/sweeps/demo.yaml spec.storage.url


def keep_earlier_bundles(store: Path, names: Sequence[str]) -> None:
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    for name in names:
        if (store / name).is_dir():
            (store / "earlier").mkdir(parents=True, exist_ok=True)
            (store / name).rename(store / "earlier" / f"{name}-{stamp}")
            console.print(f"earlier {name} bundles kept in {store / 'earlier' / f'{name}-{stamp}'}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="demo", description=__doc__)
    parser.add_argument("--pg-dsn", required=True)
    parser.add_argument("--host-ip", required=True)
    parser.add_argument("--log", type=Path, default=Path("/var/tmp/buzz-operator/logs/operator-demo.log"))
    parser.add_argument("--timeout", type=float, default=1200.0)
    args = parser.parse_args(argv)

    started = time.monotonic()
    asyncio.run(set_up(args.pg_dsn, args.host_ip))
    operator = start_operator(args.log)
    try:
        # a fresh run each time: earlier demo sweeps go, and their bundles move aside (kept)
        # — a sweep re-created under the same name would otherwise resume into them
        kubectl("-n", NAMESPACE, "delete", f"buzzsweeps.{GROUP}", *SWEEPS, "--ignore-not-found",
                "--wait=true", "--timeout=180s")
        keep_earlier_bundles(DEMO_STORE, SWEEPS)
        kubectl("-n", NAMESPACE, "apply", "-f", str(ROOT / "manifests/sweeps/demo.yaml"))
        console.print(f"sweeps applied; operator log: {args.log}")
        deadline = time.monotonic() + args.timeout
        last = ""
        while True:
            items = sweeps()
            line = progress_line(items)
            if line != last:
                console.print(f"[{time.monotonic() - started:6.1f}s] {line}")
                last = line
            if len(items) == len(SWEEPS) and all(complete(s) for s in items):
                break
            if operator.poll() is not None:
                raise SystemExit(f"the operator exited ({operator.returncode}); see {args.log}")
            if time.monotonic() > deadline:
                raise SystemExit(f"the sweeps did not finish in {args.timeout:.0f}s; see {args.log}")
            time.sleep(2)
        console.print(results_table(items))
        for s in items:
            summary = s.get("status", {}).get("summaryURL")
            console.print(f"{s['metadata']['name']}: bundles under {s['spec']['storage']['url']}/"
                          f"{s['metadata']['name']}/" + (f" (summary {summary})" if summary else ""))
        console.print(f"demo finished in {time.monotonic() - started:.0f}s")
    finally:
        operator.terminate()
        try:
            operator.wait(timeout=30)
        except subprocess.TimeoutExpired:
            operator.kill()


if __name__ == "__main__":
    os.environ.setdefault("KUBECONFIG", "/var/tmp/buzz-operator/pki/kubeconfig")
    main()
