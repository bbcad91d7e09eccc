"""A sweep's Events and status tell its start, its waits and its finish once each, against the
real apiserver: at spec.parallelism 1 the reconcile that sees one trial finish admits the next in
the same tick, and the sweep neither flaps Running to NoTrialsActive nor clears and re-posts its
Waiting between them (each flap was an Event and a status write per trial, bench/trial.py). Each
trial is created carrying kopf's finalizer, so kopf writes nothing to add it.

The sweep is for a comparison (spec.comparison, docs/statistics.md#planning): its one task cannot
detect a difference of 0.2, and status.power and one Underpowered Event say so without holding it
back; a second sweep, suspended, judges its size from the first as its baseline, read from the
first's summary.json in its store."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from buzz_operator.api.labels import FINALIZER
from kopf.testing import KopfRunner

from tests.integration.operator.test_operator import apply, condition, kubectl_json, operator_args, wait_until


def sweep_events(namespace: str, sweep: str) -> list[dict[str, Any]]:
    items = kubectl_json("-n", namespace, "get", "events")["items"]
    return [e for e in items if e["involvedObject"].get("kind") == "BuzzSweep" and e["involvedObject"]["name"] == sweep]


def posted(events: list[dict[str, Any]], reason: str) -> int:
    return sum(int(e.get("count") or 1) for e in events if e["reason"] == reason)


async def test_a_sequential_sweep_tells_its_story_once(  # type: ignore[no-untyped-def]
    namespace, crds, sweep_secrets, make_sweep, tmp_path: Path
) -> None:
    body = make_sweep("story", store_url=f"file://{tmp_path / 'store'}", tasks=["hello-file"], attempts=3,
                      parallelism=1, comparison={"passRate": 0.5, "difference": 0.2})
    against = make_sweep("story-b", store_url=f"file://{tmp_path / 'store'}", tasks=["hello-file"], attempts=3,
                         suspend=True, comparison={"baseline": "story", "difference": -0.5})
    seen_finalizers: list[list[str]] = []

    def done() -> dict[str, Any] | None:
        for trial in kubectl_json("-n", namespace, "get", "buzztrials")["items"]:
            if not (trial.get("status") or {}).get("phase"):  # not yet touched by its daemon
                seen_finalizers.append(list(trial["metadata"].get("finalizers") or []))
        sweep = kubectl_json("-n", namespace, "get", "buzzsweep", "story")
        complete = condition(sweep, "Complete")
        return sweep if complete and complete["status"] == "True" else None

    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        apply(namespace, body)
        sweep = wait_until(done, 600, "the sweep to complete")
        apply(namespace, against)

        def judged() -> dict[str, Any] | None:
            power = (kubectl_json("-n", namespace, "get", "buzzsweep", "story-b").get("status") or {}).get("power")
            return power if power and power.get("baselineScored") else None

        against_power = wait_until(judged, 300, "story-b judged against its baseline")
    assert runner.exception is None, runner.output
    power = sweep["status"]["power"]
    assert (power["enough"], power["tasks"], power["attempts"]) == (False, 1, 3), power
    assert power["tasksNeeded"] > 1 and "assumed pass rate of 0.5" in power["message"]
    # the baseline passed 3 of 3: a drop of 0.5 on one task is still out of this size's reach
    assert (against_power["baselineScored"], against_power["baselineFinished"], against_power["enough"]) == (
        3, True, False), against_power
    assert "baseline story's 1 task (3 scored trials)" in against_power["message"]
    assert posted(sweep_events(namespace, "story-b"), "Underpowered") == 1
    assert (sweep["status"]["total"], sweep["status"]["succeeded"]) == (3, 3), sweep["status"]
    events = sweep_events(namespace, "story")
    story = [(e["reason"], e["message"]) for e in sorted(events, key=lambda e: e["metadata"]["creationTimestamp"])]
    print("\n" + "\n".join(f"{reason}: {message}" for reason, message in story))
    assert posted(events, "NoTrialsActive") == 0, story
    assert posted(events, "Underpowered") == 1, story
    assert posted(events, "TrialsActive") == 1, story
    assert posted(events, "AllTrialsFinished") >= 1, story  # Running=False and Complete=True, once each
    # one wait on parallelism for the whole sweep, not one per trial admitted
    assert posted(events, "Waiting") <= 1, story
    assert all(FINALIZER in found for found in seen_finalizers), seen_finalizers
