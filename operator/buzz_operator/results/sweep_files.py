"""A sweep's bundle files → its summary. Pure: the caller fetched the bytes (see files.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from . import files as F
from .table import ResultsTable, tabulate
from .trial import TrialRecord, read_trial

TrialFiles = Mapping[str, bytes]


def tabulate_sweep(
    sweep: str, trials: Mapping[str, TrialFiles], sweep_config: Mapping[str, Any] | None = None
) -> ResultsTable:
    """``trials`` maps each trial directory name to its files (path inside the trial dir → bytes).

    A trial without result.json has not committed (still running, or lost before its bundle
    landed) and is reported as unfinished, never scored; a committed trial that no file
    identifies as a Buzz trial is reported as skipped rather than silently dropped.
    """
    records: list[TrialRecord] = []
    unfinished: list[str] = []
    skipped: list[str] = []
    for name, trial_files in trials.items():
        if F.RESULT not in trial_files:
            unfinished.append(name)
            continue
        record = read_trial(name, trial_files, sweep_config)
        if record is None:
            skipped.append(name)
        else:
            records.append(record)
    return tabulate(sweep, records, unfinished=unfinished, skipped=skipped)
