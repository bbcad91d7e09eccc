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
    results_document,
)
from buzz_operator.results.files import split_trial_key, table_needs
from buzz_operator.results.harbor_job import job_config, job_result, job_stats, leaderboard_metadata
from buzz_operator.results.notes import caveats
from buzz_operator.results.report import render_comparison_report, render_report
from buzz_operator.results.schema import RESULTS_SCHEMA
from buzz_operator.results.statistics import Resampling
from buzz_operator.results.sweep_files import tabulate_sweep
from buzz_operator.results.table import ConditionRow, ResultsTable, group, tabulate
from buzz_operator.results.transcript import render_thread, thread
from buzz_operator.results.trial import TrialRecord, read_trial

__all__ = [
    "COMPARE_SCHEMA",
    "CSV_COLUMNS",
    "RESULTS_SCHEMA",
    "CompareError",
    "ConditionRow",
    "ConditionStats",
    "Resampling",
    "ResultsTable",
    "Side",
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
    "results_document",
    "side",
    "split_trial_key",
    "table_needs",
    "tabulate",
    "tabulate_sweep",
    "thread",
]
