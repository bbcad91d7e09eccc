"""Configuration of the development relay, from the same environment names the Buzz relay reads
(docs/relay-protocol.md#relay-settings, docs/relay-protocol.md#relay-settings): RELAY_URL, RELAY_OWNER_PUBKEY, BUZZ_RELAY_PRIVATE_KEY, DATABASE_URL, BUZZ_BIND — and, to
serve wss:// itself (the development stand-in for a relay behind TLS, docs/relay-urls.md),
BUZZ_TLS_CERT_FILE and BUZZ_TLS_KEY_FILE: a PEM certificate chain and its private key."""

from __future__ import annotations

import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from buzz_operator.relay.hosts import relay_url_authority
from buzz_operator.relay.nostr import Keypair

MAX_EVENT_BYTES = 256 * 1024


class ConfigError(ValueError):
    """A missing or malformed setting; the message names the variable."""


@dataclass(frozen=True, repr=False)
class RelayConfig:
    relay_url: str
    owner_pubkey: str
    relay_secret_hex: str
    database_url: str
    bind_host: str = "127.0.0.1"
    bind_port: int = 0
    max_event_bytes: int = MAX_EVENT_BYTES
    ttl_sweep_seconds: float = 5.0
    tls_cert_file: str | None = None
    tls_key_file: str | None = None

    def __repr__(self) -> str:  # never print the relay key or the DSN password
        return f"RelayConfig(relay_url={self.relay_url!r}, bind={self.bind_host}:{self.bind_port})"

    @property
    def authority(self) -> str:
        return relay_url_authority(self.relay_url)

    @property
    def relay_keypair(self) -> Keypair:
        return Keypair.from_secret(self.relay_secret_hex)

    def tls_context(self) -> ssl.SSLContext | None:
        """The server context when the relay serves TLS itself, else None (plain ws://)."""
        if self.tls_cert_file is None or self.tls_key_file is None:
            return None
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.tls_cert_file, self.tls_key_file)
        return context

    def validate(self) -> RelayConfig:
        try:
            relay_url_authority(self.relay_url)
        except ValueError as exc:
            raise ConfigError(f"RELAY_URL: {exc}") from exc
        if not re.fullmatch(r"[0-9a-f]{64}", self.owner_pubkey):
            raise ConfigError("RELAY_OWNER_PUBKEY: must be 64 lowercase hex characters (x-only pubkey)")
        try:
            Keypair.from_secret(self.relay_secret_hex)
        except ValueError as exc:
            raise ConfigError(f"BUZZ_RELAY_PRIVATE_KEY: {exc}") from exc
        if not self.database_url.startswith(("postgres://", "postgresql://")):
            raise ConfigError("DATABASE_URL: must be a postgres:// or postgresql:// DSN")
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ConfigError("BUZZ_TLS_CERT_FILE, BUZZ_TLS_KEY_FILE: set both to serve TLS, or neither")
        try:
            self.tls_context()
        except (OSError, ssl.SSLError) as exc:  # a missing file, or a key that is not the certificate's
            raise ConfigError(f"BUZZ_TLS_CERT_FILE, BUZZ_TLS_KEY_FILE: cannot load them: {exc}") from exc
        return self

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RelayConfig:
        def need(name: str) -> str:
            value = env.get(name, "").strip()
            if not value:
                raise ConfigError(f"{name}: required")
            return value

        bind = env.get("BUZZ_BIND", "0.0.0.0:3600").strip()
        host, sep, port = bind.rpartition(":")
        if not sep or not port.isdigit() or not host:
            raise ConfigError(f"BUZZ_BIND: expected host:port, got {bind!r}")
        return cls(
            relay_url=need("RELAY_URL"),
            owner_pubkey=need("RELAY_OWNER_PUBKEY"),
            relay_secret_hex=need("BUZZ_RELAY_PRIVATE_KEY"),
            database_url=need("DATABASE_URL"),
            bind_host=host.strip("[]"),
            bind_port=int(port),
            tls_cert_file=env.get("BUZZ_TLS_CERT_FILE", "").strip() or None,
            tls_key_file=env.get("BUZZ_TLS_KEY_FILE", "").strip() or None,
        ).validate()
