"""The ledger room: what a trial cost and what it left behind (docs/bundle.md#agent-bundle, docs/failures.md).

Pure: log parsing, pricing, reconciliation, receipts, the bundle and its secret scan, Harbor's
result.json, and the verdicts a resume or a rollup needs. Imports nothing from kopf, kubernetes,
websockets, asyncpg or the object store; files are read and written locally only.
"""

from buzz_operator.ledger.accounting import (
    SeatLike,
    TrialAccounting,
    account,
    collect_accounting,
    failed_accounting,
    price_seat,
)
from buzz_operator.ledger.agent_log import (
    HANDOFF_MAX_OUTPUT_TOKENS,
    TURN_END_MARKERS,
    USAGE_MARKER,
    HandoffUsage,
    SeatLog,
    SessionUsage,
    find_seat_logs,
    scan_log_text,
    scan_seat_logs,
)
from buzz_operator.ledger.bundle import (
    BUNDLE_VERSION,
    BundleReport,
    ManifestLike,
    build_trial_summary,
    render_endpoints,
    render_manifest,
    write_bundle,
)
from buzz_operator.ledger.harbor_result import (
    AGENT_NAME,
    AGENT_VERSION,
    PhaseTiming,
    TrialException,
    agent_metadata,
    agent_result,
    box_metadata,
    build_trial_result,
    render_trial_result,
)
from buzz_operator.ledger.pricing import PricedUsage, PriceTerms, handoff_bound_cost, price_usage
from buzz_operator.ledger.receipt import SeatReceipt, render_receipts
from buzz_operator.ledger.secret_scan import SecretFinding, SecretScan, scan_bundle
from buzz_operator.ledger.timing import TrialTiming, trial_timing
from buzz_operator.ledger.verdict import (
    RewardFileEmptyError,
    RewardFileNotFoundError,
    VerifierOutputParseError,
    classify_outcome,
    read_rewards,
    reward_value,
    round_capped,
    trial_scored,
    verifier_broken,
)

__all__ = [
    "AGENT_NAME",
    "AGENT_VERSION",
    "BUNDLE_VERSION",
    "HANDOFF_MAX_OUTPUT_TOKENS",
    "TURN_END_MARKERS",
    "USAGE_MARKER",
    "BundleReport",
    "HandoffUsage",
    "ManifestLike",
    "PhaseTiming",
    "PriceTerms",
    "PricedUsage",
    "RewardFileEmptyError",
    "RewardFileNotFoundError",
    "SeatLike",
    "SeatLog",
    "SeatReceipt",
    "SecretFinding",
    "SecretScan",
    "SessionUsage",
    "TrialAccounting",
    "TrialException",
    "TrialTiming",
    "VerifierOutputParseError",
    "account",
    "agent_metadata",
    "agent_result",
    "box_metadata",
    "build_trial_result",
    "build_trial_summary",
    "classify_outcome",
    "collect_accounting",
    "failed_accounting",
    "find_seat_logs",
    "handoff_bound_cost",
    "price_seat",
    "price_usage",
    "read_rewards",
    "render_endpoints",
    "render_manifest",
    "render_receipts",
    "render_trial_result",
    "reward_value",
    "round_capped",
    "scan_bundle",
    "scan_log_text",
    "scan_seat_logs",
    "trial_scored",
    "trial_timing",
    "verifier_broken",
    "write_bundle",
]
