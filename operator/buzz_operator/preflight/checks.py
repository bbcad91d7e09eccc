"""Preflight verdicts, pure: what each raw observation means, and what the sweep does with them.

A check that cannot see says so: its verdict is `skipped` and its detail starts `cannot see:`
with why — a failure to observe, never a pass — and the sweep proceeds; only a positive sign of
breakage (`failed`) stops it, with a reason that names the check (docs/preflight.md#verdicts: the seed skipped
its container check when Docker could not run it, and its TLS check on an unknown issuer).

The canary sees what trials get (docs/egress.md): it carries the trial pod's policy labels, so
`agent-egress` is what the agents phase reaches (the relay, the condition's endpoints), and after
`grading-phase` relabelled it as a trial pod is relabelled once its agents stop, `verifier-deps`
and `tls-interception` are what the verifier's phase reaches — seen by the operator image's own
probe (probe.py) in the pod's network, so a task image without curl hides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from buzz_operator.api.stack import StackDigests
from buzz_operator.api.sweep import PreflightCheck, PreflightStatus
from buzz_operator.pod import state as pod_state
from buzz_operator.pod.stack_install import REQUIRED, STACK_MANIFEST, ManifestError, parse_manifest

DETAIL_MAX = 300
# Seconds between two runs of a failed preflight: its canary pod must not churn every tick.
RETRY_AFTER_S = 30.0

RELAY = "relay"
RELAY_OWNER_KEY = "relay-owner-key"
POSTGRES = "postgres"
STORAGE = "storage"
ENDPOINT_SECRETS = "endpoint-secrets"
IMAGES = "images"
STACK = "stack"
TRUST_STORE = "trust-store"
AGENT_EGRESS = "agent-egress"
GRADING_PHASE = "grading-phase"
VERIFIER_DEPS = "verifier-deps"
TLS_INTERCEPTION = "tls-interception"
ORDER = (RELAY, RELAY_OWNER_KEY, POSTGRES, STORAGE, ENDPOINT_SECRETS, IMAGES, STACK, TRUST_STORE, AGENT_EGRESS,
         GRADING_PHASE, VERIFIER_DEPS, TLS_INTERCEPTION)
CANNOT_SEE = "cannot see: "
# The relay's name among the agent-egress targets (the rest are endpoints, probe.endpoint_targets).
RELAY_TARGET = "relay"

# docs/preflight.md#checks check_tls_not_intercepted: issuers of TLS-intercepting proxies (lowercased substrings).
INTERCEPTING_ISSUERS = ("cloudflare gateway", "zscaler", "netskope", "palo alto", "forcepoint", "bluecoat",
                        "blue coat", "mitmproxy", "charles proxy", "fiddler")
TLS_PROBE_HOST = "files.pythonhosted.org"  # the seed asked for PyPI's file host's issuer


class Verdict(StrEnum):
    PASSED = "passed"
    SKIPPED = "skipped"
    FAILED = "failed"


@dataclass(frozen=True)
class CheckResult:
    name: str
    verdict: Verdict
    detail: str = ""
    stack: StackDigests | None = None  # the stack check's reading, kept in status.preflight.stack

    def __post_init__(self) -> None:
        if self.name not in ORDER:
            raise ValueError(f"unknown preflight check {self.name!r}")

    @property
    def failed(self) -> bool:
        return self.verdict is Verdict.FAILED


def passed(name: str, detail: str = "") -> CheckResult:
    return CheckResult(name, Verdict.PASSED, detail)


def skipped(name: str, detail: str) -> CheckResult:
    return CheckResult(name, Verdict.SKIPPED, detail)


def cannot_see(name: str, why: str) -> CheckResult:
    """A check that could not observe what it checks: said as such, never a pass."""
    return CheckResult(name, Verdict.SKIPPED, CANNOT_SEE + why)


def failed(name: str, detail: str) -> CheckResult:
    return CheckResult(name, Verdict.FAILED, detail)


def trust_store_verdict(last_line: str) -> CheckResult:
    """SEED_TRUST_STORE's last line: present | seeded | failed (docs/corridor.md#trust-store)."""
    word = last_line.strip()
    if word in ("present", "seeded"):
        return passed(TRUST_STORE, word)
    if word == "failed":
        return failed(TRUST_STORE, "the task container's trust store could not be seeded from /opt/buzz")
    return cannot_see(TRUST_STORE, f"unexpected answer {word[:60]!r}")


def stack_verdict(manifest: str | None, field: str, refusal: str | None = None) -> CheckResult:
    """The canary's /opt/buzz/stack-digests.txt (None: it could not be read), which a successful
    install writes (the init container's, or mount image's run by the read), so its absence means
    every trial's launch would fail reading it too. ``field`` is the spec field the stack comes
    from; ``refusal`` the mount-image install's `stack: …` line, when it refused the image."""
    if manifest is None:
        return failed(STACK, f"{field}: {refusal.removeprefix('stack: ')}" if refusal
                      else f"{field}: the installed stack left no {STACK_MANIFEST}")
    try:
        digests = parse_manifest(manifest)
    except ManifestError as error:
        return failed(STACK, f"{field}: {error}")
    if REQUIRED not in digests.binaries:  # the install refuses this already; a stale image may not
        return failed(STACK, f"{field}: the stack has no bin/{REQUIRED} (found: {', '.join(sorted(digests.binaries))})")
    return CheckResult(STACK, Verdict.PASSED, f"{len(digests.binaries)} file(s) under bin/, digest "
                                              f"{digests.digest[:12]}", stack=digests)


def verifier_deps_verdict(last_line: str, *, outside_reachable: bool | None, network: str = "public") -> CheckResult:
    """INSTALL_VERIFIER_DEPS's last line, run in the grading phase: present | installed | unavailable (docs/corridor.md#collect).

    The seed required present or installed. `unavailable` while the grading phase reaches the
    outside (the probe saw a TLS issuer there) is the seed's main canary failure — the image or
    its trust store cannot install curl — and fails; while it reaches nothing outside it cannot
    be told apart from a sealed cluster whose verifiers bring their own tools, and says so.
    """
    word = last_line.strip()
    if word in ("present", "installed"):
        return passed(VERIFIER_DEPS, word)
    if word == "unavailable":
        if outside_reachable:
            return failed(VERIFIER_DEPS, "curl is missing from the task image and cannot be installed, although "
                                         "the grading phase reaches the outside")
        return cannot_see(VERIFIER_DEPS, f"curl is missing and could not be installed, and the grading phase "
                                         f"(task network {network}) reaches no outside to tell a broken image from "
                                         f"a sealed cluster")
    return cannot_see(VERIFIER_DEPS, f"unexpected answer {word[:60]!r}")


def tls_verdict(tls: Mapping[str, str] | None, *, network: str = "public", why_not: str = "") -> CheckResult:
    """The probe's TLS reading of TLS_PROBE_HOST in the grading phase ({"issuer"} or {"error"}):
    the issuer names no intercepting proxy. No connection means the check cannot see."""
    if tls is None:
        return cannot_see(TLS_INTERCEPTION, why_not or "the probe did not run")
    issuer = tls.get("issuer")
    if issuer is None:
        error = str(tls.get("error") or "no certificate")
        what = "does not resolve" if error == "dns" else f"is not reached ({error[:120]})"
        return cannot_see(TLS_INTERCEPTION, f"{TLS_PROBE_HOST} {what} from the grading phase (task network "
                                            f"{network})")
    lowered = issuer.lower()
    if any(name in lowered for name in INTERCEPTING_ISSUERS):
        return failed(TLS_INTERCEPTION, f"TLS to {TLS_PROBE_HOST} is intercepted (issuer {issuer[:120]})")
    return passed(TLS_INTERCEPTION, f"issuer {issuer[:120] or '(none named)'}")


def outside_reachable(tls: CheckResult) -> bool | None:
    return None if tls.verdict is Verdict.SKIPPED else True


def agent_egress_verdict(seen: Mapping[str, str] | None, *, why_not: str = "") -> CheckResult:
    """What the canary's agents phase reached, {target: open|refused|timeout|unreachable|dns}
    (probe.py; targets: RELAY_TARGET and `endpoint <name> (<VARIABLE>)`), None when it could not
    look. A target a trial pod's agents cannot reach is a breakage every trial would meet."""
    if seen is None:
        return cannot_see(AGENT_EGRESS, why_not or "the probe did not run")
    blocked = {name: state for name, state in seen.items() if state != "open"}
    if not blocked:
        endpoints = len(seen) - (RELAY_TARGET in seen)
        return passed(AGENT_EGRESS, f"the relay and {endpoints} endpoint URL(s) reached from the agents phase")
    where = []
    if RELAY_TARGET in blocked:
        where.append("trialNetworkPolicy.relay")
    if len(blocked) > (RELAY_TARGET in blocked):
        where.append("trialNetworkPolicy.endpoints")
    if "dns" in blocked.values():
        where.append("trialNetworkPolicy.dns/dnsResolvers (or an address: the cluster may have no DNS)")
    named = ", ".join(f"{name}: {state}" for name, state in sorted(blocked.items()))
    return failed(AGENT_EGRESS, f"a trial pod's agents cannot reach {named}; admit it in the chart's "
                                f"{', '.join(where)} (docs/egress.md)")


def grading_phase_verdict(labels_read: Mapping[str, str] | None, *, network: str, error: str = "",
                          relay_after: str | None = None) -> CheckResult:
    """Whether the canary could be relabelled into the grading phase as every trial pod is once
    its agents stop (the labels read back), and whether the relay closed to it then."""
    if labels_read is None:
        return failed(GRADING_PHASE, f"the pod could not be relabelled for grading, as every trial's collect step "
                                     f"must ({error[:160]}); the operator needs patch on pods")
    if relay_after is None:
        closed = ""
    elif relay_after == "open":
        closed = "; the relay is still reached (no policy enforces the phases here)"
    else:
        closed = "; the relay is closed to it"
    return passed(GRADING_PHASE, f"relabelled phase=grading, network={network}, read back{closed}")


# Secret types the kubelet reads registry credentials from (pod spec imagePullSecrets).
PULL_SECRET_TYPES = ("kubernetes.io/dockerconfigjson", "kubernetes.io/dockercfg")


def pull_secret_problem(types: Sequence[tuple[str, str | None]]) -> str | None:
    """What is wrong with spec.imagePullSecrets, given each named Secret's type (None: not found).

    The kubelet does not fail a pod whose pull Secret is missing or of another type: it pulls
    anonymously and the trial fails later as ImagePullFailed, far from the cause. So the images
    check looks first and names the entry.
    """
    for index, (name, kind) in enumerate(types):
        field = f"spec.imagePullSecrets[{index}].name"
        if kind is None:
            return f"{field}: Secret {name} not found in the sweep's namespace"
        if kind not in PULL_SECRET_TYPES:
            return f"{field}: Secret {name} is of type {kind}, not {PULL_SECRET_TYPES[0]}"
    return None


# Why a pull failed (pod/state.py names it from the kubelet's words)
PULL_DENIED, PULL_NOT_FOUND, PULL_UNREACHABLE, PULL_UNTRUSTED, PULL_NEVER = (
    pod_state.PULL_DENIED, pod_state.PULL_NOT_FOUND, pod_state.PULL_UNREACHABLE, pod_state.PULL_UNTRUSTED,
    pod_state.PULL_NEVER)
pull_cause = pod_state.pull_cause


@dataclass(frozen=True)
class ImageOrigin:
    """Where a task image reference comes from, so a failed pull says what to fix."""

    tasks: tuple[str, ...]
    pinned: bool  # task.toml environment.docker_image; else the operator's name for environment/Dockerfile


def task_image_detail(image: str, origin: ImageOrigin | None, reason: str, cause: str | None = None) -> str:
    """Why a task image did not start, and what provides it (docs/task-images.md): the operator
    never builds task images, so an image named after environment/Dockerfile must be built and
    pushed by the user; a pinned docker_image may need pull credentials. A ``cause`` that is not
    the image's absence (an unreachable or untrusted registry) is said instead of that advice."""
    if origin is None:
        return f"spec.taskImageRegistry: {image}: {f'{cause}: ' if cause else ''}{reason}"
    tasks = ", ".join(origin.tasks[:3]) + (f" and {len(origin.tasks) - 3} more" if len(origin.tasks) > 3 else "")
    if cause in (PULL_UNREACHABLE, PULL_UNTRUSTED):
        field = "environment.docker_image" if origin.pinned else "spec.taskImageRegistry"
        return f"{field}: task {tasks}: {image}: {cause}: {reason}"
    reason = f"{cause}: {reason}" if cause else reason
    # what to fix first and the kubelet's words last: a long pull error is what gets cut
    if origin.pinned:
        return (f"task {tasks}: environment.docker_image {image} (a private registry needs "
                f"spec.imagePullSecrets): {reason}")
    return (f"spec.taskImageRegistry: task {tasks}: {image} is built from its environment/Dockerfile, which "
            f"the operator does not build: build and push it (`buzzctl dataset images` lists each): {reason}")


def missing_endpoint_keys(wanted: dict[str, str], stored_keys: Iterable[str]) -> list[str]:
    """`wanted` maps api_key_env -> endpoint; the env names the Secret lacks, sorted."""
    have = set(stored_keys)
    return sorted(name for name in wanted if name not in have)


def first_failure(results: Sequence[CheckResult]) -> CheckResult | None:
    return next((r for r in results if r.failed), None)


def failure_reason(result: CheckResult) -> str:
    """CamelCase reason naming the check: storage -> PreflightStorageFailed."""
    return "Preflight" + "".join(part.capitalize() for part in result.name.split("-")) + "Failed"


def failure_message(result: CheckResult) -> str:
    return f"preflight check {result.name} failed: {result.detail}"[:DETAIL_MAX]


def to_status(results: Sequence[CheckResult], now: datetime) -> PreflightStatus:
    return PreflightStatus(
        passed=first_failure(results) is None, checked_at=now,
        checks=[PreflightCheck(name=r.name, verdict=r.verdict.value, detail=r.detail[:DETAIL_MAX] or r.verdict.value)
                for r in results],
        stack=next((r.stack for r in results if r.stack is not None), None),
    )


def from_status(status: PreflightStatus) -> list[CheckResult]:
    return [CheckResult(c.name, Verdict(c.verdict), c.detail) for c in status.checks if c.name in ORDER]


def blocking(status: PreflightStatus) -> CheckResult | None:
    """The failed check that holds the sweep back, None once preflight passed."""
    return None if status.passed else first_failure(from_status(status))


def due(status: PreflightStatus | None, now: datetime) -> bool:
    """Whether the checks should run now: never run, or failed long enough ago."""
    if status is None or status.checked_at is None:
        return True
    if status.passed:
        return False
    return (now - status.checked_at).total_seconds() >= RETRY_AFTER_S
