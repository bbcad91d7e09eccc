"""JSON Schema (draft 2020-12) of ``buzzctl sweep results -o json`` (document.py).

Scripts read this output, so its shape is a contract: every key is required and no other
key may appear; ``buzzctl sweep results --schema`` prints this schema.
"""

from __future__ import annotations

from typing import Any

from .document import DOCUMENT_VERSION
from .stats_schema import RESAMPLING, STATISTICS

_NUM = {"type": "number"}
_COUNT = {"type": "integer", "minimum": 0}
_STR = {"type": "string"}
_COST = {"type": "number", "minimum": 0}


def _object(properties: dict[str, Any], *, optional: tuple[str, ...] = ()) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": [key for key in properties if key not in optional],
        "additionalProperties": False,
    }


_RANGE = _object({"floor": _COST, "ceiling": _COST})
_PASS_AT_K = {
    "type": "object",
    "propertyNames": {"pattern": "^[1-9][0-9]*$"},
    "additionalProperties": {"type": "number", "minimum": 0, "maximum": 1},
}

CONDITION_ROW = _object(
    {
        "condition": _STR,
        "manifest_sha256": _STR,
        "hash": {"type": "string", "maxLength": 8},
        "stack_digest": {"type": "string", "pattern": "^([0-9a-f]{64})?$"},
        "stack": {"type": "string", "maxLength": 8},
        "agents": _COUNT,
        "n": {"type": "integer", "minimum": 1},
        "pass_rate": _NUM,
        "pass_at_k": _PASS_AT_K,
        "cost_usd": _object({"per_trial": _RANGE, "total": _RANGE}),
        "tokens": _object({"per_trial": {"type": "number", "minimum": 0}, "total": _COUNT}),
        "agent_seconds_per_trial": {"type": "number", "minimum": 0},
        "counts": _object(
            {
                key: _COUNT
                for key in (
                    "timeouts",
                    "launch_failures",
                    "errors",
                    "round_capped",
                    "unreconciled",
                    "verifier_broken",
                    "stopped_without_done",
                )
            }
        ),
        "timeout_multipliers": {"type": "array", "items": _NUM},
        "flags": {
            "type": "array",
            "items": {
                "type": "string",
                "pattern": r"^(timeout|LAUNCH-FAILED|error|ROUND-CAPPED|unpriced|VERIFIER-BROKEN|no-done|SECRETS|clock)×[0-9.e+-]+$",
            },
        },
        "statistics": STATISTICS,
    }
)

FAILURE = _object(
    {
        "trial": _STR,
        "condition": _STR,
        "hash": _STR,
        "stack": _STR,
        "task": _STR,
        "attempt": {"type": ["integer", "null"]},
        "outcome": {"enum": ["ok", "timeout", "launch", "error"]},
        "reason": _STR,
        "bundle": _STR,
    }
)

TRIAL_ROW = _object(
    {
        "trial": _STR,
        "task": _STR,
        "attempt": {"type": ["integer", "null"]},
        "condition": _STR,
        "hash": _STR,
        "stack": _STR,
        "reward": _NUM,
        "rewards": {"type": "object", "additionalProperties": _NUM},
        "outcome": {"enum": ["ok", "timeout", "launch", "error"]},
        "cost_usd": _RANGE,
        "tokens": _object({"input": _COUNT, "output": _COUNT}),
        "agent_seconds": {"type": "number", "minimum": 0},
        "total_seconds": {"type": "number", "minimum": 0},
        "flags": _object(
            {k: {"type": "boolean"} for k in ("round_capped", "unpriced", "verifier_broken", "no_done", "secrets")}
        ),
        "bundle": _STR,
    }
)

RESULTS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "https://bench.buzz.dev/schemas/buzzctl-sweep-summary-v3.json",
    "title": "buzzctl sweep results",
    **_object(
        {
            "version": {"const": DOCUMENT_VERSION},
            "sweep": _STR,
            "store": _STR,
            "trials": _COUNT,
            "unfinished": {"type": "array", "items": _STR},
            "skipped": {"type": "array", "items": _STR},
            "resampling": RESAMPLING,
            "conditions": {"type": "array", "items": CONDITION_ROW},
            "failures": {"type": "array", "items": FAILURE},
            "trial_rows": {"type": "array", "items": TRIAL_ROW},
        },
        optional=("failures", "trial_rows"),
    ),
}
