"""The canary's network probe, pure: a stdlib-only Python script the canary's `probe` container
(the operator image, which always has python3) runs, and the pure helpers around it.

It shares the pod's network namespace with the task container, so it sees exactly the egress the
trial pod gets in its current phase — whatever the task image holds (no curl needed). It reports,
for each named TCP target, `open`, `refused`, `timeout`, `unreachable` or `dns` (the name does
not resolve in the pod), in rounds one second apart until two rounds agree (an enforcer applies a
new pod's or a changed label's policy a moment later); and for a TLS target, the issuer of the
certificate it is served (read from the DER without verifying it: an intercepting proxy's
certificate would not verify) or the error that kept it from seeing one.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from buzz_operator.condition import EndpointLaunchConfig

OPEN = "open"
CONNECT_TIMEOUT_S = 3.0
ROUNDS = 8
# Upper bound of one probe exec: every round timing out, plus the TLS attempts.
EXEC_S = ROUNDS * (CONNECT_TIMEOUT_S + 1) + 4 * CONNECT_TIMEOUT_S + 30

SCRIPT = r'''
import json, socket, ssl, sys, time

request = json.loads(sys.argv[1])
timeout = float(request.get("timeout", 3))
NAMES = {"550406": "C", "550408": "ST", "550407": "L", "55040a": "O", "55040b": "OU", "550403": "CN"}


def tlv(der, i):
    tag, size = der[i], der[i + 1]
    i += 2
    if size & 0x80:
        count = size & 0x7F
        size = int.from_bytes(der[i:i + count], "big")
        i += count
    return tag, i, i + size


def issuer(der):
    _, cert, _ = tlv(der, 0)
    _, tbs, _ = tlv(der, cert)
    tag, start, end = tlv(der, tbs)
    if tag == 0xA0:  # [0] version
        tag, start, end = tlv(der, end)
    _, start, end = tlv(der, end)  # serialNumber -> signature AlgorithmIdentifier
    _, start, end = tlv(der, end)  # issuer Name
    parts, i = [], start
    while i < end:
        _, rdn, rdn_end = tlv(der, i)
        j = rdn
        while j < rdn_end:
            _, attr, attr_end = tlv(der, j)
            _, oid, oid_end = tlv(der, attr)
            _, value, value_end = tlv(der, oid_end)
            name = NAMES.get(der[oid:oid_end].hex())
            if name:
                parts.append(name + "=" + der[value:value_end].decode("utf-8", "replace"))
            j = attr_end
        i = rdn_end
    return "; ".join(parts)


def tcp(host, port):
    try:
        family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    except (OSError, UnicodeError):
        return "dns"
    sock = socket.socket(family, kind, proto)
    sock.settimeout(timeout)
    try:
        sock.connect(address)
        return "open"
    except ConnectionRefusedError:
        return "refused"
    except (socket.timeout, TimeoutError):
        return "timeout"
    except OSError:
        return "unreachable"
    finally:
        sock.close()


def tls(host, port):
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return {"error": "dns"}
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            with context.wrap_socket(raw, server_hostname=host) as wrapped:
                return {"issuer": issuer(wrapped.getpeercert(binary_form=True))}
    except Exception as error:
        return {"error": (type(error).__name__ + ": " + str(error))[:160]}


result = {"tcp": {}}
targets = request.get("tcp") or {}
last = None
for _ in range(int(request.get("rounds", 8))):
    if not targets:
        break
    now = {name: tcp(host, int(port)) for name, (host, port) in sorted(targets.items())}
    result["tcp"] = now
    if now == last:
        break
    last = now
    time.sleep(1)
if request.get("tls"):
    host, port = request["tls"]
    for attempt in range(2):
        result["tls"] = tls(host, int(port))
        if "issuer" in result["tls"] or result["tls"]["error"] == "dns":
            break
        time.sleep(1)
print(json.dumps(result, sort_keys=True))
'''


def request(tcp: Mapping[str, tuple[str, int]], tls: tuple[str, int] | None = None, *,
            rounds: int = ROUNDS, timeout_s: float = CONNECT_TIMEOUT_S) -> dict[str, Any]:
    return {"tcp": {name: [host, port] for name, (host, port) in tcp.items()}, "tls": list(tls) if tls else None,
            "rounds": rounds, "timeout": timeout_s}


def command(probe_request: Mapping[str, Any]) -> str:
    """The shell line that runs SCRIPT (sent as the exec's stdin payload, kube.exec.wrap) on a request."""
    return f'exec python3 -c "$(head -c "$BUZZ_STDIN_BYTES")" {shlex.quote(json.dumps(probe_request))}'


class ProbeError(ValueError):
    """The probe printed no answer it could be read from."""


def parse(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.strip().splitlines() if line.startswith("{")]
    if not lines:
        raise ProbeError(f"the probe printed no result ({stdout.strip()[-120:]!r})")
    try:
        found = json.loads(lines[-1])
    except ValueError as exc:
        raise ProbeError(f"the probe's result is not JSON ({lines[-1][:120]!r})") from exc
    if not isinstance(found, dict) or not isinstance(found.get("tcp"), dict):
        raise ProbeError("the probe's result has no tcp map")
    return found


def url_target(url: str) -> tuple[str, int] | None:
    """(host, port) a client dials for `url` (ws/wss/http/https, default ports); None when it names none."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    default = {"ws": 80, "http": 80, "wss": 443, "https": 443}.get(parts.scheme)
    if default is None or not parts.hostname:
        return None
    return parts.hostname, port or default


PROXY_VARIABLES = frozenset({"HTTPS_PROXY", "HTTP_PROXY", "ALL_PROXY"})


def endpoint_targets(config: Mapping[str, EndpointLaunchConfig], names: Iterable[str]) -> dict[str, tuple[str, int]]:
    """Where the agents of the given endpoints connect: every http(s) URL in an endpoint's env (a
    provider's base URL) — or, when the env names a proxy (HTTPS_PROXY, HTTP_PROXY, ALL_PROXY in
    either case), the proxy alone, which is what the agents dial then — named
    `endpoint <name> (<VARIABLE>)` so a verdict never shows the host. An endpoint without one (a
    provider's default host, or the stand-in's model folded into the stack) has no target here."""
    found: dict[str, tuple[str, int]] = {}
    for name in dict.fromkeys(names):
        endpoint = config.get(name)
        if endpoint is None:
            continue
        urls = {variable: value for variable, value in sorted(endpoint.env.items())
                if urlsplit(value).scheme in ("http", "https")}
        proxies = {variable: value for variable, value in urls.items() if variable.upper() in PROXY_VARIABLES}
        for variable, value in (proxies or urls).items():
            if (target := url_target(value)) is not None:
                found[f"endpoint {name} ({variable})"] = target
    return found
