"""One sweep's trials as the operator knows them, read as a stream (docs/design.md#settled-trials).

The unsettled ones are kopf's (its index of BuzzTrials: few, bounded by the sweeps'
parallelism and what is still being torn down); the settled ones are kept in columns
(sweep/drive/settled.py) and built as summaries only while they are read. A reconcile reads
the sweep's trials a few times — to plan and tally, for summary.json when it is due, for a rerun
or regrade — and each pass holds one summary at a time: a list of every trial on every tick
was the largest thing a 100,000-trial sweep's reconcile allocated, and what a tick frees the
allocators keep (docs/performance.md#memory).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter

from buzz_operator.sweep.trial_view import TrialView

_NAME = attrgetter("name")


def _none() -> Iterable[TrialView]:
    return ()


class SweepTrials:
    """Iterable as often as needed. `settled` reads the settled trials' summaries afresh each
    call; `settled_by_name` the same in name order (summary.json is written so). A trial being
    settled, or unsettled for a regrade, can be in both for a moment; kopf's entry is the newer."""

    def __init__(self, watched: Sequence[TrialView], settled: Callable[[], Iterable[TrialView]] = _none,
                 settled_by_name: Callable[[], Iterable[TrialView]] | None = None) -> None:
        self.watched = list(watched)
        self._names = frozenset(t.name for t in self.watched)
        self._settled = settled
        self._settled_by_name = settled_by_name

    def __iter__(self) -> Iterator[TrialView]:
        yield from self.watched
        names = self._names
        for trial in self._settled():
            if trial.name not in names:
                yield trial

    def by_name(self) -> Iterator[TrialView]:
        """Every trial once, in name order; with no ordered reader of the settled ones given,
        they are sorted here (a list of them all for as long as the pass lasts)."""
        names = self._names
        if self._settled_by_name is None:
            return iter(sorted(self, key=_NAME))
        settled = (t for t in self._settled_by_name() if t.name not in names)
        return heapq.merge(sorted(self.watched, key=_NAME), settled, key=_NAME)

    def empty(self) -> bool:
        return next(iter(self), None) is None
