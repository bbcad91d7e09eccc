"""Where a benchmark's CPU went, by process: the machine's split between the operator and the
cluster it talks to, read from /proc before and after a run.

On this project's machines the control plane (apiserver, etcd, scheduler, controller manager),
kwok, the kubelet and the operator share two cores. A throughput figure alone cannot say whether
the operator or the machine bounds it; this split can: a machine with little idle time left and
the operator's share small is bound by the cluster, not by the operator.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

# /proc/<pid>/comm (15 characters at most) -> the name printed; anything else is "other"
NAMED = {
    "kube-apiserver": "kube-apiserver", "etcd": "etcd", "kube-scheduler": "kube-scheduler",
    "kube-controller": "kube-controller-manager", "kwok": "kwok", "kubelet": "kubelet",
    "containerd": "containerd", "kube-router": "kube-router", "kube-proxy": "kube-proxy",
}
TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Snapshot:
    """CPU seconds so far: per process name (live processes only) and the machine's busy and idle."""

    by_name: dict[str, float]
    busy: float
    idle: float


def _process_cpu(stat: str) -> float:
    # fields after the ")" that ends comm: utime and stime are the 12th and 13th of them
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def snapshot(operator_pid: int | None, own_pid: int | None = None) -> Snapshot:
    """Every process's CPU seconds so far, grouped by name; the operator by its pid and this
    benchmark process (its watches and clock) by its own."""
    by_name: dict[str, float] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            used = _process_cpu((entry / "stat").read_text())
        except (OSError, IndexError, ValueError):  # gone between the listing and the read
            continue
        pid = int(entry.name)
        name = ("operator" if pid == operator_pid else "benchmark" if pid == own_pid
                else NAMED.get(comm, "other"))
        by_name[name] = by_name.get(name, 0.0) + used
    cpu = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(v) for v in cpu]
    idle = (ticks[3] + ticks[4]) / TICK  # idle + iowait
    return Snapshot(by_name, busy=sum(ticks[:8]) / TICK - idle, idle=idle)


def split(before: Snapshot, after: Snapshot) -> list[tuple[str, float, float]]:
    """(name, CPU seconds, share of the machine's capacity over the interval), largest first, then
    "other" (the machine's busy time no named process accounts for: kernel threads, short-lived
    processes) and "idle"."""
    capacity = (after.busy + after.idle) - (before.busy + before.idle)
    rows = [(name, used - before.by_name.get(name, 0.0)) for name, used in after.by_name.items() if name != "other"]
    rows = [(n, s) for n, s in rows if s > 0.005]
    rows.sort(key=lambda row: -row[1])
    rows.append(("other", max(0.0, (after.busy - before.busy) - sum(s for _, s in rows))))
    rows.append(("idle", after.idle - before.idle))
    return [(name, seconds, seconds / capacity if capacity > 0 else 0.0) for name, seconds in rows]


def print_split(rows: list[tuple[str, float, float]], elapsed: float) -> None:
    print(f"CPU by process over {elapsed:.0f} s ({os.cpu_count()} cores; share of the machine's capacity):")
    for name, seconds, share in rows:
        print(f"  {name:<24} {seconds:8.1f} CPU-s  {share * 100:5.1f} %")
