"""The lock policy on a real file:// store: the lock is written once, a tick with the recorded
digest writes nothing, and a folder holding another experiment's lock stops the sweep naming
spec.storage.url."""

from __future__ import annotations

import asyncio
import json

import pytest
from buzz_operator.sweep.drive.lock import lock_of, record_lock
from buzz_operator.sweep.drive.tick import Stop

from tests.support.sweep_ticks import SPEC, inputs, sweep_body, tick


def test_the_lock_is_written_once_then_only_its_digest_compared(tmp_path) -> None:  # type: ignore[no-untyped-def]
    read = inputs(tmp_path)
    digest = asyncio.run(record_lock(tick(), read, None))
    lock_file = tmp_path / "s" / "lock.json"
    assert json.loads(lock_file.read_text()) == lock_of(tick(), read, None)
    assert (tmp_path / "s" / "config.json").exists()
    lock_file.write_text("{}")  # a tick whose status records the digest reads nothing from storage
    assert asyncio.run(record_lock(tick(sweep_body(status={"lockDigest": digest})), read, None)) == digest


def test_another_experiments_lock_stops_the_sweep_naming_the_storage(tmp_path) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(record_lock(tick(), inputs(tmp_path), None))
    other = {**SPEC, "attempts": 2, "operatorImage": "docker.io/buzz/operator:other"}
    with pytest.raises(Stop) as stopped:
        asyncio.run(record_lock(tick(sweep_body(other)), inputs(tmp_path, other), None))
    accepted = next(c for c in stopped.value.patch["conditions"] if c["type"] == "Accepted")
    assert accepted["status"] == "False" and accepted["reason"] == "InvalidSpec"
    assert accepted["message"].startswith(f"spec.storage.url: {tmp_path.as_uri()}/s/lock.json belongs to a "
                                                      "different experiment")
