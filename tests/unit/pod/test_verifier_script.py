"""Grading's exec (shell.run_verifier) run for real by `sh` on this host, with /tests
and /logs moved under a temporary directory: the verifier's exit status on stderr, its output
as a tar on stdout, whatever test.sh did."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from buzz_operator.kube import tar
from buzz_operator.pod import cgroup
from buzz_operator.pod.shell import VERIFIER_EXIT, run_verifier
from buzz_operator.trial.steps.verifier import verifier_usage


def _run(tmp_path: Path, test_sh: str, timeout_s: int = 30, env: dict[str, str] | None = None
         ) -> tuple[int, dict[str, bytes], list[str]]:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test.sh").write_text(test_sh)
    script = run_verifier(timeout_s, env).replace("/tests/", f"{tmp_path}/tests/").replace("/logs/", f"{tmp_path}/logs/")
    ran = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60, check=False)
    files = tar.unpack(ran.stdout) if ran.stdout else {}
    # the cgroup readings around the verifier are the next test's
    return ran.returncode, files, [line for line in ran.stderr.decode().splitlines() if not line.startswith(cgroup.MARK)]


def test_the_output_comes_back_as_a_tar_and_the_exit_on_stderr(tmp_path: Path) -> None:
    code, files, said = _run(tmp_path, "echo graded; echo oops >&2; echo 1 > \"$(dirname \"$0\")/../logs/verifier/reward.txt\"\n")
    assert code == 0
    assert said == [f"{VERIFIER_EXIT}0"]
    assert files["test-stdout.txt"] == b"graded\n" and files["test-stderr.txt"] == b"oops\n"
    assert files["reward.txt"] == b"1\n"


@pytest.mark.parametrize("status", [1, 3])
def test_a_failing_verifier_still_returns_its_output(tmp_path: Path, status: int) -> None:
    code, files, said = _run(tmp_path, f"echo failed; exit {status}\n")
    assert code == 0  # the exec's status is the tar's; the verifier's is the marker's
    assert said == [f"{VERIFIER_EXIT}{status}"]
    assert files["test-stdout.txt"] == b"failed\n"


def test_a_verifier_past_its_timeout_says_124(tmp_path: Path) -> None:
    _, files, said = _run(tmp_path, "echo started; sleep 10\n", timeout_s=1)
    assert said == [f"{VERIFIER_EXIT}124"]
    assert files["test-stdout.txt"] == b"started\n"


def test_the_verifier_env_reaches_test_sh(tmp_path: Path) -> None:
    _, files, _ = _run(tmp_path, 'echo "$MODE"\n', env={"MODE": "strict mode"})
    assert files["test-stdout.txt"] == b"strict mode\n"


def test_the_cgroup_is_read_before_and_after_the_verifier(tmp_path: Path) -> None:
    # this host's own cgroup (v1 or v2): the verifier burns CPU, the reading after shows it
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test.sh").write_text("i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done\n")
    script = run_verifier(30).replace("/tests/", f"{tmp_path}/tests/").replace("/logs/", f"{tmp_path}/logs/")
    ran = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60, check=False)
    used = verifier_usage(ran.stderr.decode())
    assert used is not None and used.cgroup in (1, 2)
    assert used.cpu_seconds is not None and used.cpu_seconds > 0
    assert used.peak_memory_mb is not None and used.peak_memory_mb > 0


@pytest.mark.skipif(subprocess.run(["id", "-u"], capture_output=True, text=True).stdout.strip() != "0",
                    reason="switching users needs root, as the task container's user is")
def test_the_verifier_runs_as_the_user_task_toml_names(tmp_path_factory: pytest.TempPathFactory) -> None:
    """`[verifier] user` as Harbor's GKE environment runs it (su, not su -); a user the image does
    not have is named on stderr rather than run as root."""
    import os
    import tempfile

    from buzz_operator.pod.shell import VERIFIER_USER_MISSING

    for user, expected in (("nobody", "nobody"), (65534, "nobody")):
        root = Path(tempfile.mkdtemp())
        os.chmod(root, 0o755)  # the user must reach tests/test.sh, as in a task image
        (root / "tests").mkdir(mode=0o755)
        (root / "tests" / "test.sh").write_text("id -un\npwd\necho 1 > \"$(dirname \"$0\")/../logs/verifier/reward.txt\"\n")
        script = run_verifier(30, {"MODE": "x"}, user).replace("/tests/", f"{root}/tests/").replace("/logs/", f"{root}/logs/")
        ran = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60, check=False, cwd=root)
        files = tar.unpack(ran.stdout)
        assert files["test-stdout.txt"].decode().splitlines() == [expected, str(root)], files
        assert files["reward.txt"] == b"1\n"
    root = Path(tempfile.mkdtemp())
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text("true\n")
    script = run_verifier(30, None, "no-such-user").replace("/tests/", f"{root}/tests/").replace("/logs/", f"{root}/logs/")
    ran = subprocess.run(["sh", "-c", script], capture_output=True, timeout=60, check=False)
    assert f"{VERIFIER_USER_MISSING}no-such-user" in ran.stderr.decode()
