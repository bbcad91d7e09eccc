"""The summary policy on a real file:// store: summary.json is written once results change and
the status records its URL and digest; the same results are not written again; a store that
refuses the write leaves the digest as it was, so the next tick writes it."""

from __future__ import annotations

import asyncio
import json

import pytest
from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.sweep.drive import summary
from buzz_operator.sweep.drive.plan import plan
from buzz_operator.sweep.trial_view import TrialState

from tests.support.sweep_ticks import inputs, sweep_body, tick, trial

MINE = [trial("s-a", "reply-to-thread", 1), trial("s-b", "user-mention", 1, TrialState.RUNNING)]


@pytest.fixture(autouse=True)
def _fresh_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(summary, "_written", {})  # as after a restart: the first chance writes


def _write(tmp_path, status: dict | None = None) -> BuzzSweepStatus:  # type: ignore[no-untyped-def,type-arg]
    ticked, read = tick(sweep_body(status=status), mine=MINE), inputs(tmp_path)
    planned = plan(ticked, read)
    figures = planned.counted.figures(2, planned=4)
    return asyncio.run(summary.write_summary(ticked, read, planned, figures, ticked.previous))


def test_changed_results_are_written_and_recorded(tmp_path) -> None:  # type: ignore[no-untyped-def]
    new = _write(tmp_path)
    document = json.loads((tmp_path / "s" / "summary.json").read_text())
    assert [t["name"] for t in document["trials"]] == ["s-a", "s-b"]
    assert new.summary_url == f"{tmp_path.as_uri()}/s/summary.json" and new.summary_digest


def test_the_same_results_are_not_written_again(tmp_path) -> None:  # type: ignore[no-untyped-def]
    digest = _write(tmp_path).summary_digest
    (tmp_path / "s" / "summary.json").unlink()
    again = _write(tmp_path, {"summaryDigest": digest})
    assert not (tmp_path / "s" / "summary.json").exists() and again.summary_url is None


def test_a_refused_write_leaves_the_digest_for_the_next_tick(tmp_path) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "s").write_text("a file where the sweep's folder goes")  # refused whoever runs the test
    new = _write(tmp_path)
    assert new.summary_digest is None and new.summary_url is None
    (tmp_path / "s").unlink()
    assert _write(tmp_path).summary_digest  # the next tick writes it
