"""`buzz-acp` (stand-in): the agent process the runtime launches per seat (docs/corridor.md#agent-environment).

The model is a policy folded in (policies.py, `BUZZ_AGENT_MODEL=standin/<policy>`), or, when
`BUZZ_AGENT_PROVIDER` names a real provider (openai, anthropic), an HTTP model endpoint called the
way buzz-agent calls one (model_loop.py).

Exit statuses: 0 after SIGTERM/SIGINT, 1 when the relay is lost or unreachable, 2 on bad
configuration or an unknown policy; the `crash` policy exits 101 mid-turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Callable

from .bridge import Bridge
from .compat import AsyncTimeout
from .config import AcpConfig, ConfigError
from .endpoint import EndpointSettings, is_remote
from .llm import EndpointError
from .model_loop import EndpointModel
from .nostr import CredentialError
from .policies import POLICIES, Policy
from .session import RelayError
from .tracing import ACP_TARGET, TURN_TARGET, EnvFilter, Logger, delivery_receipt_line, turn_starting_line
from .turn import Turn

SHUTDOWN_GRACE_S = 1.0
HELP = """usage: buzz-acp [--help | --version]

The stand-in buzz-acp: one agent seat on a Buzz relay, configured by its environment as the
runtime launches it (docs/corridor.md#agent-environment): BUZZ_RELAY_URL, BUZZ_PRIVATE_KEY, BUZZ_AUTH_TAG, BUZZ_ACP_CHANNELS,
BUZZ_AGENT_MODEL (standin/<policy>), BUZZ_ACP_SYSTEM_PROMPT_FILE, BUZZ_ACP_SUBSCRIBE, RUST_LOG.
Exits 0 after SIGTERM/SIGINT, 1 when the relay is lost, 2 on bad configuration."""


async def run_turn(bridge: Bridge, policy: Policy, turn: Turn) -> None:
    """One turn, logged as buzz-acp logs it: the pool's start line, the stand-in's own start
    marker, the usage line, one turn-end marker, and — after a turn that ended normally — the
    pool's delivery receipt naming every event the turn delivered (pool.rs
    `record_channel_delivery_success`; a failed or timed-out turn delivered nothing)."""
    session_id = turn.session.session_id
    log = bridge.log
    log.info(TURN_TARGET, turn_starting_line(turn.channel))
    log.info(ACP_TARGET, f"turn started for {session_id} (event {turn.event.get('id')})")
    outcome = "complete"
    try:
        outcome = await asyncio.wait_for(policy.turn(turn), bridge.config.max_turn_s) or outcome
    except AsyncTimeout:
        log.warn(ACP_TARGET, f"turn for {session_id} exceeded its limit")
        outcome = "cancelled"
    except (RelayError, EndpointError, ConnectionError, OSError) as exc:
        log.error(ACP_TARGET, f"turn for {session_id} failed: {exc}")
        outcome = "cancelled"
    except Exception as exc:  # a policy bug ends its turn, visibly, never the whole agent
        log.error(ACP_TARGET, f"turn for {session_id} crashed: {type(exc).__name__}: {exc}")
        outcome = "cancelled"
    bridge.report_usage(turn.session)
    log.info(ACP_TARGET, f"turn {outcome} for {session_id}")
    if outcome != "cancelled":
        log.info(TURN_TARGET, delivery_receipt_line(turn.channel, turn.event_ids))


PolicyFactory = Callable[[Bridge], Policy]


async def run(config: AcpConfig, log: Logger, make_policy: PolicyFactory) -> int:
    bridge = Bridge(config, log)
    policy = make_policy(bridge)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    ignoring = []

    def on_signal(signame: str) -> None:
        grace = policy.sigterm_grace_s
        if grace > 0:
            if not ignoring:
                ignoring.append(signame)
                log.warn(ACP_TARGET, f"received {signame}; ignoring it for {grace:g}s")
                loop.call_later(grace, stop.set)
            return
        log.info(ACP_TARGET, f"received {signame}; shutting down")
        stop.set()

    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, on_signal, signum.name)

    log.info(ACP_TARGET, f"stand-in buzz-acp starting: model={config.model} policy={policy.describe()} "
                         f"pubkey={config.keys.pubkey} channels={','.join(config.channels)}")
    policy.started()

    async def on_turn(turn: Turn) -> None:
        await run_turn(bridge, policy, turn)

    worker = asyncio.create_task(bridge.serve(on_turn))
    stopper = asyncio.create_task(stop.wait())
    done, _ = await asyncio.wait({worker, stopper}, return_when=asyncio.FIRST_COMPLETED)
    status = 0
    if worker in done:
        exc = worker.exception()
        log.error(ACP_TARGET, f"relay session ended: {exc}")
        status = 1
    stopper.cancel()
    worker.cancel()
    for task in (worker, *bridge.turns):
        task.cancel()
    with contextlib.suppress(AsyncTimeout, ConnectionError, OSError):
        await asyncio.wait_for(bridge.relay.close(), SHUTDOWN_GRACE_S)
    return status


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args and args[0] in ("--version", "-V"):
        print("buzz-acp stand-in (buzz-operator dev stack)")
        return 0
    if args and args[0] in ("--help", "-h"):
        print(HELP)
        return 0
    try:
        config = AcpConfig.from_env()
    except (ConfigError, CredentialError) as exc:
        print(f"buzz-acp: {exc}", file=sys.stderr)
        return 2
    log = Logger(EnvFilter(config.rust_log))
    make_policy: PolicyFactory
    if is_remote(config.provider):
        try:
            settings = EndpointSettings.from_env(os.environ)
        except ConfigError as exc:
            print(f"buzz-acp: {exc}", file=sys.stderr)
            return 2

        def make_policy(bridge: Bridge) -> Policy:
            return EndpointModel(bridge, settings)
    else:
        policy_cls = POLICIES.get(config.policy)
        if policy_cls is None:
            log.error(ACP_TARGET, f"unknown stand-in policy {config.policy!r}; known: {', '.join(sorted(POLICIES))}")
            return 2
        make_policy = policy_cls
    return asyncio.run(run(config, log, make_policy))


if __name__ == "__main__":
    sys.exit(main())
