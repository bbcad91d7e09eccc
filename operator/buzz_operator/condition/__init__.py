"""The condition room: what a benchmark condition *is* and how it reaches an agent.

Pure: imports nothing from kube, relay.client, storage, kopf or the network.
"""

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
from buzz_operator.condition.paths import REMOTE_ROOT

__all__ = [
    "REMOTE_ROOT",
    "AgentBudget",
    "AgentClass",
    "ArtifactRef",
    "ConditionError",
    "EnvironmentOverrides",
    "ExperimentManifest",
    "GenerationConfig",
    "Price",
    "TrialBudget",
]
