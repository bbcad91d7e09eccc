"""The per-trial bundle: everything needed to re-read a trial after its pod is gone (docs/bundle.md#agent-bundle).

A sweep is expensive and unrepeatable; what survives is what was written while it ran. The bundle
puts each seat's exact prompt and logs next to what that seat cost, and is written even when the
trial failed or timed out — dropping those would bias cost figures toward successes.

``write_bundle`` writes into a local directory (the trial room uploads it) and never raises: it
runs in the trial's teardown, where an exception would replace the real outcome with a bundling
failure and lose both. A failure is recorded inside, as ``summary.json`` ``{"bundle_error": …}``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from buzz_operator.ledger.accounting import SeatLike, TrialAccounting
from buzz_operator.ledger.receipt import render_receipts
from buzz_operator.ledger.secret_scan import SecretScan, scan_bundle
from buzz_operator.ledger.timing import TrialTiming

BUNDLE_VERSION = "1"
MANIFEST_FILE = "manifest.json"
RECEIPTS_FILE = "receipts.jsonl"
ENDPOINTS_FILE = "endpoints.redacted.json"
SUMMARY_FILE = "summary.json"
TIMING_FILE = "timing.json"
# docs/condition.md#endpointsredactedjson: a redacted endpoint keeps the provider and the *names* of its variables, never a value.
REDACTED_ENDPOINT_KEYS = frozenset({"provider", "api_key_env", "env_keys"})


class ManifestLike(Protocol):
    """What the bundle reads from ``condition.ExperimentManifest``."""

    @property
    def condition(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def is_solo(self) -> bool: ...
    def model_dump(self, *, mode: str) -> dict[str, Any]: ...


@dataclass(frozen=True, slots=True)
class BundleReport:
    """Where the summary went, and what went wrong if anything did."""

    summary_path: Path
    error: str | None = None
    secret_scan: SecretScan | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def system_prompt_file(seat_id: str) -> str:
    """The composed prompt's file name in the bundle (docs/bundle.md#agent-bundle)."""
    return f"{seat_id}.system-prompt.md"


def render_manifest(manifest: ManifestLike) -> str:
    """``manifest.json``: the frozen condition and its sha256 (indent 2, sorted, docs/bundle.md#agent-bundle)."""
    return json.dumps({"sha256": manifest.sha256, "manifest": manifest.model_dump(mode="json")}, indent=2, sort_keys=True)


def render_endpoints(redacted: Mapping[str, Mapping[str, Any]]) -> str:
    """``endpoints.redacted.json`` from ``condition.redact_endpoints`` output.

    Refuses anything but the three redacted keys: an endpoint's ``env`` is exactly where a host
    or token would live, and a caller passing the unredacted config must fail here, not publish.
    """
    for name, entry in redacted.items():
        extra = sorted(set(entry) - REDACTED_ENDPOINT_KEYS)
        if extra:
            raise ValueError(f"endpoints.redacted.json: endpoint {name!r} carries unredacted keys {extra}")
    return json.dumps({name: dict(entry) for name, entry in sorted(redacted.items())}, indent=2, sort_keys=True)


def build_trial_summary(
    *,
    manifest: ManifestLike,
    trial_id: str,
    channel_id: str,
    seats: Sequence[SeatLike],
    accounting: TrialAccounting,
    secret_scan: SecretScan,
    files: Sequence[str],
    stack: Mapping[str, Any] | None,
    box: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``summary.json`` document (docs/bundle.md#trial-summary), plus the project's ``stack`` (api.stack.stack_record),
    so the bundle says which binaries produced it even without result.json, and ``box``, what the
    box gave the try and did to it (harbor_result.box_metadata), or null."""
    return {
        "bundle_version": BUNDLE_VERSION,
        "condition": manifest.condition,
        "manifest_sha256": manifest.sha256,
        "solo_roster": manifest.is_solo,
        "trial_id": trial_id,
        "channel_id": channel_id,
        "roster": [
            {
                "agent_id": seat.seat_id,
                "role": seat.kind,
                "endpoint": seat.endpoint,
                "system_prompt": system_prompt_file(seat.seat_id),
            }
            for seat in seats
        ],
        "totals": {
            "input_tokens": accounting.input_tokens,
            "output_tokens": accounting.output_tokens,
            "cost_usd": accounting.cost_usd,
            "cost_usd_no_cache_discount": accounting.cost_usd_no_cache_discount,
            "cost_usd_including_handoff_bound": accounting.cost_usd_including_handoff_bound,
        },
        "accounting": {
            "reconciled": accounting.reconciled,
            "note": accounting.reconciliation_note,
            "warnings": list(accounting.warnings),
            "estimated_cache_read_tokens": accounting.estimated_cache_read_tokens,
            "assumes_cache_discount": accounting.assumes_cache_discount,
            "handoffs": accounting.handoffs,
            "handoff_truncations": accounting.handoff_truncations,
            "handoff_cost_usd_upper_bound": accounting.handoff_cost_usd_upper_bound,
        },
        "secret_scan": secret_scan.to_json(),
        "files": list(files),
        "stack": dict(stack) if stack is not None else None,
        "box": dict(box) if box is not None else None,
    }


def bundle_files(bundle_dir: Path) -> list[str]:
    """Sorted relative paths of every file in the bundle except the summary itself.

    The seed lists the directory before writing ``summary.json``; excluding it explicitly keeps a
    rewrite (a resumed trial re-bundling) byte-identical to the first write.
    """
    return sorted(
        relative
        for path in bundle_dir.rglob("*")
        if path.is_file() and (relative := path.relative_to(bundle_dir).as_posix()) != SUMMARY_FILE
    )


def write_bundle(
    bundle_dir: Path,
    *,
    manifest: ManifestLike,
    trial_id: str,
    channel_id: str,
    seats: Sequence[SeatLike],
    accounting: TrialAccounting,
    endpoints_redacted: Mapping[str, Mapping[str, Any]],
    stack: Mapping[str, Any] | None,
    known_secrets: Iterable[str] = (),
    timing: TrialTiming | None = None,
    box: Mapping[str, Any] | None = None,
    scanned_beside: Mapping[str, Path] | None = None,
) -> BundleReport:
    """Write manifest, endpoints, receipts, timing and summary into ``bundle_dir``. Never raises.

    Prompts, logs, transcript and evidence are placed in ``bundle_dir`` by the caller *before*
    this runs, so the secret scan and the ``files`` index cover them. ``known_secrets`` is the
    trial's own secret material (seat and user Nostr keys, auth tags, API keys); ``stack`` the
    stack the try's pod installed (api.stack.stack_record; None when no pod got that far).
    ``scanned_beside`` names files of the trial outside ``bundle_dir`` the secret scan covers
    too (the trajectory, ``../trajectory.json``).
    """
    summary_path = bundle_dir / SUMMARY_FILE
    try:
        bundle_dir.mkdir(parents=True, exist_ok=True)
        (bundle_dir / MANIFEST_FILE).write_text(render_manifest(manifest), encoding="utf-8")
        (bundle_dir / ENDPOINTS_FILE).write_text(render_endpoints(endpoints_redacted), encoding="utf-8")
        receipts = bundle_dir / RECEIPTS_FILE
        receipts.write_text(render_receipts(accounting.receipts), encoding="utf-8")
        receipts.chmod(0o600)
        if timing is not None:
            (bundle_dir / TIMING_FILE).write_text(timing.render(), encoding="utf-8")
        scan = scan_bundle(bundle_dir, known_secrets, scanned_beside)
        summary = build_trial_summary(
            manifest=manifest,
            trial_id=trial_id,
            channel_id=channel_id,
            seats=seats,
            accounting=accounting,
            secret_scan=scan,
            files=bundle_files(bundle_dir),
            stack=stack,
            box=box,
        )
        summary_path.write_text(json.dumps(summary, indent=2, sort_keys=True), encoding="utf-8")
        return BundleReport(summary_path, None, scan)
    except Exception as error:  # never mask the trial's real outcome with a bundling failure
        # str(error), as the seed writes it; a message-less exception still names its type.
        message = str(error) or type(error).__name__
        try:
            summary_path.write_text(json.dumps({"bundle_error": message}, indent=2), encoding="utf-8")
        except OSError as fallback_error:
            message = f"{message}; the bundle_error summary could not be written either: {fallback_error}"
        return BundleReport(summary_path, message, None)
