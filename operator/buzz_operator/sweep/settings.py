"""The operator's own settings for every sweep (chart values, read from its environment): the
default agent stack, the operator image, the operator-wide and per-endpoint caps on active
trials, and the default Kueue LocalQueue. Pure: the environment is handed in."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from pydantic import ValidationError

from buzz_operator.api.stack import StackLayout, StackMount, StackSource
from buzz_operator.api.sweep import (
    MAX_WARM_PODS,
    QUEUE_NAME,
    QUEUE_NAME_MAX,
    RUNTIME_CLASS,
    RUNTIME_CLASS_MAX,
    BuzzSweepSpec,
)

MAX_PREPULL_CONCURRENCY = 16
# The stand-in stack (images/stack, hack/images.sh) in the folder layout: the demo's default.
DEFAULT_STACK = StackSource(image="docker.io/buzz/stack:dev", layout=StackLayout.FOLDER)


@dataclass(frozen=True)
class OperatorSettings:
    """Operator-wide knobs (chart values / environment)."""

    stack: StackSource = field(default_factory=lambda: DEFAULT_STACK)
    operator_image: str = "docker.io/buzz/operator:dev"
    operator_cap: int | None = None
    endpoint_caps: Mapping[str, int] | None = None
    queue_name: str | None = None  # BUZZ_DEFAULT_QUEUE_NAME: the Kueue LocalQueue of sweeps that name none
    # BUZZ_LIMIT_MULTIPLE (chart value resources.limitMultiple): the headroom of sweeps that set none
    limit_multiple: float = 1.0
    # BUZZ_TRIAL_RUNTIME_CLASS (chart value trialRuntimeClassName): the RuntimeClass of the trial
    # pods of sweeps that name none (docs/isolation.md#gvisor); None: the cluster's default runtime
    runtime_class_name: str | None = None
    # BUZZ_PREPULL_CONCURRENCY (chart value prepull.concurrency): pull pods in flight per sweep
    # (docs/registry.md#images-pulled-ahead); 0 pulls nothing ahead
    prepull_concurrency: int = 2
    # BUZZ_WARM_PODS (chart value warmPods): the warm pods of sweeps that set no spec.warmPods
    warm_pods: int = 0

    @classmethod
    def from_env(cls, environ: Mapping[str, str]) -> OperatorSettings:
        """BUZZ_STACK_IMAGE, BUZZ_STACK_LAYOUT (sprig | folder, default folder), BUZZ_STACK_MOUNT
        (copy | image, default copy), BUZZ_STACK_BINARY_PATH (sprig), BUZZ_OPERATOR_IMAGE, BUZZ_MAX_ACTIVE_TRIALS (operator-wide cap) and
        BUZZ_ENDPOINT_CAPS ("<endpoint>=<n>,...") and BUZZ_DEFAULT_QUEUE_NAME (the Kueue LocalQueue of
        sweeps without spec.queueName, docs/queueing.md); a malformed value stops the operator at
        start-up with the variable named, rather than running without the cap it was given."""
        def positive(name: str, text: str) -> int:
            if not text.strip().isdigit() or int(text) < 1:
                raise ValueError(f"{name}: {text!r} is not a positive integer")
            return int(text)

        caps: dict[str, int] = {}
        for item in filter(None, (part.strip() for part in environ.get("BUZZ_ENDPOINT_CAPS", "").split(","))):
            endpoint, sep, number = item.rpartition("=")
            if not sep or not endpoint:
                raise ValueError(f"BUZZ_ENDPOINT_CAPS: {item!r} is not <endpoint>=<n>")
            caps[endpoint.strip()] = positive("BUZZ_ENDPOINT_CAPS", number)
        cap = environ.get("BUZZ_MAX_ACTIVE_TRIALS", "").strip()
        queue = environ.get("BUZZ_DEFAULT_QUEUE_NAME", "").strip()
        if queue and (len(queue) > QUEUE_NAME_MAX or not re.match(QUEUE_NAME, queue)):
            raise ValueError(f"BUZZ_DEFAULT_QUEUE_NAME: {queue[:80]!r} is not a LocalQueue name that fits a label value")
        runtime_class = environ.get("BUZZ_TRIAL_RUNTIME_CLASS", "").strip()
        if runtime_class and (len(runtime_class) > RUNTIME_CLASS_MAX or not re.match(RUNTIME_CLASS, runtime_class)):
            raise ValueError(f"BUZZ_TRIAL_RUNTIME_CLASS: {runtime_class[:80]!r} is not a RuntimeClass name (a DNS subdomain)")
        def count(name: str, default: int, most: int) -> int:
            text = environ.get(name, "").strip()
            if not text:
                return default
            if not text.isdigit() or int(text) > most:
                raise ValueError(f"{name}: {text!r} is not a whole number from 0 to {most}")
            return int(text)

        return cls(
            prepull_concurrency=count("BUZZ_PREPULL_CONCURRENCY", cls.prepull_concurrency, MAX_PREPULL_CONCURRENCY),
            warm_pods=count("BUZZ_WARM_PODS", cls.warm_pods, MAX_WARM_PODS),
            runtime_class_name=runtime_class or None,
            limit_multiple=limit_multiple(environ.get("BUZZ_LIMIT_MULTIPLE", "")),
            stack=default_stack(environ),
            operator_image=environ.get("BUZZ_OPERATOR_IMAGE") or cls.operator_image,
            operator_cap=positive("BUZZ_MAX_ACTIVE_TRIALS", cap) if cap else None,
            endpoint_caps=caps or None,
            queue_name=queue or None,
        )


def with_runtime_class(spec: BuzzSweepSpec, settings: OperatorSettings) -> BuzzSweepSpec:
    """The sweep as it runs: its own spec.runtimeClassName, else the operator's default, so the
    preflight's canary and every trial pod run under the same runtime."""
    if spec.runtime_class_name is not None or settings.runtime_class_name is None:
        return spec
    return spec.model_copy(update={"runtime_class_name": settings.runtime_class_name})


def limit_multiple(text: str) -> float:
    """BUZZ_LIMIT_MULTIPLE: a number from 1 to 100, 1 when empty."""
    if not text.strip():
        return 1.0
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 1 <= value <= 100:
        raise ValueError(f"BUZZ_LIMIT_MULTIPLE: {text!r} is not a number from 1 to 100")
    return value


def default_stack(environ: Mapping[str, str]) -> StackSource:
    """The operator's default stack (the chart's `stack` value) from its environment."""
    layout = environ.get("BUZZ_STACK_LAYOUT", "").strip() or StackLayout.FOLDER.value
    if layout not in {member.value for member in StackLayout}:
        raise ValueError(f"BUZZ_STACK_LAYOUT: {layout!r} is not one of sprig, folder")
    mount = environ.get("BUZZ_STACK_MOUNT", "").strip() or StackMount.COPY.value
    if mount not in {member.value for member in StackMount}:
        raise ValueError(f"BUZZ_STACK_MOUNT: {mount!r} is not one of copy, image")
    try:
        return StackSource(image=environ.get("BUZZ_STACK_IMAGE", "").strip() or DEFAULT_STACK.image,
                           layout=StackLayout(layout), mount=StackMount(mount),
                           binary_path=environ.get("BUZZ_STACK_BINARY_PATH", "").strip() or None)
    except ValidationError as error:
        raise ValueError(f"BUZZ_STACK_BINARY_PATH: {error.errors()[0].get('msg', 'invalid')}") from None
