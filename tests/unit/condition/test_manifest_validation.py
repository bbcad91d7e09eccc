"""Every manifest rule (docs/condition.md#manifest) with the message a user sees."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from buzz_operator.condition import ConditionError, ExperimentManifest
from buzz_operator.condition.agent_env import compaction_env
from pydantic import ValidationError


def _error(data: Any) -> ConditionError:
    with pytest.raises(ConditionError) as caught:
        ExperimentManifest.load(data)
    return caught.value


def test_valid_solo_and_team_load(solo: dict, team: dict) -> None:
    assert ExperimentManifest.load(solo).is_solo
    manifest = ExperimentManifest.load(team)
    assert not manifest.is_solo
    assert [entry.id for entry in manifest.roster] == ["lead", "worker", "critic"]


def test_temperature_is_refused_with_the_reason(solo: dict) -> None:
    solo["roster"][0]["generation"] = {"temperature": 0.0}
    error = _error(solo)
    assert error.field == "roster.0.generation.temperature"
    assert "buzz-agent exposes no temperature environment variable" in str(error)
    assert str(error).startswith("roster.0.generation.temperature: ")


def test_unknown_keys_are_refused_everywhere(solo: dict) -> None:
    solo["trial_budget"]["timeout"] = 5
    error = _error(solo)
    assert error.field == "trial_budget.timeout"
    assert "unknown field" in error.reason


def test_unknown_top_level_key(solo: dict) -> None:
    solo["conditon"] = "typo"
    assert _error(solo).field == "conditon"


def test_exactly_one_orchestrator_by_summed_count(solo: dict) -> None:
    solo["roster"][0]["count"] = 2
    error = _error(solo)
    assert error.field == "roster"
    assert "roster must contain exactly one orchestrator" in str(error)


def test_zero_orchestrators_refused(team: dict) -> None:
    team["roster"][0]["kind"] = "worker"
    assert "exactly one orchestrator (found 0" in str(_error(team))


def test_two_orchestrator_entries_refused(team: dict) -> None:
    team["roster"][1]["kind"] = "orchestrator"
    team["roster"][1]["count"] = 1
    assert "exactly one orchestrator (found 2" in str(_error(team))


def test_zero_workers_is_the_solo_baseline(solo: dict) -> None:
    assert ExperimentManifest.load(solo).is_solo


def test_prices_missing_for_endpoints(team: dict) -> None:
    del team["prices"]["openai/luna"]
    error = _error(team)
    assert error.field == "prices"
    assert "prices missing for endpoints: ['openai/luna']" in str(error)


def test_roster_ids_unique(team: dict) -> None:
    team["roster"][2]["id"] = "worker"
    error = _error(team)
    assert error.field == "roster"
    assert "roster class ids must be unique" in str(error)


@pytest.mark.parametrize("bad_id", ["Lead", "-lead", "lead one", "", "_x", "lead/1"])
def test_id_pattern(solo: dict, bad_id: str) -> None:
    solo["roster"][0]["id"] = bad_id
    assert _error(solo).field == "roster.0.id"


@pytest.mark.parametrize("good_id", ["lead", "0", "a.b_c-d", "w9"])
def test_id_pattern_accepts(solo: dict, good_id: str) -> None:
    solo["roster"][0]["id"] = good_id
    assert ExperimentManifest.load(solo).roster[0].id == good_id


def test_concurrency_cannot_exceed_count(team: dict) -> None:
    team["roster"][1]["concurrency"] = 3
    error = _error(team)
    assert error.field == "roster.1.concurrency"
    assert "concurrency cannot exceed count" in str(error)


def test_concurrency_equal_to_count_is_fine(team: dict) -> None:
    team["roster"][1]["concurrency"] = 2
    assert ExperimentManifest.load(team).roster[1].concurrency == 2


@pytest.mark.parametrize(("output", "window"), [(4096, 4096), (5000, 4096)])
def test_max_output_must_be_less_than_window(solo: dict, output: int, window: int) -> None:
    solo["roster"][0]["generation"] = {"max_output_tokens": output, "context_window_tokens": window}
    error = _error(solo)
    assert error.field == "roster.0.generation.max_output_tokens"
    assert f"max_output_tokens {output} must be less than context_window_tokens {window}" in str(error)
    assert "buzz-agent reserves it from the window" in str(error)


def test_output_rule_needs_both(solo: dict) -> None:
    solo["roster"][0]["generation"] = {"max_output_tokens": 10**9}
    assert ExperimentManifest.load(solo).roster[0].generation.max_output_tokens == 10**9


def test_compaction_must_fit_window_minus_output(solo: dict) -> None:
    solo["roster"][0]["generation"] = {
        "max_output_tokens": 4096,
        "context_window_tokens": 128000,
        "compact_at_tokens": 128000 - 4096 + 1,
    }
    error = _error(solo)
    assert error.field == "roster.0.generation.compact_at_tokens"
    assert "compact_at_tokens 123905 exceeds the window minus max_output_tokens (123904)" in str(error)
    assert "can never fire" in str(error)


def test_compaction_at_the_limit_is_fine(solo: dict) -> None:
    solo["roster"][0]["generation"] = {
        "max_output_tokens": 4096,
        "context_window_tokens": 128000,
        "compact_at_tokens": 123904,
    }
    assert ExperimentManifest.load(solo).roster[0].generation.compact_at_tokens == 123904


def test_compaction_above_window_without_output_is_inert_not_wrong(solo: dict) -> None:
    solo["roster"][0]["generation"] = {"context_window_tokens": 200000, "compact_at_tokens": 272000}
    generation = ExperimentManifest.load(solo).roster[0].generation
    assert (generation.context_window_tokens, generation.compact_at_tokens) == (200000, 272000)
    # passed to buzz-agent as written: it never reaches the threshold, which is the seed's behaviour
    assert compaction_env(generation) == {"BUZZ_AGENT_HANDOFF_AT_TOKENS": "272000"}


@pytest.mark.parametrize("percent", [0, 101])
def test_compact_at_percent_range(solo: dict, percent: int) -> None:
    solo["roster"][0]["generation"] = {"compact_at_percent": percent}
    assert _error(solo).field == "roster.0.generation.compact_at_percent"


def test_thinking_effort_values(solo: dict) -> None:
    solo["roster"][0]["generation"] = {"thinking_effort": "extreme"}
    assert _error(solo).field == "roster.0.generation.thinking_effort"


@pytest.mark.parametrize("harness", ["buzz-agent", "goose", "codex"])
def test_harness_values(solo: dict, harness: str) -> None:
    solo["roster"][0]["harness"] = harness
    assert ExperimentManifest.load(solo).roster[0].harness == harness


def test_unknown_harness(solo: dict) -> None:
    solo["roster"][0]["harness"] = "claude-code"
    error = _error(solo)
    assert error.field == "roster.0.harness"


@pytest.mark.parametrize("mode", ["append", "set"])
def test_goose_prompt_mode_accepted(solo: dict, mode: str) -> None:
    solo["roster"][0]["generation"] = {"extra": {"goose_system_prompt_mode": mode}}
    assert ExperimentManifest.load(solo).roster[0].generation.extra == {"goose_system_prompt_mode": mode}


def test_goose_prompt_mode_refused(solo: dict) -> None:
    solo["roster"][0]["generation"] = {"extra": {"goose_system_prompt_mode": "replace"}}
    error = _error(solo)
    assert error.field == "roster.0.generation.extra.goose_system_prompt_mode"
    assert "goose_system_prompt_mode must be append or set" in str(error)


def test_prompt_digest_format(solo: dict) -> None:
    solo["roster"][0]["prompt"]["sha256"] = "AB" * 32
    assert _error(solo).field == "roster.0.prompt.sha256"


def test_prompt_required(solo: dict) -> None:
    del solo["roster"][0]["prompt"]
    assert _error(solo).field == "roster.0.prompt"


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("roster", 0, "count"), 0),
        (("trial_budget", "timeout_seconds"), 0),
        (("trial_budget", "max_cost_usd"), 0),
        (("prices", "openai/luna", "input_per_million_usd"), -1),
        (("prices", "openai/luna", "cache_read_rate"), 1.5),
    ],
)
def test_numeric_bounds(solo: dict, path: tuple, value: Any) -> None:
    target = solo
    for part in path[:-1]:
        target = target[part]
    target[path[-1]] = value
    assert _error(solo).field == ".".join(str(part) for part in path)


def test_environment_and_budget_bounds(solo: dict) -> None:
    solo["environment"] = {"override_cpus": 0}
    assert _error(solo).field == "environment.override_cpus"


def test_schema_version_is_one(solo: dict) -> None:
    solo["schema_version"] = "2"
    assert _error(solo).field == "schema_version"


def test_empty_roster(solo: dict) -> None:
    solo["roster"] = []
    assert _error(solo).field == "roster"


def test_non_finite_metadata_refused(solo: dict) -> None:
    solo["metadata"] = {"weights": [1.0, float("nan")]}
    error = _error(solo)
    assert error.field == "metadata.weights.1"
    assert "no canonical JSON form" in str(error)


def test_errors_are_one_line_and_carry_every_problem(solo: dict) -> None:
    solo["roster"][0]["count"] = 0
    solo["trial_budget"]["timeout_seconds"] = -1
    error = _error(solo)
    assert "\n" not in str(error)
    assert "roster.0.count" in str(error)
    assert "trial_budget.timeout_seconds" in str(error)


def test_models_are_frozen(solo: dict) -> None:
    manifest = ExperimentManifest.load(solo)
    with pytest.raises(ValidationError):
        manifest.condition = "other"  # type: ignore[misc]


def test_load_yaml_file(tmp_path: Path) -> None:
    path = tmp_path / "m.yaml"
    path.write_text(
        "condition: y\n"
        "roster:\n"
        "  - {id: solo, kind: orchestrator, role: solo, count: 1, endpoint: e, model_revision: r,\n"
        f"     prompt: {{path: p.md, sha256: '{'0' * 64}'}}}}\n"
        "prices: {e: {input_per_million_usd: 1, cached_input_per_million_usd: 0, output_per_million_usd: 2}}\n"
        "trial_budget: {timeout_seconds: 30}\n",
        encoding="utf-8",
    )
    assert ExperimentManifest.load(path).condition == "y"
    assert ExperimentManifest.load(str(path)).condition == "y"


def test_load_json_file(tmp_path: Path, solo: dict) -> None:
    import json

    path = tmp_path / "m.json"
    path.write_text(json.dumps(solo), encoding="utf-8")
    assert ExperimentManifest.load(path) == ExperimentManifest.load(solo)


def test_load_errors_name_the_file(tmp_path: Path, solo: dict) -> None:
    import json

    solo["roster"][0]["generation"] = {"temperature": 1}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(solo), encoding="utf-8")
    error = _error(path)
    assert error.source == str(path)
    assert str(error).startswith(f"{path}: roster.0.generation.temperature: ")


def test_missing_file(tmp_path: Path) -> None:
    error = _error(tmp_path / "absent.yaml")
    assert error.source.endswith("absent.yaml")
    assert "cannot load manifest: No such file" in str(error)


def test_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text("condition: [unclosed\n", encoding="utf-8")
    error = _error(path)
    assert "cannot load manifest" in str(error)
    assert "\n" not in str(error)


def test_root_must_be_mapping(tmp_path: Path) -> None:
    path = tmp_path / "list.yaml"
    path.write_text("- 1\n- 2\n", encoding="utf-8")
    assert "manifest root must be a mapping" in str(_error(path))


def test_source_type_checked() -> None:
    assert "path or a mapping" in str(_error(42))


def test_condition_error_is_value_error() -> None:
    assert issubclass(ConditionError, ValueError)
