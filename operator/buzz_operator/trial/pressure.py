"""ResourcePressure: the box, not the team, may have decided an answer (docs/resources.md#pressure).

A process the kernel OOM-killed inside a task container that lived on — a compile, a test run,
a language server — is invisible to the team except as an error it then works around or not, and
the trial is scored as the model's result. The score stands (the team may well have recovered),
but the trial carries this condition with the counts, a Warning Event says so, and the results
flag it beside the score, as the seed's summariser flags a suspect zero.
"""

from __future__ import annotations

from buzz_operator.api.trial import ResourceUsage

RESOURCE_PRESSURE = "ResourcePressure"
OOM_KILLS = "ProcessesOOMKilled"


def _mb(value: float | None) -> str:
    return "?" if value is None else f"{value:g}"


def condition(usage: ResourceUsage | None) -> tuple[str, str] | None:
    """(reason, message) of the condition the agents' phase earns, None when it earns none."""
    if usage is None or not usage.oom_kills:
        return None
    plural = "es" if usage.oom_kills != 1 else ""
    return OOM_KILLS, (f"the kernel killed {usage.oom_kills} process{plural} for memory while the agents worked "
                       f"(peak {_mb(usage.peak_memory_mb)} MiB of {_mb(usage.memory_limit_mb)} MiB); "
                       "the score stands, flagged")
