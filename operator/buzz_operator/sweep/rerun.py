"""Which finished trials `spec.rerun.reasons` asks to run again, and which spec.regrade asks
to grade again (Harbor's
`jobs resume --filter-error-type`, Hawk #168/#169: re-run only what failed for a reason)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence

from buzz_operator.sweep.trial_view import TrialView


def select_reruns(
    trials: Iterable[TrialView], reasons: Sequence[str], generation: int | None = None
) -> Iterator[TrialView]:
    """Terminal trials whose outcome (ok, timeout, launch, error, broken) or CamelCase reason
    (e.g. ImagePullFailed, VerifierBroken) is one of ``reasons``, in the order of `trials` (the
    sweep's in name order: `SweepTrials.by_name`), chosen as they are read: a rerun of most of a
    100,000-trial sweep holds no list of them.

    Running and pending trials are never selected: re-running means replacing a finished
    record, and a trial still in its corridor has none yet. Nor is a trial created at or after
    `generation` (the sweep generation that asked for the rerun): it already is the re-run, and
    one failing the same way again would otherwise be re-run forever.
    """
    wanted = set(reasons)
    return (
        trial for trial in trials
        if not trial.active and (trial.outcome in wanted or trial.reason in wanted)
        and not (generation is not None and trial.created_generation is not None
                 and trial.created_generation >= generation)
    )


def select_regrades(trials: Iterable[TrialView], generation: int) -> Iterator[TrialView]:
    """Scored, finished trials spec.regrade (at `generation`) has not yet asked to regrade, in
    the order of `trials`, chosen as they are read (as `select_reruns`).

    Trials created at or after `generation` were graded under it already; broken and
    infra-failed trials are not scored, so a new reward would change nothing.
    """
    return (
        trial for trial in trials
        if not trial.active and trial.scored
        and (trial.regrade_requested is None or trial.regrade_requested < generation)
        and not (trial.created_generation is not None and trial.created_generation >= generation)
    )
