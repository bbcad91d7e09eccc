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
On SIGUSR1 it also writes the live heap by type (a "heap" record: object count and shallow
bytes of each type, from the garbage collector's list), so a benchmark can diff two moments and
say which objects the growth is made of.

    python bench/observed_operator.py NAMESPACE STATS_FILE [--sweep-path | --pod-path]
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import json
import logging
import signal
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import kopf
from buzz_operator import handlers
from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.preflight.canary import canary_name
from buzz_operator.sweep import runtime as sweep_runtime

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


class Stats:
    def __init__(self, path: Path) -> None:
        self.path = path
        # reentrant: the SIGUSR1 handler writes from the main thread, which may be inside a write
        self.lock = threading.RLock()

    def write(self, record: dict[str, Any]) -> None:
        with self.lock, self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")

    def sample_forever(self, stop: threading.Event) -> None:
        while True:
            with _LOCK:
                requests = dict(REQUESTS)
            self.write({"kind": "sample", "t": time.time(), "rss_mb": rss_mb(), "requests": requests})
            if stop.wait(1.0):
                return


# The creates of the reconcile running in this task: every sweep's timer runs in its own task,
# so concurrent reconciles of two sweeps do not count each other's creates.
CREATING: contextvars.ContextVar[dict[str, float]] = contextvars.ContextVar("creating")


def time_trial_creation() -> None:
    """Time spent creating trials (the wall time of a reconcile's creates, which run several at
    once), so a reconcile's own work can be told from the apiserver's."""
    original = sweep_runtime._create_all

    async def create_all(kube: Any, namespace: str, bodies: Any) -> None:
        began = time.perf_counter()
        try:
            await original(kube, namespace, bodies)
        finally:
            if (tally := CREATING.get(None)) is not None:
                tally["ms"] += (time.perf_counter() - began) * 1000
                tally["count"] += len(bodies)

    sweep_runtime._create_all = create_all


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


def dump_heap_on_signal(stats: Stats) -> None:
    def dump(_signum: int, _frame: object) -> None:
        began = time.perf_counter()
        sys._debugmallocstats()  # pymalloc's arenas and pools, to the operator's log (stderr)
        heap = heap_by_type()
        stats.write({"kind": "heap", "t": time.time(), "rss_mb": rss_mb(), "types": heap,
                     "ms": (time.perf_counter() - began) * 1000})

    signal.signal(signal.SIGUSR1, dump)


def build_registry(stats: Stats) -> kopf.OperatorRegistry:
    registry = kopf.OperatorRegistry()
    kopf.on.login(registry=registry)(handlers.login)
    kopf.on.startup(registry=registry)(handlers.startup)
    kopf.on.cleanup(registry=registry)(handlers.cleanup)
    kopf.index(GROUP, VERSION, handlers.TRIALS, registry=registry, id="trial_summaries")(handlers.trial_summaries)

    async def reconcile_sweep(**kwargs: Any) -> None:
        known = len(kwargs["trial_summaries"].get(None, []))
        tally = {"ms": 0.0, "count": 0}
        CREATING.set(tally)
        began = time.perf_counter()
        await handlers.reconcile_sweep(**kwargs)
        stats.write({"kind": "reconcile", "t": time.time(), "sweep": kwargs["body"].metadata.name,
                     "ms": (time.perf_counter() - began) * 1000, "create_ms": tally["ms"],
                     "created": tally["count"],
                     "known": known, "known_after": len(kwargs["trial_summaries"].get(None, []))})

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
