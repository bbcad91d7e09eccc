"""Preflight verdicts, pure: what each raw observation means, and what the sweep does with them.

A check that cannot see says `skipped` and lets the sweep proceed; only a positive sign of
breakage (`failed`) stops it, with a reason that names the check (anchors: the seed skipped
its container check when Docker could not run it, and its TLS check on an unknown issuer).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from buzz_operator.api.stack import StackDigests
from buzz_operator.api.sweep import PreflightCheck, PreflightStatus
from buzz_operator.trial.stack_install import REQUIRED, STACK_MANIFEST, ManifestError, parse_manifest

DETAIL_MAX = 300
# Seconds between two runs of a failed preflight: its canary pod must not churn every tick.
RETRY_AFTER_S = 30.0

RELAY = "relay"
RELAY_OWNER_KEY = "relay-owner-key"
POSTGRES = "postgres"
STORAGE = "storage"
ENDPOINT_SECRETS = "endpoint-secrets"
IMAGES = "images"
STACK = "stack"
TRUST_STORE = "trust-store"
VERIFIER_DEPS = "verifier-deps"
TLS_INTERCEPTION = "tls-interception"
ORDER = (RELAY, RELAY_OWNER_KEY, POSTGRES, STORAGE, ENDPOINT_SECRETS, IMAGES, STACK, TRUST_STORE, VERIFIER_DEPS,
         TLS_INTERCEPTION)

# §6.1 check_tls_not_intercepted: issuers of TLS-intercepting proxies (lowercased substrings).
INTERCEPTING_ISSUERS = ("cloudflare gateway", "zscaler", "netskope", "palo alto", "forcepoint", "bluecoat",
                        "blue coat", "mitmproxy", "charles proxy", "fiddler")
TLS_PROBE_HOST = "files.pythonhosted.org"  # the seed asked for PyPI's file host's issuer


class Verdict(StrEnum):
    PASSED = "passed"
    SKIPPED = "skipped"
    FAILED = "failed"


@dataclass(frozen=True)
class CheckResult:
    name: str
    verdict: Verdict
    detail: str = ""
    stack: StackDigests | None = None  # the stack check's reading, kept in status.preflight.stack

    def __post_init__(self) -> None:
        if self.name not in ORDER:
            raise ValueError(f"unknown preflight check {self.name!r}")

    @property
    def failed(self) -> bool:
        return self.verdict is Verdict.FAILED


def passed(name: str, detail: str = "") -> CheckResult:
    return CheckResult(name, Verdict.PASSED, detail)


def skipped(name: str, detail: str) -> CheckResult:
    return CheckResult(name, Verdict.SKIPPED, detail)


def failed(name: str, detail: str) -> CheckResult:
    return CheckResult(name, Verdict.FAILED, detail)


def trust_store_verdict(last_line: str) -> CheckResult:
    """SEED_TRUST_STORE's last line: present | seeded | failed (§4.2)."""
    word = last_line.strip()
    if word in ("present", "seeded"):
        return passed(TRUST_STORE, word)
    if word == "failed":
        return failed(TRUST_STORE, "the task container's trust store could not be seeded from /opt/buzz")
    return skipped(TRUST_STORE, f"unexpected answer {word[:60]!r}")


def stack_verdict(manifest: str | None, field: str) -> CheckResult:
    """The canary's /opt/buzz/stack-digests.txt (None: it could not be read), which the stack's
    init container writes after a successful install, so its absence means every trial's launch
    would fail reading it too. ``field`` is the spec field the stack comes from."""
    if manifest is None:
        return failed(STACK, f"{field}: the installed stack left no {STACK_MANIFEST}")
    try:
        digests = parse_manifest(manifest)
    except ManifestError as error:
        return failed(STACK, f"{field}: {error}")
    if REQUIRED not in digests.binaries:  # the install refuses this already; a stale image may not
        return failed(STACK, f"{field}: the stack has no bin/{REQUIRED} (found: {', '.join(sorted(digests.binaries))})")
    return CheckResult(STACK, Verdict.PASSED, f"{len(digests.binaries)} file(s) under bin/, digest "
                                              f"{digests.digest[:12]}", stack=digests)


def verifier_deps_verdict(last_line: str, *, outside_reachable: bool | None) -> CheckResult:
    """INSTALL_VERIFIER_DEPS's last line: present | installed | unavailable (§4.8).

    The seed required present or installed. `unavailable` on a cluster that cannot reach a
    package mirror is what every trial will see too, but only when the outside is reachable
    is it a sign that the image or the trust store is broken; otherwise it cannot be told apart
    from a sealed cluster whose verifiers bring their own tools.
    """
    word = last_line.strip()
    if word in ("present", "installed"):
        return passed(VERIFIER_DEPS, word)
    if word == "unavailable":
        if outside_reachable:
            return failed(VERIFIER_DEPS, "curl is missing from the task image and cannot be installed")
        return skipped(VERIFIER_DEPS, "curl missing and the cluster reaches no package mirror")
    return skipped(VERIFIER_DEPS, f"unexpected answer {word[:60]!r}")


_ISSUER = re.compile(r"^\*\s+issuer:\s*(.+)$", re.MULTILINE)


def tls_verdict(curl_verbose: str, exit_code: int | None) -> CheckResult:
    """`curl -sSv` output against the probe host: the issuer names no intercepting proxy.

    No connection (no egress, no DNS) or no issuer line means the check cannot see.
    """
    match = _ISSUER.search(curl_verbose)
    if match is None:
        why = "the cluster cannot reach the outside" if exit_code not in (None, 0) else "no issuer seen"
        return skipped(TLS_INTERCEPTION, f"{why} ({TLS_PROBE_HOST})")
    issuer = match.group(1).strip()
    lowered = issuer.lower()
    if any(name in lowered for name in INTERCEPTING_ISSUERS):
        return failed(TLS_INTERCEPTION, f"TLS to {TLS_PROBE_HOST} is intercepted (issuer {issuer[:120]})")
    return passed(TLS_INTERCEPTION, f"issuer {issuer[:120]}")


def outside_reachable(tls: CheckResult) -> bool | None:
    return None if tls.verdict is Verdict.SKIPPED else True


def missing_endpoint_keys(wanted: dict[str, str], stored_keys: Iterable[str]) -> list[str]:
    """`wanted` maps api_key_env -> endpoint; the env names the Secret lacks, sorted."""
    have = set(stored_keys)
    return sorted(name for name in wanted if name not in have)


def first_failure(results: Sequence[CheckResult]) -> CheckResult | None:
    return next((r for r in results if r.failed), None)


def failure_reason(result: CheckResult) -> str:
    """CamelCase reason naming the check: storage -> PreflightStorageFailed."""
    return "Preflight" + "".join(part.capitalize() for part in result.name.split("-")) + "Failed"


def failure_message(result: CheckResult) -> str:
    return f"preflight check {result.name} failed: {result.detail}"[:DETAIL_MAX]


def to_status(results: Sequence[CheckResult], now: datetime) -> PreflightStatus:
    return PreflightStatus(
        passed=first_failure(results) is None, checked_at=now,
        checks=[PreflightCheck(name=r.name, verdict=r.verdict.value, detail=r.detail[:DETAIL_MAX] or r.verdict.value)
                for r in results],
        stack=next((r.stack for r in results if r.stack is not None), None),
    )


def from_status(status: PreflightStatus) -> list[CheckResult]:
    return [CheckResult(c.name, Verdict(c.verdict), c.detail) for c in status.checks if c.name in ORDER]


def blocking(status: PreflightStatus) -> CheckResult | None:
    """The failed check that holds the sweep back, None once preflight passed."""
    return None if status.passed else first_failure(from_status(status))


def due(status: PreflightStatus | None, now: datetime) -> bool:
    """Whether the checks should run now: never run, or failed long enough ago."""
    if status is None or status.checked_at is None:
        return True
    if status.passed:
        return False
    return (now - status.checked_at).total_seconds() >= RETRY_AFTER_S
