"""Preflight I/O: runs each check of checks.py against the real relay, Postgres, store, Secrets
and cluster, once before a sweep's first trial, and records the verdicts in status.preflight.

The canary runs the setup, trust-store and verifier-deps commands the trials run (the very
strings of pod/shell.py, through the same exec adapter), so a broken image or trust
store stops the sweep before it spends anything, exactly where a trial would have broken. It
also reads the digests of the stack it installed, which the sweep records in lock.json.

It proves the network trials get (docs/egress.md): it carries the trial pod's policy labels, its
probe container looks at the relay and the condition's endpoint URLs from the agents phase, then
it is relabelled into the grading phase by the trials' own function (trial/drive/egress_phase.py) with
the first task's network, and the verifier-deps and TLS checks run there.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from kubernetes_asyncio.client.exceptions import ApiException
from websockets.exceptions import InvalidHandshake, InvalidStatus

from buzz_operator.api.common import SWEEPS
from buzz_operator.api.stack import StackMount, StackSource
from buzz_operator.api.sweep import BuzzSweepSpec, BuzzSweepStatus, PreflightStatus
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset.task import Task
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import resolve
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects, resources
from buzz_operator.kube.client import Kube
from buzz_operator.kube.pods import wait_running
from buzz_operator.pod.shell import (
    INSTALL_VERIFIER_DEPS,
    PREPARE,
    SEED_TRUST_STORE,
    VERIFIER_DEPS_TIMEOUT_S,
)
from buzz_operator.pod.stack_install import read_manifest_command
from buzz_operator.pod.trial_pod import grading_labels, grading_network
from buzz_operator.preflight import canary, checks, probe
from buzz_operator.preflight.checks import CheckResult, cannot_see, failed, passed, skipped
from buzz_operator.relay import tenant
from buzz_operator.relay.client import RelayError
from buzz_operator.relay.hosts import handshake_refusal
from buzz_operator.relay.identities import stable_keypair
from buzz_operator.relay.nip_oa import compute_auth_tag
from buzz_operator.relay.tenant_models import ProvisioningError, RelayTarget
from buzz_operator.storage import CredentialsRejected, StorageError
from buzz_operator.storage.store import ObjectStore
from buzz_operator.trial.drive.egress_phase import RelabelError, relabel

log = logging.getLogger(__name__)
CANARY_SCHEDULE_S = 180.0
EXEC_S = 30.0
VERIFIER_DEPS_EXEC_S = 2 * VERIFIER_DEPS_TIMEOUT_S + 30.0
PROBE_IDENTITY = "preflight:owner-key-probe"
TLS_TARGET = (checks.TLS_PROBE_HOST, 443)


# The field a canary container's image comes from, so a failure names what to fix.
OPERATOR_FIELD = "spec.operatorImage"
TASK_IMAGE_FIELD = "spec.taskImageRegistry"
REFUSED = (400, 403, 422)  # the apiserver or an admission plugin refuses the pod spec itself


def stack_field(spec: BuzzSweepSpec) -> str:
    """Where the sweep's stack comes from: its deprecated alias when that is what it set."""
    return "spec.stackImage" if spec.stack_image is not None else "spec.stack"


def refused_pod_detail(status: int, body: str, spec: BuzzSweepSpec) -> str:
    """Why the apiserver refused the canary pod itself, naming the field: the RuntimeClass
    admission plugin answers 403 `pod rejected: RuntimeClass "<name>" not found`; anything else
    (Pod Security, a webhook) is the images' or the pod's shape."""
    said = " ".join(body.split())
    if spec.runtime_class_name and "RuntimeClass" in said:
        return (f"spec.runtimeClassName: the cluster has no usable RuntimeClass {spec.runtime_class_name!r} "
                f"(a sweep that names none gets the chart's trialRuntimeClassName; HTTP {status}: {said[:160]})")
    return f"spec: the cluster refuses a pod with these images (HTTP {status}: {said[:160]})"


def _container(detail: str) -> str:
    """The container a kube.pods detail is about: `stack: ErrImagePull: …`, `stack exited 1: …`."""
    words = detail.split(":", 1)[0].split()
    return words[0] if words else ""


def image_field(detail: str, stack: str = "spec.stack") -> str:
    """`stack: ErrImageNeverPull: …` or `stack exited 1: …` (kube.pods details) -> spec.stack (``stack``)."""
    container = _container(detail)
    return {"stack": stack, "operator": OPERATOR_FIELD, canary.PROBE_CONTAINER: OPERATOR_FIELD}.get(
        container, TASK_IMAGE_FIELD)


def failed_image_detail(message: str, reason: str, spec: BuzzSweepSpec, task_images: Sequence[str],
                        origins: Mapping[str, checks.ImageOrigin], stack: StackSource | None = None) -> str:
    """The images check's detail for a canary that did not start (``message`` is kube.pods'
    `<container>: <waiting reason>: <text>`): a task image's failure names its tasks. With
    mount image the stack image is a volume of the `task` container, whose waiting message then
    quotes the stack image ("Container image \"<ref>\" is not present …"): that is the stack's."""
    cause = checks.pull_cause(message)
    said = f"{cause}: {reason}: {message}" if cause else f"{reason}: {message}"
    container = _container(message)
    if stack is not None and stack.mount is StackMount.IMAGE and f'"{stack.image}"' in message:
        field = stack_field(spec)
    else:
        field = image_field(message, stack_field(spec))
    if cause == checks.PULL_DENIED:  # whichever image it was, the login is what to fix
        return f"spec.imagePullSecrets: {cause} (pulling the image of {field}): {reason}: {message}"[:checks.DETAIL_MAX]
    started = canary.started_images(task_images)
    index = 0 if container == canary.TASK_CONTAINER else (
        int(container.removeprefix("image-")) if container.removeprefix("image-").isdigit() else None)
    if field != TASK_IMAGE_FIELD or index is None or index >= len(started):
        return f"{field}: {said}"[:checks.DETAIL_MAX]
    image = started[index]
    return checks.task_image_detail(image, origins.get(image), f"{reason}: {message}", cause)[:checks.DETAIL_MAX]


def image_origins(tasks: Sequence[Task], registry: str, dataset: str) -> dict[str, checks.ImageOrigin]:
    named: dict[str, list[str]] = {}
    pinned: dict[str, bool] = {}
    for task in tasks:
        image = task.image_ref(registry, dataset)
        named.setdefault(image, []).append(task.name)
        pinned[image] = task.config.environment.docker_image is not None
    return {image: checks.ImageOrigin(tuple(names), pinned[image]) for image, names in named.items()}


def _short(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:200]


async def check_relay(kube: Kube, namespace: str, spec: BuzzSweepSpec) -> tuple[list[CheckResult], RelayTarget | None]:
    """Readiness (docs/tenant.md#teardown) and whether the owner key in the Secret is the one the relay admits."""
    try:
        target = await resolve.relay_target(kube, namespace, spec)
    except InputError as error:
        return [failed(checks.RELAY, str(error)), skipped(checks.RELAY_OWNER_KEY, "relay target unknown")], None
    try:
        await tenant.healthcheck(target)
    except ProvisioningError as error:
        if not str(error).startswith("postgres"):  # Postgres has its own check
            return [failed(checks.RELAY, relay_failure(target, error)),
                    skipped(checks.RELAY_OWNER_KEY, "relay not ready")], target
    try:
        owner = await check_owner_key(target)
    except InvalidStatus as error:  # /_readiness answers any Host; the tenant handshake does not
        status = error.response.status_code
        if (refusal := handshake_refusal(target.url, status)) is None:
            return [passed(checks.RELAY, f"{target.authority} ready"),
                    skipped(checks.RELAY_OWNER_KEY, f"handshake answered HTTP {status}")], target
        return [failed(checks.RELAY, f"spec.relay.url: {refusal}"),
                skipped(checks.RELAY_OWNER_KEY, "the relay refuses the tenant host")], target
    return [passed(checks.RELAY, f"{target.authority} ready"), owner], target


def relay_failure(target: RelayTarget, error: ProvisioningError) -> str:
    """The relay check's detail, naming the field to look at: a TLS failure names its own
    (tls.describe_tls_failure); otherwise it is where the operator dialled — the Service for a
    loopback URL, the URL itself for a direct one."""
    text = str(error)
    if text.startswith("spec."):
        return text
    return f"{'spec.relay.serviceRef' if target.connect_url else 'spec.relay.url'}: {text}"


async def check_owner_key(target: RelayTarget) -> CheckResult:
    """Whether an identity the owner key attests is admitted; an HTTP answer to the handshake
    (InvalidStatus) is the relay's verdict on the URL, not the key, and is left to check_relay."""
    probe = stable_keypair(target.owner_secret_hex, PROBE_IDENTITY)
    try:
        async with tenant.client_as(target, probe.secret_hex, compute_auth_tag(target.owner_secret_hex,
                                                                                probe.pubkey_hex)):
            pass
    except InvalidStatus:
        raise
    except InvalidHandshake as error:  # a garbled or interrupted handshake: the check cannot see
        return skipped(checks.RELAY_OWNER_KEY, _short(error))
    except RelayError as error:
        if "AUTH refused" in str(error):
            return failed(checks.RELAY_OWNER_KEY, "spec.relay.ownerKeySecretRef: the relay does not admit identities "
                                                  f"attested by this owner key ({str(error)[:120]})")
        return skipped(checks.RELAY_OWNER_KEY, _short(error))
    except (OSError, TimeoutError) as error:
        return skipped(checks.RELAY_OWNER_KEY, _short(error))
    return passed(checks.RELAY_OWNER_KEY, "an owner-attested identity is admitted")


async def check_postgres(target: RelayTarget | None) -> CheckResult:
    if target is None:
        return skipped(checks.POSTGRES, "relay secrets unreadable")
    try:
        await tenant.postgres_select_one(target.pg_dsn)
    except tenant.POSTGRES_ERRORS as error:
        # the DSN holds a password: name the error type only
        return failed(checks.POSTGRES, f"spec.relay.postgresDsnSecretRef: SELECT 1 failed ({type(error).__name__})")
    return passed(checks.POSTGRES, "SELECT 1")


async def check_storage(store: ObjectStore, sweep: str, spec: BuzzSweepSpec | None = None) -> CheckResult:
    """A probe written, read back and deleted. A server that refuses the signature or the key
    names the credentials' Secret, not the URL, when the sweep names one."""
    url = store.url
    credentials = spec.storage.credentials_secret_ref if spec is not None and spec.storage is not None else None
    key = f"{sweep}/preflight/probe-{secrets.token_hex(6)}"
    try:
        await store.put(key, b"buzz-operator preflight probe\n")
        if await store.get(key) != b"buzz-operator preflight probe\n":
            return failed(checks.STORAGE, f"spec.storage.url: {url}: a probe read back differently")
        await store.delete(key)
    except CredentialsRejected as error:
        if credentials is None:
            return failed(checks.STORAGE, f"spec.storage.url: {url} is not writable: {str(error)[:200]}")
        return failed(checks.STORAGE, f"spec.storage.credentialsSecretRef: {url} refuses the keys in Secret "
                                      f"{credentials.name}: {str(error)[:200]}")
    except StorageError as error:
        return failed(checks.STORAGE, f"spec.storage.url: {url} is not writable: {str(error)[:200]}")
    return passed(checks.STORAGE, f"{url} writable")


async def check_endpoint_secrets(kube: Kube, namespace: str, spec: BuzzSweepSpec,
                                 manifest: ExperimentManifest) -> CheckResult:
    source = spec.endpoints
    if source is None:
        return passed(checks.ENDPOINT_SECRETS, "the condition calls no endpoint")
    try:
        config, _ = await resolve.load_endpoints(kube, namespace, spec, manifest)
    except InputError as error:
        return failed(checks.ENDPOINT_SECRETS, str(error))
    wanted = {config[seat.endpoint].api_key_env: seat.endpoint for seat in manifest.roster}
    if source.secret_ref is None:
        return failed(checks.ENDPOINT_SECRETS, "spec.endpoints.secretRef: required for "
                                               f"{', '.join(sorted(wanted))}")
    try:
        stored = await objects.read_secret(kube, namespace, source.secret_ref.name)
    except ApiException as error:
        return failed(checks.ENDPOINT_SECRETS, f"spec.endpoints.secretRef: Secret {source.secret_ref.name} "
                                               f"cannot be read (HTTP {error.status})")
    present = [name for name, value in stored.items() if value.strip()]
    if missing := checks.missing_endpoint_keys(wanted, present):
        named = ", ".join(f"{env} (endpoint {wanted[env]})" for env in missing)
        return failed(checks.ENDPOINT_SECRETS, f"spec.endpoints.secretRef: Secret {source.secret_ref.name} has no "
                                               f"non-empty key {named}")
    return passed(checks.ENDPOINT_SECRETS, f"{len(wanted)} key(s) present")


async def pull_secret_problem(kube: Kube, namespace: str, spec: BuzzSweepSpec) -> str | None:
    """checks.pull_secret_problem on the Secrets spec.imagePullSecrets names (read, never their data)."""
    types: list[tuple[str, str | None]] = []
    for ref in spec.image_pull_secrets or []:
        try:
            secret = await kube.core.read_namespaced_secret(ref.name, namespace)
        except ApiException as error:
            if error.status != 404:
                return f"spec.imagePullSecrets: Secret {ref.name} cannot be read (HTTP {error.status})"
            types.append((ref.name, None))
            continue
        types.append((ref.name, secret.type or "Opaque"))
    return checks.pull_secret_problem(types)


async def _sh(kube: Kube, namespace: str, pod: str, script: str, timeout_s: float) -> kexec.ExecResult:
    return await kexec.run(kube, namespace, pod, canary.TASK_CONTAINER, script, timeout_s=timeout_s)


async def agent_targets(kube: Kube, namespace: str, spec: BuzzSweepSpec, manifest: ExperimentManifest,
                        target: RelayTarget | None) -> dict[str, tuple[str, int]]:
    """What a trial pod's agents dial: the relay where the pod reaches it (its Service's ClusterIP
    behind a loopback URL's forwarder, else the URL as written) and the endpoints' URLs."""
    found: dict[str, tuple[str, int]] = {}
    if target is not None and (relay := probe.url_target(target.dial_url)) is not None:
        found[checks.RELAY_TARGET] = relay
    if spec.endpoints is not None:
        try:
            config, _ = await resolve.load_endpoints(kube, namespace, spec, manifest)
        except InputError:  # the endpoint-secrets check said why
            return found
        found.update(probe.endpoint_targets(config, [seat.endpoint for seat in manifest.roster]))
    return found


async def _probe(kube: Kube, namespace: str, pod: str, request: Mapping[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The probe's answer in the canary's network, or (None, why it could not look)."""
    try:
        ran = await kexec.run(kube, namespace, pod, canary.PROBE_CONTAINER, probe.command(request),
                              stdin=probe.SCRIPT.encode(), timeout_s=probe.EXEC_S)
    except (kexec.ExecError, TimeoutError) as error:
        return None, f"the probe did not answer ({_short(error)})"
    if not ran.ok:
        return None, f"the probe exited {ran.exit_code} ({ran.stderr.decode('utf-8', 'replace').strip()[-120:]})"
    try:
        return probe.parse(ran.text()), ""
    except probe.ProbeError as error:
        return None, str(error)


async def _egress_checks(kube: Kube, namespace: str, pod: str, targets: Mapping[str, tuple[str, int]],
                         network: str) -> tuple[CheckResult, CheckResult, CheckResult | None]:
    """agent-egress from the agents phase, then grading-phase (the relabel, read back), then the
    TLS reading from the grading phase (None when the pod never got there)."""
    seen, why = await _probe(kube, namespace, pod, probe.request(targets))
    agents = checks.agent_egress_verdict(None if seen is None else seen["tcp"], why_not=why)
    try:
        labels_read = await relabel(kube, namespace, pod, grading_labels(network))
    except ApiException as error:
        return agents, checks.grading_phase_verdict(None, network=network, error=f"HTTP {error.status}"), None
    except RelabelError as error:
        return agents, checks.grading_phase_verdict(None, network=network, error=str(error)), None
    relay = {checks.RELAY_TARGET: targets[checks.RELAY_TARGET]} if checks.RELAY_TARGET in targets else {}
    graded, why = await _probe(kube, namespace, pod, probe.request(relay, TLS_TARGET))
    relay_after = None if graded is None else graded["tcp"].get(checks.RELAY_TARGET)
    grading = checks.grading_phase_verdict(labels_read, network=network, relay_after=relay_after)
    tls = checks.tls_verdict(None if graded is None else graded.get("tls"), network=network, why_not=why)
    return agents, grading, tls


async def _start_canary(
    kube: Kube, namespace: str, body: dict[str, Any], spec: BuzzSweepSpec, task_images: Sequence[str],
    stack: StackSource, origins: Mapping[str, checks.ImageOrigin], unseen: Sequence[str],
) -> list[CheckResult] | None:
    """None once every canary container runs; else the verdicts of a canary that did not start,
    the images check saying why and the ``unseen`` ones that it could not look."""
    name = body["metadata"]["name"]
    await objects.delete_pod(kube, namespace, name, grace_seconds=0)  # a leftover of a crashed run
    await objects.wait_pod_gone(kube, namespace, name, timeout_s=60)
    try:
        await objects.create_pod(kube, namespace, body)
    except ApiException as error:
        if error.status not in REFUSED:
            raise
        why = refused_pod_detail(error.status, str(error.body), spec)
        return [failed(checks.IMAGES, why), *(cannot_see(c, "canary refused") for c in unseen)]
    try:
        state = await wait_running(kube, namespace, name, timeout_s=CANARY_SCHEDULE_S)
    except TimeoutError:
        why = f"canary pod not running after {CANARY_SCHEDULE_S:.0f}s (cluster busy?)"
        return [cannot_see(checks.IMAGES, why), *(cannot_see(c, why) for c in unseen)]
    if not state.ready:
        why = failed_image_detail(state.message, state.reason or "", spec, task_images, origins, stack)
        return [failed(checks.IMAGES, why), *(cannot_see(c, "canary did not start") for c in unseen)]
    return None


async def _stack_verdict(kube: Kube, namespace: str, pod: str, spec: BuzzSweepSpec, stack: StackSource) -> CheckResult:
    """The stack check: the manifest of the stack the canary installed, then the trials' setup,
    whose failure is the stack's too unless the stack already failed for a reason of its own."""
    listed = await _sh(kube, namespace, pod, read_manifest_command(stack), EXEC_S)
    said = listed.last_line()
    verdict = checks.stack_verdict(listed.text() if listed.ok else None, stack_field(spec),
                                   refusal=said if said.startswith("stack: ") else None)
    prepared = await _sh(kube, namespace, pod, PREPARE, EXEC_S)  # the launch step's, before seeding
    if not prepared.ok and not verdict.failed:
        return failed(checks.STACK, f"the trials' setup `{PREPARE}` fails in the task image: "
                                    f"exit {prepared.exit_code}")
    return verdict


async def _grading_phase_checks(kube: Kube, namespace: str, pod: str, tls: CheckResult | None,
                                network: str) -> tuple[CheckResult, CheckResult]:
    """The TLS-interception and verifier-deps checks, which only a canary in the grading phase
    (``tls`` read there) can make: the verifier's deps install where the verifier would."""
    if tls is None:
        why = "the canary never entered the grading phase"
        return cannot_see(checks.TLS_INTERCEPTION, why), cannot_see(checks.VERIFIER_DEPS, why)
    deps = await _sh(kube, namespace, pod, INSTALL_VERIFIER_DEPS, VERIFIER_DEPS_EXEC_S)
    return tls, checks.verifier_deps_verdict(
        deps.last_line(), outside_reachable=checks.outside_reachable(tls), network=network)


async def _delete_canary(kube: Kube, namespace: str, name: str) -> None:
    try:
        await objects.delete_pod(kube, namespace, name, grace_seconds=0)
    except ApiException as error:  # owned by the sweep: the garbage collector takes it later
        log.warning("preflight canary %s/%s not deleted: %s", namespace, name, error)


async def check_canary(
    kube: Kube, namespace: str, sweep: str, sweep_uid: str, spec: BuzzSweepSpec, task_images: Sequence[str],
    stack: StackSource, operator_image: str, *, targets: Mapping[str, tuple[str, int]] | None = None,
    network: str = "public", origins: Mapping[str, checks.ImageOrigin] | None = None,
) -> list[CheckResult]:
    """The canary's checks, in ORDER from images on. ``targets`` are what the agents phase must
    reach (agent_targets); ``network`` is the grading network of the task whose image the
    canary's task container runs."""
    body = canary.canary_pod(
        sweep=sweep, sweep_uid=sweep_uid, namespace=namespace, stack=stack,
        operator_image=operator_image, task_images=task_images, pull_policy=spec.image_pull_policy.value,
        runtime_class_name=spec.runtime_class_name,
        image_pull_secrets=[ref.name for ref in spec.image_pull_secrets or []],
    )
    name = body["metadata"]["name"]
    started, distinct = canary.covered(task_images)
    unseen = checks.ORDER[checks.ORDER.index(checks.STACK):]
    try:
        if (stopped := await _start_canary(kube, namespace, body, spec, task_images, stack, origins or {},
                                           unseen)) is not None:
            return stopped
        found = {checks.IMAGES: passed(checks.IMAGES, f"stack, operator and {started} of {distinct} task "
                                                      f"image(s) start")}
        found[checks.STACK] = await _stack_verdict(kube, namespace, name, spec, stack)
        seeded = await _sh(kube, namespace, name, SEED_TRUST_STORE, EXEC_S)
        found[checks.TRUST_STORE] = checks.trust_store_verdict(seeded.last_line())
        agents, grading, tls = await _egress_checks(kube, namespace, name, targets or {}, network)
        found[checks.AGENT_EGRESS], found[checks.GRADING_PHASE] = agents, grading
        found[checks.TLS_INTERCEPTION], found[checks.VERIFIER_DEPS] = await _grading_phase_checks(
            kube, namespace, name, tls, network)
        return [found[c] for c in checks.ORDER if c in found]
    except (ApiException, kexec.ExecError, TimeoutError) as error:
        why = f"canary: {_short(error)}"
        return [cannot_see(checks.IMAGES, why), *(cannot_see(c, why) for c in unseen)]
    finally:
        await _delete_canary(kube, namespace, name)


async def run_checks(
    kube: Kube, body: Mapping[str, Any], spec: BuzzSweepSpec, manifest: ExperimentManifest, tasks: Sequence[Task],
    *, store: ObjectStore, dataset: str, stack: StackSource, operator_image: str,
) -> list[CheckResult]:
    """Every check in ORDER; ``stack`` and ``operator_image`` are the operator's defaults."""
    meta = body["metadata"]
    namespace, sweep, uid = meta["namespace"], meta["name"], meta["uid"]
    relay, target = await check_relay(kube, namespace, spec)
    results = [*relay, await check_postgres(target), await check_storage(store, sweep, spec),
               await check_endpoint_secrets(kube, namespace, spec, manifest)]
    if checks.first_failure(results) is not None:  # the sweep stops anyway: spend no canary on it
        return results + [skipped(name, "an earlier check failed") for name in checks.ORDER[len(results):]]
    if problem := await pull_secret_problem(kube, namespace, spec):
        unseen = checks.ORDER[len(results) + 1:]
        return [*results, failed(checks.IMAGES, problem),
                *(cannot_see(name, "no canary without its pull Secrets") for name in unseen)]
    images = [t.image_ref(spec.task_image_registry, dataset) for t in tasks]
    targets = await agent_targets(kube, namespace, spec, manifest, target)
    results += await check_canary(kube, namespace, sweep, uid, spec, images,
                                  spec.stack_source(stack), spec.operator_image or operator_image,
                                  targets=targets, network=grading_network(tasks[0].config),
                                  origins=image_origins(tasks, spec.task_image_registry, dataset))
    return results


async def gate(
    kube: Kube, body: Mapping[str, Any], spec: BuzzSweepSpec, manifest: ExperimentManifest, tasks: Sequence[Task],
    previous: BuzzSweepStatus, now: datetime, *, store: ObjectStore, dataset: str, stack: StackSource,
    operator_image: str,
) -> PreflightStatus:
    """status.preflight: the recorded one, or the checks run now when due (never run, or failed
    RETRY_AFTER_S ago) and written at once, so a restart does not run them again.
    checks.blocking() says whether it holds the sweep back.
    """
    recorded = previous.preflight
    if recorded is not None and not checks.due(recorded, now):
        return recorded
    results = await run_checks(kube, body, spec, manifest, tasks, store=store, dataset=dataset,
                               stack=stack, operator_image=operator_image)
    status = checks.to_status(results, now)
    meta = body["metadata"]
    await resources.patch_status(kube, SWEEPS, meta["namespace"], meta["name"], {"preflight": status.to_api()})
    verdicts = ", ".join(f"{r.name}={r.verdict.value}" for r in results)
    log.info("sweep %s/%s: preflight %s", meta["namespace"], meta["name"], verdicts)
    return status

