"""The results room: a sweep's bundles read back into what people compare.

Per-(condition, hash) summary rows with the seed summariser's flags (docs/failures.md#summaries),
the failures list, the JSON document and its schema, Harbor job-directory documents with the
leaderboard metadata.yaml (docs/bundle.md#metadatayaml, docs/harbor.md), the channel transcript as a thread, and the
HTML report; the statistics (intervals, paired comparisons of sweeps: docs/statistics.md).
Pure: bundle files come in as bytes from the caller; no kube, network or storage.
"""

from buzz_operator.results.compare import CompareError, Side, comparison_document, side
from buzz_operator.results.compare_schema import COMPARE_SCHEMA
from buzz_operator.results.condition_stats import ConditionStats
from buzz_operator.results.document import (
    CSV_COLUMNS,
    bundle_url,
    csv_rows,
    failure_reason,
    failures,
    summary_document,
)
from buzz_operator.results.files import split_trial_key, summary_needs
from buzz_operator.results.harbor_job import job_config, job_result, job_stats, leaderboard_metadata
from buzz_operator.results.notes import caveats
from buzz_operator.results.report import render_comparison_report, render_report
from buzz_operator.results.schema import SUMMARY_SCHEMA
from buzz_operator.results.statistics import Resampling
from buzz_operator.results.summary import ConditionRow, SweepSummary, group, summarize
from buzz_operator.results.sweep_files import summarize_sweep
from buzz_operator.results.transcript import render_thread, thread
from buzz_operator.results.trial import TrialRecord, read_trial

__all__ = [
    "COMPARE_SCHEMA",
    "CSV_COLUMNS",
    "SUMMARY_SCHEMA",
    "CompareError",
    "ConditionRow",
    "ConditionStats",
    "Resampling",
    "Side",
    "SweepSummary",
    "TrialRecord",
    "bundle_url",
    "caveats",
    "comparison_document",
    "csv_rows",
    "failure_reason",
    "failures",
    "group",
    "job_config",
    "job_result",
    "job_stats",
    "leaderboard_metadata",
    "read_trial",
    "render_comparison_report",
    "render_report",
    "render_thread",
    "side",
    "split_trial_key",
    "summarize",
    "summarize_sweep",
    "summary_document",
    "summary_needs",
    "thread",
]
