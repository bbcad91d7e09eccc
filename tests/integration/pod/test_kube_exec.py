"""kube.exec and kube.tar against a real container: environment values arrive byte for byte
(and only through stdin, never on a command line), stdin payloads round-trip without EOF,
stdout/stderr/exit codes are kept apart, a timeout is raised, and tar streams go both ways
while a hostile archive cannot escape its destination."""

from __future__ import annotations

import asyncio
import io
import json
import os
import tarfile

import pytest
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import tar
from buzz_operator.kube.client import Kube
from buzz_operator.kube.objects import create_pod
from buzz_operator.kube.pods import wait_running

IMAGE = "docker.io/buzz/debian-py:bookworm"


@pytest.fixture
async def shell_pod(kube: Kube, namespace: str) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "shell"},
           "spec": {"automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0, "containers": [{
               "name": "task", "image": IMAGE, "imagePullPolicy": "Never",
               "command": ["sh", "-c", 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done']}]}}
    await create_pod(kube, namespace, pod)
    state = await wait_running(kube, namespace, "shell", timeout_s=120)
    assert state.ready, state
    return "shell"


async def test_env_values_arrive_exactly_and_off_the_command_line(kube: Kube, namespace: str, shell_pod: str) -> None:
    env = {"PLAIN": "x", "QUOTES": "it's \"quoted\"", "SHELLY": "$HOME `id` $(id) ; rm -rf /nope",
           "MULTI": "line one\nline two\n", "UNICODE": "héllo — 🐝", "EMPTY": "", "SECRET": os.urandom(16).hex()}
    script = ('python3 -c "import json, os; print(json.dumps(dict(os.environ)))" && '
              "for f in /proc/[0-9]*/cmdline; do cat $f; echo; done > /tmp/cmdlines")
    result = await kexec.run(kube, namespace, shell_pod, "task", script, env=env, timeout_s=30)
    assert result.ok, result.stderr
    seen = json.loads(result.stdout)
    assert {name: seen.get(name) for name in env} == env
    cmdlines = await kexec.run(kube, namespace, shell_pod, "task", "cat /tmp/cmdlines", timeout_s=30)
    assert env["SECRET"] not in cmdlines.text() and "/tmp/cmdlines" in cmdlines.text()


async def test_stdin_payload_round_trips_without_eof(kube: Kube, namespace: str, shell_pod: str) -> None:
    payload = os.urandom(300 * 1024)
    result = await kexec.run(kube, namespace, shell_pod, "task", 'head -c "$BUZZ_STDIN_BYTES" | sha256sum',
                             env={"IGNORED": "1"}, stdin=payload, timeout_s=60)
    import hashlib

    assert result.ok and result.text().split()[0] == hashlib.sha256(payload).hexdigest()


async def test_streams_and_exit_code_are_kept_apart(kube: Kube, namespace: str, shell_pod: str) -> None:
    result = await kexec.run(kube, namespace, shell_pod, "task", "echo out; echo err >&2; exit 7", timeout_s=30)
    assert (result.exit_code, result.stdout, result.stderr) == (7, b"out\n", b"err\n")


async def test_timeout_is_raised(kube: Kube, namespace: str, shell_pod: str) -> None:
    with pytest.raises(TimeoutError):
        await kexec.run(kube, namespace, shell_pod, "task", "sleep 30", timeout_s=1)


async def test_follow_yields_output_as_it_is_written(kube: Kube, namespace: str, shell_pod: str) -> None:
    """The run step's watch: a line appended to a followed file arrives while the command still runs."""
    await kexec.run(kube, namespace, shell_pod, "task", ": > /tmp/followed.log", timeout_s=30)
    seen = b""
    stream = kexec.follow(kube, namespace, shell_pod, "task", "exec timeout 60 tail -n +1 -F /tmp/followed.log")
    async with asyncio.timeout(30):
        writer = asyncio.create_task(kexec.run(
            kube, namespace, shell_pod, "task", "sleep 1; echo first >> /tmp/followed.log", timeout_s=30))
        async for chunk in stream:
            seen += chunk
            if b"first\n" in seen:
                break
        await writer
    await stream.aclose()
    assert seen == b"first\n"


async def test_follow_ends_with_its_command(kube: Kube, namespace: str, shell_pod: str) -> None:
    chunks = [c async for c in kexec.follow(kube, namespace, shell_pod, "task", "echo a; echo b >&2; echo c")]
    assert b"".join(chunks) == b"a\nc\n"  # stdout only


async def test_exec_into_a_missing_container_is_an_exec_error(kube: Kube, namespace: str, shell_pod: str) -> None:
    with pytest.raises(kexec.ExecError, match="nope"):
        await kexec.run(kube, namespace, shell_pod, "nope", "true", timeout_s=30)


async def test_tar_upload_and_download(kube: Kube, namespace: str, shell_pod: str) -> None:
    files = {"a.txt": b"alpha\n", "dir/b.sh": (b"#!/bin/sh\necho b\n", 0o755), "dir/deep/c.bin": os.urandom(70000)}
    await tar.upload(kube, namespace, shell_pod, "task", "/tmp/up", tar.pack(files), timeout_s=30)
    ran = await kexec.run(kube, namespace, shell_pod, "task", "/tmp/up/dir/b.sh", timeout_s=30)
    assert ran.stdout == b"b\n"
    back = await tar.download(kube, namespace, shell_pod, "task", "/tmp/up", timeout_s=30)
    assert back == {"a.txt": b"alpha\n", "dir/b.sh": b"#!/bin/sh\necho b\n", "dir/deep/c.bin": files["dir/deep/c.bin"]}
    assert await tar.download(kube, namespace, shell_pod, "task", "/tmp/absent", timeout_s=30) == {}


async def test_unpack_then_run_in_one_exec(kube: Kube, namespace: str, shell_pod: str) -> None:
    """What pod_exec.upload_then sends: the files unpacked, then the script that reads them."""
    files = {"run.sh": (b"#!/bin/sh\necho ran $(cat /tmp/then/data.txt)\n", 0o755), "data.txt": b"payload"}
    script = tar.unpack_script("/tmp/then", then_exit=True) + "/tmp/then/run.sh"
    ran = await kexec.run(kube, namespace, shell_pod, "task", script, stdin=tar.pack(files), timeout_s=30)
    assert ran.exit_code == 0 and ran.text() == "ran payload\n"
    # an archive that cannot be unpacked stops the script with the code upload_then reads
    failed = await kexec.run(kube, namespace, shell_pod, "task",
                             tar.unpack_script("/proc/forbidden", then_exit=True) + "echo ran anyway",
                             stdin=tar.pack(files), timeout_s=30)
    assert failed.exit_code == tar.UNPACK_FAILED_EXIT and b"ran anyway" not in failed.stdout


def test_unpack_skips_links_and_escaping_paths() -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, data in (("../evil", b"x"), ("/abs", b"y"), ("ok/fine", b"z")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("ok/link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        archive.addfile(link)
    assert tar.unpack(buffer.getvalue()) == {"abs": b"y", "ok/fine": b"z"}
    with pytest.raises(tar.TarError):
        tar.pack({"../out": b"x"})


async def test_concurrent_execs_share_one_client(kube: Kube, namespace: str, shell_pod: str) -> None:
    results = await asyncio.gather(*(kexec.run(kube, namespace, shell_pod, "task", f"echo {i}", timeout_s=30)
                                     for i in range(8)))
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(8)]



async def test_waiting_for_a_pod_leaves_no_client_session_open(kube: Kube, namespace: str) -> None:
    # every kubernetes_asyncio Watch owns an ApiClient with an aiohttp session; a Watch that is
    # only stopped leaked one per trial launch ("Unclosed client session" in the operator log).
    # aiohttp reports a session collected while open through the loop's exception handler.
    import gc

    loop = asyncio.get_running_loop()
    reported: list[str] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _, context: reported.append(str(context.get("message"))))
    try:
        pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waited"},
               "spec": {"automountServiceAccountToken": False, "terminationGracePeriodSeconds": 0, "containers": [{
                   "name": "task", "image": IMAGE, "imagePullPolicy": "Never",
                   "command": ["sh", "-c", 'trap "exit 0" TERM; while :; do sleep 3600 & wait $!; done']}]}}
        await create_pod(kube, namespace, pod)
        state = await wait_running(kube, namespace, "waited", timeout_s=120)  # just created: it watches
        assert state.ready, state
        gc.collect()
    finally:
        loop.set_exception_handler(previous)
    assert [m for m in reported if "Unclosed" in m] == []
