"""Preflight I/O: runs each check of checks.py against the real relay, Postgres, store, Secrets
and cluster, once before a sweep's first trial, and records the verdicts in status.preflight.

The canary runs the trust-store and verifier-deps commands the trials run (the very strings of
trial/runtime_shell.py, through the same exec adapter), so a broken image or trust store stops
the sweep before it spends anything, exactly where a trial would have broken. It also reads the
digests of the stack it installed, which the sweep records in lock.json.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import asyncpg
from kubernetes_asyncio.client.exceptions import ApiException
from websockets.exceptions import InvalidHandshake, InvalidStatus

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.api.stack import StackSource
from buzz_operator.api.sweep import BuzzSweepSpec, BuzzSweepStatus, PreflightStatus
from buzz_operator.condition import ExperimentManifest
from buzz_operator.dataset.task import Task
from buzz_operator.kube import exec as kexec
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.kube.pods import wait_running
from buzz_operator.preflight import canary, checks
from buzz_operator.preflight.checks import CheckResult, failed, passed, skipped
from buzz_operator.relay import tenant
from buzz_operator.relay.client import RelayError
from buzz_operator.relay.hosts import handshake_refusal
from buzz_operator.relay.identities import stable_keypair
from buzz_operator.relay.nip_oa import compute_auth_tag
from buzz_operator.relay.tenant_models import ProvisioningError, RelayTarget
from buzz_operator.storage import StorageError
from buzz_operator.storage.store import ObjectStore
from buzz_operator.sweep import runtime_inputs as inputs
from buzz_operator.trial.runtime_shell import INSTALL_VERIFIER_DEPS, SEED_TRUST_STORE, VERIFIER_DEPS_TIMEOUT_S
from buzz_operator.trial.stack_install import READ_MANIFEST

log = logging.getLogger(__name__)
SWEEPS = "buzzsweeps"
MERGE = "application/merge-patch+json"
CANARY_SCHEDULE_S = 180.0
EXEC_S = 30.0
VERIFIER_DEPS_EXEC_S = 2 * VERIFIER_DEPS_TIMEOUT_S + 30.0
PROBE_IDENTITY = "preflight:owner-key-probe"
TLS_PROBE = (f"command -v curl >/dev/null 2>&1 || {{ echo no-curl; exit 0; }}; "
             f"curl -sSv --max-time 10 -o /dev/null https://{checks.TLS_PROBE_HOST}/ 2>&1; echo \"exit $?\"")


# The field a canary container's image comes from, so a failure names what to fix.
OPERATOR_FIELD = "spec.operatorImage"
TASK_IMAGE_FIELD = "spec.taskImageRegistry"
REFUSED = (400, 403, 422)  # the apiserver or an admission plugin refuses the pod spec itself


def stack_field(spec: BuzzSweepSpec) -> str:
    """Where the sweep's stack comes from: its deprecated alias when that is what it set."""
    return "spec.stackImage" if spec.stack_image is not None else "spec.stack"


def image_field(detail: str, stack: str = "spec.stack") -> str:
    """`stack: ErrImageNeverPull: …` (kube.pods detail) -> spec.stack (``stack``)."""
    container = detail.split(":", 1)[0].strip()
    return {"stack": stack, "operator": OPERATOR_FIELD}.get(container, TASK_IMAGE_FIELD)


def _short(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:200]


async def check_relay(kube: Kube, namespace: str, spec: BuzzSweepSpec) -> tuple[list[CheckResult], RelayTarget | None]:
    """Readiness (§3.6) and whether the owner key in the Secret is the one the relay admits."""
    try:
        target = await inputs.relay_target(kube, namespace, spec)
    except inputs.InputError as error:
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
        conn = await asyncpg.connect(target.pg_dsn, timeout=5)
        try:
            await conn.fetchval("SELECT 1")
        finally:
            await conn.close()
    except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, ValueError, TimeoutError) as error:
        # the DSN holds a password: name the error type only (InterfaceError/ValueError: a DSN
        # asyncpg refuses before dialling)
        return failed(checks.POSTGRES, f"spec.relay.postgresDsnSecretRef: SELECT 1 failed ({type(error).__name__})")
    return passed(checks.POSTGRES, "SELECT 1")


async def check_storage(store: ObjectStore, sweep: str) -> CheckResult:
    url = store.url
    key = f"{sweep}/preflight/probe-{secrets.token_hex(6)}"
    try:
        await store.put(key, b"buzz-operator preflight probe\n")
        if await store.get(key) != b"buzz-operator preflight probe\n":
            return failed(checks.STORAGE, f"spec.storage.url: {url}: a probe read back differently")
        await store.delete(key)
    except StorageError as error:
        return failed(checks.STORAGE, f"spec.storage.url: {url} is not writable: {str(error)[:200]}")
    return passed(checks.STORAGE, f"{url} writable")


async def check_endpoint_secrets(kube: Kube, namespace: str, spec: BuzzSweepSpec,
                                 manifest: ExperimentManifest) -> CheckResult:
    source = spec.endpoints
    if source is None:
        return passed(checks.ENDPOINT_SECRETS, "the condition calls no endpoint")
    try:
        config, _ = await inputs.load_endpoints(kube, namespace, spec, manifest)
    except inputs.InputError as error:
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


async def _sh(kube: Kube, namespace: str, pod: str, script: str, timeout_s: float) -> kexec.ExecResult:
    return await kexec.run(kube, namespace, pod, canary.TASK_CONTAINER, script, timeout_s=timeout_s)


async def check_canary(
    kube: Kube, namespace: str, sweep: str, sweep_uid: str, spec: BuzzSweepSpec, task_images: Sequence[str],
    stack: StackSource, operator_image: str,
) -> list[CheckResult]:
    body = canary.canary_pod(
        sweep=sweep, sweep_uid=sweep_uid, namespace=namespace, stack=stack,
        operator_image=operator_image, task_images=task_images, pull_policy=spec.image_pull_policy.value,
        runtime_class_name=spec.runtime_class_name,
    )
    name = body["metadata"]["name"]
    started, distinct = canary.covered(task_images)
    unseen = [checks.STACK, checks.TRUST_STORE, checks.VERIFIER_DEPS, checks.TLS_INTERCEPTION]
    try:
        await objects.delete_pod(kube, namespace, name, grace_seconds=0)  # a leftover of a crashed run
        await objects.wait_pod_gone(kube, namespace, name, timeout_s=60)
        try:
            await objects.create_pod(kube, namespace, body)
        except ApiException as error:
            if error.status not in REFUSED:
                raise
            why = f"spec: the cluster refuses a pod with these images/runtimeClassName (HTTP {error.status}: " \
                  f"{str(error.body)[:160]})"
            return [failed(checks.IMAGES, why), *(skipped(c, "canary refused") for c in unseen)]
        try:
            state = await wait_running(kube, namespace, name, timeout_s=CANARY_SCHEDULE_S)
        except TimeoutError:
            why = f"canary pod not running after {CANARY_SCHEDULE_S:.0f}s (cluster busy?)"
            return [skipped(checks.IMAGES, why), *(skipped(c, why) for c in unseen)]
        if not state.ready:
            why = f"{image_field(state.message, stack_field(spec))}: {state.reason}: {state.message}"[:200]
            return [failed(checks.IMAGES, why), *(skipped(c, "canary did not start") for c in unseen)]
        images = passed(checks.IMAGES, f"stack, operator and {started} of {distinct} task image(s) start")
        listed = await _sh(kube, namespace, name, READ_MANIFEST, EXEC_S)
        found = [checks.stack_verdict(listed.text() if listed.ok else None, stack_field(spec))]
        seeded = await _sh(kube, namespace, name, SEED_TRUST_STORE, EXEC_S)
        found.append(checks.trust_store_verdict(seeded.last_line()))
        probe = await _sh(kube, namespace, name, TLS_PROBE, EXEC_S)
        text = probe.text()
        if text.strip() == "no-curl":
            tls = skipped(checks.TLS_INTERCEPTION, "no curl in the task image before verifier deps")
        else:
            code = text.strip().splitlines()[-1].removeprefix("exit ") if text.strip() else ""
            tls = checks.tls_verdict(text, int(code) if code.isdigit() else None)
        deps = await _sh(kube, namespace, name, INSTALL_VERIFIER_DEPS, VERIFIER_DEPS_EXEC_S)
        found.append(checks.verifier_deps_verdict(deps.last_line(), outside_reachable=checks.outside_reachable(tls)))
        return [images, *found, tls]
    except (ApiException, kexec.ExecError, TimeoutError) as error:
        why = f"canary: {_short(error)}"
        return [skipped(checks.IMAGES, why), *(skipped(c, why) for c in unseen)]
    finally:
        try:
            await objects.delete_pod(kube, namespace, name, grace_seconds=0)
        except ApiException as error:  # owned by the sweep: the garbage collector takes it later
            log.warning("preflight canary %s/%s not deleted: %s", namespace, name, error)


async def run_checks(
    kube: Kube, body: Mapping[str, Any], spec: BuzzSweepSpec, manifest: ExperimentManifest, tasks: Sequence[Task],
    *, store: ObjectStore, dataset: str, stack: StackSource, operator_image: str,
) -> list[CheckResult]:
    """Every check in ORDER; ``stack`` and ``operator_image`` are the operator's defaults."""
    meta = body["metadata"]
    namespace, sweep, uid = meta["namespace"], meta["name"], meta["uid"]
    relay, target = await check_relay(kube, namespace, spec)
    results = [*relay, await check_postgres(target), await check_storage(store, sweep),
               await check_endpoint_secrets(kube, namespace, spec, manifest)]
    if checks.first_failure(results) is not None:  # the sweep stops anyway: spend no canary on it
        return results + [skipped(name, "an earlier check failed") for name in checks.ORDER[len(results):]]
    images = [t.image_ref(spec.task_image_registry, dataset) for t in tasks]
    results += await check_canary(kube, namespace, sweep, uid, spec, images,
                                  spec.stack_source(stack), spec.operator_image or operator_image)
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
    await kube.custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, meta["namespace"], SWEEPS, meta["name"], {"status": {"preflight": status.to_api()}},
        _content_type=MERGE)
    verdicts = ", ".join(f"{r.name}={r.verdict.value}" for r in results)
    log.info("sweep %s/%s: preflight %s", meta["namespace"], meta["name"], verdicts)
    return status

