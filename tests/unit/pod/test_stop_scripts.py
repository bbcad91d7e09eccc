"""The run's end (shell.settle_then_stop) and collect's first exec
(shell.STOP_THEN_TAR_LOGS), run for real by `sh` on this host: a stand-in seat is a
copy of `sleep` in a directory of its own, which `$BUZZ_MATCH` names as the stop sweep's
stack directory, and the pod's paths are moved under a temporary directory. (A survivor of
SIGKILL cannot be made; its exit is judged in tests/unit/trial/test_egress_phase.py.)
"""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import shutil
import signal
import subprocess
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from buzz_operator.condition.paths import REMOTE_ROOT
from buzz_operator.kube.exec import env_prelude, wrap
from buzz_operator.pod import shell

MARKER = "goose usage update"


class Pod:
    """A temporary REMOTE_ROOT with a stack directory and seats started from it."""

    def __init__(self, root: Path) -> None:
        self.root, self.bin = root, root / "stack-bin"
        for sub in ("state", "logs", "stack-bin"):
            (root / sub).mkdir(parents=True)
        shutil.copy(shutil.which("sleep") or "/bin/sleep", self.bin / "seat")
        self.seats: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, seat: str, *, ignore_term: bool = False, log: str = "") -> None:
        (self.root / "logs" / f"{seat}.stdout.log").write_text(log)
        command = [str(self.bin / "seat"), "300"]
        handler = signal.SIG_IGN if ignore_term else signal.SIG_DFL
        self.seats[seat] = subprocess.Popen(command, preexec_fn=lambda: signal.signal(signal.SIGTERM, handler))
        (self.root / "state" / f"{seat}.pid").write_text(str(self.seats[seat].pid))

    # a net against a hung script, not a time limit: the TERM grace counts 20 polls, each a fork
    # and a /proc scan, which on a loaded 2-core machine took over 30 s once
    def run(self, script: str, *, timeout: float = 180) -> subprocess.CompletedProcess[bytes]:
        text = script.replace(REMOTE_ROOT, str(self.root))
        argv, data = wrap(text, env_prelude({"BUZZ_MATCH": str(self.bin)}), None)
        return subprocess.run(argv, input=data, capture_output=True, timeout=timeout, check=False)

    def reaped(self) -> bool:
        return all(seat.poll() is not None for seat in self.seats.values())


@pytest.fixture
def pod(tmp_path: Path) -> Iterator[Pod]:
    made = Pod(tmp_path / "opt-buzz")
    yield made
    for seat in made.seats.values():
        with contextlib.suppress(ProcessLookupError):
            seat.kill()
        seat.wait()


# No settle here has a bound the run could reach: a settle that waited for its bound instead of
# the usage would run into the run's net (Pod.run's timeout) and fail the test, with no clock read.
UNREACHED_S = 600


def late_usage(pod: Pod, seat: str, lines: str) -> subprocess.Popen[bytes]:
    """Append `lines` to the seat's log a moment from now. Just before, note in `settle.early`
    whether the settle had already ended (it records its figure as it ends, then stops)."""
    log, figure = pod.root / "logs" / f"{seat}.stdout.log", pod.root / "state" / "usage_settle_seconds.json"
    script = (f"sleep 0.6; if [ -e {figure} ]; then echo yes; else echo no; fi > {pod.root}/settle.early; "
              f"printf '%s\\n' {' '.join(shlex.quote(line) for line in lines.splitlines())} >> {log}")
    return subprocess.Popen(["sh", "-c", script])


def waited_for_usage(pod: Pod) -> bool:
    return (pod.root / "settle.early").read_text().strip() == "no"


def settle_figure(pod: Pod) -> str:
    return (pod.root / "state" / "usage_settle_seconds.json").read_text()


def _wait_reaped(pod: Pod) -> bool:
    for _ in range(50):  # the seats are this test's children: poll() reaps them
        if pod.reaped():
            return True
        time.sleep(0.05)
    return False


def test_settle_waits_for_usage_then_stops_every_seat(pod: Pod) -> None:
    pod.start("lead-1", log=f"{MARKER}\n")
    pod.start("worker-1")
    writer = late_usage(pod, "worker-1", MARKER)
    done = pod.run(shell.settle_then_stop(["lead-1", "worker-1"], MARKER, UNREACHED_S))
    writer.wait()
    assert done.stdout.decode().splitlines()[-1] == "left 0", done
    assert waited_for_usage(pod)  # still settling when the worker's usage landed
    assert re.fullmatch(r"\d+\.\d\d", settle_figure(pod))  # the wait, recorded as a fact
    assert _wait_reaped(pod)


def test_settle_waits_for_the_turn_in_flight_to_close(pod: Pod) -> None:
    """Block's buzz-acp, as a real trial logged it: the turn's first model call logs its usage,
    its tool posts DONE, and its closing model call is still in flight. Stopped then, the call
    was billed (6,532 input tokens) and never logged; the settle waits for the turn to close."""
    log = pod.root / "logs" / "lead-1.stdout.log"
    pod.start("lead-1", log=(
        "INFO pool::prompt: turn complete for channel a: end_turn\n"  # an earlier turn, closed
        "INFO pool::prompt: turn starting for channel ed591d48\n"
        f"DEBUG acp::usage: {MARKER} session_id=s input=Some(6260) output=Some(133) cached=0\n"
        "INFO acp::tool: tool_call_update: call_send_0 → completed\n"))
    writer = late_usage(pod, "lead-1", f"{MARKER} input=Some(6532)\n"
                                       "INFO pool::prompt: turn complete for channel ed591d48: end_turn")
    done = pod.run(shell.settle_then_stop(["lead-1"], MARKER, UNREACHED_S))
    writer.wait()
    assert done.stdout.decode().splitlines()[-1] == "left 0", done
    assert waited_for_usage(pod)  # still settling when the turn closed
    assert log.read_text().count(MARKER) == 2  # the closing call's usage is in the log the receipts read


def test_a_turn_that_ended_in_an_error_is_not_waited_for(pod: Pod) -> None:
    pod.start("lead-1", log=(f"turn starting for channel a\n{MARKER}\n"
                             "ERROR pool::prompt: session_prompt error: 500 from the endpoint\n"))
    done = pod.run(shell.settle_then_stop(["lead-1"], MARKER, UNREACHED_S))
    assert done.stdout.decode().splitlines()[-1] == "left 0", done
    assert re.fullmatch(r"\d+\.\d\d", settle_figure(pod))


def test_settle_gives_up_at_its_bound(pod: Pod) -> None:
    pod.start("lead-1")  # never logs usage: only the bound can end the settle
    done = pod.run(shell.settle_then_stop(["lead-1"], MARKER, 0.5))
    assert done.stdout.decode().splitlines()[-1] == "left 0"
    assert re.fullmatch(r"\d+\.\d\d", settle_figure(pod))
    assert _wait_reaped(pod)


def test_a_seat_ignoring_term_is_killed(pod: Pod) -> None:
    pod.start("lead-1", ignore_term=True, log=MARKER)
    done = pod.run(shell.settle_then_stop(["lead-1"], MARKER, 1))
    assert done.stdout.decode().splitlines()[-1] == "left 0"
    assert _wait_reaped(pod)
    assert pod.seats["lead-1"].returncode == -signal.SIGKILL


def test_collect_gets_the_logs_once_the_seats_are_stopped(pod: Pod) -> None:
    pod.start("lead-1", log="turn 1\n")
    done = pod.run(shell.STOP_THEN_TAR_LOGS)
    assert done.returncode == 0 and done.stderr.decode().strip() == "left 0", done
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        names = {m.name.removeprefix("./") for m in archive if m.isfile()}
    assert names == {"lead-1.stdout.log"}
    assert _wait_reaped(pod)

