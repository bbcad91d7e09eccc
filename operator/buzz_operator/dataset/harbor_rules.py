"""Harbor 0.25.0's own rules for reading a task, ported line for line so the operator reads a
task.toml exactly as Harbor does (docs/task-toml.md). Each function names the Harbor code it
follows; tests/harbor/test_task_toml.py runs Harbor's real code on the same files and checks that
both readings agree.

Pure: regular expressions and arithmetic only.
"""

from __future__ import annotations

import math
import re
from ipaddress import ip_address, ip_network

# harbor/constants.py ORG_NAME_PATTERN: `[task].name` is "org/name".
ORG_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]*/[a-zA-Z0-9][a-zA-Z0-9._-]*$")

# harbor/utils/env.py _TEMPLATE_PATTERN: a value that is wholly `${VAR}` or `${VAR:-default}`
# is a template Harbor resolves from the host's environment; any other value is literal.
ENV_TEMPLATE_PATTERN = re.compile(r"\$\{([^}:]+)(?::-(.*))?\}")

# harbor/models/task/task.py _CANARY_LINE_RE: data-provenance markers never shown to agents.
_CANARY_LINE = re.compile(r"^(<!--.*canary.*-->|#.*canary.*)$", re.IGNORECASE)

_HOST_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_INVALID_HOST = "allowed_hosts entries must be hostnames, IP addresses, or IP CIDR ranges, not URLs, ports, or paths."


def package_name_problem(name: str) -> str | None:
    """Why Harbor's `PackageInfo.validate_name_format` refuses ``name``, or None."""
    if not ORG_NAME_PATTERN.match(name) or ".." in name:
        return ("must be in 'org/name' format with alphanumeric characters, hyphens, underscores and dots, "
                f"not start with a dot nor contain '..' (got {name!r})")  # fmt: skip
    return None


def parse_size_to_mb(size: str) -> int:
    """Harbor's `EnvironmentConfig._parse_size_to_mb`: "4G" → 4096, "512M" → 512, "2048K" → 2.

    G is 1024 M and K is 1/1024 M, truncated toward zero, as Harbor's int() does; a number
    Harbor's float() cannot read, or no G/M/K suffix, is refused as Harbor refuses it.
    """
    text = size.strip().upper()
    units = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    unit = text[-1:] if text[-1:] in units else ""
    if not unit:
        raise ValueError(f"invalid size {size!r}: expected a number with G, M or K, such as '1G' or '512M'")
    try:
        number = float(text[:-1])
    except ValueError:
        raise ValueError(f"invalid size {size!r}: {text[:-1]!r} is not a number") from None
    if not math.isfinite(number):
        raise ValueError(f"invalid size {size!r}: not a finite number")
    # Harbor: int(float(x) * 1024) for G, int(float(x)) for M, int(float(x) / 1024) for K
    return int(number / 1024) if unit == "K" else int(number * units[unit])


def normalize_cpus(value: int | float) -> int | float:
    """Harbor's `normalize_cpus`: a whole float (2.0) becomes an int; NaN and infinity are refused."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cpus must be a finite number; got {value}")
        if value.is_integer():
            return int(value)
    return value


def _normalize_ipv6(host: str) -> str | None:
    if "%" in host:
        return None
    try:
        address = ip_address(host)
    except ValueError:
        return None
    return address.compressed if address.version == 6 else None


def _normalize_network(host: str) -> str | None:
    if "%" in host:
        return None
    try:
        return ip_network(host, strict=True).compressed
    except ValueError:
        return None


def normalize_allowed_hosts(hosts: list[str]) -> list[str]:
    """Harbor's `_validate_allowed_host_names`: each entry a hostname, a leading-wildcard
    hostname (`*.example.com`), an IP address or an IP CIDR range; lowercased, trailing dot
    removed, IPv6 and networks in compressed form. Anything else raises ValueError."""
    normalized: list[str] = []
    for raw in hosts:
        host = raw.strip().lower().rstrip(".")
        if not host:
            raise ValueError("allowed_hosts entries must be non-empty hostnames.")
        if "/" in host:
            network = _normalize_network(host)
            if network is None:
                raise ValueError(_INVALID_HOST)
            normalized.append(network)
            continue
        if ":" in host:
            address = _normalize_ipv6(host)
            if address is None:
                raise ValueError(_INVALID_HOST)
            normalized.append(address)
            continue
        if "[" in host or "]" in host:
            raise ValueError(_INVALID_HOST)
        if host.startswith("*."):
            suffix = host[2:]
            if not suffix:
                raise ValueError("allowed_hosts wildcard entries must include a hostname suffix.")
            try:
                ip_address(suffix)
            except ValueError:
                pass
            else:
                raise ValueError("allowed_hosts wildcard entries must target hostnames, not IP address literals.")
        elif "*" in host:
            raise ValueError("allowed_hosts wildcard entries must use a leading '*.' prefix.")
        else:
            suffix = host
        if not all(_HOST_LABEL.match(label) for label in suffix.split(".")):
            raise ValueError("allowed_hosts entries must be IP addresses, IP CIDR ranges, or valid hostnames or "
                             "leading wildcard host patterns containing only letters, digits, hyphens, and dots.")
        normalized.append(host)
    return normalized


def env_templates(env: dict[str, str]) -> list[str]:
    """The keys whose value Harbor would resolve from the host's environment (`resolve_env_vars`)."""
    return [key for key, value in env.items() if ENV_TEMPLATE_PATTERN.fullmatch(value)]


def strip_canary(text: str) -> str:
    """Harbor's `strip_canary`: leading canary comment lines, and the blank lines after them,
    are not part of the instruction the agents are given."""
    lines = text.split("\n")
    index = 0
    while index < len(lines) and _CANARY_LINE.match(lines[index].strip()):
        index += 1
    while index < len(lines) and lines[index].strip() == "":
        index += 1
    return "\n".join(lines[index:])
