"""Data of a trial's relay tenant (docs/tenant.md#handle): the request, where the relay is, and what provisioning
hands back. `TenantHandle` is public-only and is what Postgres stores; `TenantSecrets` is never
stored and can always be re-derived from the owner key (see identities.py)."""

from __future__ import annotations

import json
import re
import ssl
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple, Protocol
from urllib.parse import urlsplit

from buzz_operator.relay.hosts import relay_url_authority
from buzz_operator.relay.nostr import encode_nsec
from buzz_operator.relay.tls import client_context


class ProvisioningError(RuntimeError):
    """Provisioning, teardown or a healthcheck failed; the message says which step and why."""


class SeatLike(Protocol):
    """The fields of `buzz_operator.condition.Seat` that provisioning reads."""

    @property
    def seat_id(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def endpoint(self) -> str: ...


@dataclass(frozen=True)
class DirectoryEntry:
    """A directory identity to seed. `identity_id` (default: the name) seeds its stable key;
    `channel_member` identities are added to the trial channel (Block's task fixtures)."""

    name: str
    role: str
    identity_id: str = ""
    about: str | None = None
    channel_member: bool = False

    @property
    def stable_id(self) -> str:
        return self.identity_id or self.name


@dataclass(frozen=True)
class TenantRequest:
    run_id: str
    trial_id: str
    manifest_sha256: str
    seats: Sequence[SeatLike]
    channel_label: str | None = None
    task_name: str | None = None
    user_display_name: str | None = None
    directory: Sequence[DirectoryEntry] = ()
    # identity_ids of directory identities that sign scripted messages: their keys are derived
    # by the operator for publishing and never leave it (relay/scripted.py)
    scripted_actors: Sequence[str] = ()

    def validate(self) -> None:
        for name in ("run_id", "trial_id"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value or "\0" in value:
                raise ProvisioningError(f"{name}: must be a non-empty string without NUL")
        if not re.fullmatch(r"[0-9a-f]{64}", self.manifest_sha256 or ""):
            raise ProvisioningError("manifest_sha256: must be 64 lowercase hex characters")
        if not self.seats:
            raise ProvisioningError("seats: at least one seat is required")
        ids = [s.seat_id for s in self.seats]
        if len(set(ids)) != len(ids):
            raise ProvisioningError(f"seats: seat ids must be unique, got {ids}")
        if self.seats[0].kind != "orchestrator" or sum(s.kind == "orchestrator" for s in self.seats) != 1:
            raise ProvisioningError("seats: exactly one orchestrator, listed first (plan_seats order)")
        if self.user_display_name is not None and not self.task_name:
            raise ProvisioningError("task_name: required when user_display_name is set (task-user:<task>)")
        ids = [e.stable_id for e in self.directory]
        if len(set(ids)) != len(ids) or any(not e.name for e in self.directory):
            raise ProvisioningError("directory: entry names must be non-empty and identity ids unique")
        unknown = sorted(set(self.scripted_actors) - set(ids))
        if unknown:
            raise ProvisioningError(f"scripted_actors: {unknown} are not directory identities")


@dataclass(frozen=True, repr=False)
class RelayTarget:
    """`url` is the canonical RELAY_URL (what agents dial, e.g. ws://localhost:3600). The
    operator may reach the relay elsewhere (`connect_url`, e.g. a ClusterIP) while presenting
    the canonical authority as Host (`host`, default: the authority of `url`). `ca_pem` holds
    PEM CA certificates trusted besides the public roots for a wss:// relay (spec.relay.caBundle)."""

    url: str
    owner_secret_hex: str
    pg_dsn: str
    host: str | None = None
    connect_url: str | None = None
    ca_pem: str | None = None

    def __repr__(self) -> str:  # the owner key and the DSN password stay out of logs
        return f"RelayTarget(url={self.url!r}, connect_url={self.connect_url!r}, host={self.host!r})"

    @property
    def dial_url(self) -> str:
        return self.connect_url or self.url

    @property
    def authority(self) -> str:
        return self.host or relay_url_authority(self.url)

    @property
    def tls(self) -> ssl.SSLContext | None:
        """The client context for dialling `dial_url`, None when it is plain ws://. The server
        name checked is `url`'s host, wherever the connection goes."""
        return client_context(self.ca_pem) if urlsplit(self.dial_url).scheme == "wss" else None

    @property
    def server_name(self) -> str:
        """The host name TLS verifies the relay's certificate for: the canonical authority as
        spelled (not normalised: a certificate for 127.0.0.1 is not one for localhost)."""
        return (urlsplit(f"//{self.host}") if self.host else urlsplit(self.url)).hostname or ""


@dataclass(frozen=True)
class SeatIdentity:
    seat_id: str
    kind: str
    role: str
    pubkey: str
    endpoint: str


@dataclass(frozen=True)
class UserIdentity:
    name: str
    pubkey: str
    identity_id: str  # `task-user:<task>` (stable) or `seat:user` (per trial); says how to re-derive


@dataclass(frozen=True)
class DirectoryIdentity:
    name: str
    role: str
    pubkey: str
    identity_id: str = ""  # rows stored before identity ids existed read as their name
    about: str = ""

    @property
    def stable_id(self) -> str:
        return self.identity_id or self.name


@dataclass(frozen=True)
class TenantHandle:
    run_id: str
    trial_id: str
    manifest_sha256: str
    channel_id: str
    channel_name: str
    relay_url: str
    seats: tuple[SeatIdentity, ...]
    user: UserIdentity
    directory: tuple[DirectoryIdentity, ...] = ()
    task_name: str = ""
    scripted_actors: tuple[str, ...] = ()

    @property
    def orchestrator(self) -> SeatIdentity:
        return self.seats[0]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TenantHandle:
        try:
            return cls(
                run_id=data["run_id"],
                trial_id=data["trial_id"],
                manifest_sha256=data["manifest_sha256"],
                channel_id=data["channel_id"],
                channel_name=data["channel_name"],
                relay_url=data["relay_url"],
                seats=tuple(SeatIdentity(**s) for s in data["seats"]),
                user=UserIdentity(**data["user"]),
                directory=tuple(DirectoryIdentity(**d) for d in data.get("directory", ())),
                task_name=data.get("task_name", ""),
                scripted_actors=tuple(data.get("scripted_actors", ())),
            )
        except (KeyError, TypeError) as exc:
            raise ProvisioningError(f"stored tenant handle is malformed: {exc}") from exc

    @classmethod
    def from_json(cls, text: str) -> TenantHandle:
        return cls.from_dict(json.loads(text))


class SeatSecret(NamedTuple):
    """`(secret_hex, auth_tag)`; unpacks like the contract's tuple, prints without the secret."""

    secret_hex: str
    auth_tag: str

    def __repr__(self) -> str:
        return "SeatSecret(<redacted>)"


@dataclass(frozen=True, repr=False)
class TenantSecrets:
    """Never logged (no repr), never stored; handed to the pod's Secret only."""

    seats: dict[str, SeatSecret] = field(default_factory=dict)
    user_secret_hex: str = ""
    user_auth_tag: str = ""
    # scripted actors by identity_id: kept by the operator, never put in the pod's Secret
    actors: dict[str, SeatSecret] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"TenantSecrets(seats={sorted(self.seats)}, actors={sorted(self.actors)})"

    def secret_strings(self) -> list[str]:
        """The trial's credential strings for the bundle's secret scan (docs/bundle.md#secret-scan `trial-credential`):
        each secret key as hex and as nsec, and each compact auth tag. The tag's bare signature
        is left out on purpose: every event an identity signs carries its tag (docs/relay-protocol.md#auth), so the
        signature legitimately appears in transcripts and evidence."""
        out: list[str] = []
        pairs = [(s.secret_hex, s.auth_tag) for s in self.seats.values()]
        pairs.append((self.user_secret_hex, self.user_auth_tag))
        pairs += [(a.secret_hex, a.auth_tag) for a in self.actors.values()]
        for secret_hex, auth_tag in pairs:
            if secret_hex:
                out += [secret_hex, encode_nsec(secret_hex), auth_tag]
        return out
