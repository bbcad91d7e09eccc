"""JSON Schema (draft 2020-12) of ``buzzctl compare -o json`` (compare.py); ``buzzctl compare
--schema`` prints it. Every key is required and no other may appear, as for the summary."""

from __future__ import annotations

from typing import Any

from .compare import COMPARE_VERSION
from .stats_schema import DIFFERENCE_INTERVAL, RESAMPLING, STATISTICS, obj

_STR = {"type": "string"}
_RATE = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT = {"type": "integer", "minimum": 0}
_MAYBE_NUM = {"type": ["number", "null"]}

SIDE = obj(
    {
        "sweep": _STR,
        "store": _STR,
        "condition": _STR,
        "manifest_sha256": _STR,
        "hash": {"type": "string", "maxLength": 8},
        "stack_digest": {"type": "string", "pattern": "^([0-9a-f]{64})?$"},
        "stack": {"type": "string", "maxLength": 8},
        "statistics": STATISTICS,
    }
)

PAIRED = {
    "tasks": {"type": "integer", "minimum": 1},
    "baseline": _RATE,
    "candidate": _RATE,
    "difference": DIFFERENCE_INTERVAL,
    "p_value": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
    "wins": _COUNT,
    "losses": _COUNT,
    "ties": _COUNT,
}

_ATTEMPTS = obj({"n": {"type": "integer", "minimum": 1}, "passed": _COUNT})
_BOUND = obj({"baseline": _MAYBE_NUM, "candidate": _MAYBE_NUM, "difference": _MAYBE_NUM})
_COST = obj({"floor": _BOUND, "ceiling": _BOUND})

COMPARISON = obj(
    {
        "baseline": _STR,
        "candidate": _STR,
        "warnings": {"type": "array", "items": _STR},
        "unpaired": obj(
            {
                "baseline_only": {"type": "array", "items": _STR},
                "candidate_only": {"type": "array", "items": _STR},
            }
        ),
        "pass_rate": obj({**PAIRED, "test": {"const": "exact sign-flip over per-task differences"}}),
        "per_task": {
            "type": "array",
            "items": obj(
                {
                    "task": _STR,
                    "baseline": _ATTEMPTS,
                    "candidate": _ATTEMPTS,
                    "difference": {"type": "number", "minimum": -1, "maximum": 1},
                    "verdict": {"enum": ["win", "loss", "tie"]},
                }
            ),
        },
        "cost_usd": obj({"per_trial": _COST, "per_solved_task": _COST}),
        "tokens_per_trial": _BOUND,
        "dimensions": {"type": "array", "items": obj({"dimension": _STR, **PAIRED})},
        # what the box did, paired by task like the pass rate (docs/resources.md#infra-noise)
        "box": obj({"infra_rate": {"oneOf": [obj(PAIRED), {"type": "null"}]},
                    "pressure_rate": {"oneOf": [obj(PAIRED), {"type": "null"}]},
                    "retried_rate": {"oneOf": [obj(PAIRED), {"type": "null"}]}}),
    }
)

FRONT = obj(
    {
        "sweep": _STR,
        "pass_rate": obj({"estimate": _RATE, "low": _RATE, "high": _RATE}),
        "cost_usd_per_trial": obj({"floor": {"type": "number", "minimum": 0}, "ceiling": {"type": "number", "minimum": 0}}),
        "on_front": obj({"floor": {"type": "boolean"}, "ceiling": {"type": "boolean"}}),
        "dominated_by": {"type": "array", "items": _STR},
        "within_interval": {"type": "boolean"},
    }
)

COMPARE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": f"https://bench.buzz.dev/schemas/buzzctl-compare-v{COMPARE_VERSION}.json",
    "title": "buzzctl compare",
    **obj(
        {
            "version": {"const": COMPARE_VERSION},
            "resampling": RESAMPLING,
            "baseline": _STR,
            "sweeps": {"type": "array", "items": SIDE, "minItems": 2},
            "comparisons": {"type": "array", "items": COMPARISON, "minItems": 1},
            "front": {"type": "array", "items": FRONT},
        }
    ),
}
