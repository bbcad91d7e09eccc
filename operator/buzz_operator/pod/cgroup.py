"""What the task container's cgroup says it used (docs/resources.md#telemetry): peak memory, the
kernel's OOM kills, CPU time and CFS throttling — read from inside the container by exec, with
no privilege (the kubelet mounts the container's own cgroup read-only at /sys/fs/cgroup), on
cgroup v2 and v1 alike.

`read(label)` prints the counter files, each line as `@@cgroup:<label> <file> <line>`, to
stderr, so one exec can read before and after what it runs; `parse` turns the lines of a label
into a `Reading`, and `usage` the readings at a phase's start and end into what the phase used. Counters are deltas; the peak is the container's since it started (neither v1's
max_usage_in_bytes nor v2's memory.peak can be reset on a read-only mount), so the verifier's
peak includes the agents' when theirs was higher.
"""

from __future__ import annotations

from dataclasses import dataclass

from buzz_operator.api.trial import ResourceUsage

MARK = "@@cgroup:"
_V2 = ("memory.peak", "memory.max", "memory.events", "cpu.stat")
_V1 = (
    "memory/memory.max_usage_in_bytes", "memory/memory.limit_in_bytes", "memory/memory.oom_control",
    "cpu/cpu.stat", "cpuacct/cpuacct.usage",
)
# A v1 "no limit" is the largest page-aligned 63-bit number; anything this large is no limit.
_UNLIMITED = 1 << 60


def _lines(mark: str, files: tuple[str, ...]) -> str:
    return "; ".join(
        f"if [ -r /sys/fs/cgroup/{name} ]; then "
        f"while IFS= read -r l; do echo \"{mark}{name} $l\" >&2; done < /sys/fs/cgroup/{name}; fi"
        for name in files
    )


def read(label: str) -> str:
    """The shell that prints the cgroup's counters under `label` to stderr; it never fails."""
    mark = f"{MARK}{label} "
    # v2 has cgroup.controllers at the root of its (namespaced) mount; v1 one folder per controller
    return (f"{{ if [ -f /sys/fs/cgroup/cgroup.controllers ]; then echo '{mark}version 2' >&2; {_lines(mark, _V2)}; "
            f"else echo '{mark}version 1' >&2; {_lines(mark, _V1)}; fi; }} || true")


@dataclass(frozen=True)
class Reading:
    version: int
    peak_memory_bytes: int | None = None
    memory_limit_bytes: int | None = None
    oom_kills: int | None = None
    cpu_usage_ns: int | None = None
    periods: int | None = None
    throttled_periods: int | None = None
    throttled_ns: int | None = None


def _number(text: str) -> int | None:
    text = text.strip()
    return int(text) if text.isdigit() else None


def _keyed(lines: list[str]) -> dict[str, int]:
    out = {}
    for line in lines:
        key, _, value = line.partition(" ")
        if (number := _number(value)) is not None:
            out[key] = number
    return out


def parse(text: str, label: str) -> Reading | None:
    """The reading under `label` in an exec's stderr (other lines ignored); None when there is none."""
    mark = f"{MARK}{label} "
    files: dict[str, list[str]] = {}
    for line in text.splitlines():
        if line.startswith(mark):
            name, _, rest = line[len(mark):].partition(" ")
            files.setdefault(name, []).append(rest)
    version = _number((files.pop("version", None) or [""])[0])
    if version == 2:
        return _v2(files)
    if version == 1:
        return _v1(files)
    return None


def _first(files: dict[str, list[str]], name: str) -> int | None:
    return _number((files.get(name) or [""])[0])


def _v2(files: dict[str, list[str]]) -> Reading:
    events, cpu = _keyed(files.get("memory.events", [])), _keyed(files.get("cpu.stat", []))
    usage, throttled = cpu.get("usage_usec"), cpu.get("throttled_usec")
    return Reading(
        version=2, peak_memory_bytes=_first(files, "memory.peak"),
        memory_limit_bytes=_first(files, "memory.max"),  # "max" (no limit) is not a number: None
        oom_kills=events.get("oom_kill"),
        cpu_usage_ns=None if usage is None else usage * 1000, periods=cpu.get("nr_periods"),
        throttled_periods=cpu.get("nr_throttled"), throttled_ns=None if throttled is None else throttled * 1000,
    )


def _v1(files: dict[str, list[str]]) -> Reading:
    oom, cpu = _keyed(files.get("memory/memory.oom_control", [])), _keyed(files.get("cpu/cpu.stat", []))
    limit = _first(files, "memory/memory.limit_in_bytes")
    return Reading(
        version=1, peak_memory_bytes=_first(files, "memory/memory.max_usage_in_bytes"),
        memory_limit_bytes=None if limit is None or limit >= _UNLIMITED else limit,
        oom_kills=oom.get("oom_kill"),  # kernels before 4.13 do not count them: None
        cpu_usage_ns=_first(files, "cpuacct/cpuacct.usage"), periods=cpu.get("nr_periods"),
        throttled_periods=cpu.get("nr_throttled"), throttled_ns=cpu.get("throttled_time"),
    )


def _delta(end: int | None, start: int | None) -> int | None:
    if end is None or start is None:
        return end
    return end - start if end >= start else end  # lower than before: the container restarted


def usage(end: Reading, start: Reading | None = None) -> ResourceUsage:
    """What a phase used: the counters' growth since `start` (since the container started when
    None), and the container's peak memory so far."""
    begin = start if start is not None and start.version == end.version else None

    def moved(name: str) -> int | None:
        return _delta(getattr(end, name), getattr(begin, name) if begin else None)

    cpu_ns, throttled_ns = moved("cpu_usage_ns"), moved("throttled_ns")
    return ResourceUsage(
        cgroup=end.version,
        peak_memory_mb=None if end.peak_memory_bytes is None else round(end.peak_memory_bytes / 2**20, 1),
        memory_limit_mb=None if end.memory_limit_bytes is None else round(end.memory_limit_bytes / 2**20, 1),
        oom_kills=moved("oom_kills"),
        cpu_seconds=None if cpu_ns is None else round(cpu_ns / 1e9, 3),
        periods=moved("periods"), throttled_periods=moved("throttled_periods"),
        throttled_seconds=None if throttled_ns is None else round(throttled_ns / 1e9, 3),
    )
