"""The dataset room: task directories (Terminal-Bench/Harbor format) and their selection.

Pure: imports nothing from kube, relay.client, storage, kopf or the network.
"""

from buzz_operator.dataset.config import (
    AgentSection,
    BuzzSpec,
    BuzzTable,
    DirectoryEntry,
    DirectoryIdentity,
    DirectoryRange,
    EnvironmentSection,
    ScriptedMessage,
    TaskConfig,
    VerifierSection,
)
from buzz_operator.dataset.digest import tree_digest
from buzz_operator.dataset.errors import TaskError
from buzz_operator.dataset.suite import TASKS_DIR_ENV, builtin_dataset_path, load_dataset
from buzz_operator.dataset.task import Task, load_task

__all__ = [
    "TASKS_DIR_ENV",
    "AgentSection",
    "BuzzSpec",
    "BuzzTable",
    "DirectoryEntry",
    "DirectoryIdentity",
    "DirectoryRange",
    "EnvironmentSection",
    "ScriptedMessage",
    "Task",
    "TaskConfig",
    "TaskError",
    "VerifierSection",
    "builtin_dataset_path",
    "load_dataset",
    "load_task",
    "tree_digest",
]
