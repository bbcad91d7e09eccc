"""Generated schemas are structural (apiextensions.k8s.io/v1 rules) and say what they should."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from buzz_operator.api.crdgen import KINDS, build_crd
from buzz_operator.api.schema import SchemaError, structural_schema
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial import BuzzTrialStatus
from pydantic import BaseModel, Field

_CONSTRAINT_ONLY = {"required"}


def _nodes(node: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, node
    for name, child in node.get("properties", {}).items():
        yield from _nodes(child, f"{path}.{name}")
    if "items" in node:
        yield from _nodes(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _nodes(node["additionalProperties"], f"{path}.*")


def _roots() -> list[tuple[str, dict[str, Any]]]:
    return [
        (kind.kind, build_crd(kind)["spec"]["versions"][0]["schema"]["openAPIV3Schema"]) for kind in KINDS
    ]


@pytest.mark.parametrize(("kind", "root"), _roots())
def test_every_node_is_structural(kind: str, root: dict[str, Any]) -> None:
    for path, node in _nodes(root):
        where = f"{kind}{path}"
        assert "$ref" not in node, where
        assert "title" not in node, where
        assert "allOf" not in node and "anyOf" not in node and "not" not in node, where
        assert "const" not in node, where
        assert node.get("additionalProperties") is not False, where
        assert "nullable" not in node, where  # published untyped; `kubectl explain` shows <>
        assert "type" in node or node.get("x-kubernetes-preserve-unknown-fields") is True, where
        if "properties" in node:
            assert "additionalProperties" not in node, where
        for branch in node.get("oneOf", []):
            assert set(branch) <= _CONSTRAINT_ONLY, where
            assert set(branch["required"]) <= set(node["properties"]), where
        if "exclusiveMinimum" in node:
            assert node["exclusiveMinimum"] is True and "minimum" in node, where
        if node.get("default") is not None and "enum" in node:
            assert node["default"] in node["enum"], where


@pytest.mark.parametrize(("kind", "root"), _roots())
def test_every_field_is_described(kind: str, root: dict[str, Any]) -> None:
    # `kubectl explain` is how users learn the API; an undescribed field teaches nothing.
    for path, node in _nodes(root["properties"]["spec"], ".spec"):
        assert node.get("description") or path.endswith("[]") or path.endswith(".*"), f"{kind}{path}"
    for path, node in _nodes(root["properties"]["status"], ".status"):
        assert node.get("description") or path.endswith("[]") or path.endswith(".*"), f"{kind}{path}"


def test_sweep_spec_schema_carries_defaults_bounds_and_rules() -> None:
    spec = structural_schema(BuzzSweepSpec)
    props = spec["properties"]
    assert spec["required"] == ["condition", "dataset", "relay"]
    assert props["attempts"] == {
        "default": 1,
        "description": "k: independent attempts per task (pass@k).",
        "maximum": 1000,
        "minimum": 1,
        "type": "integer",
    }
    assert props["timeoutMultiplier"]["minimum"] == 0
    assert props["timeoutMultiplier"]["exclusiveMinimum"] is True
    assert props["imagePullPolicy"]["enum"] == ["Always", "IfNotPresent", "Never"]
    assert props["retry"]["default"] == {}
    assert props["retry"]["properties"]["maxRetries"]["default"] == 2
    # "exactly one of" is a CEL rule with a message naming the choices, not a oneOf: a 1.37 API
    # server refuses `condition: {}` under oneOf with `<nil>: … "spec.condition" must validate one
    # and only one schema (oneOf)` plus `spec.condition.inline: Required value`, as if inline were
    # the only choice — and that Required error would keep every CEL rule from running.
    assert "oneOf" not in props["condition"] and "oneOf" not in props["dataset"]
    assert props["condition"]["x-kubernetes-validations"] == [{
        "rule": "[has(self.inline), has(self.configMapRef)].filter(x, x).size() == 1",
        "message": "spec.condition needs exactly one of inline, configMapRef",
    }]
    assert props["dataset"]["x-kubernetes-validations"][0]["message"] == (
        "spec.dataset needs exactly one of builtin, configMapRef, objectStore, registry, package"
    )
    inline = props["condition"]["properties"]["inline"]
    assert inline["x-kubernetes-preserve-unknown-fields"] is True
    assert "nullable" not in inline  # optional, not nullable: see schema._without_null
    assert "default" not in inline
    assert props["budget"]["properties"]["maxCostUSD"]["exclusiveMinimum"] is True


def test_trial_status_schema_shapes() -> None:
    status = structural_schema(BuzzTrialStatus)
    props = status["properties"]
    assert props["phase"]["enum"] == [
        "Pending",
        "Provisioning",
        "Launching",
        "Running",
        "Collecting",
        "Grading",
        "Bundling",
        "Succeeded",
        "Failed",
    ]
    assert props["conditions"]["x-kubernetes-list-type"] == "map"
    assert props["conditions"]["x-kubernetes-list-map-keys"] == ["type"]
    assert props["conditions"]["items"]["required"] == ["type", "status", "reason", "lastTransitionTime"]
    assert props["rewards"] == {
        "additionalProperties": {"type": "number"},
        "description": "Every numeric verifier metric.",
        "type": "object",
    }
    assert props["failedTries"]["maxItems"] == 21
    assert props["outcome"]["enum"] == ["ok", "timeout", "launch", "error", "broken"]
    assert props["outcome"]["type"] == "string" and "outcome" not in status.get("required", [])
    assert props["phaseTimes"]["properties"]["running"]["format"] == "date-time"
    assert set(props) >= {"costUSD", "bundleURL", "trialId", "tenantSecret", "taskEventId"}


class _Union(BaseModel):
    value: int | str = Field(description="either")


class _Untyped(BaseModel):
    value: object = Field(description="anything")


@pytest.mark.parametrize("model", [_Union, _Untyped])
def test_inexpressible_shapes_are_refused(model: type[BaseModel]) -> None:
    with pytest.raises(SchemaError, match="value"):
        structural_schema(model)
