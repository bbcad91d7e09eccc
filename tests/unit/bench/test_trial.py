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
