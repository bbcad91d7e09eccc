"""spec.rerun sets a committed run aside under reruns/<generation>/ so the trial can run again."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from buzz_operator.storage.bundle import is_committed, set_aside, upload_bundle, upload_failed_try
from buzz_operator.storage.file_store import FileStore


def _bundle(root: Path, text: str) -> Path:
    (root / "agent" / "buzz").mkdir(parents=True)
    (root / "agent" / "buzz" / "receipts.jsonl").write_text(text)
    (root / "config.json").write_text("{}")
    (root / "result.json").write_text(json.dumps({"r": text}, separators=(", ", ": ")))
    return root


def test_committed_run_moves_under_reruns_and_the_trial_is_uncommitted(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "store")
    asyncio.run(upload_bundle(store, "s", "t", _bundle(tmp_path / "run1", "first")))
    asyncio.run(upload_failed_try(store, "s", "t", 1, _bundle(tmp_path / "try1", "try")))
    assert asyncio.run(set_aside(store, "s", "t", 2)) == 6
    assert not asyncio.run(is_committed(store, "s", "t"))
    kept = tmp_path / "store" / "s" / "t" / "reruns" / "2"
    assert (kept / "result.json").read_text() == '{"r": "first"}'
    assert (kept / "agent" / "buzz" / "receipts.jsonl").read_text() == "first"
    assert (kept / "retries" / "1" / "result.json").exists()  # the run's tries go with it
    assert not (tmp_path / "store" / "s" / "t" / "retries" / "1" / "result.json").exists()
    # idempotent: a second call (after a crash) moves nothing more and loses nothing
    assert asyncio.run(set_aside(store, "s", "t", 2)) == 0
    assert (kept / "result.json").exists()
    # the trial can be committed afresh
    asyncio.run(upload_bundle(store, "s", "t", _bundle(tmp_path / "run2", "second")))
    assert asyncio.run(is_committed(store, "s", "t"))
