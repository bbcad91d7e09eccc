"""The ttl policy: a sweep not finished, or finished less than spec.ttlSecondsAfterFinished ago,
goes on (the deletion itself runs against a real API server in tests/integration/operator)."""

from __future__ import annotations

import asyncio
from datetime import timedelta

from buzz_operator.sweep.drive.ttl import expire

from tests.support.sweep_ticks import NOW, SPEC, inputs, sweep_body, tick


def test_a_sweep_within_its_ttl_goes_on(tmp_path) -> None:  # type: ignore[no-untyped-def]
    spec = {**SPEC, "ttlSecondsAfterFinished": 3600}
    finished = (NOW - timedelta(seconds=60)).strftime("%Y-%m-%dT%H:%M:%SZ")
    for status in ({}, {"finishedAt": finished}):
        # kube is None in these ticks: a delete would fail the test
        assert asyncio.run(expire(tick(sweep_body(spec, status)), inputs(tmp_path, spec).spec)) is None


def test_a_sweep_without_a_ttl_is_kept_however_long_ago_it_finished(tmp_path) -> None:  # type: ignore[no-untyped-def]
    status = {"finishedAt": "2020-01-01T00:00:00Z"}
    assert asyncio.run(expire(tick(sweep_body(status=status)), inputs(tmp_path).spec)) is None
