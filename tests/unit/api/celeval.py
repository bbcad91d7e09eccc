"""What an API server does with a custom object's CEL rules, in Python, so the unit tier can try
the CRDs' x-kubernetes-validations without one: schema defaults filled in top-down (as the
server does before any rule runs), then every rule evaluated by a real CEL evaluator
(cel-python) with `self` bound to its node and, on an update, `oldSelf` to the stored node.

Only the shapes the project's CRDs use are walked: objects, lists and maps; transition rules
(those naming oldSelf) run on updates only, where the node exists before and after.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import celpy
import yaml

CRDS = Path(__file__).resolve().parents[3] / "crds"
FILES = {"BuzzSweep": "bench.buzz.dev_buzzsweeps.yaml", "BuzzTrial": "bench.buzz.dev_buzztrials.yaml"}
VALIDATIONS = "x-kubernetes-validations"


@dataclass(frozen=True)
class Rule:
    kind: str
    path: str  # the node it sits on, as the user writes it: spec.dataset.objectStore.prefix
    index: int  # position in the node's x-kubernetes-validations
    node: dict[str, Any]
    entry: dict[str, str]

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.path}[{self.index}]"

    @property
    def transition(self) -> bool:
        return re.search(r"\boldSelf\b", self.entry["rule"]) is not None


@dataclass(frozen=True)
class Refusal:
    path: str
    message: str


@cache
def root(kind: str) -> dict[str, Any]:
    """The checked-in CRD's openAPIV3Schema for `kind` (what the API server is given)."""
    crd = yaml.safe_load((CRDS / FILES[kind]).read_text())
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]


def rules(kind: str, schema: dict[str, Any] | None = None) -> list[Rule]:
    """Every rule of `kind`'s checked-in CRD (or of `schema`, e.g. as an API server returns it)."""
    return list(_rules(kind, root(kind) if schema is None else schema, ""))


def _rules(kind: str, node: dict[str, Any], path: str) -> Iterator[Rule]:
    for index, entry in enumerate(node.get(VALIDATIONS, [])):
        yield Rule(kind, path, index, node, entry)
    for name, child in node.get("properties", {}).items():
        yield from _rules(kind, child, f"{path}.{name}" if path else name)
    if "items" in node:
        yield from _rules(kind, node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _rules(kind, node["additionalProperties"], f"{path}.*")


def with_defaults(value: Any, node: dict[str, Any]) -> Any:
    """`value` with every absent property that has a schema default filled in, recursively —
    a default itself gets its own properties' defaults, as the API server's defaulting does."""
    value = copy.deepcopy(value)
    if isinstance(value, dict) and "properties" in node:
        for name, child in node["properties"].items():
            if name not in value and "default" in child:
                value[name] = copy.deepcopy(child["default"])
            if name in value:
                value[name] = with_defaults(value[name], child)
    elif isinstance(value, dict) and isinstance(node.get("additionalProperties"), dict):
        value = {key: with_defaults(item, node["additionalProperties"]) for key, item in value.items()}
    elif isinstance(value, list) and "items" in node:
        value = [with_defaults(item, node["items"]) for item in value]
    return value


_ENV = celpy.Environment()


@cache
def _program(expression: str) -> celpy.Runner:
    return _ENV.program(_ENV.compile(expression))


def evaluate(expression: str, self: Any, old_self: Any = None) -> bool:
    """The rule's verdict; an evaluation error raises, as the API server reports it as one."""
    activation = {"self": celpy.json_to_cel(self)}
    if old_self is not None:
        activation["oldSelf"] = celpy.json_to_cel(old_self)
    result = _program(expression).evaluate(activation)
    if not isinstance(result, celpy.celtypes.BoolType):
        raise ValueError(f"{expression!r} gave {result!r}, not a bool")
    return bool(result)


def refusals(kind: str, obj: dict[str, Any], old: dict[str, Any] | None = None) -> list[Refusal]:
    """The rules `obj` breaks (on create, or on update from `old`), as (node path, message)."""
    schema = root(kind)
    new = with_defaults(obj, schema)
    before = with_defaults(old, schema) if old is not None else None
    return list(_walk(schema, new, before, ""))


def _walk(node: dict[str, Any], value: Any, old: Any, path: str) -> Iterator[Refusal]:
    for entry in node.get(VALIDATIONS, []):
        expression = entry["rule"]
        if re.search(r"\boldSelf\b", expression):
            if old is None:
                continue
            ok = evaluate(expression, value, old)
        else:
            ok = evaluate(expression, value)
        if not ok:
            yield Refusal(path + entry.get("fieldPath", ""), entry["message"])
    if isinstance(value, dict) and "properties" in node:
        for name, child in node["properties"].items():
            if name in value:
                before = old.get(name) if isinstance(old, dict) else None
                yield from _walk(child, value[name], before, f"{path}.{name}" if path else name)
    elif isinstance(value, list) and "items" in node:
        for index, item in enumerate(value):
            yield from _walk(node["items"], item, None, f"{path}[{index}]")
    elif isinstance(value, dict) and isinstance(node.get("additionalProperties"), dict):
        for key, item in value.items():
            yield from _walk(node["additionalProperties"], item, None, f"{path}.{key}")
