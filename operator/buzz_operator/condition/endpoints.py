"""Endpoint launch configuration (docs/condition.md#endpoints): deployment config, outside the hash.

A condition names endpoints; this file says how to reach each one — the provider, the
*name* of the environment variable holding its API key, and extra provider env. Values
of that env (hosts, proxies) and the keys themselves never enter a redacted output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any, Self

from pydantic import ConfigDict, Field, StrictStr, TypeAdapter, ValidationError
from pydantic.dataclasses import dataclass

from buzz_operator.condition.documents import read_mapping
from buzz_operator.condition.errors import ConditionError
from buzz_operator.condition.manifest import ExperimentManifest

ENV_NAME_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"

# Variables that carry a seat's identity and wiring (docs/condition.md#endpoints `_reject_identity_overrides`):
# an endpoint's env must never be able to replace them.
IDENTITY_VARIABLES = frozenset(
    {
        "BUZZ_RELAY_URL",
        "BUZZ_PRIVATE_KEY",
        "BUZZ_AUTH_TAG",
        "BUZZ_ACP_CHANNELS",
        "BUZZ_ACP_MCP_COMMAND",
        "BUZZ_ACP_AGENT_COMMAND",
    }
)

# Example values that must never reach a real sweep (docs/condition.md#endpoints, docs/condition.md#endpoints, docs/condition.md#endpoints): the Databricks
# example workspace host and the M1 manifest's local placeholder endpoints.
PLACEHOLDER_HOST_MARKER = "example-workspace"
PLACEHOLDER_ENDPOINT_PREFIX = "local/placeholder-"


@dataclass(frozen=True, config=ConfigDict(extra="forbid"))
class EndpointLaunchConfig:
    """How to launch agents against one endpoint (docs/condition.md#endpoints)."""

    # Strict strings: a YAML `PORT: 8080` must be quoted rather than silently coerced.
    provider: StrictStr = Field(min_length=1)
    api_key_env: StrictStr = Field(pattern=ENV_NAME_PATTERN)
    env: dict[StrictStr, StrictStr] = field(default_factory=dict)


_ENDPOINTS = TypeAdapter(dict[str, EndpointLaunchConfig])


def reject_identity_overrides(name: str, endpoint: EndpointLaunchConfig) -> None:
    overlap = sorted(IDENTITY_VARIABLES & endpoint.env.keys())
    if overlap:
        raise ConditionError(f"endpoint env cannot override trial identity: {overlap}", field=f"{name}.env")


class EndpointConfig(Mapping[str, EndpointLaunchConfig]):
    """``{endpoint name: EndpointLaunchConfig}``; every top-level key is an endpoint name."""

    def __init__(self, endpoints: Mapping[str, EndpointLaunchConfig]) -> None:
        self.endpoints: dict[str, EndpointLaunchConfig] = dict(endpoints)
        for name, endpoint in self.endpoints.items():
            if not name:
                raise ConditionError("endpoint names must not be empty")
            for key in endpoint.env:
                if re.fullmatch(ENV_NAME_PATTERN, key) is None:
                    raise ConditionError(f"{key!r} is not an environment variable name", field=f"{name}.env")
            reject_identity_overrides(name, endpoint)

    @classmethod
    def load(cls, source: str | Path | Mapping[str, Any]) -> Self:
        raw, label = read_mapping(source, what="endpoint config")
        try:
            endpoints = _ENDPOINTS.validate_python(raw)
            return cls(endpoints)
        except ValidationError as error:
            raise ConditionError.from_validation(error, source=label) from None
        except ConditionError as error:
            raise error.with_source(label) from None

    def __getitem__(self, name: str) -> EndpointLaunchConfig:
        return self.endpoints[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self.endpoints)

    def __len__(self) -> int:
        return len(self.endpoints)

    def __repr__(self) -> str:
        return f"EndpointConfig({sorted(self.endpoints)})"


def redact_endpoints(cfg: Mapping[str, EndpointLaunchConfig]) -> dict[str, Any]:
    """The ``endpoints.redacted.json`` document (docs/condition.md#endpointsredactedjson): names of variables, never values."""
    return {
        name: {
            "provider": endpoint.provider,
            "api_key_env": endpoint.api_key_env,
            "env_keys": sorted(endpoint.env),
        }
        for name, endpoint in sorted(cfg.items())
    }


def resolve_api_keys(
    cfg: Mapping[str, EndpointLaunchConfig],
    environ: Mapping[str, str],
    *,
    only: Iterable[str] | None = None,
) -> dict[str, str]:
    """``{endpoint: API key}`` read from each endpoint's ``api_key_env`` (docs/condition.md#endpoints).

    By default every configured endpoint must resolve, as in the seed's provisioner config:
    a sweep must not start and then discover a missing key at its first trial. ``only``
    narrows that to the endpoints a condition uses, for a config shared by many conditions.
    """
    wanted = sorted(cfg) if only is None else sorted(set(only))
    keys: dict[str, str] = {}
    for name in wanted:
        if name not in cfg:
            raise ConditionError(f"no launch config for endpoint {name!r} in the endpoint config", field=name)
        endpoint = cfg[name]
        value = environ.get(endpoint.api_key_env)
        if not value:
            raise ConditionError(
                f"endpoint {name!r} needs the {endpoint.api_key_env} environment variable",
                field=f"{name}.api_key_env",
            )
        keys[name] = value
    return keys


def check_endpoints(manifest: ExperimentManifest, cfg: Mapping[str, EndpointLaunchConfig]) -> None:
    """Every roster endpoint must have a launch config."""
    for index, entry in enumerate(manifest.roster):
        if entry.endpoint not in cfg:
            raise ConditionError(
                f"no launch config for endpoint {entry.endpoint!r} in the endpoint config",
                field=f"roster.{index}.endpoint",
            )
        reject_identity_overrides(entry.endpoint, cfg[entry.endpoint])


def find_placeholder_endpoints(cfg: Mapping[str, EndpointLaunchConfig]) -> list[str]:
    """Endpoint names still pointing at example values; a real sweep must refuse them."""
    found = []
    for name, endpoint in cfg.items():
        placeholder_name = name.startswith(PLACEHOLDER_ENDPOINT_PREFIX)
        placeholder_env = any(
            PLACEHOLDER_HOST_MARKER in value or PLACEHOLDER_ENDPOINT_PREFIX in value
            for value in endpoint.env.values()
        )
        if placeholder_name or placeholder_env:
            found.append(name)
    return sorted(found)
