"""The kind tier (make test-kind; docs/local-cluster.md#kind): tests that run against the kind
cluster hack/kind-up.sh made, and, after hack/kind-down.sh, the check that it left nothing. Only
`make test-kind` sets BUZZ_KIND; elsewhere these tests skip, saying how to run them."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

RUN = Path(os.environ.get("BUZZ_RUN", "/var/tmp/buzz-operator"))
CLUSTER = os.environ.get("BUZZ_KIND_CLUSTER", "buzz")
NAMESPACE = os.environ.get("BUZZ_KIND_NAMESPACE", "buzz")
RELEASE = os.environ.get("BUZZ_KIND_RELEASE", "buzz")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get("BUZZ_KIND"):
        return
    skip = pytest.mark.skip(reason="the kind tier runs by `make test-kind` (it makes and removes the kind cluster)")
    for item in items:
        if Path(str(item.fspath)).parent == Path(__file__).parent:
            item.add_marker(skip)


def engine() -> str:
    """The container engine kind drove, chosen as hack/lib.sh's kind_engine chooses it."""
    if shutil.which("docker") and subprocess.run(["docker", "info"], capture_output=True).returncode == 0:
        return "docker"
    return "podman"


def engine_env() -> dict[str, str]:
    """The environment hack/lib.sh's kind_engine_env gives podman (its containers.conf and image
    store, both named in $CACHE/kind): without it podman would look at another store."""
    env = dict(os.environ)
    if engine() == "podman":
        cache = Path(os.environ.get("BUZZ_CACHE", Path.home() / ".cache/buzz-operator"))
        env["CONTAINERS_CONF"] = str(cache / "kind/containers.conf")
        env["CONTAINERS_STORAGE_CONF"] = str(cache / "kind/storage.conf")
    return env


def run_engine(*args: str) -> str:
    done = subprocess.run([engine(), *args], capture_output=True, text=True, env=engine_env())
    assert done.returncode == 0, f"{engine()} {' '.join(args)}: {done.stderr.strip()}"
    return done.stdout


def lib_value(name: str) -> str:
    """A setting of hack/lib.sh, as the scripts that built the cluster read it."""
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(["bash", "-c", f'. hack/lib.sh >/dev/null; echo "${name}"'], cwd=root,
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()
