"""Fixtures for the fault tests: the e2e tier's (cluster, a namespace and relay database per
test, the dev relay in the cluster, the sweep's Secrets), plus private Postgres and S3
instances a test may stop and start without touching the shared ones other sessions use."""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support import cluster as cluster_fixtures
from tests.support.corpus import load_corpus
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


_e2e = cluster_fixtures
corpus = load_corpus()

# the shared cluster fixtures, as the e2e tier uses them (pytest finds fixtures among a conftest's names)
kubeconfig = _e2e.kubeconfig
pg_dsn = _e2e.pg_dsn
crds = _e2e.crds
kube = _e2e.kube
namespace = _e2e.namespace
relay_db = _e2e.relay_db
cluster_relay = _e2e.cluster_relay
sweep_secrets = _e2e.sweep_secrets
local_registry = _e2e.local_registry
make_sweep = _e2e.make_sweep
sweep_body = _e2e.sweep_body
host_ip = _e2e.host_ip
with_database = _e2e.with_database
ClusterRelay = _e2e.ClusterRelay
RELAY_URL = _e2e.RELAY_URL


@dataclass
class PrivateService:
    """One of hack/'s services started under its own BUZZ_RUN and port: stop/start touch it only."""

    script: str
    run: Path
    port_env: str
    port: int

    def _env(self) -> dict[str, str]:
        return {**os.environ, "BUZZ_RUN": str(self.run), self.port_env: str(self.port)}

    def hack(self, *args: str) -> str:
        return subprocess.run(["bash", str(ROOT / "hack" / self.script), *args], check=True, capture_output=True,
                              text=True, env=self._env(), stdin=subprocess.DEVNULL).stdout.strip()


@pytest.fixture
def private_postgres() -> Iterator[PrivateService]:
    """A PostgreSQL cluster of our own (hack/postgres.sh under a private BUZZ_RUN and port)."""
    service = PrivateService("postgres.sh", Path(f"/var/tmp/buzz-faults-{uuid.uuid4().hex[:8]}"), "BUZZ_PG_PORT",
                             free_port())
    service.hack("up")
    try:
        yield service
    finally:
        subprocess.run(["bash", str(ROOT / "hack" / "postgres.sh"), "down"], env=service._env(), capture_output=True,
                       stdin=subprocess.DEVNULL)
        shutil.rmtree(service.run, ignore_errors=True)


@pytest.fixture
def private_s3() -> Iterator[PrivateService]:
    """An S3 server of our own (hack/s3.sh under a private BUZZ_RUN and port)."""
    service = PrivateService("s3.sh", Path(f"/var/tmp/buzz-faults-{uuid.uuid4().hex[:8]}"), "BUZZ_S3_PORT", free_port())
    service.hack("up")
    try:
        yield service
    finally:
        subprocess.run(["bash", str(ROOT / "hack" / "s3.sh"), "down"], env=service._env(), capture_output=True,
                       stdin=subprocess.DEVNULL)
        shutil.rmtree(service.run, ignore_errors=True)


TERMINAL = ("Succeeded", "Failed")


def operator_args(namespace: str) -> list[str]:
    """kopf's own CLI arguments for one in-process operator scoped to the test's namespace."""
    return ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]


async def list_trials(kube, namespace: str) -> list[dict]:  # type: ignore[no-untyped-def, type-arg]
    from buzz_operator.api.common import GROUP, VERSION

    listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials")
    return list(listed["items"])


def settled(trial: dict) -> bool:  # type: ignore[type-arg]
    status = trial.get("status") or {}
    return status.get("phase") in TERMINAL and any(c["type"] == "Released" for c in status.get("conditions", []))


async def wait_for(predicate, timeout_s: float, what: str, poll: float = 1.0):  # type: ignore[no-untyped-def]
    """Await `predicate()` (a coroutine function) until it returns something truthy."""
    import asyncio
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if value := await predicate():
            return value
        await asyncio.sleep(poll)
    raise AssertionError(f"timed out after {timeout_s:.0f}s waiting for {what}")


class TrialPodWatch:
    """Every trial pod of a namespace seen while it runs, by name with each uid it had: a name seen
    with two uids is a pod made twice (polled every half second, so every pod that lives longer)."""

    def __init__(self, kube, namespace: str) -> None:  # type: ignore[no-untyped-def]
        import asyncio
        from collections import defaultdict

        self.kube, self.namespace = kube, namespace
        self.seen: dict[str, set[str]] = defaultdict(set)
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def _watch(self) -> None:
        import asyncio

        while not self._stop.is_set():
            listed = await self.kube.core.list_namespaced_pod(
                self.namespace, label_selector="app.kubernetes.io/component=trial-pod")
            for pod in listed.items:
                self.seen[pod.metadata.name].add(pod.metadata.uid)
            await asyncio.sleep(0.5)

    def start(self) -> None:
        import asyncio

        self._task = asyncio.create_task(self._watch())

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    @property
    def duplicates(self) -> int:
        return sum(len(uids) - 1 for uids in self.seen.values())

    def twice(self) -> dict[str, set[str]]:
        return {name: uids for name, uids in self.seen.items() if len(uids) > 1}


@dataclass(frozen=True)
class Tally:
    """A settled sweep's trials counted: their names, how many ended, scored 1.0, and each one's tries."""

    names: list[str]
    terminal: int
    scored: int
    tries: dict[str, int]


def tally(trials: list[dict]) -> Tally:  # type: ignore[type-arg]
    return Tally(
        names=[t["metadata"]["name"] for t in trials],
        terminal=sum(t["status"]["phase"] in TERMINAL for t in trials),
        scored=sum(t["status"].get("reward") == 1.0 for t in trials),
        tries={t["metadata"]["name"]: t["status"].get("retries", 0) + 1 for t in trials},
    )


class OperatorProcess:
    """The `buzz-operator` console script as a child process we can SIGKILL, logging to
    ``<workdir>/<name>.log`` (each start marked `--- start N`), with the short sweep and janitor
    intervals the fault tests run at; ``args`` and ``env`` are added to its own."""

    def __init__(self, namespace: str, workdir: Path, *, name: str = "operator", args: tuple[str, ...] = (),
                 env: dict[str, str] | None = None) -> None:
        self.namespace, self.workdir, self.name = namespace, workdir, name
        self.args, self.env = args, env or {}
        self.log_path = workdir / f"{name}.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        import sys

        script = os.path.join(os.path.dirname(sys.executable), "buzz-operator")
        (self.workdir / self.name).mkdir(exist_ok=True)
        env = {**os.environ, "BUZZ_WORKDIR": str(self.workdir / self.name), "BUZZ_SWEEP_INTERVAL_S": "2",
               "BUZZ_JANITOR_INTERVAL_S": "10", **self.env}
        with self.log_path.open("a") as log:
            log.write(f"--- start {self.starts + 1}\n")
        with self.log_path.open("ab") as log:
            self.proc = subprocess.Popen([script, "-n", self.namespace, "--liveness", "", *self.args], stdout=log,
                                         stderr=subprocess.STDOUT, env=env)
        self.starts += 1

    def kill(self) -> None:
        import signal

        assert self.proc is not None and self.proc.poll() is None, f"{self.name} died on its own"
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> int:
        """SIGTERM, and its exit code (0 for a clean stop)."""
        import signal

        assert self.proc is not None
        if self.proc.poll() is not None:
            return int(self.proc.returncode)
        self.proc.send_signal(signal.SIGTERM)
        return int(self.proc.wait(timeout=60))


LEASE = "buzz-operator"  # the Lease the replicas of the leader-election tests share


def replica(name: str, namespace: str, workdir: Path) -> OperatorProcess:
    """`buzz-operator --leader-election`, named ``name`` in the Lease."""
    return OperatorProcess(namespace, workdir, name=name, env={"POD_NAME": name},
                           args=("--leader-election", "--lease-name", LEASE, "--lease-namespace", namespace))


async def lease_holder(kube, namespace: str) -> str | None:  # type: ignore[no-untyped-def]
    """Who holds the replicas' Lease now (None when nobody does)."""
    from buzz_operator.kube import leases

    lease = await leases.read_lease(kube, namespace, LEASE, timeout_s=5)
    return ((lease or {}).get("spec") or {}).get("holderIdentity")
