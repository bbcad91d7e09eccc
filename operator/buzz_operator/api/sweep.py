"""BuzzSweep: one team condition × a dataset of tasks × k attempts, as a Kubernetes object.

The sweep plans and the trials execute (docs/design.md#plan-and-execute): nothing in the sweep's
status grows with the number of trials, so a 10 000-trial sweep stays far below etcd's
object size limit (Argo's status.nodes lesson, argo#1186).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    Field,
    SerializerFunctionWrapHandler,
    ValidationInfo,
    field_validator,
    model_serializer,
    model_validator,
)

from buzz_operator.api.common import (
    CONDITIONS_LIST_EXTRA,
    KOPF_STATUS_DESCRIPTION,
    PRESERVE_UNKNOWN,
    Condition,
    CostRange,
    ImagePullPolicy,
    LocalObjectRef,
    SpecModel,
    StatusModel,
    Timestamp,
    Waiting,
)
from buzz_operator.api.relay import RelaySpec
from buzz_operator.api.rules import exactly_one, rule, validations
from buzz_operator.api.secret_text import StatusText
from buzz_operator.api.shown import SHOWN_DESCRIPTION, Shown, shown
from buzz_operator.api.stack import StackDigests, StackSource, folder_stack

DEFAULT_MANIFEST_KEY = "manifest.yaml"
DEFAULT_ENDPOINTS_KEY = "endpoints.json"
DEFAULT_TASK_IMAGE_REGISTRY = "docker.io/buzz-tasks"
# A pod spec lists them all; a handful covers every registry a sweep pulls from, and the bound keeps
# the CRD's validation cost (and the canary pod) small.
MAX_PULL_SECRETS = 8


def _exactly_one(model: SpecModel, fields: tuple[str, ...]) -> None:
    chosen = [name for name in fields if getattr(model, name) is not None]
    if len(chosen) != 1:
        names = ", ".join(type(model).model_fields[name].alias or name for name in fields)
        found = ", ".join(type(model).model_fields[name].alias or name for name in chosen) or "none"
        raise ValueError(f"needs exactly one of {names} (found: {found})")


# The sources each "exactly one of" chooses between, shared by the model's validator and its
# CEL rule so the two cannot drift apart.
CONDITION_SOURCES = ("inline", "config_map_ref")
ENDPOINTS_SOURCES = ("config", "config_map_ref")
DATASET_SOURCES = ("builtin", "config_map_ref", "object_store", "registry", "package")
COMPARISON_SOURCES = ("baseline", "pass_rate")  # where spec.comparison's baseline pass rates come from
REGISTRY_SOURCES = ("url", "config_map_ref")
DEFAULT_REGISTRY_KEY = "registry.json"
MAX_WARM_PODS = 16  # a small surplus: more warm pods hold nodes' room for trials that cannot start yet
DEFAULT_GIT_BASE = "https://github.com"
# S3 object keys are at most 1024 bytes, so no longer prefix can name tasks; the bound also
# keeps the CEL rule on it cheap (see api.rules).
MAX_PREFIX_LENGTH = 1024


class ConditionConfigMapRef(SpecModel):
    """A ConfigMap holding the condition manifest and the prompt files it pins."""

    name: str = Field(min_length=1, max_length=253, description="Name of the ConfigMap in this namespace.")
    manifest_key: str = Field(
        DEFAULT_MANIFEST_KEY,
        min_length=1,
        description=(
            "Key holding the manifest (YAML or JSON). Every other key is a prompt file, keyed by its "
            "path relative to the manifest with '/' replaced by '__' (ConfigMap keys cannot hold '/')."
        ),
    )


class ConditionSource(SpecModel, json_schema_extra=validations(exactly_one("spec.condition", CONDITION_SOURCES))):
    """Where the team condition (the roster manifest) comes from: exactly one of inline or configMapRef."""

    inline: dict[str, Any] | None = Field(
        None,
        description=(
            "The manifest itself as an object. Checked by the condition rules at admission; "
            "prompt files must then be pinned by sha256 and shipped in the stack image."
        ),
        json_schema_extra=PRESERVE_UNKNOWN,
    )
    config_map_ref: ConditionConfigMapRef | None = Field(
        None, description="A ConfigMap holding the manifest and its prompt files."
    )

    @model_validator(mode="after")
    def _one_source(self) -> ConditionSource:
        _exactly_one(self, CONDITION_SOURCES)
        return self


class ConfigMapKeyRef(SpecModel):
    """One key of a ConfigMap in the same namespace."""

    name: str = Field(min_length=1, max_length=253, description="Name of the ConfigMap in this namespace.")
    key: str = Field(DEFAULT_ENDPOINTS_KEY, min_length=1, description="Key holding the document.")


class EndpointsSource(SpecModel, json_schema_extra=validations(exactly_one("spec.endpoints", ENDPOINTS_SOURCES))):
    """Model endpoint configuration: exactly one of config or configMapRef, plus the Secret with the keys."""

    config: dict[str, Any] | None = Field(
        None,
        description="Endpoint config as an object: {<endpoint>: {provider, api_key_env, env}}.",
        json_schema_extra=PRESERVE_UNKNOWN,
    )
    config_map_ref: ConfigMapKeyRef | None = Field(
        None, description="A ConfigMap key holding the endpoint config (JSON or YAML)."
    )
    secret_ref: LocalObjectRef | None = Field(
        None,
        description=(
            "Secret holding the model API keys, one data key per api_key_env name in the endpoint "
            "config. Values never appear in pod specs; they reach agents over exec environments."
        ),
    )

    @model_validator(mode="after")
    def _one_source(self) -> EndpointsSource:
        _exactly_one(self, ENDPOINTS_SOURCES)
        return self


class BuiltinDataset(SpecModel):
    """The Buzz-native task suite shipped inside the operator image."""


class ObjectStoreDataset(SpecModel):
    """Task directories stored under a prefix of the sweep's object store."""

    prefix: str = Field(
        min_length=1,
        max_length=MAX_PREFIX_LENGTH,
        pattern=r"^[^/]",
        description="Prefix (relative, no '..') under which each task is one directory.",
        json_schema_extra=validations(rule(
            # '..' alone, first, last or in the middle: the pattern already refuses a leading '/'.
            "self != '..' && !self.startsWith('../') && !self.endsWith('/..') && !self.contains('/../')",
            "spec.dataset.objectStore.prefix must not contain '..' segments",
        )),
    )

    @field_validator("prefix")
    @classmethod
    def _no_parent_segments(cls, prefix: str) -> str:
        # A '..' segment would let a sweep read outside its store (Argo's key traversal warning).
        if ".." in prefix.split("/"):
            raise ValueError("must not contain '..' segments")
        return prefix


class RegistryConfigMapRef(SpecModel):
    """A ConfigMap key holding a Harbor registry.json."""

    name: str = Field(min_length=1, max_length=253, description="Name of the ConfigMap in this namespace.")
    key: str = Field(DEFAULT_REGISTRY_KEY, min_length=1, description="Key holding the registry.json.")


class RegistryDataset(
    SpecModel, json_schema_extra=validations(exactly_one("spec.dataset.registry", REGISTRY_SOURCES))
):
    """A dataset of a Harbor registry.json (Harbor 0.25.0's format: a JSON list of
    {name, version, description, tasks: [{name, git_url, git_commit_id, path}], metrics}), its
    task folders fetched from each task's git origin at the pinned commit (docs/harbor.md)."""

    name: str = Field(
        min_length=1,
        max_length=253,
        pattern=r"^[^@\s]+(@[^@\s]+)?$",
        description=(
            "name@version of a dataset in the registry. Without @version Harbor's choice: 'head' if "
            "listed, else the highest PEP 440 version, else the lexically last."
        ),
    )
    url: str | None = Field(
        None,
        max_length=2048,
        pattern=r"^https?://[^\s]+$",
        description="http(s) URL of the registry.json (e.g. a raw file of a git repository).",
    )
    config_map_ref: RegistryConfigMapRef | None = Field(
        None, description="A ConfigMap key holding the registry.json."
    )

    @model_validator(mode="after")
    def _one_source(self) -> RegistryDataset:
        _exactly_one(self, REGISTRY_SOURCES)
        return self


class PackageDataset(SpecModel):
    """A git repository named org/name[@ref], read as Harbor's `--repo` form: its tasks/ folder
    of task folders, or a dataset of its registry.json. Harbor Hub packages (Harbor's hosted
    database, content-hash refs) are not supported: the operator resolves names through git only."""

    name: str = Field(
        min_length=3,
        max_length=253,
        pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(@[^@\s]+)?$",
        description="org/name[@branch|tag|commit] of the repository at gitBase; without @ref its HEAD.",
    )
    git_base: str = Field(
        DEFAULT_GIT_BASE,
        max_length=2048,
        pattern=r"^https?://[^\s]+$",
        description="Where org/name lives: the repository is <gitBase>/<org>/<name>.git (smart HTTP).",
    )
    path: str = Field(
        "tasks",
        min_length=1,
        max_length=MAX_PREFIX_LENGTH,
        pattern=r"^[^/]",
        description="Folder of the repository whose subfolders with a task.toml are the tasks ('.' the root).",
    )
    dataset: str | None = Field(
        None,
        min_length=1,
        max_length=253,
        pattern=r"^[^@/\s]+(@[^@\s]+)?$",
        description="Instead of the folder: name[@version] of a dataset in the repository's registry.json.",
    )

    @field_validator("path")
    @classmethod
    def _inside_the_repository(cls, path: str) -> str:
        if ".." in path.split("/"):
            raise ValueError("must not contain '..' segments")
        return path


class DatasetSource(SpecModel, json_schema_extra=validations(exactly_one("spec.dataset", DATASET_SOURCES))):
    """Which tasks to run: exactly one of builtin, configMapRef, objectStore, registry or package."""

    builtin: BuiltinDataset | None = Field(
        None, description="Use the suite shipped in the operator image: {}."
    )
    config_map_ref: LocalObjectRef | None = Field(
        None, description="A ConfigMap holding small task directories (files keyed by path, '/' as '__')."
    )
    object_store: ObjectStoreDataset | None = Field(None, description="Task directories in object storage.")
    registry: RegistryDataset | None = Field(
        None, description="name@version of a Harbor registry.json (by URL or ConfigMap), fetched from git."
    )
    package: PackageDataset | None = Field(
        None, description="A git repository org/name[@ref] in Harbor's --repo form (not Harbor Hub)."
    )

    @model_validator(mode="after")
    def _one_source(self) -> DatasetSource:
        _exactly_one(self, DATASET_SOURCES)
        return self


class RetryPolicy(
    SpecModel,
    json_schema_extra=validations(rule(
        # An object always has both (schema defaults fill them in before rules run); the has()
        # guards are for the schema's own default `{}`, which the API server checks as written.
        "!has(self.backoffSeconds) || !has(self.maxBackoffSeconds) || self.maxBackoffSeconds >= self.backoffSeconds",
        "spec.retry.maxBackoffSeconds must be >= spec.retry.backoffSeconds",
        field_path=".maxBackoffSeconds",
    )),
):
    """Retries of infrastructure failures only; outcomes (timeouts, failed verifiers) are final."""

    max_retries: int = Field(
        2,
        ge=0,
        le=20,
        description="Infra retries per trial after the first try (pod lost, image pull, relay down).",
    )
    backoff_seconds: int = Field(10, ge=0, description="Delay before the first retry; doubles each retry.")
    max_backoff_seconds: int = Field(300, ge=0, description="Upper bound of the delay between retries.")

    @model_validator(mode="after")
    def _cap_covers_base(self) -> RetryPolicy:
        if self.max_backoff_seconds < self.backoff_seconds:
            raise ValueError("maxBackoffSeconds must be >= backoffSeconds")
        return self


class Budget(SpecModel):
    """Spending limits for the whole sweep."""

    max_cost_usd: float | None = Field(
        None,
        gt=0,
        alias="maxCostUSD",
        description=(
            "Stop starting trials once the sweep's cost ceiling reaches this many USD "
            "(condition BudgetExhausted); running trials finish and are billed."
        ),
    )


class StorageSpec(SpecModel):
    """Object storage for bundles, summaries and lock files."""

    url: str = Field(
        pattern=r"^(file:///|s3://[^/\s]+)",
        description="file:///absolute/path or s3://bucket/prefix; the sweep writes under <url>/<sweep>/.",
    )
    credentials_secret_ref: LocalObjectRef | None = Field(
        None, description="Secret with AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY for s3:// URLs."
    )
    endpoint: str | None = Field(
        None, description="S3 endpoint URL for S3-compatible servers (MinIO etc.); AWS when unset."
    )
    quarantine_prefix: str | None = Field(
        None,
        max_length=MAX_PREFIX_LENGTH,
        # relative, no leading or trailing '/', no backslash: the key rules of storage/keys.py
        pattern=r"^$|^[^/\\]([^\\]*[^/\\])?$",
        description=(
            "Where a trial's bundle goes when its secret scan finds a suspected secret: "
            "<url>/<prefix>/<sweep>/<trial>/ instead of <url>/<sweep>/<trial>/, so a store people browse "
            "or share holds no leaked key (restrict the prefix, e.g. with a bucket policy). The bundle is "
            "uploaded whole either way and the trial says so (condition SecretsFound). Empty: in place; "
            "unset: the operator's default (chart value secretFindings.quarantinePrefix)."
        ),
        json_schema_extra=validations(rule(
            "self != '..' && !self.startsWith('../') && !self.endsWith('/..') && !self.contains('/../')"
            " && !self.contains('//')",
            "spec.storage.quarantinePrefix must not contain '..' or empty segments",
        )),
    )

    @field_validator("quarantine_prefix")
    @classmethod
    def _quarantine_inside_the_store(cls, prefix: str | None) -> str | None:
        # as for a dataset prefix: a '..' segment would write outside the sweep's store, and an
        # empty one is a key no store accepts
        if prefix and any(segment in ("", "..") for segment in prefix.split("/")):
            raise ValueError("must not contain '..' or empty segments")
        return prefix


class Comparison(
    SpecModel,
    json_schema_extra=validations(
        exactly_one("spec.comparison", COMPARISON_SOURCES),
        rule("self.difference != 0.0", "spec.comparison.difference must not be 0", field_path=".difference"),
    ),
):
    """The comparison this sweep is for: a difference in pass rate against a baseline that it must
    be able to detect. The operator judges the sweep's tasks × attempts against it at admission
    (status.power, an Event) and never refuses the sweep for it (docs/statistics.md#planning)."""

    baseline: str | None = Field(
        None, min_length=1, max_length=253,
        description="A BuzzSweep of this namespace, same tasks, other condition: its per-task pass rates "
                    "(its summary.json) are the plan's.")
    pass_rate: float | None = Field(
        None, ge=0, le=1, description="Without a baseline: its assumed mean pass rate over tasks.")
    spread: float | None = Field(
        None, ge=0, lt=0.5, description="With passRate: the SD of the tasks' pass rates around it (default 0.25, "
                                        "less near 0 or 1).")
    difference: float = Field(
        ge=-1, le=1, description="The difference in pass rate to detect, this sweep minus the baseline "
                                 "(negative: this sweep worse).")
    alpha: float = Field(0.05, gt=0, lt=1, description="Two-sided significance level of the comparison.")
    power: float = Field(0.8, gt=0, lt=1, description="Chance of detecting the difference that counts as enough.")
    effect_spread: float = Field(
        0.0, ge=0, le=1, description="The SD of the difference from task to task (0: the same on every task).")

    @model_validator(mode="after")
    def _one_source(self) -> Comparison:
        _exactly_one(self, COMPARISON_SOURCES)
        if self.difference == 0:
            raise ValueError("difference must not be 0")
        return self


class PowerStatus(StatusModel):
    """Whether the sweep's tasks × attempts detect spec.comparison's difference (docs/statistics.md#planning)."""

    enough: bool | None = Field(None, description="The size reaches the power asked; unset when it could not be judged.")
    tasks: int = Field(ge=0, description="The sweep's tasks.")
    attempts: int = Field(ge=1, description="Its attempts per task.")
    tasks_needed: int | None = Field(
        None, ge=1, description="Tasks that detect the difference at these attempts; unset when out of reach.")
    power: float | None = Field(None, ge=0, le=1, description="The approximate power of this size.")
    baseline_scored: int | None = Field(None, ge=0, description="Scored trials of the baseline the rates came from.")
    baseline_finished: bool | None = Field(
        None, description="The baseline had finished: its rates will not change (else they are read again).")
    checked_at: Timestamp | None = Field(None, description="When it was judged.")
    generation: int | None = Field(None, ge=0, description="metadata.generation judged: a spec change judges again.")
    message: StatusText = Field("", description="The verdict in one line.")


class RerunSpec(SpecModel):
    """Re-run finished trials whose result matches one of the reasons (Harbor's resume filter)."""

    reasons: list[str] = Field(
        min_length=1,
        description="Outcomes (timeout, launch, error, broken) or trial reasons (e.g. ImagePullFailed) to re-run.",
    )


# A Kueue LocalQueue name as the pod's kueue.x-k8s.io/queue-name label carries it: a DNS
# subdomain that also fits a label value (63 characters).
QUEUE_NAME = r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$"
QUEUE_NAME_MAX = 63
# A RuntimeClass name: a DNS subdomain (the apiserver's rule for the object's name).
RUNTIME_CLASS = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$"
RUNTIME_CLASS_MAX = 253
# How long a queued trial pod may wait for Kueue's admission when the sweep does not say
# (spec.queueWaitSeconds; docs/queueing.md#waiting-bound).
DEFAULT_QUEUE_SECONDS = 3600


class Headroom(
    SpecModel,
    json_schema_extra=validations(rule(
        "!has(self.unlimited) || !self.unlimited || !has(self.limitMultiple)",
        "spec.resources.limitMultiple and spec.resources.unlimited are two answers to one question: set one",
        field_path=".limitMultiple",
    )),
):
    """How much room a trial's task container gets around what task.toml asks (docs/resources.md#headroom)."""

    limit_multiple: float | None = Field(
        None, ge=1, le=100,
        description="The CPU and memory limits as a multiple of task.toml's values (after the condition's "
                    "overrides): 1 is Harbor's and the seed's box, 3 leaves room for the bursts that otherwise "
                    "end as OOM kills and throttling. The operator default (chart value resources.limitMultiple, "
                    "1) when unset.",
    )
    unlimited: bool = Field(False, description="No CPU or memory limit at all: the pod may burst to the node's.")
    request_fraction: float | None = Field(
        None, gt=0, le=1,
        description="The share of task.toml's CPU and memory the pod requests (what the scheduler reserves); "
                    "1 when unset. Generalises spec.cpuRequestFraction to memory; set one of the two.",
    )

    @model_validator(mode="after")
    def _one_limit(self) -> Headroom:
        if self.unlimited and self.limit_multiple is not None:
            raise ValueError("spec.resources.limitMultiple and spec.resources.unlimited are two answers to one "
                             "question: set one")
        return self


class BuzzSweepSpec(
    SpecModel,
    json_schema_extra=validations(rule(
        "!has(self.stack) || !has(self.stackImage)",
        "spec.stack and spec.stackImage are one setting: set spec.stack only (stackImage is its deprecated alias)",
        field_path=".stackImage",
    ), rule(
        "!has(self.resources) || !has(self.resources.requestFraction) || !has(self.cpuRequestFraction) "
        "|| self.cpuRequestFraction == 1.0",
        "spec.resources.requestFraction and spec.cpuRequestFraction are one setting: set resources.requestFraction",
        field_path=".resources.requestFraction",
    )),
):
    """What to run: one condition over a dataset, k attempts per task."""

    condition: ConditionSource = Field(description="The team condition: roster manifest and its prompts.")
    endpoints: EndpointsSource | None = Field(
        None, description="Model endpoints the roster names; unset for conditions that call no model."
    )
    dataset: DatasetSource = Field(description="The tasks to run.")
    include: list[str] = Field(default_factory=list, description="Task-name globs to keep (all when empty).")
    exclude: list[str] = Field(
        default_factory=list, description="Task-name globs to drop, applied after include."
    )
    attempts: int = Field(1, ge=1, le=1000, description="k: independent attempts per task (pass@k).")
    parallelism: int = Field(4, ge=1, le=10000, description="Most trials of this sweep active at once.")
    warm_pods: int | None = Field(
        None, ge=0, le=MAX_WARM_PODS,
        description="Trial pods made ready ahead of their trials, beyond spec.parallelism: the next trials' pods "
                    "(stack installed, forwarder listening, no secret) wait for a slot to free and their trial "
                    "claims them (docs/warm-pods.md). 0: none; unset: the operator's default (chart value warmPods).")
    cpu_request_fraction: float = Field(
        1.0, gt=0, le=1,
        description=(
            "Share of each task's CPU limit that its pod requests. 1.0 requests the full limit, so "
            "trial pods get Guaranteed QoS; a small development cluster can lower it to run several "
            "trials side by side. The limit, what the agents may use, stays what task.toml asks."
        ),
    )
    resources: Headroom | None = Field(
        None, description="Room around task.toml's CPU and memory: the limit as a multiple, or none, and the "
                          "share requested. Part of what the experiment is: recorded in lock.json and every "
                          "result.json (docs/resources.md#headroom).",
    )
    timeout_multiplier: float = Field(
        1.0, gt=0, le=100,
        description="Scales the task's agent and verifier deadlines (task.toml); the pod's start and the "
                    "setup have their own (podStartSeconds, setupSeconds), never scaled.",
    )
    pod_start_seconds: int | None = Field(
        None, gt=0, le=24 * 3600,
        description="How long a trial pod may take to be scheduled, pull its images and start its containers "
                    "before the try fails as ScheduleTimeout (infra, retried); the task's "
                    "environment.build_timeout_sec (600 s by default) when unset. A queued pod's wait for "
                    "Kueue is queueWaitSeconds, apart from this.",
    )
    setup_seconds: int | None = Field(
        None, gt=0, le=3600,
        description="How long the stack install, the forwarder and every agent's subscription may take once "
                    "the pod runs, before the try fails (infra, retried); 120 when unset.",
    )
    retry: RetryPolicy = Field(
        default_factory=RetryPolicy,
        description="Infra-failure retries per trial.",
        json_schema_extra={"default": {}},
    )
    budget: Budget | None = Field(None, description="Spending limits.")
    relay: RelaySpec = Field(description="The Buzz relay trials run against.")
    storage: StorageSpec | None = Field(
        None, description="Where evidence goes; the operator default when unset."
    )
    stack: StackSource | None = Field(
        None, description="The agent stack installed at /opt/buzz in every trial pod; operator default when unset."
    )
    stack_image: str | None = Field(
        None,
        min_length=1,
        description="Deprecated alias of spec.stack with layout folder: {image: <this>, layout: folder}.",
    )
    operator_image: str | None = Field(
        None,
        min_length=1,
        description="Image providing relay-forwarder for the pod; operator default when unset.",
    )
    task_image_registry: str = Field(
        DEFAULT_TASK_IMAGE_REGISTRY,
        min_length=1,
        description="Registry prefix for task images not pinned in task.toml (<registry>/<task>:<digest>).",
    )
    image_pull_policy: ImagePullPolicy = Field(
        ImagePullPolicy.IF_NOT_PRESENT, description="Pull policy for every container of trial pods."
    )
    image_pull_secrets: list[LocalObjectRef] | None = Field(
        None,
        max_length=MAX_PULL_SECRETS,
        description=(
            "Secrets (type kubernetes.io/dockerconfigjson, in the sweep's namespace) for pulling the task, "
            "stack and operator images of trial, grading and canary pods, e.g. a private registry holding "
            "a Terminal-Bench task's environment.docker_image (docs/task-images.md)."
        ),
    )
    runtime_class_name: str | None = Field(
        None, min_length=1, max_length=RUNTIME_CLASS_MAX, pattern=RUNTIME_CLASS,
        description="RuntimeClass for the trial pods and the preflight canary, e.g. gvisor for a sandbox "
                    "(docs/isolation.md); unset: the operator's default (chart value trialRuntimeClassName).",
    )
    queue_name: str | None = Field(
        None, pattern=QUEUE_NAME, max_length=QUEUE_NAME_MAX,
        description=(
            "Kueue LocalQueue (in the sweep's namespace) every trial pod is submitted to through Kueue's "
            "plain-Pod integration; the operator default (chart value kueue.defaultQueueName) when unset, "
            "none when both are unset. The sweep's own caps still apply first (docs/queueing.md)."
        ),
    )
    queue_wait_seconds: int | None = Field(
        None, gt=0, le=7 * 24 * 3600,
        description="With a queue: how long a trial pod may wait for Kueue's admission before its try fails "
                    f"as QueueWaitExceeded (infra, retried); {DEFAULT_QUEUE_SECONDS} when unset.",
    )
    suspend: bool = Field(False, description="Start no new trials while true; running trials finish.")
    ttl_seconds_after_finished: int | None = Field(
        None,
        ge=0,
        description="Delete the sweep (and its trials) this long after it finishes; evidence stays.",
    )
    rerun: RerunSpec | None = Field(None, description="Re-run finished trials by outcome or reason.")
    comparison: Comparison | None = Field(
        None, description="The comparison this sweep is for; its size is judged against it, never refused.")
    regrade: bool = Field(
        False,
        description=(
            "Re-run the verifier of finished trials on their recorded Buzz evidence, once per "
            "generation (set it, or change the spec while it is set, to regrade again). Tasks whose "
            "verifier reads the container's state cannot be regraded and say so in status.regrade."
        ),
    )

    def headroom(self, default_limit_multiple: float = 1.0) -> dict[str, Any]:
        """The room every trial's box has, as lock.json records it (docs/resources.md#headroom)."""
        room = self.resources or Headroom()
        fraction = room.request_fraction
        return {"limitMultiple": None if room.unlimited else (room.limit_multiple or default_limit_multiple),
                "cpuRequestFraction": fraction if fraction is not None else self.cpu_request_fraction,
                "memoryRequestFraction": fraction if fraction is not None else 1.0}

    @model_validator(mode="after")
    def _one_request_fraction(self) -> BuzzSweepSpec:
        # cpuRequestFraction's default 1.0 is "unset"
        if self.resources is not None and self.resources.request_fraction is not None and self.cpu_request_fraction != 1.0:
            raise ValueError("spec.resources.requestFraction and spec.cpuRequestFraction are one setting: set "
                             "resources.requestFraction only")
        return self

    @field_validator("stack_image")
    @classmethod
    def _one_stack_setting(cls, stack_image: str | None, info: ValidationInfo) -> str | None:
        # a field validator (stack is validated first) so the error names spec.stackImage
        if stack_image is not None and info.data.get("stack") is not None:
            raise ValueError("spec.stack is set too: they are one setting, set spec.stack only "
                             "(stackImage is its deprecated alias)")
        return stack_image

    def stack_source(self, default: StackSource) -> StackSource:
        """The stack this sweep's trials install: spec.stack, the deprecated spec.stackImage as a
        folder image, or the operator's default."""
        if self.stack is not None:
            return self.stack
        return folder_stack(self.stack_image) if self.stack_image is not None else default


class PreflightCheck(StatusModel):
    """One preflight check's verdict."""

    name: str = Field(description="The check: relay, relay-owner-key, postgres, storage, endpoint-secrets, "
                                  "images, trust-store, agent-egress, grading-phase, verifier-deps, "
                                  "tls-interception (docs/egress.md).")
    verdict: str = Field(description="passed, skipped (the check could not see; detail starts 'cannot see:') "
                                     "or failed (a sign of breakage).")
    detail: str = Field("", max_length=300, description="What was seen, in one line (never a secret).")


class PreflightStatus(StatusModel):
    """The checks run once before the sweep's first trial (docs/preflight.md#checks)."""

    passed: bool = Field(description="No check failed; trials may start.")
    checked_at: Timestamp | None = Field(None, description="When the checks last ran.")
    checks: list[PreflightCheck] = Field(
        default_factory=list, max_length=16, description="One entry per check, in the order they ran."
    )
    stack: StackDigests | None = Field(
        None, description="The stack the canary installed (recorded in lock.json); unset when it did not start."
    )


class ImagesStatus(StatusModel):
    """The sweep's images pulled ahead onto the nodes its trials may run on (docs/registry.md#images-pulled-ahead)."""

    nodes: int = Field(0, ge=0, description="Nodes a trial pod could run on, pulled to.")
    wanted: int = Field(0, ge=0, description="Images wanted there now: the stack's, the operator's and the next trials' task images.")
    pulled: int = Field(0, ge=0, description="(image, node) pairs of the wanted images already on their node.")
    pulling: int = Field(0, ge=0, description="Pull pods in flight (at most the operator's prepull concurrency).")
    pull_pods: int = Field(0, ge=0, description="Pull pods this sweep created so far.")
    failed: list[StatusText] = Field(
        default_factory=list, max_length=8,
        description="'<image>: <cause>' of pulls that failed; those images are not tried again ahead of their trials.")
    warm: int = Field(0, ge=0, description="Warm trial pods waiting for their trial (docs/warm-pods.md).")


class BuzzSweepStatus(StatusModel):
    """Progress of a sweep. Size is independent of the number of trials."""

    observed_generation: int | None = Field(None, ge=0, description="metadata.generation last acted on.")
    condition_hash: str | None = Field(None, description="sha256 of the canonical condition manifest.")
    condition_short: str | None = Field(
        None, description="'<condition>@<hash[:8]>' for display, as the seed summariser groups results."
    )
    pending: int = Field(0, ge=0, description="Trials planned but not yet running (incl. not yet created).")
    running: int = Field(0, ge=0, description="Trials between provisioning and bundling.")
    succeeded: int = Field(0, ge=0, description="Trials that finished and were scored.")
    failed: int = Field(
        0, ge=0, description="Trials that ended without a usable score, or failed their outcome."
    )
    broken: int = Field(0, ge=0, description="Trials excluded from scores (broken evidence or verifier).")
    total: int = Field(0, ge=0, description="All planned trials: tasks × attempts.")
    mean_reward: float | None = Field(None, description="Mean reward over scored trials (broken excluded).")
    pass_at_k: dict[str, float] = Field(
        default_factory=dict, description="pass@k by k (unbiased estimator, averaged over tasks)."
    )
    cost_usd: CostRange = Field(
        default_factory=CostRange, alias="costUSD", description="Spend of all trials so far."
    )
    shown: Shown | None = Field(None, description=SHOWN_DESCRIPTION)
    conditions: list[Condition] = Field(
        default_factory=list,
        description="Accepted, Running, Suspended, BudgetExhausted, Complete, Failed.",
        json_schema_extra=CONDITIONS_LIST_EXTRA,
    )
    waiting: Waiting | None = Field(None, description="Why no more trials start right now, when some wait.")
    summary_url: str | None = Field(None, alias="summaryURL", description="Where summary.json was written.")
    summary_digest: str | None = Field(
        None, description="Digest of the finished trials' results in the summary.json last written."
    )
    lock_digest: str | None = Field(
        None, description="sha256 of the lock.json (task, prompt and image digests) this sweep runs under."
    )
    preflight: PreflightStatus | None = Field(None, description="Preflight checks before the first trial.")
    images: ImagesStatus | None = Field(None, description="Images pulled ahead and warm pods.")
    power: PowerStatus | None = Field(
        None, description="Whether tasks × attempts detect spec.comparison's difference.")
    started_at: Timestamp | None = Field(None, description="When the first trial was admitted.")
    finished_at: Timestamp | None = Field(None, description="When the last trial reached a terminal phase.")
    kopf: dict[str, Any] | None = Field(
        None, description=KOPF_STATUS_DESCRIPTION, json_schema_extra=PRESERVE_UNKNOWN
    )

    @model_serializer(mode="wrap")
    def _with_shown(self, handler: SerializerFunctionWrapHandler) -> Any:
        # derived on every write, so it never lags the exact figures it rounds
        data = handler(self)
        if isinstance(data, dict):
            data["shown"] = shown(self.mean_reward, self.cost_usd)
        return data
