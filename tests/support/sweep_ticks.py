"""A tick of the sweep's reconcile built from real inputs — the repository's condition manifest
and task directories, a file:// object store — for the policies' unit tests. The policies'
calls to the API server are not made here: each test takes a path that stops before one, and
the paths that reach the API server run against a real one in tests/integration/operator."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from buzz_operator.api import validate_sweep_spec
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition.manifest import ExperimentManifest
from buzz_operator.dataset.task import load_task
from buzz_operator.storage.file_store import FileStore
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.known import SweepTrials
from buzz_operator.sweep.settings import OperatorSettings
from buzz_operator.sweep.trial_view import TrialState, TrialView

REPO = Path(__file__).resolve().parents[2]
MANIFEST = ExperimentManifest.load(REPO / "manifests" / "standin-oracle.yaml")
TASKS = [load_task(REPO / "tasks" / name) for name in ("reply-to-thread", "user-mention")]
NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)
SPEC: dict[str, Any] = {
    "condition": {"configMapRef": {"name": "standin-oracle"}},
    "dataset": {"builtin": {}},
    "attempts": 2,
    "parallelism": 3,
    "storage": {"url": "file:///unused"},
    "relay": {
        "url": "ws://localhost:3600",
        "serviceRef": {"name": "buzz-dev-relay", "port": 3600},
        "ownerKeySecretRef": {"name": "buzz-dev-relay", "key": "owner-key"},
        "postgresDsnSecretRef": {"name": "buzz-dev-relay", "key": "postgres-dsn"},
    },
}


def sweep_body(spec: dict[str, Any] | None = None, status: dict[str, Any] | None = None,
               generation: int = 1) -> dict[str, Any]:
    return {"metadata": {"name": "s", "namespace": "ns", "uid": "uid-1", "generation": generation},
            "spec": SPEC if spec is None else spec, "status": status or {}}


def trial(name: str, task: str, attempt: int, state: TrialState = TrialState.SUCCEEDED,
          reward: float | None = 1.0) -> TrialView:
    scored = state is TrialState.SUCCEEDED
    return TrialView(name=name, sweep="s", task=task, attempt=attempt, state=state,
                        reward=reward if scored else None, scored=scored, cost_floor=0.1, cost_ceiling=0.2,
                        outcome="ok" if scored else None, stack_digest="a" * 64)


def tick(body: dict[str, Any] | None = None, mine: list[TrialView] | None = None,
         settings: OperatorSettings | None = None) -> Tick:
    started = Tick.start(None, body or sweep_body(), [], SweepTrials(mine or []),  # type: ignore[arg-type]
                         settings or OperatorSettings())
    return Tick(started.kube, started.body, started.watched, started.mine, started.settings, started.previous, NOW)


def inputs(store_root: Path, spec: dict[str, Any] | None = None) -> SweepInputs:
    parsed: BuzzSweepSpec = validate_sweep_spec(SPEC if spec is None else spec)
    return SweepInputs(parsed, MANIFEST, FileStore(store_root), "builtin", TASKS, {})
