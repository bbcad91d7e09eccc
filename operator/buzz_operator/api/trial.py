"""BuzzTrial: one attempt of one task under one condition, walking the corridor
provision → launch → run → collect → grade → bundle → teardown.

The spec holds everything fixed when the sweep planned the trial (image, resources,
deadlines), so a trial can be resumed by any operator without re-reading the dataset. The
status records what each step made before the next begins, which is what makes every step
idempotent across operator restarts.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import (
    AliasChoices,
    Field,
    ModelWrapValidatorHandler,
    PrivateAttr,
    SerializerFunctionWrapHandler,
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
)
from buzz_operator.api.compose import TaskCompose
from buzz_operator.api.rules import exactly_one, rule, validations
from buzz_operator.api.secret_text import OptionalStatusText, StatusText
from buzz_operator.api.shown import SHOWN_DESCRIPTION, Shown, shown
from buzz_operator.api.stack import StackDigests, StackSource, folder_stack
from buzz_operator.api.sweep import (
    DEFAULT_QUEUE_SECONDS,
    MAX_PULL_SECRETS,
    QUEUE_NAME,
    QUEUE_NAME_MAX,
    RetryPolicy,
)

# maxRetries is at most 20 (RetryPolicy), so a trial has at most 21 tries on record.
MAX_FAILED_TRIES = 21
SHA256_HEX = r"^[0-9a-f]{64}$"


class Phase(StrEnum):
    """The corridor, in order. Only Succeeded and Failed are terminal."""

    PENDING = "Pending"
    PROVISIONING = "Provisioning"
    LAUNCHING = "Launching"
    RUNNING = "Running"
    COLLECTING = "Collecting"
    GRADING = "Grading"
    BUNDLING = "Bundling"
    SUCCEEDED = "Succeeded"
    FAILED = "Failed"


class Outcome(StrEnum):
    """How the trial ended, in the seed summariser's vocabulary (docs/failures.md#outcome-words)."""

    OK = "ok"
    TIMEOUT = "timeout"
    LAUNCH = "launch"
    ERROR = "error"
    BROKEN = "broken"


class FailureClass(StrEnum):
    """infra is retried; outcome is final and scored; broken is final and excluded from scores."""

    INFRA = "infra"
    OUTCOME = "outcome"
    BROKEN = "broken"


class TrialResources(SpecModel):
    """Task container resources from task.toml (after the condition's environment overrides), and
    the room the sweep gives around them (docs/resources.md#headroom). By default requests equal
    limits equal task.toml's, so the pod gets Guaranteed QoS and is evicted last."""

    cpus: float = Field(gt=0, le=512, description="CPU cores for the task container.")
    memory_mb: int = Field(gt=0, alias="memoryMB", description="Memory for the task container, MiB.")
    storage_mb: int | None = Field(
        None, gt=0, alias="storageMB", description="Ephemeral storage for the task container, MiB."
    )
    cpu_request: float | None = Field(
        None, gt=0, le=512,
        description="CPU the pod requests when below task.toml's (sweep resources.requestFraction); unset = cpus.",
    )
    memory_request_mb: int | None = Field(
        None, gt=0, alias="memoryRequestMB",
        description="Memory the pod requests when below task.toml's (sweep resources.requestFraction); unset = memoryMB.",
    )
    limit_multiple: float = Field(
        1.0, ge=1, le=100, description="The CPU and memory limits as a multiple of cpus and memoryMB (sweep resources)."
    )
    unlimited: bool = Field(False, description="No CPU or memory limit (sweep resources.unlimited).")

    def headroom(self) -> dict[str, Any]:
        """The room this box gives, as lock.json and result.json record it (docs/resources.md#headroom)."""
        requested = self.cpu_request / self.cpus if self.cpu_request is not None else 1.0
        return {"limitMultiple": None if self.unlimited else self.limit_multiple,
                "cpuRequestFraction": round(requested, 4),
                "memoryRequestFraction": round((self.memory_request_mb or self.memory_mb) / self.memory_mb, 4)}


class TrialDeadlines(SpecModel):
    """Per-step deadlines in seconds; the agent and verifier ones already scaled by the sweep's timeoutMultiplier."""

    schedule_seconds: int = Field(gt=0, description="Pod scheduled, images pulled and containers started.")
    setup_seconds: int = Field(gt=0, description="Stack installed, forwarder up, every agent subscribed.")
    agent_seconds: int = Field(
        gt=0, description="From the task message until DONE; agents are stopped after."
    )
    agent_source: str = Field(
        description="Which limit set agentSeconds: manifest (trial_budget.timeout_seconds) or task (task.toml)."
    )
    collect_seconds: int = Field(gt=0, description="Usage settle, stopping agents, logs and evidence export.")
    verifier_seconds: int = Field(gt=0, description="The task's verifier (tests/test.sh).")
    upload_seconds: int = Field(gt=0, description="Writing the bundle to object storage.")
    queue_seconds: int | None = Field(
        None, gt=0,
        description="With queueName: how long the pod may wait for Kueue's admission before the try fails "
                    f"as QueueWaitExceeded (infra); {DEFAULT_QUEUE_SECONDS} when unset. Not scaled by "
                    "timeoutMultiplier, and never part of the agents' time.",
    )

    def queue_wait_s(self, queued: bool) -> int:
        """The admission wait a try's pod is allowed: none unless it is queued through Kueue."""
        return (self.queue_seconds or DEFAULT_QUEUE_SECONDS) if queued else 0


# A trial planned by an operator before spec.stack existed names its stack by stackImage only.
TRIAL_STACK_SOURCES = ("stack", "stack_image")


class BuzzTrialSpec(
    SpecModel,
    json_schema_extra=validations(
        rule(
            # The sweep fixes everything a trial runs at planning and the operator never writes a
            # trial's spec again; an edit would run later steps, or a retry, on inputs other than
            # those the sweep's lock.json records. A transition rule: it has no pydantic twin, as a
            # model sees one object, never the one stored before it.
            "self == oldSelf",
            "spec is immutable: a BuzzTrial runs what its sweep planned; delete it and the sweep plans it again",
            reason="FieldValueForbidden",
        ),
        exactly_one("spec", TRIAL_STACK_SOURCES),
    ),
):
    """One attempt of one task under one condition, as planned by its BuzzSweep."""

    sweep_name: str = Field(min_length=1, description="The BuzzSweep that planned this trial.")
    task: str = Field(min_length=1, description="Task name within the sweep's dataset.")
    task_digest: str = Field(
        pattern=SHA256_HEX, description="sha256 (hex) of the task directory this trial runs."
    )
    attempt: int = Field(ge=1, description="Which of the k independent attempts (1-based).")
    condition_hash: str = Field(pattern=SHA256_HEX, description="sha256 of the canonical condition manifest.")
    image: str = Field(min_length=1, description="Task image reference (by digest where possible).")
    stack: StackSource | None = Field(None, description="The agent stack installed at /opt/buzz.")
    stack_image: str | None = Field(
        None, min_length=1,
        description="Deprecated (trials planned before spec.stack): a folder-layout stack image.",
    )
    operator_image: str = Field(min_length=1, description="Image that provides relay-forwarder.")
    image_pull_policy: ImagePullPolicy = Field(
        ImagePullPolicy.IF_NOT_PRESENT, description="Pull policy for every container of the trial pod."
    )
    image_pull_secrets: list[LocalObjectRef] | None = Field(
        None, max_length=MAX_PULL_SECRETS,
        description="Secrets for pulling the trial pod's images, copied from the sweep at planning.",
    )
    runtime_class_name: str | None = Field(None, min_length=1, description="RuntimeClass for the trial pod.")
    queue_name: str | None = Field(
        None, pattern=QUEUE_NAME, max_length=QUEUE_NAME_MAX,
        description="Kueue LocalQueue the trial pod is submitted to (its kueue.x-k8s.io/queue-name label); "
                    "copied from the sweep's queueName or the operator default at planning.",
    )
    endpoints: list[str] = Field(
        default_factory=list, description="Model endpoints the roster uses (per-endpoint concurrency caps)."
    )
    resources: TrialResources = Field(description="Task container resources.")
    task_env: dict[str, str] | None = Field(
        None,
        description="task.toml [environment] env: literal variables set on the task container, so every "
                    "command of the agents and the verifier sees them (docs/task-toml.md#environment-variables).",
    )
    working_dir: str | None = Field(
        None, pattern=r"^/",
        description="task.toml [environment] workdir: the task container's working directory, replacing the "
                    "image's WORKDIR for every command.",
    )
    compose: TaskCompose | None = Field(
        None,
        description="environment/docker-compose.yaml: the services that run as containers beside the task "
                    "container (docs/task-toml.md#compose).",
    )
    deadlines: TrialDeadlines = Field(description="Per-step deadlines.")
    retry: RetryPolicy = Field(
        default_factory=RetryPolicy,
        description="Infra-failure retries, copied from the sweep at planning.",
        json_schema_extra={"default": {}},
    )

    @model_validator(mode="after")
    def _one_stack(self) -> BuzzTrialSpec:
        if self.stack is not None and self.stack_image is not None:
            raise ValueError("needs exactly one of stack, stackImage (found: stack, stackImage)")
        if self.stack is None and self.stack_image is None:
            raise ValueError("needs exactly one of stack, stackImage (found: none)")
        return self

    @property
    def stack_source(self) -> StackSource:
        return self.stack if self.stack is not None else folder_stack(str(self.stack_image))


class WaitSource(StrEnum):
    """Who holds a waiting trial pod back."""

    KUEUE = "kueue"
    SCHEDULER = "scheduler"
    KUBELET = "kubelet"


class PodWaiting(StatusModel):
    """Why the current try's pod is not running yet, and where it waits (docs/queueing.md#waiting-reasons)."""

    reason: str = Field(description="CamelCase cause: QueuedInKueue, QueueInadmissible, KueueAdmitting, "
                                    "SchedulingGated, Unschedulable, PullingImage, StartingContainers.")
    source: WaitSource = Field(description="Who holds the pod: kueue, scheduler or kubelet.")
    message: StatusText = Field("", description="The holder's own words (Kueue's Workload condition, the "
                                         "scheduler's PodScheduled message, the image being pulled).")
    since: Timestamp = Field(description="When the pod was created: the wait counts from here.")
    seconds: int = Field(0, ge=0, description="Seconds waited when this was written.")
    queue: str | None = Field(None, description="The Kueue LocalQueue (spec.queueName).")
    cluster_queue: str | None = Field(None, description="The ClusterQueue the LocalQueue feeds.")
    workload: str | None = Field(None, description="Kueue's Workload for the pod.")
    position: int | None = Field(
        None, ge=1, description="1-based place among the LocalQueue's pending Workloads in this namespace, "
                                "in Kueue's order (priority, then creation).")
    pending: int | None = Field(None, ge=0, description="Workloads pending in the LocalQueue (its status).")


class PhaseTimes(StatusModel):
    """When the current try entered each phase (earlier tries are in attempts)."""

    pending: Timestamp | None = Field(None, description="Entered Pending (created or queued for retry).")
    provisioning: Timestamp | None = Field(None, description="Entered Provisioning.")
    launching: Timestamp | None = Field(None, description="Entered Launching.")
    running: Timestamp | None = Field(None, description="Entered Running (task message about to be posted).")
    collecting: Timestamp | None = Field(None, description="Entered Collecting.")
    grading: Timestamp | None = Field(None, description="Entered Grading.")
    bundling: Timestamp | None = Field(None, description="Entered Bundling.")
    finished: Timestamp | None = Field(None, description="Reached Succeeded or Failed.")


class PodStart(StatusModel):
    """How the current try's pod came to run (docs/warm-pods.md#measured): warm or cold, the wait
    the trial saw, and the kubelet's pulls for it, apart from that wait when the pod was warm."""

    warm: bool = Field(False, description="The pod was made ahead by the sweep and claimed by this trial.")
    seconds: float = Field(0.0, ge=0, description="From the launch's first call until every container ran.")
    pull_seconds: float | None = Field(
        None, ge=0, description="The kubelet's time pulling this pod's images (its Pulled events); for a warm pod "
                                "spent before the claim. Unset when its Events could not be read.")
    pulled: int = Field(0, ge=0, description="Images the kubelet pulled for the pod.")
    present: int = Field(0, ge=0, description="Images already on the node.")


class Tokens(StatusModel):
    """Token totals from relay receipts, reconciled after the agents stopped."""

    input: int = Field(0, ge=0, description="Input tokens, including cached input.")
    output: int = Field(0, ge=0, description="Output tokens, including reasoning.")


class FailedTry(StatusModel):
    """One earlier try of this trial that ended in an infra failure. Never overwritten."""

    retry: int = Field(ge=0, description="Retry index of that try (0 = the first try).")
    phase: Phase = Field(description="Phase the try failed in.")
    reason: str = Field(description="CamelCase failure reason.")
    failure_class: FailureClass = Field(description="Always infra for a retried try.")
    message: StatusText = Field("", description="Details of the failure.")
    pod: str | None = Field(None, description="Pod of that try.")
    bundle_url: str | None = Field(
        None, alias="bundleURL", description="Partial evidence of that try, if any."
    )
    finished_at: Timestamp | None = Field(None, description="When the try failed.")


class ResourceUsage(StatusModel):
    """What the task container's cgroup says one phase used (docs/resources.md#telemetry). A
    figure the kernel does not give is unset."""

    cgroup: int = Field(description="The cgroup version read: 1 or 2.")
    peak_memory_mb: float | None = Field(
        None, alias="peakMemoryMB", description="The container's peak memory so far, MiB (not reset between phases)."
    )
    memory_limit_mb: float | None = Field(
        None, alias="memoryLimitMB", description="The container's memory limit, MiB; unset when it has none."
    )
    oom_kills: int | None = Field(None, ge=0, description="Processes the kernel killed for memory in this phase.")
    cpu_seconds: float | None = Field(None, ge=0, description="CPU time used in this phase.")
    periods: int | None = Field(None, ge=0, description="CFS periods in this phase (counted under a CPU limit).")
    throttled_periods: int | None = Field(None, ge=0, description="Periods in which the container was throttled.")
    throttled_seconds: float | None = Field(None, ge=0, description="Time the container was throttled.")


class TrialResourceUsage(StatusModel):
    """The current try's resource use, by phase."""

    agents: ResourceUsage | None = Field(
        None, description="From the container's start until the agents stopped: stack setup and the agents' run."
    )
    verifier: ResourceUsage | None = Field(None, description="The verifier's run, its dependencies' install excluded.")


class RegradeResult(StrEnum):
    REGRADED = "regraded"
    NOT_REGRADABLE = "not-regradable"
    FAILED = "failed"


class RegradeRecord(StatusModel):
    """The last re-run of this trial's verifier on its recorded evidence (spec.regrade)."""

    generation: int = Field(ge=1, description="The BuzzSweep generation that asked for it.")
    result: RegradeResult = Field(description="regraded, not-regradable or failed.")
    previous_reward: float | None = Field(None, description="The reward before this regrade.")
    reason: str | None = Field(None, description="CamelCase reason when not regraded.")
    message: OptionalStatusText = Field(None, description="Details for the reason.")
    bundle_url: str | None = Field(
        None, alias="bundleURL", description="Where the regrade's verifier output is (regrades/<generation>/)."
    )
    finished_at: Timestamp | None = Field(None, description="When the regrade ended.")


# A status holds the first findings only: the bundle's summary.json lists every one.
MAX_SECRET_LOCATIONS = 10


class SecretFindings(StatusModel):
    """What the secret scan found in the trial's bundle (ledger/secret_scan.py): kinds, files
    and lines, never the matched text, which would copy the secret into the status."""

    count: int = Field(0, ge=0, description="Suspected secrets: credential patterns and the trial's own keys.")
    kinds: dict[str, int] = Field(
        default_factory=dict, description="Findings by kind (trial-credential, openai-key, nostr-private-key, ...)."
    )
    locations: list[str] = Field(
        default_factory=list, max_length=MAX_SECRET_LOCATIONS,
        description="The first findings as <file>:<line> (<kind>), files relative to the bundle's agent/buzz/.",
    )
    unreadable: int = Field(0, ge=0, description="Bundle files the scan could not read (so not known clean).")
    scanned: bool = Field(True, description="False when the bundle could not be written, so it was never scanned.")
    quarantined: bool = Field(False, description="The bundle was stored under the quarantine prefix.")


class BuzzTrialStatus(StatusModel):
    """Where the trial is in its corridor and what each step made."""

    observed_generation: int | None = Field(None, ge=0, description="metadata.generation last acted on.")
    phase: Phase = Field(
        Phase.PENDING, description="Current corridor phase (derived convenience; see conditions)."
    )
    conditions: list[Condition] = Field(
        default_factory=list,
        description="Provisioned, Launched, AgentsFinished, Collected, Verified, Bundled (one per finished step), "
                    "SecretsFound, Retrying, Failed, Released.",
        json_schema_extra=CONDITIONS_LIST_EXTRA,
    )
    phase_times: PhaseTimes = Field(default_factory=PhaseTimes, description="When each phase began.")
    trial_id: str | None = Field(None, description="Relay trial id (uuid5) of the current try.")
    tenant_secret: str | None = Field(None, description="Per-try Secret holding seat keys and auth tags.")
    channel_id: str | None = Field(None, description="Buzz channel of the current try.")
    pod: str | None = Field(None, description="Pod of the current try.")
    pod_start: PodStart | None = Field(None, description="How the current try's pod came to run.")
    stack: StackDigests | None = Field(
        None, description="Digests of the stack the current try's pod installed (read at launch)."
    )
    task_event_id: str | None = Field(None, description="Event id of the task message posted by the user.")
    completion_message_id: str | None = Field(
        None, description="Event id of the orchestrator's DONE: message."
    )
    outcome: Outcome | None = Field(None, description="ok, timeout, launch, error or broken.")
    failure_class: FailureClass | None = Field(
        None, description="Set when the trial failed: infra, outcome or broken."
    )
    waiting: PodWaiting | None = Field(
        None, description="While the current try's pod waits to run: why, where and for how long; "
                          "cleared once it runs or the wait ends.",
    )
    reason: str | None = Field(
        None, description="CamelCase reason of the last notable event (e.g. AgentTimeout)."
    )
    message: OptionalStatusText = Field(None, description="Details for the reason.")
    reward: float | None = Field(None, description="Primary reward from the verifier.")
    rewards: dict[str, float] = Field(default_factory=dict, description="Every numeric verifier metric.")
    cost_usd: CostRange = Field(default_factory=CostRange, alias="costUSD", description="Spend of all tries.")
    shown: Shown | None = Field(None, description=SHOWN_DESCRIPTION)
    tokens: Tokens = Field(default_factory=Tokens, description="Token totals of all tries.")
    retries: int = Field(
        0, ge=0, description="Infra retries so far (new tries, each with a fresh pod and tenant)."
    )
    step_retries: int = Field(
        0, ge=0, description="Retries of the current post-run step in place (the agents' run is kept)."
    )
    retry_after: Timestamp | None = Field(
        None, description="Earliest time the next try or step retry may start."
    )
    failed_tries: list[FailedTry] = Field(
        default_factory=list,
        max_length=MAX_FAILED_TRIES,
        # `attempts` until 2026-12-05, when "attempt" came to mean only one of the k samples
        # (docs/design.md#words); a status written then is still read
        validation_alias=AliasChoices("failedTries", "failed_tries", "attempts"),
        serialization_alias="failedTries",
        description="Earlier tries that failed on infra, oldest first.",
    )
    bundle_url: str | None = Field(
        None, alias="bundleURL", description="Where this trial's evidence bundle is."
    )
    secret_findings: SecretFindings | None = Field(
        None, description="Set when the bundle's secret scan found something or could not look (condition SecretsFound)."
    )
    regrade: RegradeRecord | None = Field(
        None, description="The last regrade of this trial's verifier on its recorded evidence."
    )
    resource_usage: TrialResourceUsage | None = Field(
        None, description="What the current try's task container used, by phase, read from its cgroup."
    )
    kopf: dict[str, Any] | None = Field(
        None, description=KOPF_STATUS_DESCRIPTION, json_schema_extra=PRESERVE_UNKNOWN
    )

    # read from a status that still names its failed tries `attempts`: the next write carries them
    # as failedTries (trial/state.status_patch), before the API server prunes the old field
    _legacy_tries: bool = PrivateAttr(False)

    @model_validator(mode="wrap")
    @classmethod
    def _note_legacy_tries(cls, data: Any, handler: ModelWrapValidatorHandler[BuzzTrialStatus]) -> BuzzTrialStatus:
        status = handler(data)
        if isinstance(data, dict) and "attempts" in data and "failedTries" not in data:
            status._legacy_tries = True
        return status

    @model_serializer(mode="wrap")
    def _with_shown(self, handler: SerializerFunctionWrapHandler) -> Any:
        # derived on every write, so it never lags the exact figures it rounds
        data = handler(self)
        if isinstance(data, dict):
            data["shown"] = shown(self.reward, self.cost_usd)
        return data
