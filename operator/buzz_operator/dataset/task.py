"""One task directory in the Terminal-Bench/Harbor format, loaded and checked.

Layout (Harbor task-format docs): instruction.md, task.toml, environment/ (Dockerfile build
context), tests/ (copied to /tests only at verification time, so the agent never sees it),
optional solution/ (the oracle's solve.sh).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from buzz_operator.dataset.config import BuzzSpec, TaskConfig
from buzz_operator.dataset.digest import tree_digest
from buzz_operator.dataset.errors import TaskError

INSTRUCTION = "instruction.md"
CONFIG = "task.toml"
TESTS = "tests"
ENVIRONMENT = "environment"
SOLUTION = "solution"
DOCKERFILE = "Dockerfile"

# OCI distribution spec: one path component of a repository name.
_REPOSITORY_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")


@dataclass(frozen=True)
class Task:
    name: str
    path: Path
    instruction: str
    config: TaskConfig
    buzz: BuzzSpec
    digest: str
    env_digest: str
    tests_dir: Path
    environment_dir: Path
    solution_dir: Path | None = field(default=None)

    def image_ref(self, registry: str, dataset: str) -> str:
        """The image the task container runs.

        A task.toml `docker_image` wins (prebuilt images, as Harbor allows). Otherwise the tag is
        the digest of environment/ only — not of the whole task — so editing tests/ or the
        instruction does not force an image rebuild, while any change to the build context does.
        """
        if self.config.environment.docker_image:
            return self.config.environment.docker_image
        repository = f"{dataset}-{self.name}"
        if not _REPOSITORY_COMPONENT.fullmatch(repository):
            raise TaskError(
                f"image repository {repository!r} is not a valid OCI name (lowercase letters, digits, . _ -)",
                source=self.path,
            )
        return f"{registry.rstrip('/')}/{repository}:{self.env_digest[:16]}"


def _read_config(path: Path) -> TaskConfig:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as error:
        # tomllib's message already carries "(at line N, column M)".
        raise TaskError(f"malformed TOML: {error}", source=path) from error
    except UnicodeDecodeError as error:
        raise TaskError(f"not UTF-8 text: {error}", source=path) from error
    try:
        return TaskConfig.model_validate(raw)
    except ValidationError as error:
        raise TaskError.from_validation(error, source=path) from error


def _require(path: Path, what: str, *, directory: bool) -> None:
    present = path.is_dir() if directory else path.is_file()
    if not present:
        raise TaskError(f"task has no {what}", source=path)


def load_task(path: Path | str) -> Task:
    """Load and check one task directory; every problem raises TaskError naming the file."""
    root = Path(path)
    if not root.is_dir():
        raise TaskError("task directory does not exist", source=root)
    _require(root / INSTRUCTION, INSTRUCTION, directory=False)
    _require(root / CONFIG, CONFIG, directory=False)
    _require(root / TESTS, f"{TESTS}/ directory", directory=True)

    instruction_path = root / INSTRUCTION
    try:
        instruction = instruction_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskError(f"not UTF-8 text: {error}", source=instruction_path) from error
    if not instruction.strip():
        raise TaskError("instruction is empty", source=instruction_path)

    config = _read_config(root / CONFIG)
    environment_dir = root / ENVIRONMENT
    if config.environment.docker_image is None and not (environment_dir / DOCKERFILE).is_file():
        # Without either there is nothing to run the trial in; say so at load time, not at
        # image build time inside the cluster.
        raise TaskError(
            f"task has no {ENVIRONMENT}/{DOCKERFILE} and task.toml sets no environment.docker_image",
            source=environment_dir / DOCKERFILE,
        )
    solution_dir = root / SOLUTION
    return Task(
        name=root.name,
        path=root,
        instruction=instruction,
        config=config,
        buzz=BuzzSpec.from_table(config.buzz),
        digest=tree_digest(root),
        env_digest=tree_digest(environment_dir),
        tests_dir=root / TESTS,
        environment_dir=environment_dir,
        solution_dir=solution_dir if solution_dir.is_dir() else None,
    )
