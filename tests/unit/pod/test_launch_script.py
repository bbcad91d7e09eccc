"""The launch exec's script (pod/launch_script.py), run for real by `sh` on this host with the
bytes kube.exec would send — the stack's root moved into a temporary directory — and its
output parsed as the launch step parses it.

What matters most is the framing of stdin: the tar, then each seat's export lines, each read
with `head -c`; a seat must start with its own keys and never see another seat's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

import pytest
from buzz_operator.condition.paths import REMOTE_BIN, REMOTE_ROOT
from buzz_operator.kube import tar
from buzz_operator.kube.exec import env_prelude, wrap
from buzz_operator.pod import launch_script
from buzz_operator.pod.stack_install import READ_MANIFEST
from buzz_operator.scoring.failures import StepFailure

MARKER = "subscribed to channel c0ffee"
MANIFEST = "sha256  bin/buzz-acp  0123\n"
# a stand-in seat: says the marker once it has written down the environment it was given
SEAT = """#!/bin/sh
env | grep '^SEAT_' | sort > "$TEST_DIR/$TEST_SEAT.env"
echo "$MARKER_TEXT"
exec sleep 30
"""


def _run(tmp_path: Path, seats: dict[str, dict[str, str]], *, seat_program: str = SEAT,
         files: dict[str, tuple[bytes, int]] | None = None, relay_ca: bool = False,
         manifest: str | None = MANIFEST, agent_user: str | int | None = None) -> tuple[str, int]:
    root = tmp_path / "opt-buzz"
    (root / "state").mkdir(parents=True, exist_ok=True)
    if manifest is not None:
        (root / "stack-digests.txt").write_text(manifest)
    (root / "ca-certificates.crt").write_text("-----BEGIN CERTIFICATE-----\npublic\n-----END CERTIFICATE-----\n")
    program = tmp_path / "seat"
    program.write_text(seat_program)
    program.chmod(0o755)
    archive = tar.pack(files if files is not None else
                       {f"prompts/{seat}.system-prompt.md": (b"persona", 0o600) for seat in seats})
    envs = [env_prelude({**env, "TEST_SEAT": seat, "TEST_DIR": str(tmp_path), "MARKER_TEXT": MARKER})
            for seat, env in seats.items()]
    text = launch_script.script(read_manifest=READ_MANIFEST, files_bytes=len(archive), relay_ca=relay_ca,
                                seats=[(seat, len(env)) for seat, env in zip(seats, envs, strict=True)],
                                marker=MARKER, ready_round_s=5, agent_user=agent_user)
    # the pod's paths, moved under tmp_path (the system trust store is left alone: it is present)
    text = text.replace(" /logs/", f" {tmp_path}/logs/").replace(REMOTE_ROOT, str(root))
    (root / "logs").mkdir(exist_ok=True)
    argv, data = wrap(text, env_prelude({launch_script.SEAT_COMMAND_VAR: str(program)}), archive + b"".join(envs))
    try:
        done = subprocess.run(argv, input=data, capture_output=True, timeout=30, check=False)
    finally:
        for pid_file in (root / "state").glob("*.pid"):
            with contextlib.suppress(ValueError, ProcessLookupError):
                os.kill(int(pid_file.read_text()), signal.SIGKILL)
    return done.stdout.decode(), done.returncode


def test_each_seat_starts_with_its_own_environment_and_the_files_land(tmp_path: Path) -> None:
    seats = {"orchestrator": {"SEAT_KEY": "k-orch 'quoted' $x", "SEAT_LEAD": "1"}, "worker-1": {"SEAT_KEY": "k-w1", "SEAT_ONLY": "w1"}}
    out, code = _run(tmp_path, seats)
    outcome = launch_script.parse(out, code, list(seats), relay_ca=False)
    assert outcome.readiness == "ready", out
    assert outcome.manifest == MANIFEST
    assert (tmp_path / "orchestrator.env").read_text().splitlines() == ["SEAT_KEY=k-orch 'quoted' $x", "SEAT_LEAD=1"]
    # the worker's subshell never saw the orchestrator's SEAT_LEAD
    assert (tmp_path / "worker-1.env").read_text().splitlines() == ["SEAT_KEY=k-w1", "SEAT_ONLY=w1"]
    root = tmp_path / "opt-buzz"
    assert (root / "prompts" / "worker-1.system-prompt.md").read_bytes() == b"persona"
    assert all((root / "state" / f"{seat}.pid").read_text().strip().isdigit() for seat in seats)
    assert (root / "state" / "container_trust_store.json").read_text() == '"present"'


def test_the_relay_ca_is_appended_after_the_files(tmp_path: Path) -> None:
    files = {"prompts/orchestrator.system-prompt.md": (b"p", 0o600),
             "relay-ca.crt": (b"-----BEGIN CERTIFICATE-----\nprivate\n-----END CERTIFICATE-----\n", 0o644)}
    out, code = _run(tmp_path, {"orchestrator": {}}, files=files, relay_ca=True)
    assert launch_script.parse(out, code, ["orchestrator"], relay_ca=True).readiness == "ready"
    assert f"{launch_script.RELAY_CA_LINE}installed 2" in out.splitlines()


def test_a_seat_that_dies_before_subscribing_is_named(tmp_path: Path) -> None:
    out, code = _run(tmp_path, {"orchestrator": {}}, seat_program="#!/bin/sh\nexit 3\n")
    assert launch_script.parse(out, code, ["orchestrator"], relay_ca=False).readiness == "dead orchestrator"


def test_a_missing_manifest_is_a_stack_install_failure(tmp_path: Path) -> None:
    out, code = _run(tmp_path, {"orchestrator": {}}, manifest=None)
    with pytest.raises(StepFailure) as failed:
        launch_script.parse(out, code, ["orchestrator"], relay_ca=False)
    assert failed.value.reason == "StackInstallFailed"
    assert "stack's digests" in str(failed.value)
    assert not (tmp_path / "orchestrator.env").exists()  # nothing after the failed stage ran


def test_a_ca_that_cannot_be_installed_stops_before_the_seats(tmp_path: Path) -> None:
    out, code = _run(tmp_path, {"orchestrator": {}}, relay_ca=True)  # no relay-ca.crt sent
    with pytest.raises(StepFailure) as failed:
        launch_script.parse(out, code, ["orchestrator"], relay_ca=True)
    assert failed.value.reason == "StackInstallFailed"
    assert not (tmp_path / "orchestrator.env").exists()


def test_the_script_names_no_stack_binary() -> None:
    """The shell lives through readiness; the stop sweep matches command lines naming REMOTE_BIN."""
    text = launch_script.script(read_manifest=READ_MANIFEST, files_bytes=10, seats=[("orchestrator", 5)],
                                relay_ca=True, marker=MARKER, ready_round_s=10)
    assert REMOTE_BIN not in text


@pytest.mark.parametrize(("stdout", "code", "reason", "words"), [
    ("@@prepare-exit 1\n", 0, "StackInstallFailed", "directories: exit 1"),
    ("", 125, "StackInstallFailed", "exit 125"),
    ("m\n@@trust-store present\n@@unpack-exit 2\n", 0, "StackInstallFailed", "prompts: exit 2"),
    ("m\n@@trust-store present\n@@seat orchestrator 1 \n", 0, "AgentsNotReady", "cannot launch orchestrator: exit 1"),
    ("m\n@@trust-store present\n@@seat orchestrator 0 oops\n", 0, "AgentsNotReady", "cannot launch orchestrator"),
    ("m\n@@trust-store present\n", 0, "AgentsNotReady", "cannot launch orchestrator"),
    ("m\n@@trust-store present\n@@seat orchestrator 0 41\n", 0, "AgentsNotReady", "subscriptions"),
])
def test_each_stage_fails_with_its_reason(stdout: str, code: int, reason: str, words: str) -> None:
    with pytest.raises(StepFailure) as failed:
        launch_script.parse(stdout, code, ["orchestrator"], relay_ca=False)
    assert failed.value.reason == reason
    assert words in str(failed.value)



ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="switching users needs root, as the task container's user is")
AS_USER = """#!/bin/sh
{ id -un; pwd; env | grep '^SEAT_' | sort; } > "$TEST_DIR/$TEST_SEAT.env"
echo "$MARKER_TEXT"
exec sleep 30
"""


@ROOT_ONLY
@pytest.mark.parametrize("user", ["nobody", 65534])
def test_seats_run_as_the_agent_user_with_their_own_variables(user: str | int) -> None:
    """`[agent] user`: each seat through su, its variables kept, its logs written through the
    descriptors the script opened (the user could not open them itself)."""
    import tempfile

    work = Path(tempfile.mkdtemp())
    work.chmod(0o777)  # the seat writes what it saw here, as the user
    out, code = _run(work, {"solo-1": {"SEAT_KEY": "k-solo"}}, seat_program=AS_USER, agent_user=user)
    assert launch_script.parse(out, code, ["solo-1"], relay_ca=False).readiness == "ready", out
    said = (work / "solo-1.env").read_text().splitlines()
    assert said[0] == "nobody" and said[2:] == ["SEAT_KEY=k-solo"], said
    assert MARKER in (work / "opt-buzz" / "logs" / "solo-1.stdout.log").read_text()


@ROOT_ONLY
def test_an_agent_user_the_image_lacks_stops_before_the_seats(tmp_path: Path) -> None:
    out, code = _run(tmp_path, {"solo-1": {}}, agent_user="no-such-user")
    with pytest.raises(StepFailure) as caught:
        launch_script.parse(out, code, ["solo-1"], relay_ca=False)
    assert caught.value.reason == "AgentUserMissing" and "no-such-user" in caught.value.message
    assert not (tmp_path / "opt-buzz" / "state" / "solo-1.pid").exists()
