"""Host-header tenancy helpers (docs/relay-protocol.md#tenancy, `crates/buzz-core/src/tenant.rs`): the relay resolves the
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


def relay_url_problem(url: str) -> str | None:
    """Why `url` cannot be a relay's canonical URL, or None. The CRD's pattern admits strings
    urllib cannot take apart (`ws://[::1`, `ws://h:99999`, `ws://h:x`); found here, they are the
    spec's fault, named once, instead of a ValueError in every trial that derives the pod's
    forwarder address or the tenant's Host from them."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        return f"{url[:120]!r} is not a URL: {exc}"
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        return f"{url[:120]!r} must be ws:// or wss:// with a host"
    if port == 0:
        return f"{url[:120]!r}: port 0 cannot be dialled"
    if any(c.isspace() or not c.isprintable() for c in url):
        return f"{url[:120]!r} holds whitespace or control characters"
    return None


# Answers to a websocket handshake that say the relay does not serve this URL's authority as a
# tenant (the dev relay and Buzz answer 404 for a Host they are not bound to; 421 is HTTP's own
# word for it). 408/429 and 5xx are the relay being busy or down: retried, not blamed on the spec.
_NOT_THIS_HOST = frozenset({400, 403, 404, 410, 421})


def handshake_refusal(url: str, status: int) -> str | None:
    """The spec.relay.url message for a handshake answered `status`, or None when it is an outage."""
    if status not in _NOT_THIS_HOST:
        return None
    return (f"the relay answers the websocket handshake for {relay_url_authority(url)} with HTTP {status}: it "
            "is bound to another host (spec.relay.url must be the URL the relay was started with)")
