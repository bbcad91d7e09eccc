"""The stand-in buzz-acp's per-channel queue (crates/buzz-acp/src/queue.rs, queue handling): an
event for an idle channel starts a turn at once; events arriving while it runs wait and the next
turn delivers them together, oldest first, at most MAX_BATCH_EVENTS at a time; channels are
independent; what never wakes the agent is never queued."""

from __future__ import annotations

import asyncio
import io

import pytest
from buzz_operator.dev.agent.bridge import Bridge
from buzz_operator.dev.agent.config import AcpConfig
from buzz_operator.dev.agent.nostr import Keys
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from buzz_operator.dev.agent.turn import MAX_BATCH_EVENTS, MAX_PENDING_PER_CHANNEL, Turn

pytestmark = pytest.mark.timeout(30)
ME = Keys.from_text("05" * 32)
USER = "a" * 64
ONE, TWO = "11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222"


def _bridge() -> Bridge:
    env = {"BUZZ_RELAY_URL": "ws://localhost:3600", "BUZZ_PRIVATE_KEY": "05" * 32,
           "BUZZ_ACP_CHANNELS": f"{ONE},{TWO}", "BUZZ_AGENT_MODEL": "standin/oracle"}
    return Bridge(AcpConfig.from_env(env), Logger(EnvFilter("buzz_acp=info"), io.StringIO()))


def _event(n: int, channel: str = ONE, *, pubkey: str = USER, mention: bool = True) -> dict[str, object]:
    tags = [["h", channel]] + ([["p", ME.pubkey]] if mention else [])
    return {"id": f"{n:064x}", "pubkey": pubkey, "created_at": 1_700_000_000 + n, "kind": 9,
            "content": f"@solo-1 message {n}", "tags": tags}


class _Recorder:
    """A turn handler that records each batch and holds the turn open until released."""

    def __init__(self) -> None:
        self.batches: list[tuple[str, list[str]]] = []
        self.release = asyncio.Event()
        self.running = 0
        self.most_running = 0

    async def __call__(self, turn: Turn) -> None:
        self.batches.append((turn.channel, turn.event_ids))
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        await self.release.wait()
        self.running -= 1


async def _settle(bridge: Bridge) -> None:
    while running := [task for task in bridge.turns if not task.done()]:
        await asyncio.gather(*running)


async def test_events_during_a_turn_are_delivered_together_by_the_next() -> None:
    bridge, record = _bridge(), _Recorder()
    for n in (1, 2, 3):
        bridge._on_event(ONE, _event(n), record)
    await asyncio.sleep(0)
    assert record.batches == [(ONE, [f"{1:064x}"])]  # the first started at once, alone
    assert [e["id"] for e in bridge.pending[ONE]] == [f"{2:064x}", f"{3:064x}"]
    record.release.set()
    await _settle(bridge)
    assert record.batches == [(ONE, [f"{1:064x}"]), (ONE, [f"{2:064x}", f"{3:064x}"])]
    assert bridge.pending[ONE] == [] and bridge.in_flight == set()


async def test_the_batch_text_is_every_content_and_the_scope_the_last_event() -> None:
    bridge, turns = _bridge(), []

    async def keep(turn: Turn) -> None:
        turns.append(turn)

    bridge.pending[ONE] += [_event(1), _event(2)]
    bridge.dispatch(ONE, keep)
    await _settle(bridge)
    (turn,) = turns
    assert turn.text == "@solo-1 message 1\n\n@solo-1 message 2"
    assert turn.event["id"] == f"{2:064x}"


async def test_a_batch_holds_at_most_fifty_events() -> None:
    bridge, record = _bridge(), _Recorder()
    record.release.set()
    bridge.pending[ONE] += [_event(n) for n in range(MAX_BATCH_EVENTS + 10)]
    bridge.dispatch(ONE, record)
    await _settle(bridge)
    assert [len(ids) for _, ids in record.batches] == [MAX_BATCH_EVENTS, 10]


async def test_channels_are_independent() -> None:
    bridge, record = _bridge(), _Recorder()
    bridge._on_event(ONE, _event(1, ONE), record)
    bridge._on_event(TWO, _event(2, TWO), record)
    bridge._on_event(ONE, _event(3, ONE), record)
    await asyncio.sleep(0)
    assert record.most_running == 2 and sorted(c for c, _ in record.batches) == [ONE, TWO]
    record.release.set()
    await _settle(bridge)
    assert record.batches[-1] == (ONE, [f"{3:064x}"])


async def test_what_never_wakes_the_agent_is_never_queued() -> None:
    bridge, record = _bridge(), _Recorder()
    record.release.set()
    bridge._on_event(ONE, _event(1, pubkey=ME.pubkey), record)  # its own message
    bridge._on_event(ONE, _event(2, mention=False), record)  # no mention of it
    bridge._on_event(ONE, _event(3), record)
    bridge._on_event(ONE, _event(3), record)  # redelivered after a resubscription
    await _settle(bridge)
    assert record.batches == [(ONE, [f"{3:064x}"])]


async def test_a_full_queue_drops_its_oldest_event() -> None:
    bridge, record = _bridge(), _Recorder()
    bridge._on_event(ONE, _event(0), record)  # in flight from here on
    for n in range(1, MAX_PENDING_PER_CHANNEL + 2):
        bridge._on_event(ONE, _event(n), record)
    assert len(bridge.pending[ONE]) == MAX_PENDING_PER_CHANNEL
    assert bridge.pending[ONE][0]["id"] == f"{2:064x}"
    record.release.set()
    await _settle(bridge)
