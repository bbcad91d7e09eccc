"""``buzzctl sweep new``: a team manifest and an endpoint config become a BuzzSweep with the
ConfigMaps and the Secret it needs — checked here, before anything reaches the cluster.

Refused up front (exit 1, one line naming file and field), reusing the condition room's
validators: a manifest that does not load, a prompt whose sha256 does not match its pin, a
roster endpoint missing from the endpoint config, placeholder endpoints (docs/condition.md#endpoints
``reject_placeholder_endpoints``), a missing API-key variable, and a spec the BuzzSweep
schema refuses.

API keys are read from the variables the endpoint config names (``api_key_env``) and go only
into the Secret, which is created by ``--apply``; on stdout the Secret is never printed, so
a key never reaches a terminal, a pipe or a shell history.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from buzz_operator.api.common import API_VERSION
from buzz_operator.api.sweep import DEFAULT_MANIFEST_KEY, BuzzSweepSpec
from buzz_operator.condition import (
    ConditionError,
    EndpointConfig,
    ExperimentManifest,
    check_endpoints,
    find_placeholder_endpoints,
    resolve_api_keys,
    verify_prompts,
)
from buzz_operator.condition.prompts import prompt_key

ENDPOINTS_KEY = "endpoints.json"


@dataclass(frozen=True)
class SweepRequest:
    name: str
    manifest: Path
    endpoints: Path
    dataset: str
    artifact_root: Path | None = None
    attempts: int = 1
    parallelism: int = 4
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    timeout_multiplier: float = 1.0
    max_cost_usd: float | None = None
    cpu_request_fraction: float = 1.0
    relay_url: str = "ws://localhost:3600"
    relay_service: str = "buzz-dev-relay"
    relay_port: int = 3600
    relay_secret: str = "buzz-dev-relay"
    storage_url: str | None = None


@dataclass(frozen=True)
class SweepObjects:
    """What ``sweep new`` makes. ``secret`` holds real keys: never print it."""

    condition: dict[str, Any]
    endpoints: dict[str, Any]
    secret: dict[str, Any]
    sweep: dict[str, Any]

    def printable(self) -> list[dict[str, Any]]:
        return [self.condition, self.endpoints, self.sweep]


class SweepNewError(ValueError):
    """A refusal, with the file and field it is about."""


DATASET_FORMS = ("builtin, configmap:NAME, store:PREFIX, registry:NAME[@VERSION]:URL, "
                 "registry:NAME[@VERSION]:configmap:CONFIGMAP or package:ORG/NAME[@REF]")


def _dataset(value: str) -> dict[str, Any]:
    kind, _, arg = value.partition(":")
    if kind == "builtin" and not arg:
        return {"builtin": {}}
    if kind == "configmap" and arg:
        return {"configMapRef": {"name": arg}}
    if kind == "store" and arg:
        return {"objectStore": {"prefix": arg}}
    if kind == "package" and arg:  # Harbor's --repo org/name[@ref], on GitHub (docs/harbor.md)
        return {"package": {"name": arg}}
    name, _, where = arg.partition(":")
    if kind == "registry" and name and where.startswith(("http://", "https://")):
        return {"registry": {"name": name, "url": where}}
    if kind == "registry" and name and where.startswith("configmap:") and where != "configmap:":
        return {"registry": {"name": name, "configMapRef": {"name": where.removeprefix("configmap:")}}}
    raise SweepNewError(f"--dataset: {value!r} is not {DATASET_FORMS}")


def _condition_files(manifest: ExperimentManifest, text: str, root: Path) -> dict[str, str]:
    prompts = verify_prompts(manifest, root)
    data = {DEFAULT_MANIFEST_KEY: text}
    for entry in manifest.roster:
        # ConfigMap keys cannot hold '/', so the path's separators become '__' (api/sweep.py)
        data[prompt_key(entry.prompt.path).replace("/", "__")] = prompts[entry.id].decode("utf-8")
    return data


def _checked_endpoints(
    manifest: ExperimentManifest, path: Path, environ: Mapping[str, str]
) -> dict[str, str]:
    """The Secret's data, {api_key_env: key}, for the endpoints the roster uses."""
    endpoints = EndpointConfig.load(path)
    check_endpoints(manifest, endpoints)
    placeholders = find_placeholder_endpoints(endpoints)
    if placeholders:
        raise ConditionError(f"placeholder endpoints must be configured before a run: {placeholders}")
    used = sorted({entry.endpoint for entry in manifest.roster})
    keys = resolve_api_keys(endpoints, environ, only=used)
    return {endpoints[name].api_key_env: value for name, value in keys.items()}


def _spec(request: SweepRequest, condition_map: str, endpoints_map: str, secret: str) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "condition": {"configMapRef": {"name": condition_map}},
        "endpoints": {
            "configMapRef": {"name": endpoints_map, "key": ENDPOINTS_KEY},
            "secretRef": {"name": secret},
        },
        "dataset": _dataset(request.dataset),
        "include": list(request.include),
        "exclude": list(request.exclude),
        "attempts": request.attempts,
        "parallelism": request.parallelism,
        "timeoutMultiplier": request.timeout_multiplier,
        "cpuRequestFraction": request.cpu_request_fraction,
        "relay": {
            "url": request.relay_url,
            "serviceRef": {"name": request.relay_service, "port": request.relay_port},
            "ownerKeySecretRef": {"name": request.relay_secret, "key": "owner-key"},
            "postgresDsnSecretRef": {"name": request.relay_secret, "key": "postgres-dsn"},
        },
    }
    if request.max_cost_usd is not None:
        spec["budget"] = {"maxCostUSD": request.max_cost_usd}
    if request.storage_url:
        spec["storage"] = {"url": request.storage_url}
    try:
        return BuzzSweepSpec.model_validate(spec).to_api()
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise SweepNewError(f"spec.{where}: {first['msg']}") from None


def build(request: SweepRequest, environ: Mapping[str, str] | None = None) -> SweepObjects:
    """Every object of the sweep, after every check; raises SweepNewError or ConditionError."""
    environ = os.environ if environ is None else environ
    try:
        text = request.manifest.read_text(encoding="utf-8")
    except OSError as error:
        raise SweepNewError(
            f"--manifest: cannot read {request.manifest}: {error.strerror or error}"
        ) from None
    try:
        manifest = ExperimentManifest.load(request.manifest)
        files = _condition_files(manifest, text, request.artifact_root or request.manifest.parent)
    except ConditionError as error:
        raise error.with_source(error.source or str(request.manifest)) from None
    try:
        secret_data = _checked_endpoints(manifest, request.endpoints, environ)
    except ConditionError as error:
        raise error.with_source(error.source or str(request.endpoints)) from None
    endpoints_text = request.endpoints.read_text(encoding="utf-8")
    names = {"condition": f"{request.name}-condition", "endpoints": f"{request.name}-endpoints"}
    secret_name = f"{request.name}-api-keys"
    spec = _spec(request, names["condition"], names["endpoints"], secret_name)
    labels = {"app.kubernetes.io/managed-by": "buzzctl", "bench.buzz.dev/sweep": request.name}
    return SweepObjects(
        condition=_config_map(names["condition"], files, labels),
        endpoints=_config_map(names["endpoints"], {ENDPOINTS_KEY: endpoints_text}, labels),
        secret={
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": secret_name, "labels": labels},
            "stringData": secret_data,
        },
        sweep={
            "apiVersion": API_VERSION,
            "kind": "BuzzSweep",
            "metadata": {
                "name": request.name,
                "annotations": {"bench.buzz.dev/condition-sha256": manifest.sha256},
            },
            "spec": spec,
        },
    )


def _config_map(name: str, data: dict[str, str], labels: dict[str, str]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels},
        "data": data,
    }


def render(objects: SweepObjects) -> str:
    """The printable objects as one multi-document YAML stream (the Secret is left out)."""
    return yaml.safe_dump_all(objects.printable(), sort_keys=False, allow_unicode=True)
