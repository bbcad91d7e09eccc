"""Sweep planning (pure): deterministic trial names, lazy admission under concurrency and
cost caps, and the rollup of trial results into the sweep's small status."""

from buzz_operator.sweep.admission import AdmissionDecision, admit
from buzz_operator.sweep.lifecycle import condition_drift, seconds_until_expiry
from buzz_operator.sweep.planner import MissingTrials, PlannedTrial, plan_missing, plan_trials, trial_name
from buzz_operator.sweep.rerun import select_reruns
from buzz_operator.sweep.rollup import SweepRollup, rollup
from buzz_operator.sweep.status import next_sweep_status
from buzz_operator.sweep.status_conditions import sweep_conditions
from buzz_operator.sweep.trial_view import TrialState, TrialView, view_trial
from buzz_operator.sweep.trialspec import build_trial_spec, trial_object

__all__ = [
    "AdmissionDecision",
    "MissingTrials",
    "PlannedTrial",
    "SweepRollup",
    "TrialState",
    "TrialView",
    "admit",
    "build_trial_spec",
    "condition_drift",
    "next_sweep_status",
    "plan_missing",
    "plan_trials",
    "rollup",
    "seconds_until_expiry",
    "select_reruns",
    "sweep_conditions",
    "trial_name",
    "trial_object",
    "view_trial",
]
