"""Turning a pydantic JSON Schema into a Kubernetes structural schema (OpenAPI v3.0 subset).

apiextensions.k8s.io/v1 only accepts *structural* schemas: every node says its type, there
are no $refs, no unions with null (optional fields are simply not required), and `oneOf`/`anyOf`
may only constrain (here: `required`), never describe structure. pydantic emits JSON Schema
2020-12, so this module rewrites one into the other and refuses shapes it cannot express
rather than emitting a schema the API server would reject at install time.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

# Keys the API server's JSONSchemaProps understands and we pass through unchanged.
_PASS_THROUGH = {
    "type",
    "format",
    "description",
    "enum",
    "default",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "pattern",
    "required",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-validations",
}
# Dropped on purpose: titles repeat the field name; additionalProperties=false is forbidden
# in v1 CRDs (the API server prunes unknown fields instead).
_DROPPED = {"title", "$defs"}


class SchemaError(ValueError):
    """A model uses a JSON Schema shape that has no structural-schema equivalent."""


def structural_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The model's validation schema, rewritten for apiextensions.k8s.io/v1."""
    raw = model.model_json_schema(by_alias=True, mode="validation")
    return _convert(raw, raw.get("$defs", {}), model.__name__)


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    """Inline a $ref (or a single-element allOf wrapping one); sibling keys win."""
    if "allOf" in node and len(node["allOf"]) == 1:
        node = {**node["allOf"][0], **{k: v for k, v in node.items() if k != "allOf"}}
    ref = node.get("$ref")
    if ref is None:
        return node
    target = defs[ref.rsplit("/", 1)[-1]]
    return {**target, **{k: v for k, v in node.items() if k != "$ref"}}


def _without_null(node: dict[str, Any], defs: dict[str, Any], where: str) -> dict[str, Any]:
    """`anyOf: [X, {type: null}]` → X, optional (not in `required`); the outer description wins.

    Not `nullable: true`: the API server publishes nullable fields without a type in its
    OpenAPI v2 document, so `kubectl explain` shows them as `<>` and kubectl's client-side
    validation cannot check them. Optional is all these fields mean — the operator never
    stores null (models dump with exclude_none), and since 1.20 the API server drops a null
    a user writes into a non-nullable field before validation, which reads back as unset.
    """
    branches = node["anyOf"]
    kept = [branch for branch in branches if branch.get("type") != "null"]
    if len(kept) != 1 or len(branches) != 2:
        raise SchemaError(f"{where}: anyOf other than 'X or null' has no structural form")
    outer = {k: v for k, v in node.items() if k != "anyOf"}
    return {**_resolve(kept[0], defs), **outer}


def _constraint_branches(branches: list[Any], where: str) -> list[dict[str, Any]]:
    for branch in branches:
        if set(branch) != {"required"}:
            raise SchemaError(f"{where}: oneOf branches may only list required fields")
    return branches


def _convert(node: dict[str, Any], defs: dict[str, Any], where: str) -> dict[str, Any]:
    node = _resolve(node, defs)
    if "anyOf" in node:
        node = _without_null(node, defs, where)
    out: dict[str, Any] = {}
    if "const" in node:
        out["enum"] = [node["const"]]
    for key, value in node.items():
        if key in _DROPPED or key == "const":
            continue
        if key == "properties":
            out["properties"] = {
                name: _convert(child, defs, f"{where}.{name}") for name, child in value.items()
            }
        elif key == "items":
            out["items"] = _convert(value, defs, f"{where}[]")
        elif key == "additionalProperties":
            if value is True or value == {}:
                out["x-kubernetes-preserve-unknown-fields"] = True
            elif isinstance(value, dict):
                out["additionalProperties"] = _convert(value, defs, f"{where}.*")
            # False: dropped, see _DROPPED.
        elif key == "exclusiveMinimum":
            out["minimum"] = value
            out["exclusiveMinimum"] = True
        elif key == "exclusiveMaximum":
            out["maximum"] = value
            out["exclusiveMaximum"] = True
        elif key == "oneOf":
            out["oneOf"] = _constraint_branches(value, where)
        elif key in _PASS_THROUGH:
            out[key] = value
        else:
            raise SchemaError(f"{where}: JSON Schema keyword {key!r} has no structural form")
    if "default" in out and out["default"] in (None, ""):
        # A null default only restates "optional". An empty-string default was read back as
        # null by kube-apiserver 1.20, which then rejected the CRD ("must be of type string");
        # leaving it out changes nothing, as an absent string reads as "" in the models.
        del out["default"]
    if "type" not in out and not out.get("x-kubernetes-preserve-unknown-fields"):
        raise SchemaError(f"{where}: every structural schema node needs a type")
    return out
