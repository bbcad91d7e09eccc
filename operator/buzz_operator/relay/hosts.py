"""Host-header tenancy helpers (§9.2, `crates/buzz-core/src/tenant.rs`): the relay resolves the
community from the connection's Host, so both sides must agree on one normal form."""

from __future__ import annotations

from urllib.parse import urlsplit


def normalize_host(host: str) -> str:
    """Lowercase, strip a trailing `.`, drop default ports `:80`/`:443`, and map the loopback
    literals `127.0.0.1`/`[::1]` to `localhost` while keeping any non-default port."""
    value = host.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name, rest = value[: end + 1], value[end + 1 :]
        port = rest[1:] if rest.startswith(":") else ""
    elif value.count(":") == 1:
        name, port = value.split(":", 1)
    else:
        name, port = value, ""
    name = name.rstrip(".")
    if name in ("127.0.0.1", "[::1]"):
        name = "localhost"
    if port in ("80", "443", ""):
        return name
    return f"{name}:{port}"


def relay_url_authority(url: str) -> str:
    """`ws://localhost:3600` → `localhost:3600` (normalised), the relay's canonical tenant."""
    parts = urlsplit(url)
    if parts.scheme not in ("ws", "wss", "http", "https") or not parts.netloc:
        raise ValueError(f"relay url must be ws://, wss://, http:// or https:// with a host: {url!r}")
    return normalize_host(parts.netloc.rsplit("@", 1)[-1])


def http_url_for(ws_url: str) -> str:
    """The HTTP base URL of the same relay (`ws://h:p` → `http://h:p`), for `/_readiness`."""
    parts = urlsplit(ws_url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return f"{scheme}://{parts.netloc}"
