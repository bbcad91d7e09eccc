"""The experimental condition: a strict, content-addressed team manifest (docs/condition.md).

Field names, types, defaults and validator rules follow docs/condition.md#manifest exactly, because the
condition hash (docs/condition.md#condition-hash) is a function of this schema: a default added, renamed or retyped
here would silently re-identify every condition users compare against the seed harness.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from buzz_operator.condition.documents import read_mapping
from buzz_operator.condition.errors import ConditionError, rule_error

Harness = Literal["buzz-agent", "goose", "codex"]
ThinkingEffort = Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"]
GOOSE_PROMPT_MODES = frozenset({"append", "set"})


class StrictModel(BaseModel):
    """Unknown or misspelled keys are errors (docs/condition.md#strictness): a typo must not become a silent default."""

    # `model_revision` is a domain field, not pydantic's namespace. Infinity passes `ge=0`, and a
    # ConfigMap's YAML can spell it (`.inf`): refused here, naming the field, rather than by the
    # hash's allow_nan=False with no field at all (found by tests/unit/validation/test_random_specs.py).
    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=(), allow_inf_nan=False)


def _reject_non_finite(value: Any, where: str = "") -> None:
    # The hash uses allow_nan=False (docs/condition.md#condition-hash); refuse NaN/Infinity at load time, where the
    # error can name the field, instead of failing later while hashing.
    if isinstance(value, float) and not math.isfinite(value):
        raise rule_error(where, f"{value} has no canonical JSON form (NaN and Infinity cannot be hashed)")
    if isinstance(value, Mapping):
        for key, item in value.items():
            _reject_non_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _reject_non_finite(item, f"{where}.{index}" if where else str(index))


class ArtifactRef(StrictModel):
    """A sha256-pinned file relative to the artifact root (docs/condition.md#prompts)."""

    # no NUL or other control characters: the OS refuses them in a path with a bare ValueError
    path: str = Field(min_length=1, pattern=r"^[^\x00-\x1f\x7f]+$")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$")


class GenerationConfig(StrictModel):
    """Generation controls (docs/condition.md#generation). Every field is optional and emits no env var when unset.

    Deliberately has no ``temperature``: buzz-agent exposes no temperature environment
    variable, so such a value could never reach the provider (docs/condition.md#generation). The strict model
    refuses the key and ``errors`` explains why.
    """

    max_output_tokens: int | None = Field(default=None, gt=0)
    context_window_tokens: int | None = Field(default=None, gt=0)
    compact_at_percent: int | None = Field(default=None, ge=1, le=100)
    compact_at_tokens: int | None = Field(default=None, gt=0)
    thinking_effort: ThinkingEffort | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @field_validator("extra")
    @classmethod
    def _finite_extra(cls, value: dict[str, Any]) -> dict[str, Any]:
        _reject_non_finite(value)
        return value

    @model_validator(mode="after")
    def _output_fits_window(self) -> Self:
        # buzz-agent reserves max_output_tokens from the window when deciding to compact;
        # a reservation >= the window compacts on every turn (docs/condition.md#generation).
        if self.max_output_tokens is None or self.context_window_tokens is None:
            return self
        if self.max_output_tokens >= self.context_window_tokens:
            raise rule_error(
                "max_output_tokens",
                f"max_output_tokens {self.max_output_tokens} must be less than "
                f"context_window_tokens {self.context_window_tokens}; buzz-agent reserves it "
                "from the window, so an equal or larger value forces compaction on every turn",
            )
        return self

    @model_validator(mode="after")
    def _compaction_can_fire(self) -> Self:
        if (
            self.compact_at_tokens is not None
            and self.context_window_tokens is not None
            and self.max_output_tokens is not None
            and self.compact_at_tokens > self.context_window_tokens - self.max_output_tokens
        ):
            raise rule_error(
                "compact_at_tokens",
                f"compact_at_tokens {self.compact_at_tokens} exceeds the window minus "
                f"max_output_tokens ({self.context_window_tokens - self.max_output_tokens}); "
                "buzz-agent reserves room for the response, so this can never fire",
            )
        return self

    @model_validator(mode="after")
    def _harness_extras(self) -> Self:
        mode = self.extra.get("goose_system_prompt_mode")
        if mode is not None and mode not in GOOSE_PROMPT_MODES:
            raise rule_error(
                "extra.goose_system_prompt_mode",
                f"generation.extra.goose_system_prompt_mode must be append or set, not {mode!r}",
            )
        return self


class AgentBudget(StrictModel):
    """Per-agent limits (docs/condition.md#budgets); only ``max_calls`` reaches the agent (BUZZ_AGENT_MAX_ROUNDS)."""

    max_calls: int | None = Field(default=None, gt=0)
    max_input_tokens: int | None = Field(default=None, gt=0)
    max_output_tokens: int | None = Field(default=None, gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)


class Price(StrictModel):
    """USD per million tokens for one endpoint (docs/condition.md#prices); output also covers reasoning tokens."""

    input_per_million_usd: float = Field(ge=0)
    cached_input_per_million_usd: float = Field(ge=0)
    output_per_million_usd: float = Field(ge=0)
    # Fallback fraction of input assumed cached, used only when a log has no `cached=`.
    cache_read_rate: float = Field(default=0.0, ge=0.0, le=1.0)


class AgentClass(StrictModel):
    """One roster entry: ``count`` identical seats (docs/condition.md#roster)."""

    id: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9._-]*$")
    kind: Literal["orchestrator", "worker"]
    role: str = Field(min_length=1)
    count: int = Field(gt=0)
    endpoint: str = Field(min_length=1)
    model_revision: str = Field(min_length=1)
    harness: Harness = "buzz-agent"
    prompt: ArtifactRef
    persona: ArtifactRef | None = None
    skills: tuple[ArtifactRef, ...] = ()
    include_platform_prompt: bool = True
    # Absent and empty generation are the same condition and hash the same (docs/condition.md#condition-hash).
    generation: GenerationConfig = Field(default_factory=GenerationConfig)
    budget: AgentBudget = Field(default_factory=AgentBudget)
    concurrency: int = Field(default=1, gt=0)

    @model_validator(mode="after")
    def _concurrency_within_count(self) -> Self:
        if self.concurrency > self.count:
            raise rule_error(
                "concurrency",
                f"concurrency cannot exceed count (concurrency {self.concurrency} > count {self.count})",
            )
        return self


class TrialBudget(StrictModel):
    """Trial-wide limits (docs/condition.md#budgets): the timeout bounds the DONE wait and each agent turn."""

    timeout_seconds: int = Field(gt=0)
    max_cost_usd: float | None = Field(default=None, gt=0)


class EnvironmentOverrides(StrictModel):
    """Task-container resources that replace the task's own request (docs/condition.md#budgets)."""

    override_cpus: int | None = Field(default=None, gt=0)
    override_memory_mb: int | None = Field(default=None, gt=0)
    override_storage_mb: int | None = Field(default=None, gt=0)


class ExperimentManifest(StrictModel):
    """One benchmark condition (docs/condition.md#manifest); its identity is :attr:`sha256` (docs/condition.md#condition-hash)."""

    schema_version: Literal["1"] = "1"
    condition: str = Field(min_length=1)
    roster: tuple[AgentClass, ...] = Field(min_length=1)
    prices: dict[str, Price]
    trial_budget: TrialBudget
    environment: EnvironmentOverrides = Field(default_factory=EnvironmentOverrides)
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("metadata")
    @classmethod
    def _finite_metadata(cls, value: dict[str, Any]) -> dict[str, Any]:
        _reject_non_finite(value)
        return value

    @model_validator(mode="after")
    def _roster_shape(self) -> Self:
        ids = [entry.id for entry in self.roster]
        duplicates = sorted({class_id for class_id in ids if ids.count(class_id) > 1})
        if duplicates:
            raise rule_error("roster", f"roster class ids must be unique (repeated: {duplicates})")
        # Counted by seats, not entries: `count: 2` on an orchestrator is two orchestrators.
        # Zero workers is legal — the solo baseline.
        orchestrators = sum(entry.count for entry in self.roster if entry.kind == "orchestrator")
        if orchestrators != 1:
            raise rule_error(
                "roster",
                f"roster must contain exactly one orchestrator (found {orchestrators} by summed count)",
            )
        missing = sorted({entry.endpoint for entry in self.roster} - self.prices.keys())
        if missing:
            raise rule_error("prices", f"prices missing for endpoints: {missing}")
        return self

    @property
    def is_solo(self) -> bool:
        """A single seat in total: nobody to delegate to (docs/condition.md#manifest)."""
        return sum(entry.count for entry in self.roster) == 1

    def roster_class(self, class_id: str) -> AgentClass:
        for entry in self.roster:
            if entry.id == class_id:
                return entry
        raise ConditionError(f"no roster class {class_id!r}", field="roster")

    def canonical_bytes(self) -> bytes:
        """The bytes whose sha256 is the condition identity (docs/condition.md#condition-hash), byte-identical to the seed.

        Everything is dumped, defaults and nulls included, except two keys whose absence
        keeps pre-existing conditions' hashes: ``harness`` when it is the default
        ``buzz-agent`` and an unpinned ``generation.thinking_effort``.
        """
        data = self.model_dump(mode="json", exclude_none=False)
        for entry in data["roster"]:
            if entry.get("harness") == "buzz-agent":
                del entry["harness"]
            generation = entry.get("generation")
            if isinstance(generation, dict) and generation.get("thinking_effort") is None:
                generation.pop("thinking_effort", None)
        return json.dumps(
            data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        ).encode("utf-8")

    @property
    def sha256(self) -> str:
        """``manifest_sha256``: grouping key for summaries and the provisioning idempotency key."""
        return hashlib.sha256(self.canonical_bytes()).hexdigest()

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any]) -> Self:
        """Load from a YAML or JSON file (path or str path) or an already-decoded mapping.

        Every failure is a :class:`ConditionError` naming the file and the dotted field.
        """
        raw, label = read_mapping(source, what="manifest")
        try:
            return cls.model_validate(raw)
        except ValidationError as error:
            raise ConditionError.from_validation(error, source=label) from None
