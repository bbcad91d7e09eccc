"""`buzz-operator`: run the kopf operator over the handlers in buzz_operator.handlers."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import socket
from collections.abc import Coroutine
from typing import Any

import kopf

DEFAULT_LIVENESS = "http://0.0.0.0:8080/healthz"
DEFAULT_METRICS = ""  # off unless asked: host runs (tests, make demo) share ports; the chart sets it


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="buzz-operator", description="Run BuzzSweeps and BuzzTrials.")
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("-n", "--namespace", action="append", default=[], help="watch this namespace (repeatable)")
    scope.add_argument("-A", "--all-namespaces", action="store_true", help="watch every namespace")
    parser.add_argument("--liveness", default=DEFAULT_LIVENESS, help="liveness endpoint ('' to disable)")
    parser.add_argument("--metrics", default=DEFAULT_METRICS, help="HOST:PORT serving Prometheus /metrics (off by default)")
    parser.add_argument("--log-format", choices=("text", "json"), default="text", help="log lines as text or JSON")
    parser.add_argument("--verbose", action="store_true", help="debug logging")
    parser.add_argument("--leader-election", action="store_true",
                        help="run the handlers only while holding the Lease (several replicas; docs/leadership.md)")
    parser.add_argument("--lease-name", default="buzz-operator", help="the Lease's name")
    parser.add_argument("--lease-namespace", default=os.environ.get("POD_NAMESPACE", ""),
                        help="the Lease's namespace (default: $POD_NAMESPACE, else the first --namespace)")
    return parser.parse_args(argv)


def identity() -> str:
    """This replica's name in the Lease: its pod's (the chart passes POD_NAME), else host and pid."""
    return os.environ.get("POD_NAME") or f"{socket.gethostname()}-{os.getpid()}"


async def _until_stopped(waiting: Coroutine[Any, Any, None]) -> bool:
    """Await ``waiting``; False when SIGTERM or SIGINT came first (kopf handles them itself once
    it runs, but a standby runs no kopf and should stop cleanly, exit 0, like a leader)."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    task, stopped = asyncio.ensure_future(waiting), asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        stopped.cancel()
    if task.done():
        task.result()
        return True
    task.cancel()
    return False


async def run(args: argparse.Namespace) -> None:
    """kopf over the handlers; with --leader-election only once this replica leads, and never
    after it stopped leading: losing the Lease ends the process at once (a handler still running
    could otherwise act beside the new leader's), and the kubelet starts it again as a standby."""
    def operator() -> Coroutine[Any, Any, None]:
        return kopf.operator(standalone=True, clusterwide=args.all_namespaces or not args.namespace,
                             namespaces=args.namespace, liveness_endpoint=args.liveness or None)

    if not args.leader_election:
        await operator()
        return
    from buzz_operator.kube.client import connect
    from buzz_operator.leadership.drive import standby
    from buzz_operator.leadership.drive.elector import Elector

    namespace = args.lease_namespace or (args.namespace[0] if args.namespace else "default")
    kube = await connect()
    elector = Elector(kube, namespace, args.lease_name, identity())
    waiting = await standby.serve(args.liveness)
    try:
        leading = await _until_stopped(elector.acquire())
    finally:
        await standby.stop(waiting)
    if not leading:  # SIGTERM while standing by: nothing to hand over
        await kube.close()
        return

    def lost(why: str) -> None:
        logging.getLogger("buzz_operator").error("no longer the leader (%s): stopping at once", why)
        logging.shutdown()
        os._exit(1)

    holding = asyncio.create_task(elector.hold(lost))
    try:
        await operator()
    finally:
        holding.cancel()
        await elector.release()
        await kube.close()


def configure_logging(*, json_format: bool, verbose: bool) -> None:
    """kopf's logging set-up, JSON or text, then the sweep and trial ids on every line."""
    from buzz_operator.observability import logs

    if json_format:
        kopf.configure(verbose=verbose, log_format=kopf.LogFormat.JSON, log_refkey=logs.REFKEY, log_prefix=False)
    else:
        kopf.configure(verbose=verbose, log_prefix=True)
    logs.add_ids_filter()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    import buzz_operator.handlers  # noqa: F401 — registers the handlers with kopf
    from buzz_operator.observability import apicalls, metrics

    configure_logging(json_format=args.log_format == "json", verbose=args.verbose)
    apicalls.install()
    if args.metrics:
        metrics.serve(args.metrics)
    logging.getLogger("buzz_operator").setLevel(logging.DEBUG if args.verbose else logging.INFO)
    asyncio.run(run(args))


if __name__ == "__main__":
    main()
