"""Fixtures for the stand-in stack against the real dev relay: a fresh database per module, the
relay on one port with its canonical RELAY_URL on another, bridged by the stack's own
relay-forwarder exactly as the trial pod's forwarder container does, the stack built once, and
`trial(...)`, which runs one trial the way the operator runs it in a pod (local processes
instead of containers)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from buzz_operator.condition import (
    EndpointConfig,
    ExperimentManifest,
    agent_env,
    compose_system_prompt,
    plan_seats,
    teammates_of,
)
from buzz_operator.dataset import load_task
from buzz_operator.dev.localstack import with_database
from buzz_operator.dev.relay import RelayConfig, serve
from buzz_operator.dev.stack.build import build_stack
from buzz_operator.relay.client import RelayClient
from buzz_operator.relay.evidence import dumps_evidence, export_evidence
from buzz_operator.relay.messages import post_task, wait_for_done
from buzz_operator.relay.nostr import Keypair
from buzz_operator.relay.tenant import provision
from buzz_operator.relay.tenant_models import (
    DirectoryEntry,
    RelayTarget,
    TenantHandle,
    TenantRequest,
    TenantSecrets,
)

from tests.support.databases import scratch_database
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[3]
MANIFESTS = ROOT / "manifests"
TASKS = ROOT / "tasks"
STOP_GRACE_S = 2.0  # TERM, wait, KILL (docs/corridor.md#stop)
READY_TIMEOUT_S = 60.0  # docs/corridor.md#readiness readiness_timeout_seconds
USAGE_SETTLE_S = 10.0  # the runtime allows 60 s; a stand-in turn reports within milliseconds
USAGE_MARKER = "goose usage update"


@pytest.fixture(scope="session")
def stack_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("opt-buzz")
    build_stack(out)
    return out


@pytest.fixture(scope="module")
def agent_db(pg_dsn: str) -> Iterator[str]:
    with scratch_database(pg_dsn, f"agent_{secrets.token_hex(6)}") as name:
        yield with_database(pg_dsn, name)


@dataclass(frozen=True)
class Stage:
    """Agents dial `agent_url` (the canonical RELAY_URL, served by the forwarder); the
    operator side dials the relay directly while presenting the canonical Host.
    `restart_relay()` stops the relay and serves it again on the same port (a relay pod
    restart behind the still-running forwarder)."""

    target: RelayTarget
    agent_url: str
    restart_relay: Callable[[], Awaitable[None]]


@pytest.fixture
async def stage(agent_db: str, stack_dir: Path, tmp_path: Path) -> AsyncIterator[Stage]:
    owner, relay_key = Keypair.generate(), Keypair.generate()
    relay_port, canonical_port = free_port(), free_port()
    config = RelayConfig(
        relay_url=f"ws://localhost:{canonical_port}",
        owner_pubkey=owner.pubkey_hex,
        relay_secret_hex=relay_key.secret_hex,
        database_url=agent_db,
        bind_host="127.0.0.1",
        bind_port=relay_port,
        ttl_sweep_seconds=0.5,
    )
    log = tmp_path / "relay-forwarder.log"
    async with contextlib.AsyncExitStack() as relay_scope:
        await relay_scope.enter_async_context(serve(config))

        async def restart_relay() -> None:
            await relay_scope.aclose()
            await relay_scope.enter_async_context(serve(config))

        with log.open("wb") as sink:
            forwarder = await asyncio.create_subprocess_exec(
                str(stack_dir / "bin" / "relay-forwarder"), f"127.0.0.1:{canonical_port}",
                f"127.0.0.1:{relay_port}",
                stdin=asyncio.subprocess.DEVNULL, stdout=sink, stderr=asyncio.subprocess.STDOUT,
            )
        try:
            for _ in range(200):
                if b"forwarding" in log.read_bytes() or forwarder.returncode is not None:
                    break
                await asyncio.sleep(0.05)
            assert b"forwarding" in log.read_bytes(), log.read_text(errors="replace")
            yield Stage(
                target=RelayTarget(url=f"ws://localhost:{canonical_port}", owner_secret_hex=owner.secret_hex,
                                   pg_dsn=agent_db, connect_url=f"ws://127.0.0.1:{relay_port}"),
                agent_url=f"ws://localhost:{canonical_port}",
                restart_relay=restart_relay,
            )
        finally:
            forwarder.terminate()
            await forwarder.wait()


@dataclass
class SeatProcess:
    seat_id: str
    process: asyncio.subprocess.Process
    stdout_log: Path
    stderr_log: Path
    exit_before_stop: int | None = None  # what a liveness probe saw when the trial ended

    def log_text(self) -> str:
        return self.stdout_log.read_text(errors="replace") + self.stderr_log.read_text(errors="replace")


@dataclass
class TrialOutcome:
    directory: Path  # where the seat logs are, like the pod's /opt/buzz/logs after download
    manifest: ExperimentManifest
    seats: list[SeatProcess]
    handle: TenantHandle
    secrets: TenantSecrets
    task_event_id: str
    completion: dict[str, Any] | None
    evidence: dict[str, Any]
    reward: dict[str, float]
    api_key: str

    def seat(self, seat_id: str) -> SeatProcess:
        return next(s for s in self.seats if s.seat_id == seat_id)


def manifest_for(policy: str) -> ExperimentManifest:
    """The demo conditions; other policies are the solo oracle condition on their endpoint."""
    if policy == "team":
        return ExperimentManifest.load(MANIFESTS / "standin-team.yaml")
    raw = yaml.safe_load((MANIFESTS / "standin-oracle.yaml").read_text())
    endpoint = f"standin/{policy}"
    raw["condition"] = f"standin-{policy}"
    raw["roster"][0]["endpoint"] = endpoint
    raw["prices"] = {endpoint: raw["prices"]["standin/oracle"]}
    return ExperimentManifest.load(raw)


def _seed_skill_file(home: Path) -> Path:
    """What the read-named-path image's Dockerfile writes under HOME (random CHECK_ID)."""
    skill = home / ".claude" / "skills" / "context-health-check" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: context-health-check\n---\n\n# Context health check\n\n"
                     f"CHECK_ID: {secrets.token_hex(8)}\nACTION: recalibrate\n")
    return skill


async def _wait_until_subscribed(seats: list[SeatProcess], channel_id: str) -> None:
    marker = f"subscribed to channel {channel_id}"
    deadline = time.monotonic() + READY_TIMEOUT_S
    while not all(marker in s.log_text() for s in seats):
        dead = [s.seat_id for s in seats if s.process.returncode is not None]
        assert not dead, f"agents exited before readiness: {dead}: {[s.log_text() for s in seats]}"
        assert time.monotonic() < deadline, f"not subscribed in time: {[s.log_text() for s in seats]}"
        await asyncio.sleep(0.1)


async def settle_usage(seats: list[SeatProcess], bound_s: float = USAGE_SETTLE_S) -> None:
    """docs/corridor.md#usage-settle: before stopping, give each live seat until it has reported usage — the DONE message
    can land before the turn's closing usage line, exactly as with the real buzz-acp."""
    for _ in range(int(bound_s / 0.1)):
        pending = [s for s in seats if s.process.returncode is None and USAGE_MARKER not in s.log_text()]
        if not pending:
            return
        await asyncio.sleep(0.1)


async def stop_seats(seats: list[SeatProcess]) -> None:
    for seat in seats:
        seat.exit_before_stop = seat.process.returncode
        if seat.process.returncode is None:
            seat.process.send_signal(signal.SIGTERM)
    running = [asyncio.ensure_future(s.process.wait()) for s in seats if s.process.returncode is None]
    if running:
        await asyncio.wait(running, timeout=STOP_GRACE_S)
    for seat in seats:
        if seat.process.returncode is None:
            seat.process.kill()
        await seat.process.wait()


async def _grade(task_name: str, directory: Path, evidence_path: Path, skill: Path) -> dict[str, float]:
    """Run the task's real tests/test.sh; native tasks write reward.json, container ones reward.txt."""
    task = load_task(TASKS / task_name)
    verifier = directory / "verifier"
    env = {**os.environ, "BUZZ_TESTS_DIR": str(task.tests_dir), "BUZZ_EVIDENCE": str(evidence_path),
           "BUZZ_VERIFIER_DIR": str(verifier), "BUZZ_SKILL_FILE": str(skill), "BUZZ_APP_DIR": str(directory / "app")}
    proc = await asyncio.create_subprocess_exec("bash", str(task.tests_dir / "test.sh"), env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 60)
    assert proc.returncode == 0, err.decode(errors="replace")
    if (verifier / "reward.json").exists():
        return json.loads((verifier / "reward.json").read_text())
    return {"reward": float((verifier / "reward.txt").read_text().strip())}


# called once every seat is subscribed, before the task is posted: (user client, handle, secrets)
BeforeTask = Callable[[RelayClient, TenantHandle, TenantSecrets], Awaitable[None]]


async def run_trial(stage: Stage, stack_dir: Path, directory: Path, *, policy: str, task_name: str,
                    done_budget_s: float = 30.0, extra_env: dict[str, str] | None = None,
                    before_task: BeforeTask | None = None, settle_s: float = USAGE_SETTLE_S,
                    manifest: ExperimentManifest | None = None, endpoints: EndpointConfig | None = None
                    ) -> TrialOutcome:
    """One trial of `policy` (a folded-in stand-in policy), or of `manifest` on `endpoints` when
    given (e.g. a condition on the scripted model endpoint)."""
    task = load_task(TASKS / task_name)
    manifest = manifest or manifest_for(policy)
    endpoint = endpoints or EndpointConfig.load(
        {f"standin/{policy}": {"provider": "standin", "api_key_env": "STANDIN_API_KEY"}})
    seats = plan_seats(manifest)
    request = TenantRequest(
        run_id=f"run-{secrets.token_hex(4)}", trial_id=f"trial-{secrets.token_hex(8)}",
        manifest_sha256=manifest.sha256, seats=seats, channel_label=task.name, task_name=task.name,
        user_display_name=task.buzz.user_display_name,
        directory=[DirectoryEntry(e.name, e.role) for e in task.buzz.directory],
    )
    handle, tenant_secrets = await provision(stage.target, request)
    pubkeys = {s.seat_id: s.pubkey for s in handle.seats}
    home = directory / "home"
    skill = _seed_skill_file(home)
    api_key = f"standin-{secrets.token_hex(16)}"
    processes: list[SeatProcess] = []
    completion: dict[str, Any] | None = None
    try:
        for seat in seats:
            persona = (MANIFESTS / manifest.roster_class(seat.class_id).prompt.path).read_bytes()
            prompt = directory / f"{seat.seat_id}.system-prompt.md"
            prompt.write_bytes(compose_system_prompt(
                persona, seat_id=seat.seat_id, seat_pubkey=pubkeys[seat.seat_id], channel_id=handle.channel_id,
                user_name=handle.user.name, user_pubkey=handle.user.pubkey,
                teammates=teammates_of(seat.seat_id, seats, pubkeys)))
            seat_secret = tenant_secrets.seats[seat.seat_id]
            env = {
                # what the task container contributes: its PATH and HOME; /app is redirected
                "PATH": os.environ["PATH"], "HOME": str(home), "BUZZ_STANDIN_APP_DIR": str(directory / "app"),
                **agent_env(manifest=manifest, seat=seat, endpoint=endpoint[seat.endpoint],
                            relay_url=stage.agent_url, secret_key_hex=seat_secret.secret_hex,
                            auth_tag=seat_secret.auth_tag, channel_id=handle.channel_id, api_key=api_key,
                            prompt_path=str(prompt)),
                **(extra_env or {}),
            }
            out, err = directory / f"{seat.seat_id}.stdout.log", directory / f"{seat.seat_id}.stderr.log"
            with out.open("wb") as stdout, err.open("wb") as stderr:
                # the trial's directory stands for the task container's working directory
                proc = await asyncio.create_subprocess_exec(
                    str(stack_dir / "bin" / "buzz-acp"), env=env, cwd=directory,
                    stdin=asyncio.subprocess.DEVNULL, stdout=stdout, stderr=stderr)
            processes.append(SeatProcess(seat.seat_id, proc, out, err))
        await _wait_until_subscribed(processes, handle.channel_id)

        orchestrator = handle.orchestrator
        user = RelayClient(stage.target.dial_url, Keypair.from_secret(tenant_secrets.user_secret_hex),
                           tenant_secrets.user_auth_tag, host=stage.target.authority)
        async with user:
            if before_task is not None:
                await before_task(user, handle, tenant_secrets)
            since = int(time.time()) - 1
            waiter = asyncio.create_task(wait_for_done(user, handle.channel_id, orchestrator.pubkey, since))
            task_event_id = await post_task(user, handle.channel_id, orchestrator.seat_id, orchestrator.pubkey,
                                            task.instruction)
            try:
                completion = await asyncio.wait_for(waiter, done_budget_s)
            except TimeoutError:
                completion = None
    finally:
        await settle_usage(processes, settle_s)
        await stop_seats(processes)

    evidence = await export_evidence(
        stage.target, handle, tenant_secrets, task_event_id=task_event_id,
        completion_message_id=completion["id"] if completion else None,
        observe_channel_names=list(task.buzz.observe_channel_names),
    )
    evidence_path = directory / "buzz-evidence.json"
    evidence_path.write_text(dumps_evidence(evidence))
    reward = await _grade(task_name, directory, evidence_path, skill)
    return TrialOutcome(directory, manifest, processes, handle, tenant_secrets, task_event_id, completion, evidence, reward, api_key)


@pytest.fixture
def trial(stage: Stage, stack_dir: Path, tmp_path: Path) -> Callable[..., Awaitable[TrialOutcome]]:
    """`await trial(policy=..., task_name=...)` → TrialOutcome, each call in a fresh directory."""
    counter = iter(range(1000))

    async def run(**kwargs: Any) -> TrialOutcome:
        directory = tmp_path / f"trial-{next(counter)}"
        directory.mkdir()
        return await run_trial(stage, stack_dir, directory, **kwargs)

    return run
