"""The condition room: what a benchmark condition *is* and how it reaches an agent.

Pure: imports nothing from kube, relay.client, storage, kopf or the network.
"""

from buzz_operator.condition.agent_env import (
    DEFAULT_MAX_AGENT_ROUNDS,
    DEFAULT_RUST_LOG,
    THINKING_EFFORT,
    agent_env,
)
from buzz_operator.condition.endpoints import (
    IDENTITY_VARIABLES,
    EndpointConfig,
    EndpointLaunchConfig,
    check_endpoints,
    find_placeholder_endpoints,
    redact_endpoints,
    reject_identity_overrides,
    resolve_api_keys,
)
from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.manifest import (
    AgentBudget,
    AgentClass,
    ArtifactRef,
    EnvironmentOverrides,
    ExperimentManifest,
    GenerationConfig,
    Price,
    TrialBudget,
)
from buzz_operator.condition.paths import (
    FORWARDER,
    FORWARDER_LOG,
    REMOTE_BIN,
    REMOTE_CA_BUNDLE,
    REMOTE_EVIDENCE,
    REMOTE_LOGS,
    REMOTE_PROMPTS,
    REMOTE_ROOT,
    SYSTEM_CA_BUNDLE,
    SYSTEM_CA_DIR,
    remote_prompt_path,
    remote_stderr_log,
    remote_stdout_log,
)
from buzz_operator.condition.prompts import verify_prompt_files, verify_prompts
from buzz_operator.condition.seats import Seat, orchestrator_seat, plan_seats
from buzz_operator.condition.team_prompt import TeamMember, compose_system_prompt, teammates_of

__all__ = [
    "DEFAULT_MAX_AGENT_ROUNDS",
    "DEFAULT_RUST_LOG",
    "FORWARDER",
    "FORWARDER_LOG",
    "IDENTITY_VARIABLES",
    "REMOTE_BIN",
    "REMOTE_CA_BUNDLE",
    "REMOTE_EVIDENCE",
    "REMOTE_LOGS",
    "REMOTE_PROMPTS",
    "REMOTE_ROOT",
    "SYSTEM_CA_BUNDLE",
    "SYSTEM_CA_DIR",
    "THINKING_EFFORT",
    "AgentBudget",
    "AgentClass",
    "ArtifactRef",
    "ConditionError",
    "EndpointConfig",
    "EndpointLaunchConfig",
    "EnvironmentOverrides",
    "ExperimentManifest",
    "GenerationConfig",
    "Price",
    "Seat",
    "TeamMember",
    "TrialBudget",
    "agent_env",
    "check_endpoints",
    "compose_system_prompt",
    "find_placeholder_endpoints",
    "orchestrator_seat",
    "plan_seats",
    "redact_endpoints",
    "reject_identity_overrides",
    "remote_prompt_path",
    "remote_stderr_log",
    "remote_stdout_log",
    "resolve_api_keys",
    "teammates_of",
    "verify_prompt_files",
    "verify_prompts",
]
