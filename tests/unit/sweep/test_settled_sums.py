"""sweep/settled_sums.py: a sweep's settled trials added up as they settle, are replaced and
leave give what one pass over them gives (sweep/rollup.py) — counts, pass@k, exact costs, the
(task, attempt) pairs — and a reconcile's plan (sweep/drive/plan.py) reads them, its watched
trials and the trials in both the way a pass over `SweepTrials` reads them."""

from __future__ import annotations

import math
from fractions import Fraction

from buzz_operator.sweep.drive.settled import Namespace
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.rollup import tally
from buzz_operator.sweep.settled_sums import SettledSums, sums_of
from buzz_operator.sweep.trial_view import TrialState, TrialView
from hypothesis import given, settings
from hypothesis import strategies as st

STATES = [TrialState.SUCCEEDED, TrialState.FAILED, TrialState.BROKEN]
views = st.builds(
    TrialView,
    name=st.sampled_from([f"t-{i}" for i in range(25)]),
    sweep=st.sampled_from(["a", "b"]),
    task=st.sampled_from(["x", "y", "z"]),
    attempt=st.integers(1, 4),
    state=st.sampled_from(STATES),
    reward=st.sampled_from([None, 0.0, 0.3, 1.0]),
    scored=st.booleans(),
    cost_floor=st.floats(0, 10, allow_nan=False),
    cost_ceiling=st.sampled_from([0.1, 0.2, 1e-9, 3.3]),
)
operations = st.lists(st.one_of(st.tuples(st.just("keep"), views),
                                st.tuples(st.just("drop"), st.sampled_from([f"t-{i}" for i in range(25)]))),
                      max_size=120)


def same(sums: SettledSums, trials: list[TrialView]) -> None:
    again = tally(trials)
    counted = sums.tally()
    assert counted.counts == again.counts and counted.created == again.created == len(sums)
    assert counted.scored == again.scored
    assert {k: v for k, v in counted.by_task.items() if v[0]} == {k: v for k, v in again.by_task.items() if v[0]}
    # exact: a trial added and removed leaves no rounding; the float is the correctly rounded sum
    assert sums.cost_floor == sum((Fraction(t.cost_floor) for t in trials), Fraction(0))
    assert counted.cost_floor == math.fsum(t.cost_floor for t in trials)
    assert counted.reward_sum == math.fsum((t.reward or 0.0) for t in trials if t.scored)
    for task in ("x", "y", "z"):
        for attempt in range(6):
            assert sums.has(task, attempt) == any(t.task == task and t.attempt == attempt for t in trials)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_running_sums_equal_a_pass_over_the_settled_trials(ops: list[tuple[str, object]]) -> None:
    kept = Namespace()
    model: dict[str, TrialView] = {}
    for op, arg in ops:
        if op == "keep":
            assert isinstance(arg, TrialView)
            kept.keep_view(arg)
            model[arg.name] = arg
        else:
            assert isinstance(arg, str)
            kept.drop(arg)
            model.pop(arg, None)
    for sweep in ("a", "b"):
        trials = [t for t in model.values() if t.sweep == sweep]
        if not trials:
            assert sweep not in kept.sums  # a sweep's sums leave with its last settled trial
            continue
        same(kept.sums[sweep], trials)


@settings(max_examples=100, deadline=None)
@given(st.lists(views, max_size=30, unique_by=lambda t: t.name), st.lists(views, max_size=8, unique_by=lambda t: t.name))
def test_the_plan_reads_sums_and_watched_trials_as_a_pass_reads_them(settled: list[TrialView],
                                                                    watched: list[TrialView]) -> None:
    settled = [t._replace(sweep="a") for t in settled]
    watched = [t._replace(sweep="a", state=TrialState.RUNNING) for t in watched]  # some also settled: kopf's is newer
    by_name = {t.name: t for t in settled}
    mine = SweepTrials(watched, settled=lambda: iter(settled), settled_get=by_name.get,
                       settled_sums=lambda: sums_of(settled))
    sums, also = mine.settled_sums()
    counted = sums.tally(less=also)
    for trial in mine.watched:
        counted.add(trial)
    passed = tally(mine)  # the pass the plan used to make
    assert counted.counts == passed.counts and counted.created == passed.created
    assert counted.scored == passed.scored
    assert {k: v for k, v in counted.by_task.items() if v[0]} == {k: v for k, v in passed.by_task.items() if v[0]}
    assert math.isclose(counted.cost_ceiling, passed.cost_ceiling, rel_tol=1e-12, abs_tol=1e-12)
    # without the settled readers given, the same figures come from reading `settled`
    fallback, fallback_also = SweepTrials(watched, settled=lambda: iter(settled)).settled_sums()
    assert len(fallback) == len(sums) and sorted(fallback_also) == sorted(also)


def test_names_are_looked_up_not_collected() -> None:
    done = TrialView(name="done", sweep="a", task="x", attempt=1, state=TrialState.SUCCEEDED)
    running = TrialView(name="running", sweep="a", task="x", attempt=2, state=TrialState.RUNNING)
    asked: list[str] = []

    def get(name: str) -> TrialView | None:
        asked.append(name)
        return done if name == "done" else None

    mine = SweepTrials([running], settled=lambda: iter([done]), settled_get=get)
    assert "done" in mine.names() and "running" in mine.names() and "other" not in mine.names()
    assert "done" in mine.finished() and "running" not in mine.finished() and 3 not in mine.names()
    assert asked == ["done", "other", "done"]  # kopf's trials are found without asking the columns
