"""``timing.json`` (docs/corridor.md#timingjson): how a trial's wall clock was spent, from monotonic clocks."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

TIMING_SCHEMA_VERSION = 1
# The seed's wording, verbatim: readers compare the field across harnesses.
TIMING_DEFINITION = (
    "agent_active_seconds spans task prompt dispatch through "
    "observed turn completion or timeout; it excludes runtime "
    "preparation and post-turn settlement/collection"
)


@dataclass(frozen=True, slots=True)
class TrialTiming:
    """Seconds spent in each stretch of one trial; None where the stretch never began."""

    runtime_until_bundle_seconds: float
    pre_prompt_seconds: float | None
    agent_active_seconds: float | None
    usage_settle_seconds: float

    def to_json(self) -> dict[str, Any]:
        """The seed's key order (the file is written unsorted)."""
        return {
            "schema_version": TIMING_SCHEMA_VERSION,
            "definition": TIMING_DEFINITION,
            "runtime_until_bundle_seconds": self.runtime_until_bundle_seconds,
            "pre_prompt_seconds": self.pre_prompt_seconds,
            "agent_active_seconds": self.agent_active_seconds,
            "usage_settle_seconds": self.usage_settle_seconds,
        }

    def render(self) -> str:
        """``timing.json`` text: indent 2, insertion order, trailing newline (docs/corridor.md#timingjson)."""
        return json.dumps(self.to_json(), indent=2) + "\n"


def trial_timing(
    *,
    runtime_started: float,
    bundle_started: float,
    active_started: float | None,
    active_finished: float | None,
    usage_settle_seconds: float,
) -> TrialTiming:
    """Timing from monotonic stamps, as the seed derives it.

    ``active_finished`` may be None only if the prompt was never sent; a trial that sent it and
    then failed must pass the moment it stopped waiting.
    """
    return TrialTiming(
        runtime_until_bundle_seconds=bundle_started - runtime_started,
        pre_prompt_seconds=active_started - runtime_started if active_started is not None else None,
        agent_active_seconds=(
            active_finished - active_started
            if active_started is not None and active_finished is not None
            else None
        ),
        usage_settle_seconds=usage_settle_seconds,
    )
