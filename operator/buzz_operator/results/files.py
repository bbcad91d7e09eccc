"""Which files of a trial bundle the results room reads, by their path inside the trial dir.

The layout is storage/layout.py's (the Harbor job layout); the names are repeated here as
plain strings because this room is pure and must not import the storage room. A caller that
fetches from a store asks ``table_needs`` which keys to download, so a summary never pulls
a whole bundle (transcripts, evidence) just to count flags.
"""

from __future__ import annotations

RESULT = "result.json"
CONFIG = "config.json"
AGENT_DIR = "agent/buzz"
BUNDLE_SUMMARY = f"{AGENT_DIR}/summary.json"
BUNDLE_MANIFEST = f"{AGENT_DIR}/manifest.json"
ENDPOINTS = f"{AGENT_DIR}/endpoints.redacted.json"
EVIDENCE = f"{AGENT_DIR}/buzz-evidence.json"
TRANSCRIPT = f"{AGENT_DIR}/transcript.json"
VERIFIER_STDOUT = "verifier/test-stdout.txt"
RETRIES_DIR = "retries"
# the only file a quarantined trial keeps in its own directory (storage/layout.py QUARANTINED)
QUARANTINED = "quarantined.json"
# docs/failures.md#summaries: the round-cap grep reads only the agent logs directly in agent/buzz/
LOG_SUFFIXES = (".stdout.log", ".stderr.log")


def is_agent_log(rel: str) -> bool:
    """An agent log directly in agent/buzz/ (not a subdirectory), as summarize.py's iterdir."""
    head, _, name = rel.rpartition("/")
    return head == AGENT_DIR and name.endswith(LOG_SUFFIXES)


def table_needs(rel: str) -> bool:
    """Whether the summary reads the trial file at relative path ``rel``. The bundle's
    manifest.json is only a fallback for the condition's identity: see ``fallback_needs``."""
    return rel in (RESULT, CONFIG, BUNDLE_SUMMARY, VERIFIER_STDOUT) or is_agent_log(rel)


def fallback_needs(rel: str) -> bool:
    """Files read only for a committed trial that neither result.json nor summary.json names."""
    return rel == BUNDLE_MANIFEST


def split_trial_key(rel_to_sweep: str) -> tuple[str, str] | None:
    """``<trial>/<path>`` → (trial, path); None for sweep-level files (config.json, lock.json…)."""
    trial, sep, rest = rel_to_sweep.partition("/")
    if not sep or not rest:
        return None
    return trial, rest
