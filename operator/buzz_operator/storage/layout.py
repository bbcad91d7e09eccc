"""Where a sweep's and a trial's files live in the store: the Harbor-compatible layout of
docs/bundle.md#layout, relative to the store's own root (the `<prefix>` of the layout is the store URL).

    <sweep>/config.json  lock.json  summary.json
    <sweep>/<trial>/config.json  result.json          result.json last: the commit marker
    <sweep>/<trial>/agent/buzz/<file>   <sweep>/<trial>/verifier/<file>
    <sweep>/<trial>/retries/<n>/...                   the n-th try failed on infra, another followed
    <sweep>/<trial>/reruns/<generation>/...           a finished run set aside by spec.rerun, kept
    <sweep>/<trial>/regrades/<generation>/verifier/   the verifier re-run on recorded evidence
    <sweep>/<trial>/quarantined.json                  only this, when the bundle had suspected secrets
                                                      and the sweep quarantines: it names the prefix
    <quarantine prefix>/<sweep>/<trial>/...           where that bundle is, in the same layout

Pure: names in, keys out. Sweep and trial names must each be one safe path segment."""

from __future__ import annotations

from .errors import InvalidKey
from .keys import join_key, validate_key, validate_segment

CONFIG = "config.json"
LOCK = "lock.json"
SUMMARY = "summary.json"
RESULT = "result.json"
AGENT_DIR = "agent/buzz"
VERIFIER_DIR = "verifier"
RETRIES_DIR = "retries"
RERUNS_DIR = "reruns"
REGRADES_DIR = "regrades"
QUARANTINED = "quarantined.json"


def sweep_prefix(sweep: str) -> str:
    return validate_segment(sweep, field="sweep")


def trial_prefix(sweep: str, trial: str) -> str:
    return join_key(sweep_prefix(sweep), validate_segment(trial, field="trial"))


def sweep_config_key(sweep: str) -> str:
    return join_key(sweep_prefix(sweep), CONFIG)


def sweep_lock_key(sweep: str) -> str:
    return join_key(sweep_prefix(sweep), LOCK)


def sweep_summary_key(sweep: str) -> str:
    return join_key(sweep_prefix(sweep), SUMMARY)


def trial_config_key(sweep: str, trial: str) -> str:
    return join_key(trial_prefix(sweep, trial), CONFIG)


def trial_result_key(sweep: str, trial: str) -> str:
    """The trial's commit marker: present only once everything else of the bundle is stored."""
    return join_key(trial_prefix(sweep, trial), RESULT)


def agent_key(sweep: str, trial: str, file: str) -> str:
    """agent/buzz/<file>; `file` may hold subdirectories but never climbs out."""
    return join_key(trial_prefix(sweep, trial), AGENT_DIR, validate_key(file, field="agent file"))


def verifier_key(sweep: str, trial: str, file: str) -> str:
    return join_key(trial_prefix(sweep, trial), VERIFIER_DIR, validate_key(file, field="verifier file"))


def retry_prefix(sweep: str, trial: str, failed_try: int) -> str:
    """retries/<failed_try>/: where the evidence of the `failed_try`-th try that failed on infra
    (from 1) is kept."""
    if isinstance(failed_try, bool) or not isinstance(failed_try, int) or failed_try < 1:
        raise InvalidKey(f"failed try must be an integer >= 1, got {failed_try!r}")
    return join_key(trial_prefix(sweep, trial), RETRIES_DIR, str(failed_try))


def retry_key(sweep: str, trial: str, failed_try: int, file: str) -> str:
    return join_key(retry_prefix(sweep, trial, failed_try), validate_key(file, field="retry file"))


def rerun_prefix(sweep: str, trial: str, generation: int) -> str:
    """reruns/<generation>/: the run that spec.rerun (at sweep `generation`) set aside."""
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        raise InvalidKey(f"generation must be an integer >= 1, got {generation!r}")
    return join_key(trial_prefix(sweep, trial), RERUNS_DIR, str(generation))


def regrade_prefix(sweep: str, trial: str, generation: int) -> str:
    """regrades/<generation>/: the verifier output of spec.regrade at sweep `generation`."""
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        raise InvalidKey(f"generation must be an integer >= 1, got {generation!r}")
    return join_key(trial_prefix(sweep, trial), REGRADES_DIR, str(generation))


def quarantine_pointer_key(sweep: str, trial: str) -> str:
    """The trial's quarantined.json: where a quarantined bundle is (the trial dir holds nothing else)."""
    return join_key(trial_prefix(sweep, trial), QUARANTINED)
