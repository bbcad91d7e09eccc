"""One sweep's trials as the operator knows them, read as a stream (docs/design.md#settled-trials).

The unsettled ones are kopf's (its index of BuzzTrials: few, bounded by the sweeps'
parallelism and what is still being torn down); the settled ones are kept in columns
(sweep/drive/settled.py) and built as summaries only while they are read. A reconcile plans and
tallies from the watched trials and the settled ones' running sums (`sums`, sweep/settled_sums.py),
and reads every trial only for summary.json when it is due and for a rerun or regrade; each such
pass holds one summary at a time: a list of every trial on every tick was the largest thing a
100,000-trial sweep's reconcile allocated, and what a tick frees the allocators keep
(docs/performance.md#memory).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import attrgetter

from buzz_operator.sweep.settled_sums import SettledSums, sums_of
from buzz_operator.sweep.trial_view import TrialView

_NAME = attrgetter("name")


def _none() -> Iterable[TrialView]:
    return ()


class SweepTrials:
    """Iterable as often as needed. `settled` reads the settled trials' summaries afresh each
    call; `settled_by_name` the same in name order (summary.json is written so). A trial being
    settled, or unsettled for a regrade, can be in both for a moment; kopf's entry is the newer."""

    def __init__(self, watched: Sequence[TrialView], settled: Callable[[], Iterable[TrialView]] = _none,
                 settled_by_name: Callable[[], Iterable[TrialView]] | None = None,
                 settled_get: Callable[[str], TrialView | None] | None = None,
                 settled_sums: Callable[[], SettledSums] | None = None) -> None:
        """`settled_get` finds one settled trial by name, `settled_sums` gives the settled trials
        added up (sweep/drive/settled.py keeps both); without them they are read from `settled`."""
        self.watched = list(watched)
        self._by_name = {t.name: t for t in self.watched}
        self._names = self._by_name.keys()
        self._settled = settled
        self._settled_by_name = settled_by_name
        self._settled_get = settled_get
        self._settled_sums = settled_sums

    def get(self, name: str) -> TrialView | None:
        """The trial called `name`: kopf's entry, else the settled one."""
        if (trial := self._by_name.get(name)) is not None:
            return trial
        if self._settled_get is not None:
            return self._settled_get(name)
        return next((t for t in self._settled() if t.name == name), None)

    def names(self) -> Names:
        """The trials' names as a container, each looked up when asked (no set of them made)."""
        return Names(self, finished=False)

    def finished(self) -> Names:
        """The names of the trials that are terminal, as a container."""
        return Names(self, finished=True)

    def settled_sums(self) -> tuple[SettledSums, list[TrialView]]:
        """The settled trials added up, and the settled entries of the trials kopf watches too
        (to take away: kopf's entry is the newer)."""
        if self._settled_sums is None:
            return sums_of(t for t in self._settled()), [t for t in self._settled() if t.name in self._names]
        sums = self._settled_sums()
        if not sums or self._settled_get is None:
            return sums, []
        return sums, [old for name in self._names if (old := self._settled_get(name)) is not None]

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


class Names:
    """A container of a sweep's trial names (of its finished ones only, with `finished`)."""

    def __init__(self, trials: SweepTrials, *, finished: bool) -> None:
        self.trials = trials
        self.only_finished = finished

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        trial = self.trials.get(name)
        return trial is not None and not (self.only_finished and trial.active)
