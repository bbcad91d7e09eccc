"""task.toml as pydantic models.

Defaults are Harbor's documented ones (task-format docs, `models/task/config.py`): agent and
verifier timeouts 600 s, build timeout 600 s, 1 CPU, 2048 MB memory, 10240 MB storage, public
network. Sections accept keys we do not model (gpus, healthcheck, workdir, …) so Terminal-Bench
tasks load unchanged; the fields we *do* model are strictly typed so `cpus = "two"` is an error
naming `environment.cpus` rather than a surprise at pod creation.

The `[buzz]` table is ours: it declares what the harness must do for a Buzz-native task (export
evidence, seed a directory, observe channels, publish scripted messages; tasks/README.md). It rejects unknown keys, because a misspelt
`requires_evidense` would silently grade a task without evidence.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

NetworkMode = Literal["no-network", "public", "allowlist"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True, frozen=True)


class AgentSection(_Section):
    timeout_sec: float = Field(600.0, gt=0)


class VerifierSection(_Section):
    timeout_sec: float = Field(600.0, gt=0)


class EnvironmentSection(_Section):
    cpus: float = Field(1.0, gt=0)
    memory_mb: int = Field(2048, gt=0)
    storage_mb: int = Field(10240, gt=0)
    network_mode: NetworkMode = "public"
    allowed_hosts: list[str] = Field(default_factory=list)
    docker_image: str | None = Field(None, min_length=1)
    build_timeout_sec: float = Field(600.0, gt=0)


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
    """The whole of task.toml. `schema_version` is Harbor's (ours are "1.3")."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    schema_version: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    agent: AgentSection = Field(default_factory=AgentSection)
    verifier: VerifierSection = Field(default_factory=VerifierSection)
    environment: EnvironmentSection = Field(default_factory=EnvironmentSection)
    buzz: BuzzTable = Field(default_factory=BuzzTable)


class DirectoryEntry(BaseModel):
    """One seeded directory identity, in seeding order (§3.5)."""

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
