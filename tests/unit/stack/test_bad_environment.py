"""A bad environment gets a message that names the problem and the fix, and nothing half-started:
a port already taken, not enough disk, a missing Debian package. The checks are the shell helpers
in hack/lib.sh that every stack script calls before it starts anything."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[3]


def bash(script: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["/bin/bash", "-c", f". {ROOT}/hack/lib.sh; {script}"], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, stdin=subprocess.DEVNULL)


def test_taken_port_is_named_with_the_fix() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        done = bash(f"port_free {port} postgres; echo started")
    assert done.returncode == 1
    assert "started" not in done.stdout
    assert f"port {port} (needed by postgres) is already in use" in done.stderr
    assert "BUZZ_" in done.stderr  # the fix: which variable moves it


def test_free_port_passes() -> None:
    port = free_port()
    assert bash(f"port_free {port} etcd && echo ok").stdout.strip() == "ok"


def test_not_enough_disk_names_the_need_and_the_fix(tmp_path: Path) -> None:
    done = bash(f"need_disk {tmp_path} 999999999 'the Kubernetes build'; echo started")
    assert done.returncode == 1 and "started" not in done.stdout
    assert "the Kubernetes build needs 999999999 MB free" in done.stderr
    assert "BUZZ_CACHE" in done.stderr


def test_missing_debian_package_is_named(tmp_path: Path) -> None:
    # a PATH without etcd, but with the shell itself
    (tmp_path / "bash").symlink_to("/bin/bash")
    done = bash("need_cmd etcd etcd-server; echo started", env={"PATH": str(tmp_path)})
    assert done.returncode == 1 and "started" not in done.stdout
    assert "etcd not found; it comes with the Debian package etcd-server" in done.stderr
    assert "make deps" in done.stderr


def test_postgres_refuses_a_taken_port_and_starts_nothing(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with socket.socket() as s:
        s.bind(("0.0.0.0", 0))
        s.listen()
        port = s.getsockname()[1]
        done = subprocess.run(["bash", str(ROOT / "hack/postgres.sh"), "up"], capture_output=True, text=True,
                              env={**os.environ, "BUZZ_RUN": str(run), "BUZZ_PG_PORT": str(port)},
                              stdin=subprocess.DEVNULL)
    assert done.returncode == 1
    assert f"port {port} (needed by postgres) is already in use" in done.stderr
    assert not (run / "postgres" / "data" / "postmaster.pid").exists()
