"""`buzz-operator`: run the kopf operator over the handlers in buzz_operator.handlers."""

from __future__ import annotations

import argparse
import asyncio
import logging

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
    return parser.parse_args(argv)


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
    asyncio.run(kopf.operator(
        standalone=True,
        clusterwide=args.all_namespaces or not args.namespace,
        namespaces=args.namespace,
        liveness_endpoint=args.liveness or None,
    ))


if __name__ == "__main__":
    main()
