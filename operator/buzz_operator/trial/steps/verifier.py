"""The task's verifier run in a pod: tests/test.sh copied in, run under the verifier timeout,
its output checked for a health marker (docs/failures.md#verifier-health) and its reward read
back as Harbor reads it.

Not a step: grading runs it in the trial pod, regrading in a grading pod of the task image —
the very same procedure, so a regrade grades as the corridor did.
"""

from __future__ import annotations

import math
import tempfile
from pathlib import Path

from buzz_operator.api.trial import ResourceUsage
from buzz_operator.kube import tar
from buzz_operator.ledger import read_rewards
from buzz_operator.ledger.verdict import verifier_output_broken
from buzz_operator.pod import cgroup
from buzz_operator.pod.shell import (
    VERIFIER_END,
    VERIFIER_EXIT,
    VERIFIER_START,
    VERIFIER_USER_MISSING,
    run_verifier,
)
from buzz_operator.scoring.failures import StepFailure
from buzz_operator.trial.drive.context import TrialContext
from buzz_operator.trial.drive.pod_exec import stream_broken, upload_then
from buzz_operator.trial.state import Graded

TESTS_DIR = "/tests"
# A verifier that timed out throttled in at least this share of its CPU periods was starved.
STARVED_SHARE = 0.5
VERIFIER_DIR = "/logs/verifier"


def _numeric(rewards: dict[str, object]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in rewards.items():
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            out[key] = float(value)
    return out


async def run_tests(ctx: TrialContext, pod: str) -> Graded:
    return (await verify(ctx, pod))[0]


async def verify(ctx: TrialContext, pod: str) -> tuple[Graded, dict[str, bytes]]:
    """The verifier run; its reward, and its output (/logs/verifier) by path, read in the same
    exec (shell.run_verifier)."""
    seconds = ctx.spec.deadlines.verifier_seconds
    try:  # tests/ copied in, run, and the output read back in one exec
        ran = await upload_then(ctx, pod, TESTS_DIR, _tests_files(ctx.task.tests_dir),
                                run_verifier(seconds, ctx.task.config.verifier.env, ctx.task.config.verifier.user),
                                timeout_s=seconds + 30)
    except TimeoutError as exc:
        raise StepFailure("VerifierTimeout", f"tests/test.sh did not finish in {seconds}s") from exc
    stderr = ran.stderr.decode("utf-8", "replace")
    said = stderr.splitlines()
    if missing := [line.removeprefix(VERIFIER_USER_MISSING) for line in said if line.startswith(VERIFIER_USER_MISSING)]:
        # the task's own image cannot run its verifier as the user it names: not the team's zero
        raise StepFailure("VerifierBroken", f"[verifier] user {missing[0]}: the task image has no such user, "
                                            "or no su to switch to it (docs/task-toml.md#users)")
    exits = [line.removeprefix(VERIFIER_EXIT).strip() for line in said if line.startswith(VERIFIER_EXIT)]
    used = verifier_usage(stderr)
    if (boxed := box_failure(used, timed_out=exits[-1:] in (["124"], ["137"]))) is not None:
        raise boxed
    if exits[-1:] in (["124"], ["137"]):
        raise StepFailure("VerifierTimeout", f"tests/test.sh did not finish in {seconds}s")
    if not ran.ok:  # the verifier's own status is in `exits`; this is the tar of its output
        error = tar.TarError(f"download of {VERIFIER_DIR} failed ({ran.exit_code}): {said[-3:]!r}")
        raise await stream_broken(ctx, pod, error) from error
    files = tar.unpack(ran.stdout) if ran.stdout else {}
    if verifier_output_broken(files.get("test-stdout.txt", b"").decode("utf-8", errors="replace")):
        raise StepFailure("VerifierBroken", "verifier output carries a health marker (docs/failures.md#verifier-health)")
    with tempfile.TemporaryDirectory(dir=ctx.workdir) as scratch:
        tar.write_tree(files, Path(scratch))
        try:
            rewards = _numeric(read_rewards(Path(scratch)))
        except Exception as exc:  # Harbor's reward errors, each named in the message
            reason = "RewardMissing" if "no reward file" in str(exc) else "RewardInvalid"
            raise StepFailure(reason, f"{type(exc).__name__}: {exc}"[:300]) from exc
    if "reward" not in rewards:
        raise StepFailure("RewardInvalid", "the verifier wrote no numeric `reward`")
    return Graded(reward=rewards["reward"], rewards=rewards, resources=used), files


def verifier_usage(stderr: str) -> ResourceUsage | None:
    """What the verifier's run used, from the readings around it in its exec's stderr."""
    end = cgroup.parse(stderr, VERIFIER_END)
    return None if end is None else cgroup.usage(end, cgroup.parse(stderr, VERIFIER_START))


def box_failure(used: ResourceUsage | None, *, timed_out: bool) -> StepFailure | None:
    """The verifier's run cut short by its box, not by the answer it graded: a process OOM-killed,
    or a timeout while throttled in most CPU periods. Broken, so never scored 0."""
    if used is None:
        return None
    if used.oom_kills:
        return StepFailure("VerifierOutOfMemory", f"the kernel killed {used.oom_kills} verifier process(es) for "
                                                  f"memory (peak {used.peak_memory_mb} MiB of {used.memory_limit_mb} MiB)")
    if timed_out and used.periods and (used.throttled_periods or 0) >= STARVED_SHARE * used.periods:
        return StepFailure("VerifierStarved", f"tests/test.sh timed out throttled in {used.throttled_periods} of "
                                              f"{used.periods} CPU periods ({used.throttled_seconds} s)")
    return None


def _tests_files(tests_dir: Path) -> dict[str, bytes | tuple[bytes, int]]:
    files: dict[str, bytes | tuple[bytes, int]] = {}
    for path in sorted(tests_dir.rglob("*")):
        if path.is_file():
            mode = 0o755 if path.stat().st_mode & 0o111 or path.suffix == ".sh" else 0o644
            files[path.relative_to(tests_dir).as_posix()] = (path.read_bytes(), mode)
    return files
