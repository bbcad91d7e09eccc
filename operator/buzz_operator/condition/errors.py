"""One error type for every way a condition can be wrong.

Callers (the CLI, sweep admission, the trial corridor) show the error to a
person, so it always names *where* the problem is: the file it came from and the dotted
field inside it (``roster.0.generation.temperature``), never a pydantic traceback.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from pydantic_core import PydanticCustomError

# Why `temperature` is refused, in the words a user needs (docs/condition.md#generation): the key used
# to be accepted, hashed into the condition identity and silently discarded.
TEMPERATURE_REASON = (
    "temperature is not a condition setting: buzz-agent exposes no temperature "
    "environment variable, so the value could never reach the provider"
)

_RULE_ERROR = "condition_rule"


def rule_error(field: str, reason: str) -> PydanticCustomError:
    """A model-validator failure that still points at one field.

    pydantic reports model validators at the model's own location; carrying the field in
    the error context lets the translation below name ``prices`` rather than the root.
    """
    return PydanticCustomError(_RULE_ERROR, "{reason}", {"reason": reason, "field": field})


def _one_line(text: str) -> str:
    return " ".join(text.split())


class ConditionError(ValueError):
    """A condition (manifest, prompt, endpoint config) that cannot be used.

    ``field`` is the dotted path of the first offending field ("" when the problem is the
    whole document); ``source`` is the file or object it came from, when known.
    """

    def __init__(self, reason: str, *, field: str = "", source: str = "") -> None:
        self.reason = _one_line(reason)
        self.field = field
        self.source = source
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (self.source, self.field, self.reason) if part)

    def with_source(self, source: str) -> ConditionError:
        return ConditionError(self.reason, field=self.field, source=source)

    @classmethod
    def from_validation(cls, error: ValidationError, *, prefix: str = "", source: str = "") -> ConditionError:
        """Translate pydantic's error list into one line: ``field: reason; field: reason``."""
        details = error.errors()
        # pydantic re-checks a tuple's min_length after an item failed and reports the
        # container as empty; that echo hides the real error, so drop it.
        locs = [tuple(detail.get("loc", ())) for detail in details]
        details = [
            detail
            for detail, loc in zip(details, locs, strict=True)
            if not (
                detail.get("type") == "too_short"
                and any(other[: len(loc)] == loc and len(other) > len(loc) for other in locs)
            )
        ]
        problems = [_describe(detail, prefix) for detail in details]
        if not problems:
            return cls(str(error), field=prefix, source=source)
        field, reason = problems[0]
        rest = [f"{f}: {r}" if f else r for f, r in problems[1:]]
        return cls("; ".join([reason, *rest]), field=field, source=source)


def _describe(detail: Any, prefix: str) -> tuple[str, str]:
    loc: Sequence[Any] = detail.get("loc", ())
    parts = [prefix] if prefix else []
    parts += [str(part) for part in loc]
    kind = detail.get("type", "")
    ctx = detail.get("ctx") or {}
    message = str(detail.get("msg", ""))
    if kind == _RULE_ERROR:
        if ctx.get("field"):
            parts.append(str(ctx["field"]))
        message = str(ctx.get("reason", message))
    elif kind == "value_error":
        message = message.removeprefix("Value error, ")
    elif kind in ("extra_forbidden", "unexpected_keyword_argument"):
        if loc and loc[-1] == "temperature":
            message = TEMPERATURE_REASON
        else:
            message = "unknown field (condition documents are strict; check the spelling)"
    return ".".join(parts), _one_line(message)
