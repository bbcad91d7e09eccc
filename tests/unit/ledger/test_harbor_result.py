"""Harbor result.json (docs/harbor.md) and agent metadata (docs/bundle.md#agent-metadata)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone

from buzz_operator.condition import ExperimentManifest
from buzz_operator.ledger import (
    PhaseTiming,
    TrialException,
    account,
    agent_metadata,
    agent_result,
    build_trial_result,
    render_trial_result,
    scan_log_text,
)
from buzz_operator.ledger.harbor_result import iso_datetime
from pydantic import TypeAdapter

from .builders import turn_end, usage

T0 = datetime(2026, 11, 29, 23, 0, 0, tzinfo=UTC)
STACK = {"image": "docker.io/buzz/stack:dev", "layout": "folder", "digest": "d" * 64, "binaries": {"buzz-acp": "e" * 64}}


def metadata_for(manifest: ExperimentManifest, seats) -> tuple[dict, object]:
    accounting = account(seats, {"lead-1": scan_log_text([usage("A", 2000, 300) + turn_end()])}, manifest.prices)
    metadata = agent_metadata(
        accounting=accounting,
        completion_message_id="ev1",
        completion_message="DONE: shipped",
        stopped_without_done=False,
        buzz_evidence_exported=True,
        agent_active_seconds=41.5,
        usage_settle_seconds=0.25,
        container_trust_store="seeded",
        container_verifier_deps="installed",
        agent_max_rounds={"lead-1": 0},
        solo_roster=False,
        agent_platform_prompt={"lead-1": True},
        manifest_sha256=manifest.sha256,
        condition=manifest.condition,
        buzz_channel_id="chan-1",
        run_id="sweep-a",
        trial_id="trial-1",
        stack=STACK,
    )
    return metadata, accounting


def test_metadata_key_order_follows_the_seed(manifest: ExperimentManifest, seats) -> None:
    metadata, accounting = metadata_for(manifest, seats)
    keys = list(metadata)
    assert keys[:14] == [
        "completion_message_id", "completion_message", "stopped_without_done", "buzz_evidence_exported",
        "agent_runtime", "agent_active_seconds", "usage_settle_seconds", "container_trust_store",
        "container_verifier_deps", "agent_hints_enabled", "task_seed", "agent_max_rounds", "solo_roster",
        "agent_platform_prompt",
    ]  # fmt: skip
    assert keys[14:29] == list(accounting.to_metadata())
    assert keys[29:] == ["manifest_sha256", "condition", "buzz_channel_id", "run_id", "trial_id", "stack"]
    assert metadata["stack"] == STACK  # the project's key, after the seed's
    assert (metadata["agent_runtime"], metadata["task_seed"], metadata["agent_hints_enabled"]) == (
        "in-container", "user-identity-prompt", False
    )


def test_result_json_fields(manifest: ExperimentManifest, seats) -> None:
    metadata, accounting = metadata_for(manifest, seats)
    try:
        raise TimeoutError("agent timed out after 600s")
    except TimeoutError as error:
        exception = TrialException.from_exception(error, T0 + timedelta(minutes=10))
    result = build_trial_result(
        trial_uuid="3f0e9b9c-5d0c-4a7e-9a43-1c2b3d4e5f60",
        task_name="buzz-native/reply-to-thread",
        trial_name="reply-to-thread__abc123",
        trial_uri="file:///store/sweep-a/reply-to-thread__abc123",
        task_id={"path": "tasks/reply-to-thread"},
        source="buzz-native",
        task_checksum="9" * 64,
        config={"agent": {"kwargs": {"manifest": "manifests/team.yaml"}}},
        model_info={"name": "opus-5", "provider": "databricks_v2"},
        agent_result=agent_result(accounting, metadata),
        rewards={"reward": 1.0, "answer_correct": 1.0},
        exception=exception,
        started_at=T0,
        finished_at=T0 + timedelta(minutes=11),
        environment_setup=PhaseTiming(T0, T0 + timedelta(seconds=5)),
        agent_setup=PhaseTiming(T0 + timedelta(seconds=5), T0 + timedelta(seconds=9)),
        agent_execution=PhaseTiming(T0 + timedelta(seconds=9), T0 + timedelta(minutes=10)),
        verifier=PhaseTiming(T0 + timedelta(minutes=10), T0 + timedelta(minutes=11)),
    )
    assert list(result) == [
        "schema_version", "id", "task_name", "trial_name", "trial_uri", "task_id", "source", "task_checksum",
        "config", "agent_info", "agent_result", "verifier_result", "exception_info", "started_at", "finished_at",
        "environment_setup", "agent_setup", "agent_execution", "verifier", "reward_valid",
    ]  # fmt: skip
    assert result["schema_version"] == 1
    # a Python exception has no project class, so no override: Harbor 0.26's table does not know
    # the name, and its policy for an unknown name lets the reward stand
    assert "policy_override" not in result["exception_info"] and result["reward_valid"] is True
    assert result["exception_info"]["policy"] == {"should_retry": True, "should_grade": True, "has_valid_reward": True}
    assert result["agent_info"] == {
        "name": "buzz-orchestra", "version": "0.1.0", "model_info": {"name": "opus-5", "provider": "databricks_v2"}
    }  # fmt: skip
    assert list(result["agent_result"]) == [
        "n_input_tokens", "n_cache_tokens", "n_output_tokens", "cost_usd", "rollout_details", "metadata"
    ]  # fmt: skip
    assert (result["agent_result"]["n_input_tokens"], result["agent_result"]["n_output_tokens"]) == (2000, 300)
    assert result["agent_result"]["n_cache_tokens"] == 0
    assert result["agent_result"]["cost_usd"] == accounting.cost_usd
    assert result["verifier_result"] == {"rewards": {"reward": 1.0, "answer_correct": 1.0}}
    assert result["exception_info"]["exception_type"] == "TimeoutError"
    assert result["exception_info"]["exception_message"] == "agent timed out after 600s"
    assert "raise TimeoutError" in result["exception_info"]["exception_traceback"]
    assert result["exception_info"]["occurred_at"] == "2026-11-29T23:10:00Z"
    assert result["agent_execution"] == {"started_at": "2026-11-29T23:00:09Z", "finished_at": "2026-11-29T23:10:00Z"}
    text = render_trial_result(result)
    assert json.loads(text) == result and text.startswith("{\n    \"schema_version\": 1,\n    \"id\": ")


def test_result_json_of_a_trial_that_never_ran() -> None:
    result = build_trial_result(
        trial_uuid="u", task_name="t", trial_name="n", trial_uri="file:///x", task_id={"path": "t"}, source=None,
        task_checksum="c", config={}, model_info=None, agent_result=None, rewards=None, exception=None,
        started_at=None, finished_at=None,
    )  # fmt: skip
    assert result["agent_info"]["model_info"] is None
    assert [result[key] for key in ("agent_result", "verifier_result", "exception_info", "verifier")] == [None] * 4


def test_datetimes_render_as_pydantic_does() -> None:
    adapter = TypeAdapter(datetime)
    for value in (
        T0,
        T0.replace(microsecond=120_000),
        datetime(2026, 1, 2, 3, 4, 5),
        datetime(2026, 1, 2, 3, 4, 5, 7, tzinfo=timezone(timedelta(hours=2))),
    ):
        assert iso_datetime(value) == adapter.dump_python(value, mode="json")
