"""The secret scan of a trial's bundle, as the trial's status tells it (condition SecretsFound).

The scan (ledger/secret_scan.py) used to be recorded only in the bundle's summary.json: a bundle
with a leaked key was uploaded and nothing in status, Events, metrics or `buzzctl sweep
summary` said so. Its result now travels in the Bundled fact; the bundle is uploaded whole
either way — nothing is lost — and, when the sweep asks, under its quarantine prefix.

Pure. Nothing here ever holds a matched string: findings are kinds, files and lines.
"""

from __future__ import annotations

from collections import Counter

from buzz_operator.api.trial import MAX_SECRET_LOCATIONS, SecretFindings
from buzz_operator.ledger.secret_scan import SecretScan

SECRETS_FOUND = "SecretsFound"


def findings_of(scan: SecretScan | None, *, quarantined: bool = False) -> SecretFindings:
    """The status record of a scan; None (the bundle could not be written) is an unscanned bundle."""
    if scan is None:
        return SecretFindings(scanned=False, quarantined=quarantined)
    kinds = Counter(finding.kind for finding in scan.findings)
    return SecretFindings(
        count=len(scan.findings),
        kinds=dict(sorted(kinds.items())),
        locations=[f"{f.path}:{f.line} ({f.kind})" for f in scan.findings[:MAX_SECRET_LOCATIONS]],
        unreadable=len(scan.unreadable),
        quarantined=quarantined,
    )


def needs_quarantine(scan: SecretScan | None) -> bool:
    """A definite finding moves the bundle; files the scan could not read do not (they are
    reported, and a bundle that could not be written holds nothing to move)."""
    return scan is not None and bool(scan.findings)


def is_notable(findings: SecretFindings) -> bool:
    """Worth keeping in status: something found, or the bundle not (wholly) scanned."""
    return bool(findings.count or findings.unreadable or not findings.scanned)


def condition(findings: SecretFindings, bundle_url: str) -> tuple[bool | None, str, str]:
    """(status — None for Unknown —, reason, message) of the SecretsFound condition."""
    where = ("stored under the quarantine prefix at " if findings.quarantined else "uploaded to ") + bundle_url
    if findings.count:
        kinds = ", ".join(f"{kind} ×{n}" for kind, n in findings.kinds.items())
        more = ", …" if findings.count > len(findings.locations) else ""
        return True, "SecretsInBundle", (
            f"{findings.count} suspected secret(s) in the bundle ({kinds}) at {', '.join(findings.locations)}{more}; "
            f"the bundle was {where}")
    if not findings.scanned:
        return None, "BundleNotScanned", "the bundle could not be written, so it was not scanned"
    if findings.unreadable:
        return None, "FilesUnreadable", (
            f"{findings.unreadable} bundle file(s) could not be read by the secret scan; the bundle was {where}")
    return False, "NoFindings", ""
