"""Cross-field rules as CEL ``x-kubernetes-validations``, so the API server refuses at admission
what the models' own validators refuse, with a message naming the field as the user writes it.

Every rule that judges one object has a twin in the pydantic model it sits on, and the
operator keeps running those: an API server without CEL validation (before 1.25) ignores the
rules, and a CRD installed by hand may be older than the operator. A transition rule (one that
reads ``oldSelf``) has no twin: a model sees one object, never the one stored before it.
Messages spell the path in the API's camelCase (``spec.dataset.objectStore.prefix``) because
that is what the user wrote.

Rules stay cheap: the API server refuses a CRD whose rules' estimated cost is too high, and a
rule that reads a string or list is estimated at the largest value the schema allows, so every
string or list a rule walks carries a maxLength or maxItems.
"""

from __future__ import annotations

from typing import Any

from pydantic.alias_generators import to_camel

VALIDATIONS = "x-kubernetes-validations"


def rule(expression: str, message: str, *, field_path: str | None = None, reason: str | None = None) -> dict[str, str]:
    """One x-kubernetes-validations entry; ``field_path`` is relative to the node the rule sits on."""
    entry = {"rule": expression, "message": message}
    if field_path is not None:
        entry["fieldPath"] = field_path
    if reason is not None:
        entry["reason"] = reason
    return entry


def validations(*rules: dict[str, str]) -> dict[str, Any]:
    """The json_schema_extra that puts ``rules`` on a model's (or a field's) schema node."""
    return {VALIDATIONS: list(rules)}


def exactly_one(where: str, fields: tuple[str, ...]) -> dict[str, str]:
    """``where`` needs exactly one of the (snake_case) ``fields``, named by their JSON aliases."""
    aliases = [to_camel(name) for name in fields]
    present = ", ".join(f"has(self.{alias})" for alias in aliases)
    return rule(f"[{present}].filter(x, x).size() == 1", f"{where} needs exactly one of {', '.join(aliases)}")
