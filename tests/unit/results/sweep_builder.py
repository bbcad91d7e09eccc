"""A realistic sweep in an object store, built with the project's own code: the stand-in team
manifest (manifests/standin-team.yaml), seat logs the ledger parses, ``collect_accounting``,
``write_bundle``, evidence messages normalised by ``relay.evidence``, the sweep's and each trial's
Harbor ``config.json`` from ``sweep.lock`` and ``ledger.harbor_config``, Harbor's ``result.json``
from ``ledger.harbor_result`` (the orchestrator's model, failure reasons under Harbor's names),
uploaded with ``storage.upload_bundle`` (result.json last) — as trial/steps/bundle.py does.

Each ``TrialPlan`` says how its trial ended; the files are what the operator would have
written for that ending (a launch failure has no agent metadata, a half-finished trial no
result.json, a ROUND-CAPPED one the marker in its log, and so on).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from buzz_operator.api.stack import StackDigests, StackLayout, StackSource, stack_record
from buzz_operator.api.trial import FailureClass
from buzz_operator.condition import EndpointConfig, ExperimentManifest, plan_seats, redact_endpoints
from buzz_operator.ledger import (
    PhaseTiming,
    TrialException,
    agent_metadata,
    agent_result,
    build_trial_result,
    collect_accounting,
    render_trial_result,
    trial_timing,
    write_bundle,
)
from buzz_operator.ledger.harbor_config import trial_config
from buzz_operator.ledger.harbor_result import orchestrator_model_info
from buzz_operator.ledger.trajectory import write_trajectory
from buzz_operator.pod.stack_install import manifest_digest
from buzz_operator.relay.evidence import normalize_message, transcript_from_evidence
from buzz_operator.scoring.failures import classify_reason
from buzz_operator.storage import FileStore, upload_bundle
from buzz_operator.sweep.lock import sweep_config as operator_sweep_config

ROOT = Path(__file__).resolve().parents[3]
MANIFEST = ROOT / "manifests" / "standin-team.yaml"
ENDPOINTS = ROOT / "manifests" / "endpoints" / "standin.json"
T0 = datetime(2026, 11, 30, 1, 0, 0, tzinfo=UTC)
USER_PK = "aa" * 32
LEAD_PK = "bb" * 32
WORKER_PK = "cc" * 32
CHANNEL = "5c4feb67-fc30-4637-88c4-5a71c9b3c579"
STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)
STANDIN_ACP = "a" * 64  # the sha256 of bin/buzz-acp in the stack most trials ran


@dataclass(frozen=True)
class TrialPlan:
    task: str
    attempt: int
    reward: float | dict[str, float] | None = 1.0
    exception: tuple[str, str] | None = None
    no_agent_result: bool = False  # a launch failure: Harbor recorded no agent metadata
    stopped_without_done: bool = False
    round_capped: bool = False
    verifier_broken: bool = False
    unpriced: bool = False  # the lead took turns but its usage lines never parsed
    handoff: bool = False  # an auto-compaction: the cost ceiling rises above the floor
    committed: bool = True
    input_tokens: int = 1000
    output_tokens: int = 100
    buzz_acp: str | None = STANDIN_ACP  # bin/buzz-acp's sha256 in the trial's stack; None: none installed

    @property
    def name(self) -> str:
        return f"{self.task}-{self.attempt}"

    @property
    def stack(self) -> dict[str, Any]:
        """The stack record the operator writes for this trial (api.stack.stack_record)."""
        if self.buzz_acp is None:
            return stack_record(STACK, None)
        binaries = {"buzz-acp": self.buzz_acp, "buzz": "b" * 64}
        return stack_record(STACK, StackDigests(digest=manifest_digest(binaries), binaries=binaries))


def usage(session: str, inp: int, out: int) -> str:
    return f"2026-11-30T01:00:01Z DEBUG acp::usage: goose usage update session_id={session} input={inp} output={out} cached=0\n"


def turn_start() -> str:
    """A turn's start, and a tool call the agent made in it, as buzz-acp logs them."""
    return (f"2026-11-30T01:00:00Z  INFO pool::prompt: turn starting for channel {CHANNEL}\n"
            "2026-11-30T01:00:00Z  INFO acp::tool: tool_call: buzz send (execute)\n"
            "2026-11-30T01:00:01Z  INFO acp::tool: tool_call_update: call-1 → completed\n")


def turn_end(marker: str = "turn complete for") -> str:
    return f"2026-11-30T01:00:02Z  INFO buzz_acp: {marker} channel {CHANNEL}: end_turn\n"


def evidence(plan: TrialPlan, sweep: str) -> dict[str, Any]:
    """The lead answers the user in a thread and delegates to the worker by mention."""
    by_pubkey = {
        USER_PK: ("user", "user"),
        LEAD_PK: ("lead-1", "orchestrator"),
        WORKER_PK: ("worker-1", "worker"),
    }
    raw = [
        {"id": "e1", "pubkey": USER_PK, "kind": 9, "created_at": 1_800_000_000,
         "content": "@lead-1 please write hello.txt", "tags": [["h", CHANNEL], ["p", LEAD_PK]]},
        {"id": "e2", "pubkey": LEAD_PK, "kind": 9, "created_at": 1_800_000_003,
         "content": f"nostr:{WORKER_PK} can you take this?", "tags": [["h", CHANNEL], ["e", "e1", "", "reply"], ["p", WORKER_PK]]},
        {"id": "e3", "pubkey": WORKER_PK, "kind": 9, "created_at": 1_800_000_010,
         "content": "done, wrote it", "tags": [["h", CHANNEL], ["e", "e2", "", "reply"], ["p", LEAD_PK]]},
        {"id": "e4", "pubkey": LEAD_PK, "kind": 9, "created_at": 1_800_000_012,
         "content": "DONE: hello.txt written", "tags": [["h", CHANNEL], ["e", "e1", "", "reply"], ["p", USER_PK]]},
    ]  # fmt: skip
    messages = [normalize_message(m, by_pubkey) for m in raw]
    return {
        "schema_version": 1,
        "trial": {"run_id": sweep, "trial_id": f"trial-{plan.name}", "channel_id": CHANNEL},
        "task_event_id": "e1",
        "completion_message_id": None if plan.stopped_without_done else "e4",
        "identities": {name: {"role": role, "pubkey": pk} for pk, (name, role) in by_pubkey.items()},
        "directory": [{"name": "John Vincent Doe", "role": "user", "pubkey": "dd" * 32}],
        "task_name": plan.task,
        "observed_channels": [],
        "message_count": len(messages),
        "truncated": False,
        "messages": messages,
    }


def _stage(plan: TrialPlan, agent_dir: Path, sweep: str) -> None:
    agent_dir.mkdir(parents=True)
    lead = turn_start() + (turn_end() if plan.unpriced else usage("A", plan.input_tokens, plan.output_tokens) + turn_end())
    if plan.round_capped:
        lead += turn_end("turn hit max_turn_requests for")
    if plan.handoff:
        lead += "2026-11-30T01:00:03Z  INFO buzz_agent::handoff: handoff #1 (history 84 -> 3 items; 180000 -> 5120 tokens)\n"
    (agent_dir / "lead-1.stderr.log").write_text(lead, encoding="utf-8")
    (agent_dir / "lead-1.stdout.log").write_text("", encoding="utf-8")
    (agent_dir / "worker-1.stderr.log").write_text(usage("B", 400, 40) + turn_end(), encoding="utf-8")
    for seat in ("lead-1", "worker-1"):
        (agent_dir / f"{seat}.system-prompt.md").write_text(f"You are `{seat}`.\n", encoding="utf-8")
    document = evidence(plan, sweep)
    (agent_dir / "buzz-evidence.json").write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    (agent_dir / "transcript.json").write_text(
        json.dumps(transcript_from_evidence(document), indent=2) + "\n"
    )


def _verifier(plan: TrialPlan, verifier_dir: Path) -> dict[str, float] | None:
    verifier_dir.mkdir(parents=True)
    stdout = "E: Unable to locate package curl\n" if plan.verifier_broken else "1 passed\n"
    (verifier_dir / "test-stdout.txt").write_text(stdout, encoding="utf-8")
    if plan.reward is None:
        return None
    if isinstance(plan.reward, dict):
        (verifier_dir / "reward.json").write_text(json.dumps(plan.reward), encoding="utf-8")
        return dict(plan.reward)
    (verifier_dir / "reward.txt").write_text(f"{plan.reward}\n", encoding="utf-8")
    return {"reward": plan.reward}


def write_trial(
    plan: TrialPlan, sweep: str, store_url: str, trial_dir: Path, index: int, job: dict[str, Any] | None = None
) -> None:
    manifest = ExperimentManifest.load(MANIFEST)
    seats = plan_seats(manifest)
    agent_dir = trial_dir / "agent" / "buzz"
    _stage(plan, agent_dir, sweep)
    accounting = collect_accounting(agent_dir, seats, manifest.prices)
    trajectory = write_trajectory(agent_dir, trial_name=plan.name, trial_id=f"trial-{plan.name}", manifest=manifest,
                                  seats=seats, accounting=accounting, stack_version="sha256:" + "c" * 64)  # fmt: skip
    assert trajectory is not None
    write_bundle(
        agent_dir, manifest=manifest, trial_id=f"trial-{plan.name}", channel_id=CHANNEL, seats=seats,
        accounting=accounting, endpoints_redacted=redact_endpoints(EndpointConfig.load(ENDPOINTS)), stack=plan.stack,
        timing=trial_timing(runtime_started=0.0, bundle_started=60.0, active_started=5.0, active_finished=45.0,
                            usage_settle_seconds=0.5),
        scanned_beside={"../trajectory.json": trajectory},
    )  # fmt: skip
    rewards = _verifier(plan, trial_dir / "verifier")
    spec = {"sweepName": sweep, "task": plan.task, "attempt": plan.attempt, "conditionHash": manifest.sha256}
    config = trial_config(job, task=plan.task, trial_name=plan.name, sweep=sweep, condition=manifest.condition,
                          condition_hash=manifest.sha256, spec=spec)  # fmt: skip
    (trial_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    if not plan.committed:
        return
    start = T0 + timedelta(minutes=index)
    metadata = agent_metadata(
        accounting=accounting, completion_message_id="" if plan.stopped_without_done else "e4",
        completion_message="DONE: hello.txt written", stopped_without_done=plan.stopped_without_done,
        buzz_evidence_exported=True, agent_active_seconds=40.0, usage_settle_seconds=0.5,
        container_trust_store="present", container_verifier_deps="installed",
        agent_max_rounds={"lead-1": 0, "worker-1": 0}, solo_roster=False,
        agent_platform_prompt={"lead-1": True, "worker-1": True}, manifest_sha256=manifest.sha256,
        condition=manifest.condition, buzz_channel_id=CHANNEL, run_id=sweep, trial_id=f"trial-{plan.name}",
        stack=plan.stack,
    )  # fmt: skip
    at = start + timedelta(seconds=50)
    exception = None
    if plan.exception and plan.exception[0] == "AgentTimeoutError":  # the outcome, no reason
        exception = TrialException(plan.exception[0], plan.exception[1], "", at, failure_class=FailureClass.OUTCOME)
    elif plan.exception:
        try:
            failure_class: FailureClass | None = classify_reason(plan.exception[0])
        except ValueError:  # another harness's name (the seed's): written as it wrote it, no override
            failure_class = None
        exception = TrialException.for_reason(plan.exception[0], plan.exception[1], at, failure_class)
    providers = {name: e.provider for name, e in EndpointConfig.load(ENDPOINTS).items()}
    result = build_trial_result(
        trial_uuid=f"00000000-0000-4000-8000-{index:012d}", task_name=plan.task, trial_name=plan.name,
        trial_uri=f"{store_url}/{sweep}/{plan.name}", task_id={"path": plan.task}, source=config["task"]["source"],
        task_checksum="0" * 64, config=config, model_info=orchestrator_model_info(manifest.roster, providers),
        agent_result=None if plan.no_agent_result else agent_result(accounting, metadata),
        rewards=rewards, exception=exception, started_at=start, finished_at=start + timedelta(seconds=60),
        environment_setup=PhaseTiming(start, start + timedelta(seconds=5)),
        agent_execution=PhaseTiming(start + timedelta(seconds=5), start + timedelta(seconds=45)),
        verifier=PhaseTiming(start + timedelta(seconds=50), start + timedelta(seconds=55)),
    )  # fmt: skip
    (trial_dir / "result.json").write_text(render_trial_result(result), encoding="utf-8")


def operator_config(sweep: str, spec: dict[str, Any], tasks: list[str]) -> dict[str, Any]:
    """The sweep's config.json as the operator writes it (sweep.lock.sweep_config)."""
    manifest = ExperimentManifest.load(MANIFEST)
    lock = {"condition": manifest.condition, "conditionHash": manifest.sha256, "dataset": "builtin",
            "tasks": dict.fromkeys(tasks, "0" * 64)}  # fmt: skip
    return operator_sweep_config(sweep, "ns", spec, lock)


def build_sweep(
    store_root: Path,
    sweep: str,
    plans: list[TrialPlan],
    sweep_config: dict[str, Any] | None = None,
    *,
    spec: dict[str, Any] | None = None,
    tasks: list[str] | None = None,
) -> str:
    """Upload every planned trial to a FileStore at ``store_root``; returns the store URL.

    ``spec`` (a BuzzSweep spec) makes the sweep's config.json the operator's, over ``tasks``
    (default: the plans' tasks), and the trials' config.json derived from it; ``sweep_config``
    instead stores that document as it is (a config.json of an earlier build, say)."""
    store = FileStore(store_root)
    job = None
    if spec is not None:
        job = operator_config(sweep, spec, tasks or sorted({p.task for p in plans}))
        sweep_config = job
    if sweep_config is not None:
        asyncio.run(store.put(f"{sweep}/config.json", json.dumps(sweep_config).encode()))
    with tempfile.TemporaryDirectory() as scratch:
        for index, plan in enumerate(plans):
            trial_dir = Path(scratch) / plan.name
            write_trial(plan, sweep, store.url, trial_dir, index, job)
            asyncio.run(upload_bundle(store, sweep, plan.name, trial_dir))
    return store.url


# A sweep with every flag of the seed's summariser: hello-file ×3 and reply-to-thread ×3.
MIXED = [
    TrialPlan("hello-file", 1, reward=1.0),
    TrialPlan("hello-file", 2, reward=1.0, handoff=True),
    TrialPlan("hello-file", 3, reward=0.0, exception=("AgentTimeoutError", "the agents did not post DONE: before the deadline"),
              stopped_without_done=True),
    TrialPlan("reply-to-thread", 1, reward={"reward": 0.0, "reply_to_thread": 0.0, "answer_correct": 1.0}),
    TrialPlan("reply-to-thread", 2, reward=None, exception=("RuntimeLaunchError", "buzz-acp failed to start"),
              no_agent_result=True, buzz_acp=None),  # its pod never installed a stack
    TrialPlan("reply-to-thread", 3, reward=0.0, round_capped=True, unpriced=True, verifier_broken=True),
    TrialPlan("user-mention", 1, reward=None, exception=("VerifierOutputParseError", "reward.txt: not a number"),
              committed=True),
    TrialPlan("user-mention", 2, committed=False),
]  # fmt: skip
