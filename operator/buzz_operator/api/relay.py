"""spec.relay: the Buzz relay trials run against, and which relay URLs can work as written.

A relay URL is one of two kinds (docs/relay-urls.md):

- **loopback** (`ws://localhost:3600`, `127.0.0.0/8`, `[::1]`): agents dial their own pod, where
  the `forwarder` native sidecar listens and pumps bytes to `serviceRef`'s ClusterIP. The
  forwarder runs unprivileged (uid 65532, every capability dropped), so it cannot bind a port
  below 1024 — such a URL (and one without a port: 80 for ws://, 443 for wss://) is refused here,
  where the user can still fix it, instead of in a pod whose sidecar crash-loops.
- **direct** (anything else): agents and the operator dial it as written; no forwarder, and the
  trial NetworkPolicy must let pods reach it (charts/buzz-operator values `trialNetworkPolicy.relay`).

Both kinds are told apart by one regular expression, used by the CEL rules the API server runs
and by the models' own validators, so the two can never classify a URL differently. RE2 (CEL)
and Python's `re` read these patterns alike.
"""

from __future__ import annotations

import re

from pydantic import Field, field_validator, model_validator

from buzz_operator.api.common import SecretKeyRef, ServiceRef, SpecModel
from buzz_operator.api.rules import exactly_one, rule, validations

# CEL string-rule costs are estimated at the longest value the schema admits (api.rules).
MAX_URL_LENGTH = 2048
MAX_PEM_KEY_LENGTH = 253  # a ConfigMap/Secret data key

# localhost (any case, optionally fully qualified), 127.0.0.0/8 written as four numbers, [::1].
LOOPBACK_HOST = r"(?i:localhost)\.?|127(\.[0-9]{1,3}){3}|\[::1\]"
# userinfo as urllib splits it: everything up to the last '@' of the authority
_USERINFO = r"([^/?#]*@)?"
LOOPBACK_URL = rf"^wss?://{_USERINFO}({LOOPBACK_HOST})(:[0-9]*)?([/?#].*)?$"
# 1024–99999 (leading zeros allowed); above 65535 is refused as out of range elsewhere
_UNPRIVILEGED_PORT = r"0*(102[4-9]|10[3-9][0-9]|1[1-9][0-9]{2}|[2-9][0-9]{3}|[1-9][0-9]{4})"
UNPRIVILEGED_LOOPBACK_URL = rf"^wss?://{_USERINFO}({LOOPBACK_HOST}):{_UNPRIVILEGED_PORT}([/?#].*)?$"

PRIVILEGED_LOOPBACK = (
    "must name a port >= 1024 when its host is loopback: the pod's forwarder listens on that port "
    "unprivileged (uid 65532, all capabilities dropped) and cannot bind ports below 1024 "
    "(no port means 80 for ws://, 443 for wss://); pick a port >= 1024, or a relay URL pods can route to"
)
SERVICE_REQUIRED = (
    "spec.relay.serviceRef is required when spec.relay.url is a loopback address: the pod's forwarder "
    "carries the agents' connections to that Service"
)
CA_NEEDS_TLS = "spec.relay.caBundle is only used with a wss:// spec.relay.url (ws:// has no TLS to trust)"
CA_SOURCES = ("secret_key_ref", "config_map_key_ref")


def is_loopback_url(url: str) -> bool:
    """Whether agents reach `url` through the pod's forwarder (else they dial it directly)."""
    return re.match(LOOPBACK_URL, url) is not None


def _cel(pattern: str) -> str:
    """`pattern` as a CEL single-quoted string literal."""
    return "'" + pattern.replace("\\", "\\\\").replace("'", "\\'") + "'"


class ConfigMapPemRef(SpecModel):
    """One key of a ConfigMap in the same namespace."""

    name: str = Field(min_length=1, max_length=253, description="Name of the ConfigMap in this namespace.")
    key: str = Field(min_length=1, max_length=MAX_PEM_KEY_LENGTH, description="Key holding the PEM certificates.")


class RelayCABundle(SpecModel, json_schema_extra=validations(exactly_one("spec.relay.caBundle", CA_SOURCES))):
    """PEM CA certificates that sign the relay's TLS certificate: exactly one of secretKeyRef or
    configMapKeyRef. Trusted in addition to the public roots, by the operator and by the agents."""

    secret_key_ref: SecretKeyRef | None = Field(None, description="A Secret key holding the PEM certificates.")
    config_map_key_ref: ConfigMapPemRef | None = Field(
        None, description="A ConfigMap key holding the PEM certificates."
    )

    @model_validator(mode="after")
    def _one_source(self) -> RelayCABundle:
        chosen = [name for name in CA_SOURCES if getattr(self, name) is not None]
        if len(chosen) != 1:
            raise ValueError("needs exactly one of secretKeyRef, configMapKeyRef")
        return self


class RelaySpec(
    SpecModel,
    json_schema_extra=validations(
        rule(f"!self.url.matches({_cel(LOOPBACK_URL)}) || has(self.serviceRef)", SERVICE_REQUIRED,
             reason="FieldValueRequired"),
        rule("!has(self.caBundle) || self.url.startsWith('wss://')", CA_NEEDS_TLS),
    ),
):
    """The Buzz relay trials run against."""

    url: str = Field(
        pattern=r"^wss?://[^/\s]+(/.*)?$",
        max_length=MAX_URL_LENGTH,
        description=(
            "Canonical relay URL; the relay binds tenants to its authority, so agents dial exactly this "
            "URL. Loopback (ws://localhost:3600, 127.0.0.0/8, [::1]; port >= 1024): a forwarder in each "
            "trial pod carries it to serviceRef. Anything else (ws:// or wss:// to a host pods can "
            "route to) is dialled directly by agents and the operator, with no forwarder."
        ),
        json_schema_extra=validations(rule(
            f"!self.matches({_cel(LOOPBACK_URL)}) || self.matches({_cel(UNPRIVILEGED_LOOPBACK_URL)})",
            f"spec.relay.url {PRIVILEGED_LOOPBACK}",
        )),
    )
    service_ref: ServiceRef | None = Field(
        None,
        description=(
            "In-cluster Service a loopback url is carried to (required then; its ClusterIP is resolved "
            "through the API, for the pods' forwarder and the operator). Not used with a direct url."
        ),
    )
    ca_bundle: RelayCABundle | None = Field(
        None,
        description=(
            "PEM CA certificates that sign a wss:// relay's certificate, trusted in addition to the public "
            "roots by the operator and, appended to /opt/buzz/ca-certificates.crt, by the agents."
        ),
    )
    owner_key_secret_ref: SecretKeyRef = Field(
        description="Secret key holding the relay owner's hex secret key (signs NIP-OA agent auth tags)."
    )
    postgres_dsn_secret_ref: SecretKeyRef = Field(
        description="Secret key holding the relay database DSN (tenant provisioning and teardown)."
    )

    @field_validator("url")
    @classmethod
    def _loopback_port_bindable(cls, url: str) -> str:
        if is_loopback_url(url) and re.match(UNPRIVILEGED_LOOPBACK_URL, url) is None:
            raise ValueError(f"{url[:120]!r} {PRIVILEGED_LOOPBACK}")
        return url

    @model_validator(mode="after")
    def _fits_the_url(self) -> RelaySpec:
        if self.service_ref is None and is_loopback_url(self.url):
            raise ValueError(SERVICE_REQUIRED)
        if self.ca_bundle is not None and not self.url.startswith("wss://"):
            raise ValueError(CA_NEEDS_TLS)
        return self
