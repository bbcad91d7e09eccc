"""Harbor's trial ``result.json`` and the agent metadata inside it (docs/harbor.md#resultjson; docs/bundle.md#agent-metadata).

The object store keeps Harbor's layout so Harbor's own tools and the seed's ``summarize.py`` read
our trials unchanged; ``result.json`` is written last and is the trial's commit marker. Field
order follows Harbor's ``TrialResult`` model, and the text is rendered as pydantic's
``model_dump_json(indent=4)`` does (datetimes ISO 8601, UTC as ``Z``, non-ASCII kept).
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from buzz_operator.api.trial import FailureClass
from buzz_operator.ledger.accounting import TrialAccounting
from buzz_operator.ledger.harbor_errors import REASON_KEY, harbor_exception_type
from buzz_operator.ledger.harbor_policy import (
    OVERRIDE_KEY,
    POLICY_KEY,
    class_override,
    policy_of,
    reward_valid,
)

# BuzzOrchestraAgent.name() / version() (docs/bundle.md#agent-metadata): Harbor groups results by agent name and version.
AGENT_NAME = "buzz-orchestra"
AGENT_VERSION = "0.1.0"
# Harbor 0.26's document version of TrialResult, TrialConfig, JobConfig and JobResult: the key each
# begins with (docs/harbor.md#schema-version); Harbor 0.25 ignores it.
SCHEMA_VERSION = 1
# docs/bundle.md#agent-metadata constant metadata values.
AGENT_RUNTIME = "in-container"
TASK_SEED = "user-identity-prompt"


def iso_datetime(value: datetime | None) -> str | None:
    """A datetime as pydantic serialises it: ISO 8601, ``Z`` for UTC, no offset when naive."""
    if value is None:
        return None
    text = value.isoformat()
    if value.tzinfo is not None and value.utcoffset() == UTC.utcoffset(None):
        text = text.removesuffix("+00:00") + "Z"
    return text


@dataclass(frozen=True, slots=True)
class PhaseTiming:
    """Harbor ``TimingInfo`` of one phase."""

    started_at: datetime | None = None
    finished_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        return {"started_at": iso_datetime(self.started_at), "finished_at": iso_datetime(self.finished_at)}


@dataclass(frozen=True, slots=True)
class TrialException:
    """Harbor ``ExceptionInfo``: why a trial ended in error. ``exception_type`` is the class name
    Harbor knows; ``reason``, when the failure is one of the project's, is written beside it as
    ``buzz_reason`` (ledger/harbor_errors.py). ``failure_class``, the project's class of the
    failure, is written as Harbor 0.26's ``policy_override`` (ledger/harbor_policy.py), followed by
    the ``policy`` Harbor computes from it, as Harbor's own documents carry it."""

    exception_type: str
    exception_message: str
    exception_traceback: str
    occurred_at: datetime
    reason: str | None = None
    failure_class: FailureClass | None = None

    @classmethod
    def for_reason(cls, reason: str, message: str, occurred_at: datetime,
                   failure_class: FailureClass | None = None) -> TrialException:
        """A project failure reason under Harbor's name for it, the reason and its class kept."""
        return cls(harbor_exception_type(reason), message, "", occurred_at, reason, failure_class)

    @classmethod
    def from_exception(cls, error: BaseException, occurred_at: datetime) -> TrialException:
        return cls(
            exception_type=type(error).__name__,
            exception_message=str(error),
            exception_traceback="".join(traceback.format_exception(error)),
            occurred_at=occurred_at,
        )

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {
            "exception_type": self.exception_type,
            "exception_message": self.exception_message,
            "exception_traceback": self.exception_traceback,
            "occurred_at": iso_datetime(self.occurred_at),
        }
        if self.failure_class is not None:
            document[OVERRIDE_KEY] = class_override(self.failure_class)
        document[POLICY_KEY] = policy_of(document).to_json()
        if self.reason is not None:
            document[REASON_KEY] = self.reason
        return document


def agent_metadata(
    *,
    accounting: TrialAccounting,
    completion_message_id: str,
    completion_message: str,
    stopped_without_done: bool,
    buzz_evidence_exported: bool,
    agent_active_seconds: float | None,
    usage_settle_seconds: float,
    container_trust_store: str,
    container_verifier_deps: str,
    agent_max_rounds: Mapping[str, int],
    solo_roster: bool,
    agent_platform_prompt: Mapping[str, bool],
    manifest_sha256: str,
    condition: str,
    buzz_channel_id: str,
    run_id: str,
    trial_id: str,
    stack: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """``agent_result.metadata`` in the seed's key order (docs/bundle.md#agent-metadata).

    The runtime's keys, then the accounting keys (docs/accounting.md#harbor-metadata ``to_metadata``), then the five the Harbor
    adapter adds. ``summarize.py`` reads ``condition``, ``manifest_sha256``,
    ``accounting_reconciled``, ``per_agent_tokens`` and ``stopped_without_done`` from here.
    Last, the project's ``stack`` (api.stack.stack_record: image, layout, digest, binaries): the
    seed had one stack per harness checkout; here results are keyed by it (results/table.py).
    The box's own keys follow (``box_metadata``).
    """
    return {
        "completion_message_id": completion_message_id,
        "completion_message": completion_message,
        "stopped_without_done": stopped_without_done,
        "buzz_evidence_exported": buzz_evidence_exported,
        "agent_runtime": AGENT_RUNTIME,
        "agent_active_seconds": agent_active_seconds,
        "usage_settle_seconds": usage_settle_seconds,
        "container_trust_store": container_trust_store,
        "container_verifier_deps": container_verifier_deps,
        "agent_hints_enabled": False,
        "task_seed": TASK_SEED,
        "agent_max_rounds": dict(agent_max_rounds),
        "solo_roster": solo_roster,
        "agent_platform_prompt": dict(agent_platform_prompt),
        **accounting.to_metadata(),
        "manifest_sha256": manifest_sha256,
        "condition": condition,
        "buzz_channel_id": buzz_channel_id,
        "run_id": run_id,
        "trial_id": trial_id,
        "stack": dict(stack) if stack is not None else None,
    }


def box_metadata(headroom: Mapping[str, Any], resource_usage: Mapping[str, Any] | None,
                 failed_tries: Sequence[str] = (), pod_start: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The keys after the seed's: ``headroom``, the room the box gave around task.toml's CPU and
    memory (docs/resources.md#headroom); when the task container's cgroup was read,
    ``resource_usage`` by phase (docs/resources.md#telemetry); ``failed_tries``, the reasons
    of the tries that failed on infra before this bundle's (docs/resources.md#infra-noise), so
    the noise a retry hid is still counted; and, once the pod ran, ``pod_start``: warm or cold,
    the wait and the pulls apart (docs/warm-pods.md#measured). Harbor ignores them all."""
    box: dict[str, Any] = {"headroom": dict(headroom), "failed_tries": list(failed_tries)}
    if resource_usage is not None:
        box["resource_usage"] = dict(resource_usage)
    if pod_start is not None:
        box["pod_start"] = dict(pod_start)
    return box


def agent_result(accounting: TrialAccounting, metadata: Mapping[str, Any]) -> dict[str, Any]:
    """Harbor ``AgentContext``: the trial totals (docs/bundle.md#agent-metadata).

    ``n_cache_tokens`` is 0 as in the seed, whose runtime never fills ``cached_input_tokens``;
    the cache split travels in the metadata instead.
    """
    return {
        "n_input_tokens": accounting.input_tokens,
        "n_cache_tokens": 0,
        "n_output_tokens": accounting.output_tokens,
        "cost_usd": accounting.cost_usd,
        "rollout_details": None,
        "metadata": dict(metadata),
    }


def build_trial_result(
    *,
    trial_uuid: str,
    task_name: str,
    trial_name: str,
    trial_uri: str,
    task_id: Mapping[str, Any],
    source: str | None,
    task_checksum: str,
    config: Mapping[str, Any],
    model_info: Mapping[str, str] | None,
    agent_result: Mapping[str, Any] | None,
    rewards: Mapping[str, float | int] | None,
    exception: TrialException | None,
    started_at: datetime | None,
    finished_at: datetime | None,
    environment_setup: PhaseTiming | None = None,
    agent_setup: PhaseTiming | None = None,
    agent_execution: PhaseTiming | None = None,
    verifier: PhaseTiming | None = None,
) -> dict[str, Any]:
    """A Harbor ``TrialResult`` document (docs/harbor.md), fields in Harbor's order.

    ``rewards`` None means the verifier produced no result (distinct from a reward of 0).
    ``schema_version`` opens it and ``reward_valid`` (Harbor 0.26's computed field) closes it.
    """
    if model_info is not None and not set(model_info) <= {"name", "provider"}:
        raise ValueError(f"result.json: agent_info.model_info holds name and provider only, got {sorted(model_info)}")
    if model_info is not None and not model_info.get("name"):
        raise ValueError("result.json: agent_info.model_info needs a model name")
    document = {
        "schema_version": SCHEMA_VERSION,
        "id": trial_uuid,
        "task_name": task_name,
        "trial_name": trial_name,
        "trial_uri": trial_uri,
        "task_id": dict(task_id),
        "source": source,
        "task_checksum": task_checksum,
        "config": dict(config),
        "agent_info": {
            "name": AGENT_NAME,
            "version": AGENT_VERSION,
            "model_info": dict(model_info) if model_info is not None else None,
        },
        "agent_result": dict(agent_result) if agent_result is not None else None,
        "verifier_result": {"rewards": dict(rewards)} if rewards is not None else None,
        "exception_info": exception.to_json() if exception is not None else None,
        "started_at": iso_datetime(started_at),
        "finished_at": iso_datetime(finished_at),
        "environment_setup": environment_setup.to_json() if environment_setup is not None else None,
        "agent_setup": agent_setup.to_json() if agent_setup is not None else None,
        "agent_execution": agent_execution.to_json() if agent_execution is not None else None,
        "verifier": verifier.to_json() if verifier is not None else None,
    }
    return {**document, "reward_valid": reward_valid(document)}


def orchestrator_model_info(
    roster: Iterable[Any], providers: Mapping[str, str]
) -> dict[str, str] | None:
    """Harbor ``ModelInfo`` of the team: the orchestrator's model (its ``model_revision``, the
    name run_leaderboard.py reports) and its endpoint's provider. Harbor records one model per
    trial; the workers' models are in the bundle's manifest.json. ``roster`` holds the manifest's
    classes (``kind``, ``model_revision``, ``endpoint``); ``providers`` maps endpoint → provider."""
    for entry in roster:
        if getattr(entry, "kind", None) == "orchestrator":
            info = {"name": str(entry.model_revision)}
            if provider := providers.get(str(entry.endpoint)):
                info["provider"] = provider
            return info
    return None


def render_trial_result(result: Mapping[str, Any]) -> str:
    """``result.json`` text as Harbor writes it (``model_dump_json(indent=4)``)."""
    return json.dumps(result, indent=4, ensure_ascii=False)
