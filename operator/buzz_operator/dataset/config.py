"""task.toml as pydantic models, read as Harbor 0.25.0 reads it (docs/task-toml.md).

Every field Harbor's `TaskConfig` knows is modelled here with Harbor's meaning, its default and
its checks (harbor/models/task/config.py; the ported rules are in harbor_rules.py). What the
operator cannot do faithfully — GPUs, Windows, MCP servers, a separate verifier
environment, multi-step tasks, … — is refused at load time with an error that names the field
and says the operator does not support it, never dropped: a task that loads runs as Harbor would
run it. Keys Harbor does not know are kept and ignored, as Harbor's models ignore them.

Types are strict where Harbor's pydantic is lax: `timeout_sec = "300"` is an error naming
`agent.timeout_sec` rather than a string Harbor would convert.

Where Harbor leaves a resource unset (cpus, memory_mb, storage_mb: None, and its Kubernetes
environment then requests nothing) the operator still gives the task container a Guaranteed
request (OPERATOR_DEFAULTS, `EnvironmentSection.resources`); `[agent] timeout_sec` unset is
Harbor's "no task limit", and the condition's trial budget alone bounds the run.

The `[buzz]` table is ours: it declares what the harness must do for a Buzz-native task (export
evidence, seed a directory, observe channels, publish scripted messages; tasks/README.md). It rejects unknown keys, because a misspelt
`requires_evidense` would silently grade a task without evidence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import PydanticCustomError

from buzz_operator.dataset.harbor_rules import (
    env_templates,
    normalize_allowed_hosts,
    normalize_cpus,
    package_name_problem,
    parse_size_to_mb,
)

NetworkMode = Literal["no-network", "public", "allowlist"]
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# what useradd(8) accepts as a name
_USER_NAME = re.compile(r"[a-z_][a-z0-9_.-]*\$?", re.IGNORECASE)
# Harbor's collection record in a trial's artifacts/ (trial/artifact_handler.py _MANIFEST_FILENAME)
ARTIFACT_MANIFEST = "manifest.json"
NETWORK_PUBLIC, NETWORK_ALLOWLIST, NETWORK_NONE = "public", "allowlist", "no-network"

# What the operator gives a task container whose task.toml leaves the resource unset. Harbor
# 0.25.0 defaults cpus/memory_mb/storage_mb to None and its GKE environment then requests
# nothing (a BestEffort pod that may take the whole node); the operator runs untrusted agents
# beside other trials, so every task container gets requests = limits. These are the values
# Harbor documented before 0.25 (and Terminal-Bench still does), so a task written for them
# keeps its figures.
OPERATOR_DEFAULT_CPUS = 1.0
OPERATOR_DEFAULT_MEMORY_MB = 2048
OPERATOR_DEFAULT_STORAGE_MB = 10240


def unsupported(reason: str) -> PydanticCustomError:
    """A field the operator reads but cannot honour: the reason says so and why."""
    return PydanticCustomError("unsupported", "{reason}", {"reason": f"the operator does not support {reason}"})


def invalid(reason: str) -> PydanticCustomError:
    """A value Harbor itself refuses, in Harbor's words."""
    return PydanticCustomError("harbor_rule", "{reason}", {"reason": reason})


class _Section(BaseModel):
    # extra="allow": Harbor's models ignore keys they do not define, so a task written for a
    # newer Harbor still loads; the keys stay readable in model_extra.
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


@dataclass(frozen=True)
class NetworkPolicy:
    """Harbor's resolved `NetworkPolicy` of one phase."""

    network_mode: str
    allowed_hosts: tuple[str, ...] = ()


def _check_hosts(hosts: list[str] | None, info: ValidationInfo) -> list[str] | None:
    """allowed_hosts as Harbor validates them: each entry normalised, and (Harbor's
    _validate_network_policy_fields) only with an allowlist — with a phase override only when
    the override names its mode. Checked here, after network_mode (declared first), so the error
    names allowed_hosts; a network_mode that failed its own check is not in ``info.data``."""
    if hosts is None:
        return None
    try:
        normalized = normalize_allowed_hosts(hosts)
    except ValueError as error:
        raise invalid(str(error)) from None
    if "network_mode" in info.data:
        network_mode = info.data["network_mode"]
        if network_mode is None or (network_mode != NETWORK_ALLOWLIST and normalized):
            raise invalid("allowed_hosts is only valid when network_mode='allowlist'")
    return normalized


class _PhaseNetwork(_Section):
    """Harbor's `PhaseNetworkPolicyConfig`: an `[agent]`/`[verifier]` override of the
    environment's network, counted only when network_mode is written."""

    network_mode: NetworkMode | None = None
    allowed_hosts: list[str] | None = None

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, hosts: list[str] | None, info: ValidationInfo) -> list[str] | None:
        return _check_hosts(hosts, info)

    def explicit_policy(self) -> NetworkPolicy | None:
        if self.network_mode is None:
            return None
        return NetworkPolicy(self.network_mode, tuple(self.allowed_hosts or ()))


def _literal_env(env: dict[str, str], field: str) -> dict[str, str]:
    """Variables the operator sets as written: names that are variable names (they are set with
    env(1) and on the container), values with no host template. Harbor resolves a value that is
    wholly ``${VAR}`` or ``${VAR:-default}`` from the environment of the machine running it; the
    operator never passes its own environment to a trial, so such a value is refused naming the
    variable (its default would differ from Harbor wherever the host sets it). A template inside
    other text is literal, as in Harbor."""
    names = [key for key in env if not _ENV_NAME.fullmatch(key)]
    if names:
        raise invalid(f"{field} names {', '.join(map(repr, names))} are not environment variable names "
                      "(letters, digits and _, not starting with a digit)")  # fmt: skip
    templated = env_templates(env)
    if templated:
        variables = ", ".join(f"{key} = {env[key]!r}" for key in templated)
        raise unsupported(
            f"host environment templates in {field} ({variables}): Harbor resolves ${{VAR}} and "
            "${VAR:-default} from the environment of the machine running it, and the operator never passes "
            "its own environment to a trial; write the value itself")  # fmt: skip
    return env


def _check_user(user: str | int | None, phase: str) -> str | int | None:
    """A user the phase runs as (docs/task-toml.md#users): a name useradd(8) accepts, or a uid."""
    if isinstance(user, int) and user < 0:
        raise invalid(f"{phase}.user = {user} must be a user name or a uid of 0 or more")
    if isinstance(user, str) and not _USER_NAME.fullmatch(user):
        raise invalid(f"{phase}.user = {user!r} is not a user name")
    return user


class AgentSection(_PhaseNetwork):
    """`[agent]`. timeout_sec None (Harbor's default) means no task limit: the condition's
    `trial_budget.timeout_seconds` bounds the agents alone (trial/deadlines.py)."""

    timeout_sec: float | None = Field(None, gt=0)
    user: str | int | None = None

    @field_validator("user")
    @classmethod
    def _user(cls, user: str | int | None) -> str | int | None:
        """The seats run as this user, through `su` (pod/launch_script.py)."""
        return _check_user(user, "agent")


class VerifierSection(_PhaseNetwork):
    """`[verifier]`, in Harbor's shared mode (the verifier runs in the agents' container)."""

    timeout_sec: float = Field(600.0, gt=0)
    env: dict[str, str] = Field(default_factory=dict)
    user: str | int | None = None
    environment_mode: Literal["shared", "separate"] | None = None
    environment: dict[str, Any] | None = None
    collect: list[dict[str, Any]] = Field(default_factory=list)

    @field_validator("env")
    @classmethod
    def _env(cls, env: dict[str, str]) -> dict[str, str]:
        return _literal_env(env, "verifier.env")

    @field_validator("user")
    @classmethod
    def _user(cls, user: str | int | None) -> str | int | None:
        """The verifier runs as this user, as Harbor's GKE environment runs it (`su`)."""
        return _check_user(user, "verifier")

    @field_validator("environment_mode")
    @classmethod
    def _mode(cls, mode: str | None) -> str | None:
        if mode == "separate":
            raise unsupported("a separate verifier environment (verifier.environment_mode = 'separate'): the "
                              "verifier runs in the trial's own pod")  # fmt: skip
        return mode

    @field_validator("environment")
    @classmethod
    def _environment(cls, environment: dict[str, Any] | None) -> dict[str, Any] | None:
        if environment is not None:
            raise unsupported("a separate verifier environment ([verifier.environment]): the verifier runs in "
                              "the trial's own pod")  # fmt: skip
        return environment

    @field_validator("collect")
    @classmethod
    def _collect(cls, collect: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if collect:
            raise unsupported("verifier collect hooks ([[verifier.collect]]): they run commands in compose "
                              "services before collection, and the operator grades from the task container "
                              "alone")  # fmt: skip
        return collect


class SolutionSection(_Section):
    """`[solution]`: the environment of Harbor's oracle agent running solution/solve.sh. The
    operator never runs solution/ (its oracles are conditions), so this is read and unused."""

    env: dict[str, str] = Field(default_factory=dict)


class ArtifactSection(_Section):
    """One entry of `artifacts`: Harbor's `ArtifactConfig`, in the agents' container. A bare
    string is its `source`."""

    source: str = Field(min_length=1)
    destination: str | None = None
    exclude: list[str] = Field(default_factory=list)
    service: str | None = None

    @field_validator("source")
    @classmethod
    def _source(cls, source: str) -> str:
        if any(part == ".." for part in PurePosixPath(source).parts):
            raise invalid(f"Artifact source must not contain '..' components, got: {source!r}")
        if not source.startswith("/"):
            # Harbor resolves a relative source against the container's working directory; the
            # collection runs in a shell of its own, so the path must say where it is
            raise unsupported(f"a relative artifact source ({source!r}): write the absolute container path")
        return source

    @field_validator("destination")
    @classmethod
    def _destination(cls, destination: str | None) -> str | None:
        if not destination:
            return None
        path = PurePosixPath(destination)
        if "\\" in destination or path.is_absolute() or any(part == ".." for part in path.parts):
            raise invalid(f"Artifact destination must be a relative path with forward slashes and no '..', "
                          f"got: {destination!r}")  # fmt: skip
        if destination.rstrip("/") == ARTIFACT_MANIFEST:
            raise invalid("Artifact destination 'manifest.json' is reserved for the collection manifest.")
        return destination

    @field_validator("service")
    @classmethod
    def _service(cls, service: str | None) -> str | None:
        if service not in (None, "main"):
            raise unsupported(f"artifacts from a compose service (service = {service!r}): artifacts are "
                              "collected from the task container, where the agents ran")  # fmt: skip
        return service


class HealthcheckSection(_Section):
    """`[environment.healthcheck]`: Harbor's `HealthcheckConfig`, Docker HEALTHCHECK's options. The
    command runs in the task container after it starts and before the agents do
    (trial/healthcheck.py); its defaults are Harbor's."""

    command: str = Field(min_length=1)
    interval_sec: float = Field(5.0, ge=0)
    timeout_sec: float = Field(30.0, gt=0)
    start_period_sec: float = Field(0.0, ge=0)
    start_interval_sec: float = Field(5.0, ge=0)
    retries: int = Field(3, ge=1)


class EnvironmentSection(_Section):
    """`[environment]`: Harbor's `EnvironmentConfig`, for one Linux container."""

    build_timeout_sec: float = Field(600.0, gt=0)
    docker_image: str | None = Field(None, min_length=1)
    os: Literal["linux", "windows"] = "linux"
    # one numeric type (an int is a float to pydantic), so a bad value is one error naming cpus
    cpus: float | None = Field(None, gt=0)
    memory_mb: int | None = Field(None, gt=0)
    storage_mb: int | None = Field(None, gt=0)
    # Harbor's deprecated size strings ("4G"); read into memory_mb/storage_mb (below).
    memory: str | None = Field(None, exclude=True)
    storage: str | None = Field(None, exclude=True)
    gpus: int | None = Field(None, ge=0)
    gpu_types: list[str] | None = None
    tpu: dict[str, Any] | None = None
    mcp_servers: list[dict[str, Any]] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    skills_dir: str | None = None
    healthcheck: HealthcheckSection | None = None
    workdir: str | None = None
    network_mode: NetworkMode = NETWORK_PUBLIC
    allowed_hosts: list[str] | None = None
    # Harbor's deprecated switch; it sets network_mode only where neither network_mode nor
    # allowed_hosts is written (handle_deprecated_environment_allow_internet).
    allow_internet: bool | None = None

    @field_validator("os", mode="before")
    @classmethod
    def _os_lower(cls, value: Any) -> Any:
        # Harbor's normalize_os: case-insensitive
        return value.lower() if isinstance(value, str) else value

    @field_validator("os")
    @classmethod
    def _os(cls, value: str) -> str:
        if value == "windows":
            raise unsupported("Windows containers (environment.os = 'windows'): trial pods run Linux")
        return value

    @field_validator("cpus")
    @classmethod
    def _cpus(cls, value: float | None) -> float | None:
        if value is None:
            return None
        try:
            return normalize_cpus(value)
        except ValueError as error:
            raise invalid(str(error)) from None

    @field_validator("memory", "storage", mode="before")
    @classmethod
    def _legacy_size_is_text(cls, value: Any, info: ValidationInfo) -> Any:
        if value is not None and not isinstance(value, str):
            # Harbor drops a legacy size that is not a string without a word; a limit the author
            # believes set must not vanish, so it is refused
            raise invalid(f"{info.field_name} = {value!r} must be a size string such as '4G' or '512M' (Harbor "
                          f"ignores one that is not a string); write {info.field_name}_mb for a number of MB")  # fmt: skip
        return value

    @field_validator("memory", "storage")
    @classmethod
    def _legacy_size(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is None:
            return None
        field = f"{info.field_name}_mb"
        try:
            megabytes = parse_size_to_mb(value)
        except ValueError as error:
            raise invalid(str(error)) from None
        written = info.data.get(field)
        if written is not None and written != megabytes:
            # Harbor refuses the two spellings disagreeing, in these words
            raise invalid(f"Conflicting {info.field_name!r} and {field!r} values: {info.field_name}={value!r} "
                          f"({megabytes} MB) != {field}={written!r}")  # fmt: skip
        if megabytes <= 0:
            raise invalid(f"{info.field_name} = {value!r} is {megabytes} MB; it must be at least 1 MB")
        return value

    @field_validator("gpus")
    @classmethod
    def _gpus(cls, value: int | None) -> int | None:
        if value:
            raise unsupported(f"GPUs (environment.gpus = {value}): trial pods request no accelerator")
        return value

    @field_validator("tpu")
    @classmethod
    def _tpu(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is not None:
            raise unsupported("TPUs ([environment.tpu]): trial pods request no accelerator")
        return value

    @field_validator("mcp_servers")
    @classmethod
    def _mcp(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if value:
            raise unsupported("task MCP servers ([[environment.mcp_servers]]): the agents are the condition's "
                              "Buzz stack, whose tools the condition fixes")  # fmt: skip
        return value

    @field_validator("env")
    @classmethod
    def _env(cls, value: dict[str, str]) -> dict[str, str]:
        """Literal values are set on the task container, so every command of the agents and the
        verifier sees them, each command's own variables winning (docs/task-toml.md#environment-variables)."""
        return _literal_env(value, "environment.env")

    @field_validator("skills_dir")
    @classmethod
    def _skills(cls, value: str | None) -> str | None:
        if value is not None:
            raise unsupported("a task skills directory (environment.skills_dir): the agents' skills are the "
                              "condition's, pinned in its manifest")  # fmt: skip
        return value


    @field_validator("workdir")
    @classmethod
    def _workdir(cls, value: str | None) -> str | None:
        """Harbor runs every command there instead of the image's WORKDIR: the task container's
        workingDir, which each exec (agents and verifier) starts in."""
        if value is not None and not value.startswith("/"):
            raise invalid(f"environment.workdir = {value!r} must be an absolute path: it replaces the image's "
                          "WORKDIR for every command")  # fmt: skip
        return value

    @field_validator("allowed_hosts")
    @classmethod
    def _hosts(cls, hosts: list[str] | None, info: ValidationInfo) -> list[str] | None:
        return _check_hosts(hosts, info)

    @model_validator(mode="after")
    def _resolve(self) -> EnvironmentSection:
        for legacy, field in (("memory", "memory_mb"), ("storage", "storage_mb")):
            size = getattr(self, legacy)
            if size is not None and getattr(self, field) is None:
                object.__setattr__(self, field, parse_size_to_mb(size))
        if (self.allow_internet is not None and "network_mode" not in self.model_fields_set
                and self.allowed_hosts is None):
            object.__setattr__(self, "network_mode", NETWORK_PUBLIC if self.allow_internet else NETWORK_NONE)
        return self

    def baseline(self) -> NetworkPolicy:
        """Harbor's `resolve_baseline`: the environment's network, which a phase may override."""
        return NetworkPolicy(self.network_mode, tuple(self.allowed_hosts or ()))

    def resources(self) -> tuple[float, int, int]:
        """(cpus, memory MiB, ephemeral storage MiB) the operator gives the task container: the
        task's where set, else OPERATOR_DEFAULT_* (Harbor would request nothing)."""
        return (
            float(self.cpus) if self.cpus is not None else OPERATOR_DEFAULT_CPUS,
            self.memory_mb if self.memory_mb is not None else OPERATOR_DEFAULT_MEMORY_MB,
            self.storage_mb if self.storage_mb is not None else OPERATOR_DEFAULT_STORAGE_MB,
        )


class Author(_Section):
    name: str
    email: str | None = None


class PackageInfo(_Section):
    """`[task]`: Harbor's `PackageInfo`. `name` ("org/name") becomes the task's name, as
    Harbor's `Task.name`; `short_name` (after the slash) names its image repository."""

    name: str
    version: str | None = Field(None, min_length=1)
    description: str = ""
    authors: list[Author] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)

    @field_validator("name")
    @classmethod
    def _name(cls, name: str) -> str:
        problem = package_name_problem(name)
        if problem:
            raise invalid(f"Package name {problem}")
        return name

    @property
    def org(self) -> str:
        return self.name.split("/")[0]

    @property
    def short_name(self) -> str:
        return self.name.split("/")[1]


class DirectoryRange(BaseModel):
    """`[[buzz.directory]]` range form: `count` identities named `<prefix><n>` (n from 1,
    zero-padded to `width`)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prefix: str = Field(min_length=1)
    count: int = Field(ge=1)
    width: int = Field(1, ge=1)
    role: str = Field(min_length=1)
    channel_member: bool = False

    def entries(self) -> list[DirectoryEntry]:
        return [
            DirectoryEntry(name=f"{self.prefix}{index:0{self.width}d}", role=self.role,
                           channel_member=self.channel_member)
            for index in range(1, self.count + 1)
        ]


class DirectoryIdentity(BaseModel):
    """`[[buzz.directory]]` single form: one named identity. `identity_id` (default: the name)
    seeds its stable key, so two identities may share a display name — the point of
    ambiguous-user-mention; `about` goes into its profile."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    name: str = Field(min_length=1)
    role: str = Field(min_length=1)
    identity_id: str | None = Field(None, min_length=1)
    about: str | None = None
    channel_member: bool = False

    def entries(self) -> list[DirectoryEntry]:
        return [DirectoryEntry(name=self.name, role=self.role, identity_id=self.identity_id or self.name,
                               about=self.about, channel_member=self.channel_member)]


class ScriptedMessage(BaseModel):
    """`[[buzz.scripted_messages]]`: an event the harness publishes right after the task event,
    in order, signed by `actor` ("user", the trial user, or a directory `identity_id`) — Block's
    `ScriptedMessage` (benchmarks task_fixtures.py). `{orchestrator}` and `{user}` in `content`
    become the orchestrator's seat id and the user's name."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    label: str = Field(min_length=1)
    actor: str = Field(min_length=1)
    content: str = Field(min_length=1)
    reply_to_task: bool = False
    mention_orchestrator: bool = True


USER_ACTOR = "user"
# The two `[[buzz.directory]]` forms, told apart by `prefix`. The tags appear in pydantic's error
# locations; errors.py drops them so a bad field reads `buzz.directory.0.count`.
DIRECTORY_FORMS = ("range", "identity")


def _directory_form(item: Any) -> str:
    has_prefix = "prefix" in item if isinstance(item, dict) else isinstance(item, DirectoryRange)
    return DIRECTORY_FORMS[0] if has_prefix else DIRECTORY_FORMS[1]


DirectoryBlock = Annotated[
    Annotated[DirectoryRange, Tag(DIRECTORY_FORMS[0])] | Annotated[DirectoryIdentity, Tag(DIRECTORY_FORMS[1])],
    Discriminator(_directory_form),
]


class BuzzTable(BaseModel):
    """The `[buzz]` table as written in task.toml."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    native: bool = False
    requires_evidence: bool = False
    user_display_name: str | None = Field(None, min_length=1)
    observe_channel_names: list[str] = Field(default_factory=list)
    directory: list[DirectoryBlock] = Field(default_factory=list)
    scripted_messages: list[ScriptedMessage] = Field(default_factory=list)

    def directory_entries(self) -> list[DirectoryEntry]:
        return [entry for block in self.directory for entry in block.entries()]

    @model_validator(mode="after")
    def _native_only_features(self) -> BuzzTable:
        # Evidence, a seeded directory and observed channels only exist on a Buzz relay trial;
        # declaring them on a non-native task is a contradiction, not a no-op.
        if not self.native:
            for key in ("requires_evidence", "user_display_name", "observe_channel_names", "directory",
                        "scripted_messages"):
                if getattr(self, key):
                    raise ValueError(f"{key} is set but native is false")
        seen: set[str] = set()
        for entry in self.directory_entries():
            if entry.identity_id in seen:
                # Two identities with one key would be one identity; a name shared on purpose
                # (ambiguous-user-mention) needs a distinct identity_id on each.
                raise ValueError(f"directory identity {entry.identity_id!r} is produced twice "
                                 "(give each a distinct identity_id)")
            seen.add(entry.identity_id)
        labels: set[str] = set()
        for index, message in enumerate(self.scripted_messages):
            where = f"scripted_messages[{index}]"
            if message.label in labels:
                raise ValueError(f"{where}.label: {message.label!r} is used twice")
            labels.add(message.label)
            if message.actor != USER_ACTOR and message.actor not in seen:
                raise ValueError(f"{where}.actor: {message.actor!r} is neither \"user\" nor a directory "
                                 f"identity_id (known: {', '.join(sorted(seen)) or 'none'})")
        return self


class TaskConfig(BaseModel):
    """The whole of task.toml, as Harbor's `TaskConfig` reads it, plus our `[buzz]` table."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    schema_version: str = "1.4"
    task: PackageInfo | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None
    agent: AgentSection = Field(default_factory=AgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    solution: SolutionSection = Field(default_factory=SolutionSection)
    # Harbor applies it to multi-step tasks only; on a single-step task it is read and unused.
    multi_step_reward_strategy: Literal["mean", "final"] | None = None
    steps: list[dict[str, Any]] | None = None
    # Harbor's `str | ArtifactConfig` entries; a bare string is read as its source (below)
    artifacts: list[ArtifactSection] = Field(default_factory=list)
    buzz: BuzzTable = Field(default_factory=BuzzTable)

    @model_validator(mode="before")
    @classmethod
    def _version_rename(cls, data: Any) -> Any:
        # Harbor's handle_version_rename: the legacy top-level `version` is the schema version
        if isinstance(data, dict) and "version" in data:
            data = dict(data)
            version = data.pop("version")
            data.setdefault("schema_version", version)
        return data

    @field_validator("steps")
    @classmethod
    def _steps(cls, steps: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
        if steps:
            raise unsupported(f"multi-step tasks ([[steps]], {len(steps)} of them): the corridor grades once, "
                              "after one agents phase; Harbor posts each step's instruction, runs its verifier "
                              "and rewards each step (multi_step_reward_strategy), which a trial's one task "
                              "message and one grading cannot do")  # fmt: skip
        return steps

    @field_validator("artifacts", mode="before")
    @classmethod
    def _artifacts(cls, artifacts: Any) -> Any:
        # a bare string is an entry's source (Harbor's `str | ArtifactConfig`)
        if isinstance(artifacts, list):
            return [{"source": entry} if isinstance(entry, str) else entry for entry in artifacts]
        return artifacts

    def artifact_entries(self) -> list[ArtifactSection]:
        return list(self.artifacts)

    @property
    def name(self) -> str | None:
        """`[task].name` where set (Harbor's `Task.name` then), else None: the folder names it."""
        return self.task.name if self.task is not None else None

    def agent_network(self) -> NetworkPolicy:
        """Harbor's agent-phase policy: `[agent]` network_mode where written, else the environment's."""
        return self.agent.explicit_policy() or self.environment.baseline()

    def verifier_network(self) -> NetworkPolicy:
        """Harbor's verifier-phase policy in shared mode (`resolve_verifier_phase_policy`):
        `[verifier]` network_mode where written, else the environment's."""
        return self.verifier.explicit_policy() or self.environment.baseline()


class DirectoryEntry(BaseModel):
    """One seeded directory identity, in seeding order (docs/tenant.md#directory)."""

    model_config = ConfigDict(frozen=True)

    name: str
    role: str
    identity_id: str = ""
    about: str | None = None
    channel_member: bool = False

    @model_validator(mode="after")
    def _identity_defaults_to_name(self) -> DirectoryEntry:
        if not self.identity_id:
            object.__setattr__(self, "identity_id", self.name)
        return self


class BuzzSpec(BaseModel):
    """What the harness must do for a task, with the directory expanded to names."""

    model_config = ConfigDict(frozen=True)

    native: bool = False
    requires_evidence: bool = False
    user_display_name: str | None = None
    directory: list[DirectoryEntry] = Field(default_factory=list)
    observe_channel_names: list[str] = Field(default_factory=list)
    scripted_messages: list[ScriptedMessage] = Field(default_factory=list)

    @classmethod
    def from_table(cls, table: BuzzTable) -> BuzzSpec:
        return cls(
            native=table.native,
            requires_evidence=table.requires_evidence,
            user_display_name=table.user_display_name,
            directory=table.directory_entries(),
            observe_channel_names=list(table.observe_channel_names),
            scripted_messages=list(table.scripted_messages),
        )
