"""``buzzctl sweep export NAME DIR``: the sweep as a Harbor job directory.

    DIR/config.json      Harbor JobConfig: the trials' agents, tasks and multiplier (results/harbor_job.py)
    DIR/result.json      Harbor JobResult with JobStats as a Harbor release computes them (--harbor,
                         the newest by default; results/harbor_stats.py)
    DIR/metadata.yaml    leaderboard metadata from the roster, as run_leaderboard.py writes it
    DIR/<trial>/…        every committed trial's bundle, byte for byte (result.json included)

Only committed trials are exported: Harbor treats a trial dir without result.json as
unfinished and deletes it on resume, so copying one would only invite that. A trial whose bundle
is quarantined (suspected secrets, spec.storage.quarantinePrefix) is left out and listed: an
export is made to be shared, the quarantine to keep a leaked key from being shared.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from buzz_operator.cli.stores import guarded
from buzz_operator.cli.sweep_results import LoadedSweep
from buzz_operator.results import job_config, job_result, leaderboard_metadata
from buzz_operator.results.files import BUNDLE_MANIFEST, CONFIG, ENDPOINTS, RESULT
from buzz_operator.results.harbor_stats import NEWEST, HarborRelease
from buzz_operator.results.trial import load_json
from buzz_operator.storage.bundle import quarantine_of
from buzz_operator.storage.layout import RETRIES_DIR


def _spec(loaded: LoadedSweep) -> dict[str, Any]:
    spec = loaded.config.get("spec")
    return spec if isinstance(spec, dict) else {}


async def download(loaded: LoadedSweep, target: Path) -> list[str]:
    """Every committed trial's bundle into target/<trial>/; the trial names."""
    table = loaded.table
    committed = []
    for name in (t.name for t in table.trials):
        if await guarded(f"reading {loaded.store_url}/{table.sweep}/{name}",
                         quarantine_of(loaded.store, table.sweep, name)) is not None:
            continue
        committed.append(name)
        await guarded(
            f"downloading {loaded.store_url}/{table.sweep}/{name}",
            loaded.store.get_dir(f"{table.sweep}/{name}", target / name),
        )
    return committed


def write_job(loaded: LoadedSweep, target: Path, committed: list[str],
              release: HarborRelease = NEWEST) -> dict[str, Any]:
    """The job-level files next to the downloaded trials, the stats as Harbor ``release``
    computes them; what was written, for the output."""
    table = loaded.table
    # by name: the order Harbor's checker reads them in, so float sums agree to the last bit
    committed = sorted(committed)
    results = [load_json((target / name / RESULT).read_bytes()) for name in committed]
    trial_configs = [load_json(_read(target / name / CONFIG)) for name in committed]
    spec = _spec(loaded)
    attempts = int(
        loaded.config.get("n_attempts")
        or spec.get("attempts")
        or max((t.attempt or 1 for t in table.trials), default=1)
    )
    total = max(len(committed) + len(table.unfinished), _planned(loaded.config, attempts))
    config = job_config(
        table.sweep,
        attempts=attempts,
        parallelism=int(loaded.config.get("n_concurrent_trials") or spec.get("parallelism") or 4),
        trial_configs=trial_configs,
        sweep_config=loaded.config,
    )
    result = job_result(table.sweep, results, n_total_trials=total, n_running_trials=0,
                        n_retries=sum(_retries(target / name) for name in committed),
                        exported_at=datetime.now(UTC).isoformat().replace("+00:00", "Z"), release=release)
    target.mkdir(parents=True, exist_ok=True)
    (target / "config.json").write_text(json.dumps(config, indent=4) + "\n", encoding="utf-8")
    (target / "result.json").write_text(json.dumps(result, indent=4) + "\n", encoding="utf-8")
    metadata_written = False
    for name in committed:
        manifest = load_json(_read(target / name / BUNDLE_MANIFEST)).get("manifest")
        if isinstance(manifest, dict):
            endpoints = load_json(_read(target / name / ENDPOINTS))
            metadata = leaderboard_metadata(manifest, endpoints)
            (target / "metadata.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False), encoding="utf-8")
            metadata_written = True
            break
    return {
        "job_dir": str(target),
        "trials": len(committed),
        "unfinished": list(table.unfinished),
        "quarantined": sorted({t.name for t in table.trials} - set(committed)),
        "metadata_yaml": metadata_written,
        "harbor_release": release,
    }


def _planned(config: dict[str, Any], attempts: int) -> int:
    """tasks × attempts from the sweep's config.json (sweep.lock.sweep_config), 0 when unknown:
    its Harbor ``tasks`` list, or the ``datasets[].tasks`` of a config.json written before it."""
    listed = config.get("tasks")
    if isinstance(listed, list) and listed:
        return len(listed) * attempts
    datasets = config.get("datasets")
    if not isinstance(datasets, list):
        return 0
    tasks = sum(len(d.get("tasks") or []) for d in datasets if isinstance(d, dict))
    return tasks * attempts


def _retries(trial_dir: Path) -> int:
    """Tries abandoned on an infra failure and run again: Harbor's n_retries. Each left its
    evidence under retries/<n>/ (storage/layout.py)."""
    retries = trial_dir / RETRIES_DIR
    return sum(1 for d in retries.iterdir() if d.is_dir()) if retries.is_dir() else 0


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""
