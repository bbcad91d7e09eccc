"""A sweep's inputs read through the API: the condition (manifest and pinned prompts), the
endpoint config and its API keys, the relay target and the sweep's object store (the dataset
is datasets.py's, which reads its ConfigMap through config_map here).

Shared by the sweep handler (which validates them before planning) and every trial (which
needs them to run). Each problem raises InputError naming the spec field, so the sweep's
Accepted condition can say exactly what to fix.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml
from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.common import SecretKeyRef
from buzz_operator.api.relay import RelayCABundle, is_loopback_url
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.condition import (
    ConditionError,
    EndpointConfig,
    ExperimentManifest,
    check_endpoints,
    verify_prompt_files,
    verify_prompts,
)
from buzz_operator.inputs.errors import InputError
from buzz_operator.kube import objects
from buzz_operator.kube.client import Kube
from buzz_operator.kube.secret_reads import SecretRead
from buzz_operator.relay.hosts import relay_url_problem
from buzz_operator.relay.nostr import KeyFormatError, secret_key_hex
from buzz_operator.relay.tenant_models import RelayTarget
from buzz_operator.relay.tls import ca_bundle_problem
from buzz_operator.storage import InvalidKey, ObjectStore, StorageError, open_store, validate_prefix
from buzz_operator.storage.durability import ephemeral_paths, ephemeral_storage_problem

# Inline conditions name prompt files relative to this directory (the repository's manifests/
# when run from a checkout; the chart mounts it in the operator pod).
ARTIFACT_ROOT_ENV = "BUZZ_ARTIFACT_ROOT"
STORAGE_URL_ENV = "BUZZ_STORAGE_URL"
DEFAULT_STORAGE_URL = "file:///var/lib/buzz-operator/bundles"


def artifact_root() -> Path:
    override = os.environ.get(ARTIFACT_ROOT_ENV)
    return Path(override) if override else Path(__file__).resolve().parents[4] / "manifests"


def default_storage_url() -> str:
    return os.environ.get(STORAGE_URL_ENV) or DEFAULT_STORAGE_URL


@dataclass(frozen=True)
class Condition:
    manifest: ExperimentManifest
    prompts: dict[str, bytes]  # class_id -> persona bytes, digest-checked


def _parse_document(text: str, field: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise InputError(field, f"not YAML or JSON: {exc}") from exc
    except (ValueError, TypeError, RecursionError) as exc:
        # a tagged scalar that does not construct (`!!int abc`, `!!float x`) is a bare ValueError
        # from the constructor; nesting deeper than the stack allows, a RecursionError
        raise InputError(field, f"not YAML or JSON: {type(exc).__name__}: {str(exc)[:160]}") from exc


def _mapping_document(text: str, field: str) -> dict[str, Any]:
    """A ConfigMap's YAML/JSON document that must be a mapping. The loaders take a str as a file
    *path*, so a document that is one line of text (`~0`, `/etc/hostname`) would otherwise be
    read from the operator's own filesystem (found by tests/unit/validation/test_random_specs.py)."""
    document = _parse_document(text, field)
    if not isinstance(document, dict):
        raise InputError(field, f"the document must be a mapping (a YAML or JSON object), not {type(document).__name__}")
    return document


async def config_map(kube: Kube, namespace: str, name: str, field: str) -> dict[str, str]:
    try:
        return await objects.read_config_map(kube, namespace, name)
    except ApiException as exc:
        raise InputError(field, f"ConfigMap {name} cannot be read (HTTP {exc.status})") from exc


async def load_condition(kube: Kube, namespace: str, spec: BuzzSweepSpec) -> Condition:
    source = spec.condition
    try:
        if source.inline is not None:
            manifest = ExperimentManifest.load(source.inline)
            prompts = verify_prompts(manifest, artifact_root())
        else:
            ref = source.config_map_ref
            assert ref is not None  # the model guarantees exactly one source
            data = await config_map(kube, namespace, ref.name, "spec.condition.configMapRef")
            return condition_from_config_map(data, ref.manifest_key)
    except ConditionError as exc:
        raise InputError("spec.condition", str(exc)) from exc
    return Condition(manifest, prompts)


def condition_from_config_map(data: Mapping[str, str], manifest_key: str) -> Condition:
    """A condition ConfigMap's data, once read: its manifest (YAML or JSON) and the prompt files
    beside it (paths spelled with `__` for `/`), digest-checked. Pure, so the property test
    feeds it what a user may put in a ConfigMap."""
    if manifest_key not in data:
        raise InputError("spec.condition.configMapRef.manifestKey", f"ConfigMap has no key {manifest_key}")
    try:
        manifest = ExperimentManifest.load(_mapping_document(data[manifest_key], "spec.condition"))
        files = {key.replace("__", "/"): value.encode() for key, value in data.items() if key != manifest_key}
        return Condition(manifest, verify_prompt_files(manifest, files))
    except ConditionError as exc:
        raise InputError("spec.condition", str(exc)) from exc


def endpoints_from_config_map(data: Mapping[str, str], key: str) -> EndpointConfig:
    """An endpoints ConfigMap's data, once read: the endpoint config under `key` (YAML or JSON)."""
    if key not in data:
        raise InputError("spec.endpoints.configMapRef.key", f"ConfigMap has no key {key}")
    try:
        return EndpointConfig.load(_mapping_document(data[key], "spec.endpoints"))
    except ConditionError as exc:
        raise InputError("spec.endpoints", str(exc)) from exc


async def load_endpoints(
    kube: Kube, namespace: str, spec: BuzzSweepSpec, manifest: ExperimentManifest, *,
    read_secret: SecretRead = objects.read_secret,
) -> tuple[EndpointConfig, dict[str, str]]:
    """The endpoint config and `{api_key_env: key}` for the endpoints the roster uses."""
    source = spec.endpoints
    if source is None:
        raise InputError("spec.endpoints", "required: the roster names endpoints "
                                           f"{sorted({e.endpoint for e in manifest.roster})}")
    try:
        if source.config is not None:
            config = EndpointConfig.load(source.config)
        else:
            ref = source.config_map_ref
            assert ref is not None
            data = await config_map(kube, namespace, ref.name, "spec.endpoints.configMapRef")
            config = endpoints_from_config_map(data, ref.key)
        check_endpoints(manifest, config)
    except ConditionError as exc:
        raise InputError("spec.endpoints", str(exc)) from exc
    keys: dict[str, str] = {}
    if source.secret_ref is not None:
        try:
            stored = await read_secret(kube, namespace, source.secret_ref.name)
        except ApiException as exc:
            raise InputError("spec.endpoints.secretRef", f"Secret cannot be read (HTTP {exc.status})") from exc
        wanted = {config[e.endpoint].api_key_env for e in manifest.roster}
        keys = {name: stored[name] for name in sorted(wanted) if name in stored}
    return config, keys


async def _relay_secret(kube: Kube, namespace: str, ref: SecretKeyRef, field: str, read_secret: SecretRead) -> str:
    try:
        return (await read_secret(kube, namespace, ref.name, key=ref.key))[ref.key]
    except ApiException as exc:
        raise InputError(field, f"Secret {ref.name} cannot be read (HTTP {exc.status})") from exc
    except KeyError as exc:
        raise InputError(f"{field}.key", f"Secret {ref.name} has no key {ref.key}") from exc


def owner_key_hex(value: str, ref: SecretKeyRef) -> str:
    """The owner key as hex, from the Secret's hex or `nsec1…` value. The first place the key
    is read, so a malformed one is an invalid spec naming the Secret key, not an exception deep
    in key derivation on every reconcile (it would not go away by retrying)."""
    try:
        return secret_key_hex(value)
    except KeyFormatError as exc:
        raise InputError("spec.relay.ownerKeySecretRef",
                         f"Secret {ref.name} key {ref.key} is not a secret key: {exc}") from None


_SSLMODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")
_SESSION_ATTRS = ("any", "primary", "standby", "prefer-standby", "read-write", "read-only")


def dsn_problem(dsn: str) -> str | None:
    """Why `dsn` is not a Postgres URL asyncpg can dial, or None; never quotes it (it holds a
    password). Without this, asyncpg's own refusals (ClientConfigurationError, ValueError) escaped
    preflight and every trial, as neither an outage nor a field."""
    try:
        parts = urlsplit(dsn)
    except ValueError as exc:
        return f"not a URL ({exc})"
    if parts.scheme not in ("postgresql", "postgres"):
        return "it must start with postgresql:// or postgres://"
    hosts = parts.netloc.rpartition("@")[2]
    for host in hosts.split(",") if hosts else ():  # libpq allows h1:p1,h2:p2
        if not host:
            return "its host list has an empty entry"
        port = host.rpartition("]")[2] if host.startswith("[") else host
        if ":" in port and not port.rpartition(":")[2].isdigit():
            return "a host's port is not a number"
    try:  # asyncpg parses the query strictly
        query = parse_qs(parts.query, keep_blank_values=True, strict_parsing=True) if parts.query else {}
    except ValueError:
        return "its query is not name=value pairs"
    if any(mode not in _SSLMODES for mode in query.get("sslmode", [])):
        return f"sslmode must be one of {', '.join(_SSLMODES)}"
    if any(value not in _SESSION_ATTRS for value in query.get("target_session_attrs", [])):
        return f"target_session_attrs must be one of {', '.join(_SESSION_ATTRS)}"
    if any(not port.isdigit() for port in query.get("port", [])):
        return "its port parameter is not a number"
    return None


async def relay_ca_bundle(kube: Kube, namespace: str, source: RelayCABundle, *,
                          read_secret: SecretRead = objects.read_secret) -> str:
    """The PEM of spec.relay.caBundle, read and checked where it is first read: a document that
    is not CA certificates is the spec's fault, named once, not a TLS error in every trial."""
    if source.secret_key_ref is not None:
        ref, kind = source.secret_key_ref, "Secret"
        field = "spec.relay.caBundle.secretKeyRef"
        try:
            data = await read_secret(kube, namespace, ref.name)
        except ApiException as exc:
            raise InputError(field, f"Secret {ref.name} cannot be read (HTTP {exc.status})") from exc
        except UnicodeDecodeError as exc:  # a binary value (a keystore) beside the PEM
            raise InputError(field, f"Secret {ref.name} holds a value that is not text") from exc
    else:
        config_ref = source.config_map_key_ref
        assert config_ref is not None  # the model guarantees exactly one source
        ref, kind = config_ref, "ConfigMap"
        field = "spec.relay.caBundle.configMapKeyRef"
        data = await config_map(kube, namespace, ref.name, field)
    if ref.key not in data:
        raise InputError(f"{field}.key", f"{kind} {ref.name} has no key {ref.key}")
    pem = data[ref.key]
    if problem := ca_bundle_problem(pem):
        raise InputError(field, f"{kind} {ref.name} key {ref.key} {problem}")
    return pem


async def relay_target(kube: Kube, namespace: str, spec: BuzzSweepSpec, *,
                       read_secret: SecretRead = objects.read_secret) -> RelayTarget:
    relay = spec.relay
    if problem := relay_url_problem(relay.url):
        raise InputError("spec.relay.url", problem)
    ref = relay.owner_key_secret_ref
    owner = owner_key_hex(await _relay_secret(kube, namespace, ref, "spec.relay.ownerKeySecretRef", read_secret), ref)
    dsn_ref = relay.postgres_dsn_secret_ref
    dsn = (await _relay_secret(kube, namespace, dsn_ref, "spec.relay.postgresDsnSecretRef", read_secret)).strip()
    if problem := dsn_problem(dsn):
        raise InputError("spec.relay.postgresDsnSecretRef",
                         f"Secret {dsn_ref.name} key {dsn_ref.key} is not a Postgres URL: {problem}")
    ca_pem = await relay_ca_bundle(kube, namespace, relay.ca_bundle, read_secret=read_secret) if relay.ca_bundle is not None else None
    if not is_loopback_url(relay.url):
        # direct: the operator dials the URL as written, exactly as the agents do
        return RelayTarget(url=relay.url, owner_secret_hex=owner, pg_dsn=dsn, ca_pem=ca_pem)
    service = relay.service_ref
    if service is None:  # the model refuses this; a CRD older than its CEL rule may not
        raise InputError("spec.relay.serviceRef", "required when spec.relay.url is a loopback address")
    try:
        target = await objects.service_target(kube, namespace, service.name, service.port)
    except ApiException as exc:
        raise InputError("spec.relay.serviceRef", f"Service {service.name} cannot be read "
                                                  f"(HTTP {exc.status})") from exc
    except ValueError as exc:
        raise InputError("spec.relay.serviceRef", str(exc)[:200]) from exc
    # Loopback: the operator dials the Service's ClusterIP, as the pods' forwarder does, with the
    # URL's scheme (TLS goes end to end through the forwarder) and the canonical authority as Host.
    scheme = urlsplit(relay.url).scheme
    return RelayTarget(url=relay.url, owner_secret_hex=owner, pg_dsn=dsn, connect_url=f"{scheme}://{target}",
                       ca_pem=ca_pem)


def storage_url(spec: BuzzSweepSpec) -> str:
    return spec.storage.url if spec.storage is not None else default_storage_url()


QUARANTINE_PREFIX_ENV = "BUZZ_QUARANTINE_PREFIX"


def quarantine_prefix(spec: BuzzSweepSpec, environ: Mapping[str, str] = os.environ) -> str:
    """spec.storage.quarantinePrefix, else the operator's default (BUZZ_QUARANTINE_PREFIX, the
    chart's secretFindings.quarantinePrefix); "" keeps bundles with findings in place."""
    chosen = spec.storage.quarantine_prefix if spec.storage is not None else None
    if chosen is not None:
        return chosen
    default = environ.get(QUARANTINE_PREFIX_ENV, "").strip()
    try:
        return validate_prefix(default, field=QUARANTINE_PREFIX_ENV)
    except InvalidKey as exc:  # the operator's setting, named as such: the spec did not choose it
        raise InputError("spec.storage.quarantinePrefix", f"unset, and the operator's default is not a key "
                                                          f"prefix: {exc}") from exc


# Keys of storage.credentialsSecretRef, named as the AWS tools name them so one Secret serves both.
ACCESS_KEY, SECRET_KEY, REGION_KEY = "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_REGION"


async def open_sweep_store(kube: Kube, namespace: str, spec: BuzzSweepSpec, *,
                           read_secret: SecretRead = objects.read_secret) -> ObjectStore:
    """The sweep's object store, with the credentials Secret when the spec names one (the
    operator's own AWS_* environment otherwise)."""
    url = storage_url(spec)
    if problem := ephemeral_storage_problem(url, ephemeral_paths(os.environ)):
        raise InputError("spec.storage.url", problem)
    creds: dict[str, str] = {}
    if spec.storage is not None and spec.storage.credentials_secret_ref is not None:
        ref = spec.storage.credentials_secret_ref
        try:
            creds = await read_secret(kube, namespace, ref.name)
        except ApiException as exc:
            raise InputError("spec.storage.credentialsSecretRef", f"Secret {ref.name} cannot be read "
                                                                  f"(HTTP {exc.status})") from exc
        missing = [key for key in (ACCESS_KEY, SECRET_KEY) if not creds.get(key)]
        if missing:
            raise InputError("spec.storage.credentialsSecretRef", f"Secret {ref.name} has no key {', '.join(missing)}")
    try:
        if url.startswith("s3://"):
            return open_store(url, endpoint=spec.storage.endpoint if spec.storage else None,
                              access_key=creds.get(ACCESS_KEY), secret_key=creds.get(SECRET_KEY),
                              region=creds.get(REGION_KEY))
        if creds:
            raise InputError("spec.storage.credentialsSecretRef", "only s3:// storage takes credentials")
        return open_store(url)
    except StorageError as exc:
        raise InputError("spec.storage.url", str(exc)) from exc

