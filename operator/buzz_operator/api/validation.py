"""Validating BuzzSweep / BuzzTrial specs with errors a person can act on.

The API server's OpenAPI checks catch types and ranges, and from 1.25 on the CRDs' CEL rules
(api.rules) catch the rules the models add (exactly one dataset source, backoff cap ≥ base);
an older server, or a CRD installed by hand before them, catches neither. So the operator
still runs the models, and these helpers turn pydantic's error list into one line per field:
``spec.attempts: must be >= 1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.api.trial import BuzzTrialSpec

Model = TypeVar("Model", bound=BaseModel)


class SpecError(ValueError):
    """An invalid spec. ``problems`` holds (field, reason) pairs, first problem first."""

    def __init__(self, problems: list[tuple[str, str]]) -> None:
        self.problems = problems
        super().__init__("; ".join(f"{field}: {reason}" for field, reason in problems))

    @property
    def field(self) -> str:
        return self.problems[0][0]


def _path(prefix: str, location: tuple[int | str, ...]) -> str:
    path = prefix
    for part in location:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def _reason(error: Mapping[str, Any]) -> str:
    kind = error["type"]
    ctx = error.get("ctx", {})
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return "unknown field"
    if kind == "greater_than_equal":
        return f"must be >= {ctx['ge']}"
    if kind == "greater_than":
        return f"must be > {ctx['gt']}"
    if kind == "less_than_equal":
        return f"must be <= {ctx['le']}"
    if kind == "less_than":
        return f"must be < {ctx['lt']}"
    if kind == "string_too_short" and ctx.get("min_length") == 1:
        return "must not be empty"
    if kind == "string_pattern_mismatch":
        return f"must match {ctx['pattern']}"
    if kind == "enum":
        return f"must be one of {ctx['expected']}"
    if kind == "value_error":
        return str(ctx.get("error", error["msg"]))
    return str(error["msg"]).rstrip(".").lower()


def validate_model(model: type[Model], data: Any, *, prefix: str = "spec") -> Model:
    """Validate ``data`` (as stored by the API server) into ``model`` or raise SpecError."""
    if not isinstance(data, Mapping):
        raise SpecError([(prefix, f"must be an object, not {type(data).__name__}")])
    try:
        return model.model_validate(dict(data))
    except ValidationError as error:
        problems = [(_path(prefix, tuple(item["loc"])), _reason(item)) for item in error.errors()]
        raise SpecError(problems) from None


def validate_sweep_spec(data: Any) -> BuzzSweepSpec:
    return validate_model(BuzzSweepSpec, data)


def validate_trial_spec(data: Any) -> BuzzTrialSpec:
    return validate_model(BuzzTrialSpec, data)
