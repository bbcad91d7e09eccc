"""JSON Schema pieces of the statistics (condition_stats.py, compare.py): an interval, the
resampling settings, a condition's statistics block — shared by the summary's schema
(schema.py) and the comparison's (compare_schema.py)."""

from __future__ import annotations

from typing import Any

_RATE = {"type": "number", "minimum": 0, "maximum": 1}
_COUNT = {"type": "integer", "minimum": 0}
_MONEY = {"type": ["number", "null"], "minimum": 0}


def obj(properties: dict[str, Any]) -> dict[str, Any]:
    """Every key required, no other key: the output is a contract."""
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def interval(bound: dict[str, Any]) -> dict[str, Any]:
    return obj({"estimate": bound, "low": bound, "high": bound})


RATE_INTERVAL = interval(_RATE)
DIFFERENCE_INTERVAL = interval({"type": "number", "minimum": -1, "maximum": 1})

RESAMPLING = obj(
    {
        "method": {"const": "two-stage percentile bootstrap"},
        "resamples": {"type": "integer", "minimum": 100},
        "seed": {"type": "integer"},
        "level": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
    }
)

_FLOOR_CEILING = obj({"floor": _MONEY, "ceiling": _MONEY})

DIMENSION = obj(
    {
        "tasks": {"type": "integer", "minimum": 1},
        "trials": {"type": "integer", "minimum": 1},
        "estimate": _RATE,
        "low": _RATE,
        "high": _RATE,
    }
)

STATISTICS = obj(
    {
        "scored": _COUNT,
        "tasks": _COUNT,
        "solved": _COUNT,
        "excluded": obj({"broken": _COUNT, "infra": _COUNT}),
        "pass_rate": {"oneOf": [RATE_INTERVAL, {"type": "null"}]},
        "pass_at_k": {
            "type": "object",
            "propertyNames": {"pattern": "^[1-9][0-9]*$"},
            "additionalProperties": RATE_INTERVAL,
        },
        "pass_hat_k": {
            "type": "object",
            "propertyNames": {"pattern": "^[1-9][0-9]*$"},
            "additionalProperties": RATE_INTERVAL,
        },
        "cost_usd": obj({"per_trial": _FLOOR_CEILING, "per_solved_task": _FLOOR_CEILING}),
        "tokens_per_trial": {"type": ["number", "null"], "minimum": 0},
        "dimensions": {"type": "object", "additionalProperties": DIMENSION},
        "box": obj({
            "trials": _COUNT,
            "infra_rate": {"oneOf": [RATE_INTERVAL, {"type": "null"}]},
            "pressure_rate": {"oneOf": [RATE_INTERVAL, {"type": "null"}]},
            "retried_rate": {"oneOf": [RATE_INTERVAL, {"type": "null"}]},
            "failed_tries": _COUNT,
        }),
    }
)
