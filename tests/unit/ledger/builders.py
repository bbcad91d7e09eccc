"""Builders for the ledger tests: a real team manifest and agent-log line makers."""

from __future__ import annotations

from typing import Any

PROMPT_SHA = "0" * 63 + "1"


def manifest_data(**price_overrides: float) -> dict[str, Any]:
    """Lead (opus-like prices) + two workers on a cheaper endpoint; one endpoint priced per call."""
    worker_price = {
        "input_per_million_usd": 0.2,
        "cached_input_per_million_usd": 0.02,
        "output_per_million_usd": 1.2,
        "cache_read_rate": 0.0,
    }
    worker_price.update(price_overrides)
    return {
        "condition": "ledger-team",
        "roster": [
            {
                "id": "worker",
                "kind": "worker",
                "role": "implementer",
                "count": 2,
                "endpoint": "luna",
                "model_revision": "luna-1",
                "prompt": {"path": "personas/worker.md", "sha256": PROMPT_SHA},
            },
            {
                "id": "lead",
                "kind": "orchestrator",
                "role": "lead",
                "count": 1,
                "endpoint": "opus",
                "model_revision": "opus-5",
                "prompt": {"path": "personas/lead.md", "sha256": PROMPT_SHA},
            },
        ],
        "prices": {
            "opus": {
                "input_per_million_usd": 5.0,
                "cached_input_per_million_usd": 0.5,
                "output_per_million_usd": 25.0,
                "cache_read_rate": 0.0,
            },
            "luna": worker_price,
        },
        "trial_budget": {"timeout_seconds": 600},
    }


def usage(session: str, inp: str | int, out: str | int, cached: int | None = None, colour: bool = False) -> str:
    """One buzz-acp `acp::usage` line; `colour` reproduces tracing's in-field ANSI escapes."""
    cached_part = f" cached={cached}" if cached is not None else ""
    if colour:
        return (
            "\x1b[2m2026-07-26T01:02:03Z\x1b[0m \x1b[34mDEBUG\x1b[0m \x1b[2macp::usage\x1b[0m: goose usage update "
            f"\x1b[3msession_id\x1b[0m\x1b[2m=\x1b[0m{session} \x1b[3minput\x1b[0m\x1b[2m=\x1b[0m{inp} "
            f"\x1b[3moutput\x1b[0m\x1b[2m=\x1b[0m{out}{cached_part}\n"
        )
    return f"2026-07-26T01:02:03Z DEBUG acp::usage: goose usage update session_id={session} input={inp} output={out}{cached_part}\n"


def turn_end(marker: str = "turn complete for") -> str:
    return f"2026-07-26T01:02:04Z  INFO pool::prompt: {marker} channel 7d1e: end_turn\n"


def handoff(number: int, context: int) -> str:
    return (
        f"2026-07-26T01:02:05Z  INFO buzz_agent::handoff: handoff #{number} "
        f"(history 84 -> 3 items; {context} -> 5120 tokens)\n"
    )
