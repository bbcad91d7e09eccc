"""The inputs policy: a spec pydantic refuses ends the tick with the sweep invalid, naming the
field, before anything is read from the cluster (the reads themselves run against a real API
server in tests/integration/operator/test_refusals.py)."""

from __future__ import annotations

import asyncio

import pytest
from buzz_operator.sweep.drive.inputs import read_inputs
from buzz_operator.sweep.drive.tick import Stop

from tests.support.sweep_ticks import SPEC, sweep_body, tick, trial


def test_a_refused_spec_stops_the_tick_invalid_naming_the_field() -> None:
    body = sweep_body({**SPEC, "attempts": 0}, status={"phase": "Running", "conditionHash": "h" * 64})
    with pytest.raises(Stop) as stopped:
        asyncio.run(read_inputs(tick(body, mine=[trial("s-a", "reply-to-thread", 1)])))
    patch = stopped.value.patch
    accepted = next(c for c in patch["conditions"] if c["type"] == "Accepted")
    assert accepted["status"] == "False" and accepted["reason"] == "InvalidSpec"
    assert accepted["message"].startswith("spec.attempts: ")
    assert patch["succeeded"] == 1  # the trials it has keep their figures
