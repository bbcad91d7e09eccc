"""A trial's box as people read it (docs/resources.md): the headroom it had and what its task
container used by phase, from result.json's agent metadata. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PHASES = ("agents", "verifier")
ROWS = (  # (label, key, unit)
    ("peak memory", "peakMemoryMB", "MiB"),
    ("memory limit", "memoryLimitMB", "MiB"),
    ("OOM kills", "oomKills", ""),
    ("CPU time", "cpuSeconds", "s"),
    ("CFS periods", "periods", ""),
    ("throttled periods", "throttledPeriods", ""),
    ("throttled time", "throttledSeconds", "s"),
)


def _figure(value: Any, unit: str) -> str:
    if value is None:
        return "—"
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return f"{text} {unit}".rstrip()


def render_resources(result: Mapping[str, Any]) -> str:
    """Lines of text: the headroom, then one row per figure with a column per phase; a trial
    whose cgroup was not read says so instead of showing zeros."""
    metadata = (result.get("agent_result") or {}).get("metadata") or {}
    room = metadata.get("headroom") or {}
    limit = room.get("limitMultiple", 1.0) if room else None
    lines = [
        "headroom: " + ("not recorded (a bundle from before it was)" if not room else
                        f"{'no limit' if limit is None else f'limits {limit:g}× task.toml'}, requests "
                        f"{room.get('cpuRequestFraction', 1.0):g} CPU / {room.get('memoryRequestFraction', 1.0):g} memory")
    ]
    used = metadata.get("resource_usage") or {}
    phases = {phase: used.get(phase) or {} for phase in PHASES}
    if not any(phases.values()):
        return "\n".join([*lines, "resource use: not read (no cgroup figures in this bundle)"]) + "\n"
    cgroup = next(p.get("cgroup") for p in phases.values() if p)
    lines.append(f"{'cgroup v' + str(cgroup):<20}{'agents':>14}{'verifier':>14}")
    for label, key, unit in ROWS:
        lines.append(f"{label:<20}" + "".join(f"{_figure(phases[p].get(key), unit):>14}" for p in PHASES))
    return "\n".join(lines) + "\n"
