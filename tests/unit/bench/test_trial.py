"""bench/trial.py: the operator's CPU-seconds read from /proc/<pid>/stat."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from trial import stat_cpu_seconds


def test_cpu_seconds_are_utime_stime_and_reaped_childrens_after_a_command_name_with_spaces() -> None:
    # fields: pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime cutime ...
    stat = "4242 (python (bench) x) S 1 4242 4242 0 -1 4194304 900 0 3 0 250 50 7 3 20 0 9 0 100 0 0\n"
    assert stat_cpu_seconds(stat, 100) == pytest.approx(3.1)


def test_the_sweeps_writes_are_its_status_its_events_and_its_canary() -> None:
    from trial import sweep_writes

    # five one-try trials: five trial pods created, relabelled and deleted; one canary created
    # (no name in the request), relabelled and deleted twice
    requests = {"POST pods": 6, "PATCH pods": 5, "PATCH pods(preflight)": 1, "DELETE pods": 5,
                "DELETE pods(preflight)": 2, "PATCH buzzsweeps/status": 11, "PATCH buzzsweeps": 1,
                "PATCH buzztrials/status": 20, "POST events": 17, "GET pods(preflight)": 4, "WATCH buzzsweeps": 3}
    assert sweep_writes(requests, tries=5, sweep_events=7) == 11 + 1 + 7 + (1 + 1 + 2)
    # a retried trial's second pod is a trial's, not the canary's
    assert sweep_writes({**requests, "POST pods": 7}, tries=6, sweep_events=7) == 23
