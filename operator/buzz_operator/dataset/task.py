"""One task directory in the Terminal-Bench/Harbor format, loaded and checked.

Layout (Harbor task-format docs): instruction.md, task.toml, environment/ (Dockerfile build
context), tests/ (copied to /tests only at verification time, so the agent never sees it),
optional solution/ (the oracle's solve.sh).

Read as Harbor 0.25.0's `Task` reads it (docs/task-toml.md): Harbor's name is `[task].name`
where task.toml sets it, else the folder's (`harbor_name`); the instruction loses its leading
canary lines; a compose environment (environment/docker-compose.yaml) is read as Harbor runs it
and checked for one pod (dataset/compose.py, docs/task-toml.md#compose).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from buzz_operator.dataset.compose import (
    COMPOSE_FILE,
    IGNORED_COMPOSE_FILE,
    Compose,
    ComposeError,
    Service,
    parse_compose,
)
from buzz_operator.dataset.config import BuzzSpec, TaskConfig
from buzz_operator.dataset.digest import tree_digest
from buzz_operator.dataset.errors import TaskError
from buzz_operator.dataset.harbor_rules import strip_canary

INSTRUCTION = "instruction.md"
CONFIG = "task.toml"
TESTS = "tests"
ENVIRONMENT = "environment"
SOLUTION = "solution"
DOCKERFILE = "Dockerfile"
TEST_SCRIPT = "test.sh"

# OCI distribution spec: one path component of a repository name.
_REPOSITORY_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_NOT_ALPHANUMERIC = re.compile(r"[^a-z0-9]+")


def repository_name(dataset: str, short_name: str) -> str:
    """`<dataset>-<short name>` where that is a valid OCI repository component (every name the
    operator accepted before); otherwise its sanitised form — lowercase, each run of other
    characters one `-`, as Harbor sanitises Kubernetes names — since `[task].name` and folder
    names allow capitals and runs of separators that OCI does not. The tag is the environment's digest, so two
    names sanitised alike never share an image of different content."""
    repository = f"{dataset}-{short_name}"
    if _REPOSITORY_COMPONENT.fullmatch(repository):
        return repository
    return _NOT_ALPHANUMERIC.sub("-", repository.lower()).strip("-")


@dataclass(frozen=True)
class Task:
    """``name`` is the folder: the task's key in the operator (lock.json, trial names and labels,
    BuzzTrial spec.task, config.json's `task.path`, result.json's `task_id`), as Harbor keys a
    local task by its folder (`LocalTaskId.get_name()`, which its include/exclude filter
    matches). Folders are unique in a dataset, and the key stays put when a task gains a
    `[task]` table. ``harbor_name`` is Harbor's `Task.name` — `[task].name` ("org/name") where
    set, else the folder — and is result.json's `task_name`, as Harbor writes it.
    ``short_name`` (Harbor's: the name after the org) names the image repository, as Harbor's
    environment name does."""

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
    compose: Compose | None = field(default=None)

    @property
    def harbor_name(self) -> str:
        return self.config.name or self.name

    @property
    def short_name(self) -> str:
        return self.config.task.short_name if self.config.task is not None else self.name

    def image_ref(self, registry: str, dataset: str) -> str:
        """The image the task container runs.

        A task.toml `docker_image` wins (prebuilt images, as Harbor allows). Otherwise the tag is
        the digest of environment/ only — not of the whole task — so editing tests/ or the
        instruction does not force an image rebuild, while any change to the build context does.
        """
        if self.config.environment.docker_image:
            return self.config.environment.docker_image
        repository = repository_name(dataset, self.short_name)
        if not repository:
            raise TaskError(f"image repository for {self.name!r} in dataset {dataset!r} is empty once sanitised",
                            source=self.path)  # fmt: skip
        return f"{registry.rstrip('/')}/{repository}:{self.env_digest[:16]}"

    def service_image_ref(self, service: Service, registry: str, dataset: str) -> str:
        """The image a compose service runs: its `image` as written, or for a `build` the
        operator's name `<registry>/<dataset>-<task>-<service>:<digest of its context>`, which
        the user builds and pushes like a task's own (docs/task-images.md)."""
        if service.build is None:
            return str(service.image)
        repository = repository_name(dataset, f"{self.short_name}-{service.name}")
        digest = tree_digest(self.environment_dir / service.build.context)
        return f"{registry.rstrip('/')}/{repository}:{digest[:16]}"

    def images(self, registry: str, dataset: str) -> list[str]:
        """Every image a trial of this task runs: the task's, then each compose service's."""
        services = self.compose.services if self.compose is not None else ()
        return [self.image_ref(registry, dataset), *(self.service_image_ref(s, registry, dataset) for s in services)]


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


def _inside_the_task(tree: Path, root: Path) -> None:
    """Harbor's `validate_input_tree` for tests/ and solution/: every path, through links too,
    stays inside the task, and directory links form no cycle. tests/ is copied into the trial's
    container, so a link out of the task would carry the operator's own files there."""
    task_root = root.resolve()

    def visit(candidate: Path, ancestors: frozenset[Path]) -> None:
        resolved = candidate.resolve()
        if not resolved.is_relative_to(task_root):
            raise TaskError("input paths must stay within the task (a link leads out of it)", source=candidate)
        if not candidate.is_dir():
            return
        if resolved in ancestors:
            raise TaskError("input directory links must not form cycles", source=candidate)
        for child in sorted(candidate.iterdir()):
            visit(child, ancestors | {resolved})

    if tree.exists() or tree.is_symlink():
        visit(tree, frozenset())


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
    _inside_the_task(root / TESTS, root)
    _inside_the_task(root / SOLUTION, root)
    # Harbor's Task refuses a Linux task without tests/test.sh, which is what the verifier runs.
    _require(root / TESTS / TEST_SCRIPT, f"{TESTS}/{TEST_SCRIPT}", directory=False)

    instruction_path = root / INSTRUCTION
    try:
        instruction = instruction_path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskError(f"not UTF-8 text: {error}", source=instruction_path) from error
    if not strip_canary(instruction).strip():
        raise TaskError("instruction is empty", source=instruction_path)

    config = _read_config(root / CONFIG)
    environment_dir = root / ENVIRONMENT
    if (environment_dir / IGNORED_COMPOSE_FILE).is_file():
        raise TaskError(f"Harbor reads only environment/{COMPOSE_FILE} and would run this task without this file: "
                        f"rename it to {COMPOSE_FILE}, or remove it", source=environment_dir / IGNORED_COMPOSE_FILE)
    compose = _read_compose(environment_dir, config)
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
        instruction=strip_canary(instruction),
        config=config,
        buzz=BuzzSpec.from_table(config.buzz),
        digest=tree_digest(root),
        env_digest=tree_digest(environment_dir),
        tests_dir=root / TESTS,
        environment_dir=environment_dir,
        solution_dir=solution_dir if solution_dir.is_dir() else None,
        compose=compose,
    )


def _read_compose(environment_dir: Path, config: TaskConfig) -> Compose | None:
    path = environment_dir / COMPOSE_FILE
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise TaskError(f"not UTF-8 text: {error}", source=path) from error
    try:
        return parse_compose(text, task_env=config.environment.env, environment_dir=environment_dir)
    except ComposeError as error:
        raise TaskError(error.reason, source=path, field=error.field) from error
