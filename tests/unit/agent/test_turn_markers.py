"""Every turn ends with its usage line, then exactly one turn-end marker (docs/completion.md#what-is-watched, docs/accounting.md#log-lines), whether it
completed, ran out of time or the policy failed; with `pool::prompt` enabled, buzz-acp's own
turn-start line comes first and a turn that ended normally is followed by its delivery receipt."""

from __future__ import annotations

import asyncio
import io
import re
from types import SimpleNamespace

import pytest
from buzz_operator.dev.agent.acp import run_turn
from buzz_operator.dev.agent.tracing import EnvFilter, Logger, delivery_receipt_line
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
    turn = Turn([{"id": "e1", "pubkey": "p"}], "c", "some task text", Session("s1", "prompt"))
    await run_turn(bridge, SimpleNamespace(turn=behaviour), turn)  # type: ignore[arg-type]
    lines = bridge.out.getvalue().splitlines()
    assert "turn started for s1 (event e1)" in lines[0]
    assert "goose usage update session_id=s1 " in lines[-2]
    assert lines[-1].endswith(marker)
    assert sum(any(m in line for m in MARKERS) for line in lines) == 1
    if note is not None:
        assert any(note in line for line in lines)


class _PoolBridge(_Bridge):
    """The runtime's default RUST_LOG, which enables the pool's `pool::prompt` lines."""

    def __init__(self, max_turn_s: float) -> None:
        super().__init__(max_turn_s)
        self.log = Logger(EnvFilter("buzz_acp=info,acp::usage=debug,pool::prompt=info"), self.out)


CHANNEL = "3f2b8c1e-4d5a-4b6c-8d7e-9f0a1b2c3d4e"
IDS = ["c" * 64, "a" * 64, "b" * 64]  # delivery order; the receipt sorts them


async def test_a_completed_turn_logs_buzz_acps_start_line_and_delivery_receipt() -> None:
    bridge = _PoolBridge(max_turn_s=5)
    turn = Turn([{"id": ident, "pubkey": "p"} for ident in IDS], CHANNEL, "text", Session("s1", "prompt"))
    await run_turn(bridge, SimpleNamespace(turn=_finishes), turn)  # type: ignore[arg-type]
    lines = bridge.out.getvalue().splitlines()
    assert re.fullmatch(rf"\S+Z  INFO pool::prompt: turn starting for channel {CHANNEL}", lines[0])
    assert lines[1].endswith(f"INFO buzz_acp: turn started for s1 (event {'b' * 64})")  # the batch's last
    assert lines[-2].endswith("INFO buzz_acp: turn complete for s1")
    # crates/buzz-acp pool.rs delivery_receipt_line: after the stop line, ids sorted, comma-joined
    assert re.fullmatch(rf"\S+Z  INFO pool::prompt: turn delivered Buzz events for channel {CHANNEL}: "
                        rf"{'a' * 64},{'b' * 64},{'c' * 64}", lines[-1])
    assert delivery_receipt_line(CHANNEL, ["b", "a", "b"]) == f"turn delivered Buzz events for channel {CHANNEL}: a,b"


@pytest.mark.parametrize("behaviour", [_sleeps, _breaks])
async def test_a_failed_or_timed_out_turn_delivered_nothing(behaviour) -> None:
    bridge = _PoolBridge(max_turn_s=0.2)
    turn = Turn([{"id": IDS[0], "pubkey": "p"}], CHANNEL, "text", Session("s1", "prompt"))
    await run_turn(bridge, SimpleNamespace(turn=behaviour), turn)  # type: ignore[arg-type]
    log = bridge.out.getvalue()
    assert log.count("turn starting for channel") == 1 and log.rstrip().endswith("turn cancelled for s1")
    assert "turn delivered Buzz events" not in log


async def test_a_round_capped_turn_still_delivered_its_events() -> None:
    async def capped(turn: Turn) -> str:
        return "hit max_turn_requests"

    bridge = _PoolBridge(max_turn_s=5)
    turn = Turn([{"id": IDS[0], "pubkey": "p"}], CHANNEL, "text", Session("s1", "prompt"))
    await run_turn(bridge, SimpleNamespace(turn=capped), turn)  # type: ignore[arg-type]
    lines = bridge.out.getvalue().splitlines()
    assert lines[-2].endswith("turn hit max_turn_requests for s1")
    assert lines[-1].endswith(f"turn delivered Buzz events for channel {CHANNEL}: {IDS[0]}")
