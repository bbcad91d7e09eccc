"""hack/s3.sh as a component: a second, private server instance (versitygw) is started, used,
stopped and started again, so the tests see what a stopped server looks like to S3Store
(StorageUnavailable), that a restart keeps what was stored, that `down` leaves no process
behind, and that the server checks request signatures. It shares the cached binary, not the
session server's data."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from buzz_operator.storage import S3Store, StorageUnavailable
from buzz_operator.storage.s3_admin import ensure_bucket

from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[3]


def s3_sh(command: str, port: int, run_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "BUZZ_S3_PORT": str(port), "BUZZ_RUN": str(run_dir)}
    return subprocess.run(
        ["bash", str(ROOT / "hack" / "s3.sh"), command],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def second_server(s3_server: Any, tmp_path: Path) -> Iterator[tuple[int, Path]]:
    # s3_server first: the session server's `up` builds the shared venv, so this one starts warm
    port, run_dir = free_port(), tmp_path / "run"
    started = s3_sh("up", port, run_dir)
    assert started.returncode == 0, started.stderr
    yield port, run_dir
    s3_sh("down", port, run_dir)


async def test_stopped_server_is_unavailable_and_leaves_no_process(
    s3_server: Any, second_server: tuple[int, Path]
) -> None:
    port, run_dir = second_server
    endpoint = f"http://127.0.0.1:{port}"
    ensure_bucket(endpoint, "second", access_key=s3_server.access_key, secret_key=s3_server.secret_key)
    store = S3Store(
        "second",
        endpoint=endpoint,
        access_key=s3_server.access_key,
        secret_key=s3_server.secret_key,
        max_retries=1,
    )
    await store.put("k", b"v")
    assert await store.get("k") == b"v"
    pid = int((run_dir / "s3" / "server.pid").read_text())
    assert "running" in s3_sh("status", port, run_dir).stdout

    stopped = s3_sh("down", port, run_dir)
    assert stopped.returncode == 0, stopped.stderr
    assert not alive(pid)
    assert "stopped" in s3_sh("status", port, run_dir).stdout

    for operation in (store.get("k"), store.put("k2", b"v"), store.exists("k"), store.list()):
        with pytest.raises(StorageUnavailable) as caught:
            await operation
        assert caught.value.retryable


def test_up_is_idempotent(second_server: tuple[int, Path]) -> None:
    port, run_dir = second_server
    pid = (run_dir / "s3" / "server.pid").read_text()
    again = s3_sh("up", port, run_dir)
    assert again.returncode == 0, again.stderr
    assert (run_dir / "s3" / "server.pid").read_text() == pid


def test_up_refuses_a_port_taken_by_something_else(s3_server: Any, tmp_path: Path) -> None:
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        refused = s3_sh("up", port, tmp_path / "run")
    assert refused.returncode != 0
    assert f"port {port}" in refused.stderr and "already in use" in refused.stderr
    assert not (tmp_path / "run" / "s3" / "server.pid").exists()


def test_env_prints_the_connection_settings(tmp_path: Path) -> None:
    printed = s3_sh("env", 51234, tmp_path / "run")
    settings = dict(line.split("=", 1) for line in printed.stdout.splitlines())
    assert settings["BUZZ_S3_ENDPOINT"] == "http://127.0.0.1:51234"
    assert set(settings) == {"BUZZ_S3_ENDPOINT", "BUZZ_S3_ACCESS_KEY", "BUZZ_S3_SECRET_KEY", "BUZZ_S3_REGION"}


def servers_on(port: int) -> list[int]:
    """Pids whose command line is a versitygw serving `port`."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"/versitygw") and f"127.0.0.1:{port}".encode() in argv:
            found.append(int(proc.name))
    return found


def test_a_server_that_does_not_answer_in_time_is_not_left_behind(s3_server: Any, tmp_path: Path) -> None:
    port, run_dir = free_port(), tmp_path / "run"
    env = {**os.environ, "BUZZ_S3_PORT": str(port), "BUZZ_RUN": str(run_dir), "BUZZ_S3_START_TIMEOUT": "0"}
    gave_up = subprocess.run(
        ["bash", str(ROOT / "hack" / "s3.sh"), "up"],
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )
    assert gave_up.returncode != 0
    assert "did not answer" in gave_up.stderr and "stopped it" in gave_up.stderr
    assert servers_on(port) == []
    assert not (run_dir / "s3" / "server.pid").exists()


async def test_a_restart_keeps_every_object(s3_server: Any, second_server: tuple[int, Path]) -> None:
    port, run_dir = second_server
    endpoint = f"http://127.0.0.1:{port}"
    ensure_bucket(endpoint, "kept", access_key=s3_server.access_key, secret_key=s3_server.secret_key)
    store = S3Store("kept", endpoint=endpoint, access_key=s3_server.access_key, secret_key=s3_server.secret_key,
                    max_retries=1)
    await store.put("runs/t/result.json", b'{"reward": 1}')
    assert s3_sh("down", port, run_dir).returncode == 0
    assert s3_sh("up", port, run_dir).returncode == 0
    assert await store.get("runs/t/result.json") == b'{"reward": 1}'
    assert await store.list("runs") == ["runs/t/result.json"]


async def test_a_wrong_secret_key_is_refused_by_the_server_and_named(s3_server: Any) -> None:
    """The server verifies the signature: a wrong secret is 403 SignatureDoesNotMatch, an unknown
    access key 404 XAdminUserNotFound (versitygw's answer; AWS says 403 InvalidAccessKeyId),
    and preflight names the Secret that holds them."""
    from buzz_operator.api.sweep import BuzzSweepSpec
    from buzz_operator.preflight import checks
    from buzz_operator.preflight.drive.runner import check_storage
    from buzz_operator.storage import CredentialsRejected

    from tests.support.corpus import load_corpus

    bucket = s3_server.fresh_bucket()
    right = S3Store(bucket, endpoint=s3_server.endpoint, access_key=s3_server.access_key,
                    secret_key=s3_server.secret_key, max_retries=1)
    await right.put("k", b"v")
    for access_key, secret_key, code in ((s3_server.access_key, "not-the-secret", "SignatureDoesNotMatch"),
                                         ("no-such-access-key", s3_server.secret_key, "XAdminUserNotFound")):
        wrong = S3Store(bucket, endpoint=s3_server.endpoint, access_key=access_key, secret_key=secret_key,
                        max_retries=1)
        for operation in (wrong.get("k"), wrong.put("k2", b"v"), wrong.list()):
            with pytest.raises(CredentialsRejected) as caught:
                await operation
            assert code in str(caught.value) and not caught.value.retryable
    assert await right.list() == ["k"]  # nothing a refused request could have written

    body = load_corpus().good_body(ROOT, store_url=f"s3://{bucket}/runs")
    body["spec"]["storage"] = {"url": f"s3://{bucket}/runs", "endpoint": s3_server.endpoint,
                               "credentialsSecretRef": {"name": "s3-creds"}}
    spec = BuzzSweepSpec.model_validate(body["spec"])
    wrong = S3Store(bucket, prefix="runs", endpoint=s3_server.endpoint, access_key=s3_server.access_key,
                    secret_key="not-the-secret", max_retries=1)
    result = await check_storage(wrong, "sweep", spec)
    assert result.name == checks.STORAGE and result.failed
    assert result.detail.startswith("spec.storage.credentialsSecretRef: s3://")
    assert "refuses the keys in Secret s3-creds" in result.detail and "SignatureDoesNotMatch" in result.detail
    assert "not-the-secret" not in result.detail
