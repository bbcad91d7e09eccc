"""Driving the folded-in policies through the stand-in bridge on a `suite_trial.Trial`: the
seat's bridge, waiting for its turns, and playing a task with its scripted events."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from buzz_operator.dev.agent.acp import run_turn
from buzz_operator.dev.agent.bridge import Bridge
from buzz_operator.dev.agent.config import AcpConfig
from buzz_operator.dev.agent.policies import POLICIES
from buzz_operator.dev.agent.tracing import EnvFilter, Logger
from buzz_operator.dev.agent.turn import Turn

from tests.unit.agent.suite_trial import CHANNEL, ORCHESTRATOR, Store, Trial, instruction

RUNTIME_LOG = "buzz_acp=info,acp::usage=debug,pool::prompt=info,acp::stream=info,acp::tool=info"


def bridge_for(trial: Trial, policy: str, tmp_path: Path) -> tuple[Bridge, io.StringIO]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    prompt = tmp_path / "prompt.md"
    prompt.write_text(f"## Your team\n\nYou are `{ORCHESTRATOR}` (pubkey `{trial.orchestrator.pubkey}`).\n"
                      f"Tasks come from the user `{trial.user.name}` (pubkey `{trial.user.pubkey}`).\n")
    env = {"BUZZ_RELAY_URL": "ws://localhost:3600", "BUZZ_PRIVATE_KEY": trial.orchestrator.keys.secret.hex(),
           "BUZZ_ACP_CHANNELS": CHANNEL, "BUZZ_AGENT_MODEL": f"standin/{policy}",
           "BUZZ_ACP_SYSTEM_PROMPT_FILE": str(prompt), "BUZZ_STANDIN_APP_DIR": str(tmp_path / "app"),
           "RUST_LOG": RUNTIME_LOG}
    out = io.StringIO()
    bridge = Bridge(AcpConfig.from_env(env), Logger(EnvFilter(RUNTIME_LOG), out))
    bridge.relay = trial.agent_relay  # type: ignore[assignment]
    return bridge, out


async def idle(bridge: Bridge) -> None:
    while running := [task for task in bridge.turns if not task.done()]:
        await asyncio.gather(*running)


async def play(task: str, policy: str, split: list[list[int]] | None, tmp_path: Path,
               store: Store | None = None) -> tuple[Trial, str]:
    """Publish the task and its scripted events, deliver them in the turns `split` groups them
    into (None: through the bridge as they arrive), and return the trial and the seat's log.
    `store` sets the relay's clock (a frozen one puts every event in one second)."""
    trial = Trial(task, instruction(task), **({"store": store} if store is not None else {}))
    events = trial.publish()
    bridge, out = bridge_for(trial, policy, tmp_path)
    model = POLICIES[policy](bridge)

    async def on_turn(turn: Turn) -> None:
        await run_turn(bridge, model, turn)

    if split is None:
        for event in events:
            bridge._on_event(CHANNEL, event, on_turn)
    else:
        for group in split:
            bridge.pending[CHANNEL].extend(events[i] for i in group)
            bridge.dispatch(CHANNEL, on_turn)
            await idle(bridge)
    await idle(bridge)
    return trial, out.getvalue()
