"""Every turn ends with its usage line, then exactly one turn-end marker (§4.5, §5.5), whether it
completed, ran out of time or the policy failed."""

from __future__ import annotations

import asyncio
import io
from types import SimpleNamespace

import pytest
from buzz_operator.dev.agent.acp import run_turn
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from buzz_operator.dev.agent.turn import Turn
from buzz_operator.dev.agent.usage import Session

MARKERS = ("turn complete for", "turn cancelled for")


class _Bridge:
    def __init__(self, max_turn_s: float) -> None:
        self.out = io.StringIO()
        self.log = Logger(EnvFilter("buzz_acp=info,acp::usage=debug"), self.out)
        self.config = SimpleNamespace(max_turn_s=max_turn_s)

    def report_usage(self, session: Session) -> None:
        self.log.debug("acp::usage", session.line())


async def _finishes(turn: Turn) -> None:
    turn.session.read(turn.text)


async def _sleeps(turn: Turn) -> None:
    await asyncio.sleep(30)


async def _breaks(turn: Turn) -> None:
    raise ValueError("policy bug")


@pytest.mark.parametrize(("behaviour", "marker", "note"), [
    (_finishes, "turn complete for s1", None),
    (_sleeps, "turn cancelled for s1", "exceeded its limit"),
    (_breaks, "turn cancelled for s1", "crashed: ValueError: policy bug"),
])
async def test_turn_ends_with_usage_then_one_marker(behaviour, marker: str, note: str | None) -> None:
    bridge = _Bridge(max_turn_s=0.2)
    turn = Turn({"id": "e1", "pubkey": "p"}, "c", "some task text", Session("s1", "prompt"))
    await run_turn(bridge, SimpleNamespace(turn=behaviour), turn)  # type: ignore[arg-type]
    lines = bridge.out.getvalue().splitlines()
    assert "turn started for s1 (event e1)" in lines[0]
    assert "goose usage update session_id=s1 " in lines[-2]
    assert lines[-1].endswith(marker)
    assert sum(any(m in line for m in MARKERS) for line in lines) == 1
    if note is not None:
        assert any(note in line for line in lines)
