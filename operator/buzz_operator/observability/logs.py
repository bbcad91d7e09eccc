"""Structured JSON logs that carry the sweep and trial a line is about.

kopf's JSON formatter already names the object of its own log lines (`object`); this filter
adds flat `sweep` and `trial` fields to every line, including the runtime's plain loggers,
from the object reference or from a context variable the trial daemon sets for its task.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from contextvars import ContextVar

REFKEY = "object"
CURRENT: ContextVar[tuple[str, str | None] | None] = ContextVar("buzz_ids", default=None)  # (sweep, trial)
_SWEEP_OF: dict[tuple[str, str], str] = {}  # (namespace, trial) -> sweep, fed by the trial index


def remember_trial(namespace: str, trial: str, sweep: str) -> None:
    _SWEEP_OF[(namespace, trial)] = sweep


def retain_trials(keys: Iterable[tuple[str, str]]) -> None:
    """Forget the trials kopf no longer watches (settled or deleted): kopf logs nothing more of
    them, and an entry a trial kept for good grew the operator by one per trial ever run."""
    alive = set(keys)
    for key in [k for k in _SWEEP_OF if k not in alive]:
        del _SWEEP_OF[key]


class IdsFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ref = getattr(record, "k8s_ref", None) or {}
        kind, name, namespace = ref.get("kind"), ref.get("name"), ref.get("namespace", "")
        if kind == "BuzzSweep" and name:
            record.sweep = name
        elif kind == "BuzzTrial" and name:
            record.trial = name
            sweep = _SWEEP_OF.get((namespace, name))
            if sweep:
                record.sweep = sweep
        elif (current := CURRENT.get()) is not None:
            record.sweep = current[0]
            if current[1]:
                record.trial = current[1]
        return True


def add_ids_filter() -> None:
    """The id filter on every root handler (once), after kopf's logging set-up made them."""
    # one access line per liveness probe and scrape would drown the trial lines
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, IdsFilter) for f in handler.filters):
            handler.addFilter(IdsFilter())
