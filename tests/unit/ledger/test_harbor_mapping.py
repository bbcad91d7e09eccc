"""The project's facts under Harbor's names (docs/harbor.md): failure reasons → Harbor exception
types with the reason kept, the trial's config.json derived from its sweep's as Harbor derives
one, the orchestrator's model as agent_info.model_info. That Harbor's own code accepts the
documents is tests/harbor's part; these pin the mapping itself."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest
from buzz_operator.ledger import TrialException, classify_outcome, trial_scored
from buzz_operator.ledger.harbor_config import agent_config, job_id, sweep_job_config, trial_config
from buzz_operator.ledger.harbor_errors import (
    HARBOR_EXCEPTION_TYPES,
    REASON_KEY,
    as_recorded,
    harbor_exception_type,
    recorded_reason,
)
from buzz_operator.ledger.harbor_result import orchestrator_model_info
from buzz_operator.scoring.failures import classify_reason

T0 = datetime(2026, 12, 1, tzinfo=UTC)
# Harbor 0.25.0's error policy table (harbor.models.trial.error_policy), the names used here
HARBOR_KNOWN = {
    "AgentTimeoutError", "VerifierTimeoutError", "RewardFileNotFoundError", "VerifierOutputParseError",
    "EnvironmentStartTimeoutError", "SandboxBuildFailedError", "AgentSetupTimeoutError", "GKEPodNotFoundError",
    "GKEExecStreamClosedError", "HealthcheckError", "NonZeroAgentExitCodeError", "MemoryLimitExceededError",
}  # fmt: skip


def test_every_mapped_reason_is_the_projects_and_every_target_harbors() -> None:
    for reason, harbor in HARBOR_EXCEPTION_TYPES.items():
        classify_reason(reason)  # raises for a reason the project does not have
        assert harbor in HARBOR_KNOWN, (reason, harbor)


@pytest.mark.parametrize(
    ("reason", "harbor"),
    [("VerifierTimeout", "VerifierTimeoutError"), ("RelayUnavailable", "HealthcheckError"),
     ("ImagePullFailed", "SandboxBuildFailedError"), ("StorageUnavailable", "StorageUnavailable"),
     ("VerifierBroken", "VerifierBroken")],
)  # fmt: skip
def test_the_reason_is_kept_beside_harbors_name(reason: str, harbor: str) -> None:
    info = TrialException.for_reason(reason, "why", T0).to_json()
    assert info["exception_type"] == harbor and info[REASON_KEY] == reason
    assert harbor_exception_type(reason) == harbor
    assert recorded_reason(info) == reason
    assert as_recorded(info) == {**{k: v for k, v in info.items() if k != REASON_KEY}, "exception_type": reason}


def test_the_timeout_outcome_is_harbors_own_word() -> None:
    info = TrialException("AgentTimeoutError", "no DONE:", "", T0).to_json()
    assert REASON_KEY not in info and recorded_reason(info) == "AgentTimeoutError"


def test_readers_see_the_project_reason_not_harbors_name() -> None:
    # AgentsNotReady is Harbor's AgentSetupTimeoutError, but the seed's outcome word is not "timeout"
    info = TrialException.for_reason("AgentsNotReady", "agents did not subscribe", T0).to_json()
    assert info["exception_type"] == "AgentSetupTimeoutError"
    assert classify_outcome(info) == classify_outcome({"exception_type": "AgentsNotReady",
                                                       "exception_message": "agents did not subscribe"})  # fmt: skip
    # a result.json of an earlier build (the reason in exception_type) reads the same
    assert recorded_reason({"exception_type": "RelayUnavailable"}) == "RelayUnavailable"
    scored = {"verifier_result": {"rewards": {"reward": 0.0}}}
    assert trial_scored({**scored, "exception_info": {"exception_type": "AgentTimeoutError"}})
    assert not trial_scored({**scored, "exception_info": info})


def test_a_trial_config_is_derived_from_its_sweeps_job_config() -> None:
    job = sweep_job_config(name="s", namespace="ns", spec={"timeoutMultiplier": 3.0, "attempts": 2},
                           condition="c", condition_hash="h", dataset="mine", tasks=["t2", "t1"])  # fmt: skip
    config = trial_config(job, task="t1", trial_name="s-t1-1", sweep="s", condition="c", condition_hash="h",
                          spec={"task": "t1"})  # fmt: skip
    assert config["task"] == {"path": "t1", "source": "mine"} == job["tasks"][0]
    assert config["agent"] == job["agents"][0] == agent_config("c", "h")
    assert config["timeout_multiplier"] == 3.0 and config["job_id"] == job_id("s")
    assert config["spec"] == {"task": "t1"} and config["trial_name"] == "s-t1-1"


def test_without_a_job_config_the_trial_stands_on_its_own_facts() -> None:
    legacy = {"agents": [{"name": "buzz", "condition": "c"}], "datasets": [{"name": "builtin", "tasks": ["t"]}]}
    for job in (None, legacy):
        config = trial_config(job, task="t", trial_name="n", sweep="s", condition="c", condition_hash="h", spec={})
        assert config["agent"] == agent_config("c", "h") and config["task"] == {"path": "t", "source": None}
        # Harbor then reads 1.0; the project's readers fall back to the sweep's spec
        assert "timeout_multiplier" not in config


def test_model_info_is_the_orchestrators() -> None:
    roster = [SimpleNamespace(kind="worker", model_revision="small-1", endpoint="w"),
              SimpleNamespace(kind="orchestrator", model_revision="big-2", endpoint="o")]  # fmt: skip
    assert orchestrator_model_info(roster, {"o": "anthropic", "w": "openai"}) == {"name": "big-2", "provider": "anthropic"}
    assert orchestrator_model_info(roster, {}) == {"name": "big-2"}
    assert orchestrator_model_info(roster[:1], {}) is None


def test_the_box_follows_the_seeds_keys_in_the_agents_metadata() -> None:
    from buzz_operator.ledger.harbor_result import box_metadata

    room = {"limitMultiple": 3.0, "cpuRequestFraction": 1.0, "memoryRequestFraction": 1.0}
    used = {"agents": {"cgroup": 1, "oomKills": 2}}
    assert box_metadata(room, used) == {"headroom": room, "resource_usage": used, "failed_tries": []}
    assert box_metadata(room, None, ["OOMKilled"])["failed_tries"] == ["OOMKilled"]
    assert box_metadata(room, None) == {"headroom": room, "failed_tries": []}  # unread: absent, not zeros
