"""One trial's bundle reduced to what a comparison turns on — the seed's ``read_trial``
(docs/failures.md#summaries; block/buzz ``benchmarks/harbor-buzz-orchestra/scripts/summarize.py``).

Pure: the caller passes the trial's files as bytes keyed by their path inside the trial dir
(see files.py); nothing here reads a disk or a store.

Identity follows the seed, widest net first, because the trials that die before saying which
condition they belong to are the ones a summary must not drop: ``agent_result.metadata``
(condition, manifest_sha256), then the bundle's ``agent/buzz/summary.json``, then (where the
seed recomputed the hash from ``config.json``'s manifest path) the bundle's own
``agent/buzz/manifest.json``, and last the trial spec's ``conditionHash`` in ``config.json``.

The stack a trial ran (its digest over every binary under /opt/buzz/bin) is read from
``agent_result.metadata.stack``, then the bundle's ``summary.json`` ``stack``; "" when neither
says (a bundle of an earlier build, or a try whose pod never installed a stack).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from buzz_operator.ledger.agent_log import ROUND_CAP_MARKER
from buzz_operator.ledger.harbor_errors import recorded_reason
from buzz_operator.ledger.verdict import classify_outcome, is_numeric_reward, verifier_output_broken

from . import files as F

UNKNOWN_CONDITION = "unknown"


@dataclass(frozen=True, slots=True)
class TrialRecord:
    """A finished (committed) trial. Field names follow the seed's ``Trial`` where it has them."""

    name: str
    condition: str
    manifest_sha256: str
    task: str
    reward: float
    input_tokens: int
    output_tokens: int
    cost_usd: float
    cost_usd_ceiling: float
    agent_seconds: float
    total_seconds: float
    outcome: str
    reconciled: bool
    round_capped: bool
    verifier_broken: bool
    stopped_without_done: bool
    timeout_multiplier: float
    agents: int
    attempt: int | None = None
    stack_digest: str = ""
    rewards: dict[str, float] = field(default_factory=dict)
    exception_type: str | None = None
    exception_message: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    # suspected secrets the bundle's scan found (summary.json secret_scan.findings): SECRETS×n
    secret_findings: int = 0
    # processes the kernel OOM-killed while the agents worked (docs/resources.md#pressure): PRESSURE×n
    oom_kills: int = 0
    # tries of this trial that failed on infra before the one its bundle holds (retried away)
    failed_tries: int = 0
    # result.json task_checksum: the task's content digest, which a comparison pairs on
    task_digest: str = ""

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


def load_json(data: bytes | None) -> dict[str, Any]:
    """A JSON object from bytes; {} for missing, unparsable or non-object documents (the seed's
    readers treat all three as absent, never as an error that stops the summary)."""
    if not data:
        return {}
    try:
        value = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def elapsed(block: object) -> float:
    """Seconds between a Harbor phase's ``started_at`` and ``finished_at``; 0.0 when unknown."""
    if not isinstance(block, dict):
        return 0.0
    started, finished = block.get("started_at"), block.get("finished_at")
    if not isinstance(started, str) or not isinstance(finished, str):
        return 0.0
    try:
        start = datetime.fromisoformat(started.replace("Z", "+00:00"))
        end = datetime.fromisoformat(finished.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (end - start).total_seconds())


def number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def timeout_multiplier(config: Mapping[str, Any], sweep_config: Mapping[str, Any]) -> float:
    """The clock the trial ran against (docs/failures.md#summaries clock×m). The seed reads ``agent_timeout_multiplier``
    then ``timeout_multiplier`` from the trial's config.json; ours keeps the multiplier on the
    sweep spec (the trial's deadlines are already scaled), so that is read after them."""
    for key in ("agent_timeout_multiplier", "timeout_multiplier"):
        if (value := number(config.get(key))) is not None:
            return value
    spec = config.get("spec") or {}
    if isinstance(spec, Mapping) and (value := number(spec.get("timeoutMultiplier"))) is not None:
        return value
    # the sweep's config.json (sweep.lock.sweep_config): Harbor's key, then the spec as submitted
    if (value := number(sweep_config.get("timeout_multiplier"))) is not None:
        return value
    sweep_spec = sweep_config.get("spec") or {}
    if isinstance(sweep_spec, Mapping) and (value := number(sweep_spec.get("timeoutMultiplier"))) is not None:
        return value
    return 1.0


def round_capped(trial_files: Mapping[str, bytes]) -> bool:
    marker = ROUND_CAP_MARKER.encode()
    return any(F.is_agent_log(rel) and marker in data for rel, data in trial_files.items())


def secret_findings(trial_files: Mapping[str, bytes]) -> int:
    """How many findings the bundle's secret scan listed (kinds and lines only, never the text)."""
    scan = load_json(trial_files.get(F.BUNDLE_SUMMARY)).get("secret_scan")
    findings = scan.get("findings") if isinstance(scan, Mapping) else None
    return len(findings) if isinstance(findings, list) else 0


def failed_tries(metadata: Mapping[str, Any]) -> int:
    """How many earlier tries failed on infra (the agent metadata's failed_tries, their reasons);
    0 for bundles written before it was recorded."""
    tries = metadata.get("failed_tries")
    return len(tries) if isinstance(tries, list) else 0


def oom_kills(metadata: Mapping[str, Any]) -> int:
    """Processes OOM-killed in the agents' phase, from the agent metadata's resource_usage
    (docs/resources.md#telemetry); 0 where the cgroup was not read."""
    used = metadata.get("resource_usage")
    agents = used.get("agents") if isinstance(used, Mapping) else None
    kills = agents.get("oomKills") if isinstance(agents, Mapping) else None
    return kills if isinstance(kills, int) and not isinstance(kills, bool) and kills > 0 else 0


def verifier_broken(trial_files: Mapping[str, bytes]) -> bool:
    """docs/failures.md#verifier-health: a missing verifier/test-stdout.txt is not evidence of breakage."""
    data = trial_files.get(F.VERIFIER_STDOUT)
    return bool(data) and verifier_output_broken(data.decode("utf-8", errors="replace"))


def _identity(
    metadata: Mapping[str, Any],
    summary: Mapping[str, Any],
    manifest: Mapping[str, Any],
    config: Mapping[str, Any],
) -> tuple[str, str] | None:
    if metadata.get("condition"):
        return str(metadata["condition"]), str(metadata.get("manifest_sha256", ""))
    if summary.get("condition"):
        return str(summary["condition"]), str(summary.get("manifest_sha256", ""))
    if (manifest.get("manifest") or {}).get("condition") and manifest.get("sha256"):
        return str(manifest["manifest"]["condition"]), str(manifest["sha256"])
    spec = config.get("spec") or {}
    if isinstance(spec, Mapping) and spec.get("conditionHash"):
        return UNKNOWN_CONDITION, str(spec["conditionHash"])
    return None


def _stack_digest(*documents: Mapping[str, Any]) -> str:
    for document in documents:
        stack = document.get("stack")
        if isinstance(stack, Mapping) and isinstance(stack.get("digest"), str) and stack["digest"]:
            return str(stack["digest"])
    return ""


def needs_fallback(trial_files: Mapping[str, bytes]) -> bool:
    """A committed trial whose result.json and bundle summary.json do not name its condition:
    its identity must come from the bundle's manifest.json (files.fallback_needs)."""
    if F.RESULT not in trial_files:
        return False
    metadata = (load_json(trial_files[F.RESULT]).get("agent_result") or {}).get("metadata") or {}
    return not metadata.get("condition") and not load_json(trial_files.get(F.BUNDLE_SUMMARY)).get("condition")


def read_trial(
    name: str, trial_files: Mapping[str, bytes], sweep_config: Mapping[str, Any] | None = None
) -> TrialRecord | None:
    """The trial's record, or None when it is not committed (no result.json) or not a Buzz trial."""
    data = load_json(trial_files.get(F.RESULT))
    if not data:
        return None
    config = load_json(trial_files.get(F.CONFIG))
    agent_result = data.get("agent_result") or {}
    metadata = agent_result.get("metadata") or {}
    summary = load_json(trial_files.get(F.BUNDLE_SUMMARY))  # the stack digest reads it either way
    spend = _spend(agent_result, metadata, summary)
    identity = _identity(metadata, summary, load_json(trial_files.get(F.BUNDLE_MANIFEST)), config)
    if identity is None:
        return None  # not produced by this harness; leave it alone, as the seed does
    verdict = _verdict(data)
    return TrialRecord(
        name=str(data.get("trial_name") or name),
        condition=identity[0],
        manifest_sha256=identity[1],
        task=str(data.get("task_name", "?")),
        reward=verdict.reward,
        input_tokens=spend.input_tokens,
        output_tokens=spend.output_tokens,
        cost_usd=spend.cost_usd,
        cost_usd_ceiling=spend.cost_usd_ceiling,
        agent_seconds=elapsed(data.get("agent_execution")),
        total_seconds=elapsed(data),
        outcome=verdict.outcome,
        reconciled=spend.reconciled,
        round_capped=round_capped(trial_files),
        verifier_broken=verifier_broken(trial_files),
        stopped_without_done=bool(metadata.get("stopped_without_done")),
        timeout_multiplier=timeout_multiplier(config, sweep_config or {}),
        agents=spend.agents,
        attempt=_attempt(config),
        stack_digest=_stack_digest(metadata, summary),
        rewards=verdict.rewards,
        exception_type=verdict.exception_type,
        exception_message=verdict.exception_message,
        started_at=_timestamp(data, "started_at"),
        finished_at=_timestamp(data, "finished_at"),
        secret_findings=secret_findings(trial_files),
        oom_kills=oom_kills(metadata),
        failed_tries=failed_tries(metadata),
        task_digest=str(data.get("task_checksum") or ""),
    )


@dataclass(frozen=True, slots=True)
class _Spend:
    """A trial's tokens and price, and how many agents ran up the bill."""

    input_tokens: int
    output_tokens: int
    cost_usd: float
    cost_usd_ceiling: float
    reconciled: bool
    agents: int


def _spend(agent_result: Mapping[str, Any], metadata: Mapping[str, Any], summary: Mapping[str, Any]) -> _Spend:
    """From the agent's metadata when it names the trial's condition, else from the bundle's summary."""
    if metadata.get("condition"):
        tokens = (int(agent_result.get("n_input_tokens") or 0), int(agent_result.get("n_output_tokens") or 0))
        cost = float(agent_result.get("cost_usd") or 0.0)
        ceiling = number(metadata.get("accounting_cost_usd_including_handoff_bound"))
        reconciled = bool(metadata.get("accounting_reconciled"))
        agents = len(metadata.get("per_agent_tokens") or {})
    else:
        # No agent metadata: a launch failure or a hard timeout. The bundle's own summary still
        # holds the real tokens and price of a trial that ran its full budget and then failed.
        totals = summary.get("totals") or {}
        tokens = (int(totals.get("input_tokens") or 0), int(totals.get("output_tokens") or 0))
        cost = float(totals.get("cost_usd") or 0.0)
        ceiling = number(totals.get("cost_usd_including_handoff_bound"))
        reconciled = bool((summary.get("accounting") or {}).get("reconciled"))
        agents = len(summary.get("roster") or ())
    return _Spend(
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        cost_usd=cost,
        cost_usd_ceiling=max(cost, ceiling) if ceiling is not None else cost,
        reconciled=reconciled,
        agents=agents,
    )


@dataclass(frozen=True, slots=True)
class _Verdict:
    """How result.json says the trial went: the verifier's rewards and the exception that ended it."""

    reward: float
    rewards: dict[str, float]
    outcome: str
    exception_type: str | None
    exception_message: str | None


def _verdict(data: Mapping[str, Any]) -> _Verdict:
    rewards = (data.get("verifier_result") or {}).get("rewards") or {}
    reward = rewards.get("reward")
    exception = data.get("exception_info") or {}
    return _Verdict(
        reward=float(reward) if is_numeric_reward(reward) else 0.0,
        rewards={k: float(v) for k, v in rewards.items() if number(v) is not None},
        outcome=classify_outcome(data.get("exception_info")),
        # the project's reason (buzz_reason), not Harbor's name for it (ledger/harbor_errors.py)
        exception_type=recorded_reason(exception),
        exception_message=str(exception.get("exception_message") or "") or None,
    )


def _attempt(config: Mapping[str, Any]) -> int | None:
    spec = config.get("spec") or {}
    return int(spec["attempt"]) if isinstance(spec, Mapping) and isinstance(spec.get("attempt"), int) else None


def _timestamp(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None
