"""The sweep's own files in object storage: config.json and lock.json before the first trial
(and a refusal to resume into storage locked by a different experiment), summary.json as
trials finish. I/O only; the documents come from sweep.lock and sweep.report."""

from __future__ import annotations

import asyncio
import hashlib
import json
import tempfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from buzz_operator.storage import ObjectNotFound, ObjectStore, StorageUnavailable
from buzz_operator.storage.layout import sweep_config_key, sweep_lock_key, sweep_summary_key
from buzz_operator.sweep.lock import lock_drift
from buzz_operator.sweep.summary_doc import summary_text
from buzz_operator.sweep.trial_view import TrialView


def canonical(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def lock_digest(lock: Mapping[str, Any]) -> str:
    return hashlib.sha256(canonical(lock)).hexdigest()


def _pretty(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False).encode() + b"\n"


async def lock_storage(
    store: ObjectStore, sweep: str, lock: Mapping[str, Any], config: Mapping[str, Any]
) -> str | None:
    """Write config.json then lock.json when the sweep's storage has no lock; when it has one,
    None if this sweep may resume into it, else what changed. lock.json goes last so a crash in
    between leaves storage unlocked rather than locked without its config."""
    try:
        recorded = json.loads(await store.get(sweep_lock_key(sweep)))
    except ObjectNotFound:
        recorded = None
    except ValueError:
        return "lock.json in storage is not JSON"
    if recorded is not None:
        return lock_drift(recorded, lock)
    await store.put(sweep_config_key(sweep), _pretty(config))
    await store.put(sweep_lock_key(sweep), _pretty(lock))
    return None


async def write_summary(store: ObjectStore, sweep: str, head: Mapping[str, Any],
                        ordered: Iterable[TrialView]) -> str:
    """summary.json replaced whole (readers see old or new); its URL. The trials come in name
    order (sweep/known.py `SweepTrials.by_name`) and are written a trial at a time to a temporary
    file (summary_doc.summary_text) and uploaded from there, in a thread: the document of a large
    sweep is tens of MB that the operator would otherwise hold at once."""
    key = sweep_summary_key(sweep)
    try:
        with tempfile.TemporaryDirectory(prefix="buzz-summary-") as folder:
            path = Path(folder) / "summary.json"

            def write() -> None:
                with path.open("w", encoding="utf-8") as out:
                    out.writelines(summary_text(head, ordered))

            await asyncio.to_thread(write)
            await store.put_file(key, path)
    except OSError as error:  # the local scratch (TMPDIR) full or gone: like a store away, retried next tick
        raise StorageUnavailable(f"summary.json staged under {tempfile.gettempdir()}: {error}") from error
    return f"{store.url.rstrip('/')}/{key}"
