"""Fixtures of the realstack tier: Block's real agent stack and relay, run through the operator on the local cluster.

The binaries are the user's: the project never builds Block's code. Two variables say where:
- BUZZ_STACK_DIR: a folder of Linux binaries for the agents (Block's `sprig` multicall binary
  and its links, or separate buzz-acp, buzz-agent, buzz-dev-mcp, buzz); it becomes a folder
  stack image through `hack/images.sh stack-image` (docs/stack.md);
- BUZZ_RELAY_BIN: Block's `buzz-relay` binary, run on the host with its own database in the
  test Postgres and a Redis (`redis-server` on PATH), behind a selector-less Service.
When either is unset every test here is skipped, and the skip reason says which.

The model is the project's scripted endpoint (buzz_operator.dev.model) on the host behind a
Service, so the real `buzz-agent` runs whole trials offline.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from buzz_operator.relay.nostr import Keypair

from tests.support.cluster import RELAY_URL, ROOT, host_ip, kubectl, with_database
from tests.support.ports import free_port as _free_port

STACK_DIR = os.environ.get("BUZZ_STACK_DIR", "")
RELAY_BIN = os.environ.get("BUZZ_RELAY_BIN", "")
MISSING = [name for name, value in (("BUZZ_STACK_DIR", STACK_DIR), ("BUZZ_RELAY_BIN", RELAY_BIN)) if not value]


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that take Block's relay need both variables; the rest need BUZZ_STACK_DIR."""
    for item in items:
        if "realstack" not in str(item.path):
            continue
        needs = ["BUZZ_STACK_DIR", "BUZZ_RELAY_BIN"] if "real_relay" in getattr(item, "fixturenames", ()) \
            else ["BUZZ_STACK_DIR"]
        unset = [name for name in needs if name in MISSING]
        if unset:
            item.add_marker(pytest.mark.skip(reason=(
                f"not run: {' and '.join(unset)} unset — this test runs Block's real "
                f"{'agents and relay' if len(needs) == 2 else 'agents'} from binaries you supply "
                "(tests/realstack/stack_fixtures.py, docs/real-stack.md)")))


def wait_port(port: int, what: str, proc: subprocess.Popen[bytes], log: Path, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited {proc.returncode}: {log.read_text()[-3000:]}")
        try:
            with socket.create_connection(("127.0.0.1", port), 1):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"{what} did not listen on {port}: {log.read_text()[-3000:]}")


def host_service(namespace: str, name: str, port: int, target_port: int) -> str:
    """A selector-less Service whose Endpoints are this host: a host process behind a ClusterIP."""
    ip = host_ip()
    items = [
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
         "spec": {"ports": [{"name": "main", "port": port, "targetPort": target_port}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": name},
         "subsets": [{"addresses": [{"ip": ip}], "ports": [{"name": "main", "port": target_port}]}]},
    ]
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
    cluster_ip = kubectl("-n", namespace, "get", "service", name, "-o", "jsonpath={.spec.clusterIP}").strip()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # kube-proxy programs the ClusterIP a moment later
        try:
            with socket.create_connection((cluster_ip, port), 1):
                return cluster_ip
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{name}: ClusterIP {cluster_ip}:{port} never reached {ip}:{target_port}")


def _spawn(argv: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    out = log.open("ab")
    return subprocess.Popen(argv, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@pytest.fixture(scope="session")
def stack_image(kubeconfig: str) -> str:
    """The folder stack image of BUZZ_STACK_DIR, built and imported by the project's script."""
    out = subprocess.run(["bash", str(ROOT / "hack" / "images.sh"), "stack-image", STACK_DIR], check=True,
                         capture_output=True, text=True).stdout.strip().splitlines()
    return out[-1]


@pytest.fixture
def redis(tmp_path: Path) -> Iterator[str]:
    exe = shutil.which("redis-server")
    if exe is None:
        raise AssertionError("redis-server is not on PATH: hack/deps.sh installs it (Block's relay needs Redis)")
    port = _free_port("0.0.0.0")
    log = tmp_path / "redis.log"
    proc = _spawn([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
                  dict(os.environ), log)
    wait_port(port, "redis-server", proc, log)
    yield f"redis://127.0.0.1:{port}"
    _stop(proc)


@dataclass(frozen=True)
class RealRelay:
    owner: Keypair
    relay_dsn: str  # as the host sees the relay's database
    log: Path
    port: int


@pytest.fixture
def real_relay(namespace: str, relay_db: str, pg_dsn: str, redis: str, tmp_path: Path) -> Iterator[RealRelay]:
    """Block's buzz-relay on the host, canonical URL ws://localhost:3600, behind Service `relay`."""
    owner = Keypair.generate()
    port, health, metrics = _free_port("0.0.0.0"), _free_port("0.0.0.0"), _free_port("0.0.0.0")
    dsn = with_database(pg_dsn, relay_db)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "DATABASE_URL": dsn,
        "REDIS_URL": redis,
        "RELAY_URL": RELAY_URL,
        "BUZZ_BIND_ADDR": f"0.0.0.0:{port}",
        "BUZZ_HEALTH_PORT": str(health),
        "BUZZ_METRICS_PORT": str(metrics),
        "BUZZ_AUTO_MIGRATE": "true",
        "RELAY_OWNER_PUBKEY": owner.pubkey_hex,
        "BUZZ_ALLOW_NIP_OA_AUTH": "true",
        "BUZZ_GIT_REPO_PATH": str(tmp_path / "git"),
        # the git object-store probe needs the relay's S3 (media, git packs), which trials never use
        "BUZZ_GIT_CONFORMANCE_PROBE": "false",
        "RUST_LOG": os.environ.get("BUZZ_RELAY_RUST_LOG", "buzz_relay=info,warn"),
    }
    log = tmp_path / "buzz-relay.log"
    proc = _spawn([RELAY_BIN], env, log)
    wait_port(port, "buzz-relay", proc, log, timeout_s=120)
    host_service(namespace, "relay", 3600, port)
    yield RealRelay(owner, dsn, log, port)
    _stop(proc)
    print(f"buzz-relay log: {log}")


@dataclass(frozen=True)
class ScriptedModel:
    base_url: str  # as pods reach it: http://<ClusterIP>:8091/v1
    log: Path


@pytest.fixture
def scripted_model(namespace: str, tmp_path: Path) -> Iterator[ScriptedModel]:
    port = _free_port("0.0.0.0")
    log = tmp_path / "scripted-model.log"
    proc = _spawn([sys.executable, "-m", "buzz_operator.dev.model", "--port", str(port)], dict(os.environ), log)
    wait_port(port, "the scripted model", proc, log)
    cluster_ip = host_service(namespace, "model", 8091, port)
    yield ScriptedModel(f"http://{cluster_ip}:8091/v1", log)
    _stop(proc)
