"""Properties of the condition hash: formatting never matters, content always does (docs/condition.md#condition-hash)."""

from __future__ import annotations

import copy
import random
from typing import Any

from buzz_operator.condition import ExperimentManifest
from hypothesis import given, settings
from hypothesis import strategies as st

_ids = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("abcz019"),
    st.text(alphabet="abcxyz0189._-", max_size=8),
)
_endpoints = st.sampled_from(["openai/luna", "anthropic/opus", "local/qwen", "databricks-x"])
# An all-digit digest would be a YAML integer; the manifests here are mappings, but keep
# the generated documents valid YAML-wise too.
_digests = st.binary(min_size=32, max_size=32).map(bytes.hex).filter(lambda d: not d.isdigit())
_money = st.floats(min_value=0, max_value=100, allow_nan=False, allow_infinity=False)
_positive = st.integers(min_value=1, max_value=10**6)


@st.composite
def generations(draw: st.DrawFn) -> dict[str, Any]:
    generation: dict[str, Any] = {}
    if draw(st.booleans()):
        window = draw(st.integers(min_value=1000, max_value=10**6))
        output = draw(st.integers(min_value=1, max_value=window - 1))
        generation["context_window_tokens"] = window
        generation["max_output_tokens"] = output
        if draw(st.booleans()):
            generation["compact_at_tokens"] = draw(st.integers(min_value=1, max_value=window - output))
    if draw(st.booleans()):
        generation["compact_at_percent"] = draw(st.integers(min_value=1, max_value=100))
    if draw(st.booleans()):
        generation["thinking_effort"] = draw(
            st.sampled_from(["none", "minimal", "low", "medium", "high", "xhigh", "max"])
        )
    return generation


@st.composite
def manifests(draw: st.DrawFn) -> dict[str, Any]:
    class_ids = draw(st.lists(_ids, min_size=1, max_size=4, unique=True))
    roster = []
    for position, class_id in enumerate(class_ids):
        count = 1 if position == 0 else draw(st.integers(min_value=1, max_value=3))
        entry: dict[str, Any] = {
            "id": class_id,
            "kind": "orchestrator" if position == 0 else "worker",
            "role": draw(st.sampled_from(["lead", "solo", "critic", "implementer", "scout"])),
            "count": count,
            "endpoint": draw(_endpoints),
            "model_revision": draw(st.text(min_size=1, max_size=12)),
            "prompt": {"path": f"personas/{class_id}.md", "sha256": draw(_digests)},
        }
        generation = draw(generations())
        if generation:
            entry["generation"] = generation
        if draw(st.booleans()):
            entry["harness"] = draw(st.sampled_from(["buzz-agent", "goose", "codex"]))
        if draw(st.booleans()):
            entry["concurrency"] = draw(st.integers(min_value=1, max_value=count))
        if draw(st.booleans()):
            entry["budget"] = {"max_calls": draw(_positive)}
        roster.append(entry)
    prices = {
        endpoint: {
            "input_per_million_usd": draw(_money),
            "cached_input_per_million_usd": draw(_money),
            "output_per_million_usd": draw(_money),
        }
        for endpoint in {entry["endpoint"] for entry in roster}
    }
    data: dict[str, Any] = {
        "condition": draw(st.text(min_size=1, max_size=20)),
        "roster": roster,
        "prices": prices,
        "trial_budget": {"timeout_seconds": draw(_positive)},
    }
    if draw(st.booleans()):
        data["environment"] = {"override_cpus": draw(st.integers(min_value=1, max_value=64))}
    if draw(st.booleans()):
        data["metadata"] = draw(
            st.dictionaries(
                st.text(max_size=8), st.integers() | st.text(max_size=8) | st.booleans(), max_size=3
            )
        )
    return data


def _shuffled(value: Any, rng: random.Random) -> Any:
    if isinstance(value, dict):
        items = list(value.items())
        rng.shuffle(items)
        return {key: _shuffled(item, rng) for key, item in items}
    if isinstance(value, list):
        return [_shuffled(item, rng) for item in value]
    return value


@settings(max_examples=150, deadline=None)
@given(manifests(), st.integers())
def test_key_order_never_changes_the_hash(data: dict[str, Any], seed: int) -> None:
    shuffled = _shuffled(copy.deepcopy(data), random.Random(seed))
    assert ExperimentManifest.load(shuffled).sha256 == ExperimentManifest.load(data).sha256


@settings(max_examples=150, deadline=None)
@given(manifests())
def test_absent_empty_and_spelled_out_defaults_hash_the_same(data: dict[str, Any]) -> None:
    expected = ExperimentManifest.load(data).sha256
    explicit = copy.deepcopy(data)
    explicit.setdefault("environment", {})
    explicit.setdefault("metadata", {})
    for entry in explicit["roster"]:
        entry.setdefault("generation", {})
        entry["generation"].setdefault("thinking_effort", None)
        entry.setdefault("harness", "buzz-agent")
        entry.setdefault("include_platform_prompt", True)
        entry.setdefault("skills", [])
        entry.setdefault("persona", None)
    assert ExperimentManifest.load(explicit).sha256 == expected
    stripped = copy.deepcopy(data)
    if stripped.get("environment") == {}:
        del stripped["environment"]
    explicit_empty = copy.deepcopy(data)
    explicit_empty.setdefault("environment", {})
    assert ExperimentManifest.load(explicit_empty).sha256 == expected
    for entry in stripped["roster"]:
        if entry.get("generation") == {}:
            del entry["generation"]
    assert ExperimentManifest.load(stripped).sha256 == expected


def _toggle_compact_percent(data: dict[str, Any]) -> None:
    generation = data["roster"][0].setdefault("generation", {})
    generation["compact_at_percent"] = None if generation.get("compact_at_percent") is not None else 50


def _mutations(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """(description, mutator) pairs, each changing exactly one value to a different valid one.

    The added worker's id cannot collide: generated ids never contain "d" or "e".
    """
    first = data["roster"][0]
    endpoint = first["endpoint"]
    return [
        ("condition", lambda d: d.update(condition=d["condition"] + "x")),
        (
            "timeout",
            lambda d: d["trial_budget"].update(timeout_seconds=d["trial_budget"]["timeout_seconds"] + 1),
        ),
        ("trial cost cap", lambda d: d["trial_budget"].update(max_cost_usd=123.5)),
        ("role", lambda d: d["roster"][0].update(role=d["roster"][0]["role"] + "!")),
        (
            "model revision",
            lambda d: d["roster"][0].update(model_revision=d["roster"][0]["model_revision"] + "'"),
        ),
        ("prompt digest", lambda d: d["roster"][0]["prompt"].update(sha256="e" * 64)),
        ("prompt path", lambda d: d["roster"][0]["prompt"].update(path="personas/other.md")),
        (
            "input price",
            lambda d: d["prices"][endpoint].update(
                input_per_million_usd=d["prices"][endpoint]["input_per_million_usd"] + 0.5
            ),
        ),
        ("cache read rate", lambda d: d["prices"][endpoint].update(cache_read_rate=0.5)),
        ("platform prompt", lambda d: d["roster"][0].update(include_platform_prompt=False)),
        ("metadata", lambda d: d.setdefault("metadata", {}).update(extra_key_for_test=1)),
        ("memory override", lambda d: d.setdefault("environment", {}).update(override_memory_mb=12345)),
        ("compaction percent", _toggle_compact_percent),
        ("extra", lambda d: d["roster"][0].setdefault("generation", {}).update(extra={"k": "v"})),
        (
            "added worker",
            lambda d: d["roster"].append({**d["roster"][0], "id": "zz-added", "kind": "worker"}),
        ),
    ]


@settings(max_examples=200, deadline=None)
@given(manifests(), st.data())
def test_any_field_change_changes_the_hash(data: dict[str, Any], chooser: st.DataObject) -> None:
    description, mutate = chooser.draw(st.sampled_from(_mutations(data)), label="mutation")
    changed = copy.deepcopy(data)
    mutate(changed)
    assert ExperimentManifest.load(changed).sha256 != ExperimentManifest.load(data).sha256, description


@settings(max_examples=100, deadline=None)
@given(manifests())
def test_round_trip_through_canonical_json_is_stable(data: dict[str, Any]) -> None:
    import json

    manifest = ExperimentManifest.load(data)
    reloaded = ExperimentManifest.load(json.loads(manifest.canonical_bytes()))
    assert reloaded.sha256 == manifest.sha256
