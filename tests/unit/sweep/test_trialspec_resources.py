"""The sweep's cpuRequestFraction lowers only the CPU request of a trial, never its limit."""

from __future__ import annotations

from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset import builtin_dataset_path, load_task
from buzz_operator.sweep.trialspec import trial_resources

ROOT = builtin_dataset_path().parent


def test_fraction_sets_a_request_below_the_task_limit() -> None:
    task = load_task(builtin_dataset_path() / "hello-file")
    manifest = ExperimentManifest.load(ROOT / "manifests" / "standin-oracle.yaml")
    assert trial_resources(task, manifest).cpu_request is None
    shared = trial_resources(task, manifest, 0.25)
    assert (shared.cpus, shared.cpu_request) == (1, 0.25)
