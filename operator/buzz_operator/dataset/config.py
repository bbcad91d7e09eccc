"""task.toml as pydantic models.

Defaults are Harbor's documented ones (task-format docs, `models/task/config.py`): agent and
verifier timeouts 600 s, build timeout 600 s, 1 CPU, 2048 MB memory, 10240 MB storage, public
network. Sections accept keys we do not model (gpus, healthcheck, workdir, …) so Terminal-Bench
tasks load unchanged; the fields we *do* model are strictly typed so `cpus = "two"` is an error
naming `environment.cpus` rather than a surprise at pod creation.

The `[buzz]` table is ours: it declares what the harness must do for a Buzz-native task (export
evidence, seed a directory, observe channels). It rejects unknown keys, because a misspelt
`requires_evidense` would silently grade a task without evidence.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

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
    """`[[buzz.directory]]`: `count` identities named `<prefix><n>` (n from 1, zero-padded to `width`)."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    prefix: str = Field(min_length=1)
    count: int = Field(ge=1)
    width: int = Field(1, ge=1)
    role: str = Field(min_length=1)

    def names(self) -> list[str]:
        return [f"{self.prefix}{index:0{self.width}d}" for index in range(1, self.count + 1)]


class BuzzTable(BaseModel):
    """The `[buzz]` table as written in task.toml."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    native: bool = False
    requires_evidence: bool = False
    user_display_name: str | None = Field(None, min_length=1)
    observe_channel_names: list[str] = Field(default_factory=list)
    directory: list[DirectoryRange] = Field(default_factory=list)

    @model_validator(mode="after")
    def _native_only_features(self) -> BuzzTable:
        # Evidence, a seeded directory and observed channels only exist on a Buzz relay trial;
        # declaring them on a non-native task is a contradiction, not a no-op.
        if not self.native:
            for key in ("requires_evidence", "user_display_name", "observe_channel_names", "directory"):
                if getattr(self, key):
                    raise ValueError(f"{key} is set but native is false")
        seen: set[str] = set()
        for block in self.directory:
            for name in block.names():
                if name in seen:
                    # Two identities with one display name would make "invite benchmark-user-07"
                    # ambiguous; the verifiers assume directory names are unique.
                    raise ValueError(f"directory name {name!r} is produced twice")
                seen.add(name)
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


class BuzzSpec(BaseModel):
    """What the harness must do for a task, with the directory expanded to names."""

    model_config = ConfigDict(frozen=True)

    native: bool = False
    requires_evidence: bool = False
    user_display_name: str | None = None
    directory: list[DirectoryEntry] = Field(default_factory=list)
    observe_channel_names: list[str] = Field(default_factory=list)

    @classmethod
    def from_table(cls, table: BuzzTable) -> BuzzSpec:
        entries = [
            DirectoryEntry(name=name, role=block.role) for block in table.directory for name in block.names()
        ]
        return cls(
            native=table.native,
            requires_evidence=table.requires_evidence,
            user_display_name=table.user_display_name,
            directory=entries,
            observe_channel_names=list(table.observe_channel_names),
        )
