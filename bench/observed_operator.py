"""The operator process bench/scale.py and bench/trial.py measure (not a benchmark of its own).

`--sweep-path` (scale.py) runs buzz_operator.handlers' sweep-level path, unchanged: the same
login and startup, the trial-summary index, the sweep reconcile timer and the janitor, registered into a
registry of their own that leaves out the per-trial daemon and delete handler, because there a
fixture plays the trial corridor (it writes each trial's terminal status itself). Without the
flag (trial.py) every handler of buzz_operator.handlers runs, as `buzz-operator -n NS` would.
`--pod-path` (kwok.py) is the sweep path plus a stand-in trial daemon that runs each trial's pod
through its lifecycle with the operator's own pod code (bench/pod_path.py), and a watch-lag
probe in the operator's event loop.

Around the handlers it only observes: every API request (both kopf and kubernetes_asyncio go
through aiohttp, so a trace config added to every session sees each one), the process RSS
once a second, and the wall time of each reconcile, appended as JSON lines to the stats file.
Every MEMORY_EVERY_S it also writes where the RSS lies (a "memory" record: the process's
anonymous and file-backed RSS, pymalloc's arenas and the bytes live in them from
`sys._debugmallocstats`, glibc's heap from `mallinfo2`), so a growth of RSS can be told apart:
objects kept, pymalloc arenas pinned by a few live blocks, or glibc's free space.
On SIGUSR1 it also writes the live heap by type (a "heap" record: object count and shallow
bytes of each type, from the garbage collector's list), so a benchmark can diff two moments and
say which objects the growth is made of. With BUZZ_BENCH_TRACEMALLOC=N (frames kept per
allocation) it traces every allocation Python makes from the start, and each SIGUSR1 after the
first also writes a "tracemalloc" record: the allocation sites whose live bytes grew most since
the first, untracked objects (bytearray, array, dict keys) and C extensions' PyMem memory
included. Tracing costs CPU and memory of its own: the RSS figures of such a run are not the
figures.

    python bench/observed_operator.py NAMESPACE STATS_FILE [--sweep-path | --pod-path]
"""

from __future__ import annotations

import asyncio
import contextvars
import ctypes
import ctypes.util
import gc
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import kopf
from buzz_operator import handlers
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.observability import metrics
from buzz_operator.preflight.canary import canary_name
from buzz_operator.sweep.drive import admit

MEMORY_EVERY_S = 30
WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
CANARY_SUFFIX = canary_name("")  # "-preflight"
REQUESTS: Counter[str] = Counter()
_LOCK = threading.Lock()


def request_key(method: str, url: str) -> str:
    """'<METHOD> <resource>[/<subresource>]' of an API path; watches are counted apart."""
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    if segments[:1] == ["api"]:
        rest = segments[2:]
    elif segments[:1] == ["apis"]:
        rest = segments[3:]
    else:
        return f"{method} (discovery)"
    if len(rest) >= 2 and rest[0] == "namespaces":
        rest = rest[2:] or ["namespaces"]
    resource = rest[0] if rest else "(root)"
    if resource == "pods" and len(rest) >= 2 and rest[1].endswith(CANARY_SUFFIX):
        resource = "pods(preflight)"  # the sweep's canary, not a trial's pod (its create has no name to tell)
    if len(rest) >= 3:
        resource += f"/{rest[2]}"
    if method == "GET" and "watch=" in parts.query and "watch=false" not in parts.query:
        method = "WATCH"
    return f"{method} {resource}"


async def _on_request_start(_: aiohttp.ClientSession, __: Any, params: aiohttp.TraceRequestStartParams) -> None:
    with _LOCK:
        REQUESTS[request_key(params.method, str(params.url))] += 1


def install_request_counter() -> None:
    trace = aiohttp.TraceConfig()
    trace.on_request_start.append(_on_request_start)
    original = aiohttp.ClientSession.__init__

    def init(self: aiohttp.ClientSession, *args: Any, **kwargs: Any) -> None:
        kwargs["trace_configs"] = [*(kwargs.get("trace_configs") or []), trace]
        original(self, *args, **kwargs)

    aiohttp.ClientSession.__init__ = init  # type: ignore[method-assign]


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]


def _mallinfo2() -> Any:
    try:
        function = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallinfo2
    except (OSError, AttributeError):  # not glibc >= 2.33
        return None
    function.restype = _MallInfo2
    return function


MALLINFO2 = _mallinfo2()
_PYMALLOC_LINES = {
    "arenas": re.compile(r"^# arenas allocated current\s*=\s*([\d,]+)", re.M),
    "live": re.compile(r"^# bytes in allocated blocks\s*=\s*([\d,]+)", re.M),
    "free_blocks": re.compile(r"^# bytes in available blocks\s*=\s*([\d,]+)", re.M),
    "free_pools": re.compile(r"^\d+ unused pools \* \d+ bytes\s*=\s*([\d,]+)", re.M),
}


def pymalloc_stats() -> dict[str, float]:
    """pymalloc's arenas (a count) and its bytes live, free in used pools and in unused pools (MB).
    `sys._debugmallocstats` writes to the C stderr only, so fd 2 points at a file for the call;
    a log line another thread wrote between the two dup2s would land in that file (none was
    seen: this is a benchmark's process, and the call holds the GIL)."""
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        try:
            sys.stderr.flush()
            os.dup2(sink.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        sink.seek(0)
        text = sink.read().decode(errors="replace")
    found = {key: pattern.search(text) for key, pattern in _PYMALLOC_LINES.items()}
    # with PYTHONMALLOC=malloc there is no pymalloc, and none of these lines
    return {key: (int(match.group(1).replace(",", "")) / (1 if key == "arenas" else 2**20)) if match else 0.0
            for key, match in found.items()}


def resident_of(directory: Path) -> int:
    """Bytes resident in this process of the mappings of files under `directory` (smaps' Rss):
    the settled trials' column pages a reconcile touched and no rest has dropped yet."""
    prefix, total, counting = str(directory) + "/", 0, False
    with open("/proc/self/smaps", encoding="utf-8", errors="replace") as smaps:
        for line in smaps:
            head = line.split(maxsplit=5)
            if head and "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
                counting = len(head) == 6 and head[5].startswith(prefix)
            elif counting and line.startswith("Rss:"):
                total += int(line.split()[1]) * 1024
    return total


def memory_parts() -> dict[str, float]:
    """Where the RSS lies, in MB (arenas: a count): RssAnon/RssFile, pymalloc, glibc."""
    parts: dict[str, float] = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            parts[key] = int(value.split()[0]) / 1024
    parts.update({f"pymalloc_{key}": value for key, value in pymalloc_stats().items()})
    settled = getattr(metrics.SNAPSHOT, "settled", None)
    if settled is not None and hasattr(settled.store, "mapped_bytes"):
        # the settled trials' columns, in files the operator maps (sweep/drive/mapped.py): the
        # page cache holds them, and RssFile what a reconcile touched since the last rest
        parts["settled_mapped"] = settled.store.mapped_bytes() / 2**20
        parts["settled_resident"] = resident_of(settled.store.directory) / 2**20
    if MALLINFO2 is not None:
        info = MALLINFO2()
        parts.update({"glibc_heap": info.arena / 2**20, "glibc_mmapped": info.hblkhd / 2**20,
                      "glibc_used": info.uordblks / 2**20, "glibc_free": info.fordblks / 2**20})
    return parts


class Stats:
    def __init__(self, path: Path) -> None:
        self.path = path
        # reentrant: the SIGUSR1 handler writes from the main thread, which may be inside a write
        self.lock = threading.RLock()

    def write(self, record: dict[str, Any]) -> None:
        with self.lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def sample_forever(self, stop: threading.Event) -> None:
        ticks = 0
        while True:
            with _LOCK:
                requests = dict(REQUESTS)
            self.write({"kind": "sample", "t": time.time(), "rss_mb": rss_mb(), "requests": requests})
            if ticks % MEMORY_EVERY_S == 0:
                self.write({"kind": "memory", "t": time.time(), **memory_parts()})
            ticks += 1
            if stop.wait(1.0):
                return


# The creates of the reconcile running in this task: every sweep's timer runs in its own task,
# so concurrent reconciles of two sweeps do not count each other's creates.
CREATING: contextvars.ContextVar[dict[str, float]] = contextvars.ContextVar("creating")


def time_trial_creation() -> None:
    """Time spent creating trials (the wall time of a reconcile's creates, which run several at
    once), so a reconcile's own work can be told from the apiserver's."""
    original = admit.create_all

    async def create_all(kube: Any, namespace: str, bodies: Any) -> None:
        began = time.perf_counter()
        try:
            await original(kube, namespace, bodies)
        finally:
            if (tally := CREATING.get(None)) is not None:
                tally["ms"] += (time.perf_counter() - began) * 1000
                tally["count"] += len(bodies)

    admit.create_all = create_all


def heap_by_type() -> dict[str, list[int]]:
    """type name -> [objects, shallow bytes] of every object the collector tracks, plus the str
    and bytes objects they hold directly (untracked atoms are most of a parsed JSON body)."""
    found: dict[str, list[int]] = {}
    seen: set[int] = set()

    def count(obj: object) -> None:
        entry = found.setdefault(type(obj).__qualname__, [0, 0])
        entry[0] += 1
        entry[1] += sys.getsizeof(obj)

    for obj in gc.get_objects():
        count(obj)
        for held in (obj.values() if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else ()):
            if isinstance(held, (str, bytes, int, float)) and id(held) not in seen:
                seen.add(id(held))
                count(held)
    return found


TRACED_TOP = 25


def traced_growth(first: tracemalloc.Snapshot, now: tracemalloc.Snapshot) -> list[dict[str, Any]]:
    """The TRACED_TOP allocation sites (whole traceback) whose live bytes grew most."""
    return [{"bytes": stat.size_diff, "blocks": stat.count_diff,
             "frames": [f"{f.filename.rsplit('site-packages/', 1)[-1]}:{f.lineno}" for f in stat.traceback]}
            for stat in now.compare_to(first, "traceback")[:TRACED_TOP]]


def dump_heap_on_signal(stats: Stats) -> None:
    snapshots: list[tracemalloc.Snapshot] = []

    def dump(_signum: int, _frame: object) -> None:
        began = time.perf_counter()
        heap = heap_by_type()
        stats.write({"kind": "heap", "t": time.time(), "rss_mb": rss_mb(), "types": heap,
                     "ms": (time.perf_counter() - began) * 1000})
        if tracemalloc.is_tracing():
            snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, tracemalloc.__file__)])
            if snapshots:
                stats.write({"kind": "tracemalloc", "t": time.time(), "sites": traced_growth(snapshots[0], snapshot)})
            else:
                snapshots.append(snapshot)

    signal.signal(signal.SIGUSR1, dump)


def build_registry(stats: Stats) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(handlers.login)
    kopf.on.startup(registry=registry)(handlers.startup)
    kopf.on.cleanup(registry=registry)(handlers.cleanup)
    kopf.index(GROUP, VERSION, handlers.TRIALS, registry=registry, id="trial_views")(handlers.trial_views)

    async def reconcile_sweep(**kwargs: Any) -> None:
        known = len(kwargs["trial_views"].get(None, []))
        tally = {"ms": 0.0, "count": 0}
        CREATING.set(tally)
        began = time.perf_counter()
        await handlers.reconcile_sweep(**kwargs)
        stats.write({"kind": "reconcile", "t": time.time(), "sweep": kwargs["body"].metadata.name,
                     "ms": (time.perf_counter() - began) * 1000, "create_ms": tally["ms"],
                     "created": tally["count"],
                     "known": known, "known_after": len(kwargs["trial_views"].get(None, []))})

    kopf.timer(GROUP, VERSION, handlers.SWEEPS, interval=handlers.SWEEP_INTERVAL_S, registry=registry,
               id="reconcile_sweep")(reconcile_sweep)
    # the janitor is sweep-level too: it lists the namespace's trials, pods and Secrets every minute
    kopf.timer(GROUP, VERSION, handlers.SWEEPS, interval=handlers.JANITOR_INTERVAL_S,
               initial_delay=handlers.JANITOR_INTERVAL_S, registry=registry, id="janitor")(handlers.janitor)
    return registry


def add_pod_path(registry: kopf.OperatorRegistry, stats: Stats, namespace: str) -> None:
    """bench/pod_path.py's stand-in trial daemon and the watch-lag probe, into `registry`."""
    import pod_path  # bench/, this script's folder, is first on sys.path

    pod_path.register(registry, GROUP, VERSION, handlers.TRIALS, stats.write)

    async def start_probe(memo: kopf.Memo, **_: Any) -> None:
        # after handlers.startup (registered first), which connects memo.kube
        memo.lag_probe = asyncio.create_task(pod_path.probe_lag(memo.kube, namespace, stats.write))

    kopf.on.startup(registry=registry, id="start_probe")(start_probe)


def main(namespace: str, stats_path: str, sweep_path: bool, pod_path: bool = False) -> None:
    # the operator's own log level: every created trial and every timer run is a line
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    if frames := int(os.environ.get("BUZZ_BENCH_TRACEMALLOC") or 0):
        tracemalloc.start(frames)
    if at_once := int(os.environ.get("BUZZ_BENCH_CREATES_AT_ONCE") or 0):
        # how many trial creates a reconcile keeps in flight (sweep/drive/admit.py), to measure another
        admit.CREATES_AT_ONCE = at_once
    install_request_counter()
    time_trial_creation()
    stats = Stats(Path(stats_path))
    dump_heap_on_signal(stats)
    stop = threading.Event()
    sampler = threading.Thread(target=stats.sample_forever, args=(stop,), daemon=True)
    sampler.start()
    try:
        # handlers registered itself into kopf's default registry on import
        registry = build_registry(stats) if sweep_path or pod_path else kopf.get_default_registry()
        if pod_path:
            add_pod_path(registry, stats, namespace)
        asyncio.run(kopf.operator(registry=registry, standalone=True, clusterwide=False,
                                  namespaces=[namespace], liveness_endpoint=None))
    finally:
        stop.set()
        sampler.join()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], "--sweep-path" in sys.argv[3:], "--pod-path" in sys.argv[3:])
