"""buzzctl sweep — new, watch, summary, export.

``new`` checks a manifest and endpoint config and writes (or ``--apply``s) a BuzzSweep;
``watch`` follows one live; ``summary`` and ``export`` read the bundles in the object store
only, so they work after the cluster is gone.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated

import typer

from buzz_operator.cli import export as export_io
from buzz_operator.cli.exits import EXIT_CODES_HELP, HELP_MARKUP, BuzzGroup, fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.output import Format, OutputOption, emit
from buzz_operator.cli.results_table import render as render_results_table
from buzz_operator.cli.stores import StoreOption
from buzz_operator.cli.sweep_new import SweepNewError, SweepObjects, SweepRequest, build, render
from buzz_operator.cli.sweep_results import load_results_table
from buzz_operator.condition import ConditionError
from buzz_operator.results import RESULTS_SCHEMA, csv_rows, results_document
from buzz_operator.results.harbor_stats import HARBOR_RELEASES, NEWEST

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP, cls=BuzzGroup, no_args_is_help=True, add_completion=False, epilog=EXIT_CODES_HELP)

SweepName = Annotated[str, typer.Argument(metavar="NAME", help="The BuzzSweep's name.", show_default=False)]


@app.command("new", epilog=EXIT_CODES_HELP)
def new(
    manifest: Annotated[Path, typer.Option("--manifest", help="Team manifest (YAML or JSON).")],
    endpoints: Annotated[Path, typer.Option("--endpoints", help="Endpoint config (docs/condition.md#endpoints, JSON or YAML).")],
    dataset: Annotated[str, typer.Option("--dataset", help=(
        "builtin, configmap:NAME, store:PREFIX, registry:NAME[@VERSION]:URL, "
        "registry:NAME[@VERSION]:configmap:CONFIGMAP or package:ORG/NAME[@REF] (docs/harbor.md)."))],
    name: Annotated[
        str, typer.Option("--name", help="Name of the BuzzSweep (and prefix of its ConfigMaps).")
    ],
    namespace: NamespaceOption = "default",
    attempts: Annotated[int, typer.Option("--attempts", "-k", help="Attempts per task (pass@k).")] = 1,
    parallelism: Annotated[int, typer.Option("--parallelism", help="Most trials active at once.")] = 4,
    include: Annotated[list[str] | None, typer.Option("--include", help="Task-name glob to keep.")] = None,
    exclude: Annotated[list[str] | None, typer.Option("--exclude", help="Task-name glob to drop.")] = None,
    timeout_multiplier: Annotated[float, typer.Option("--timeout-multiplier")] = 1.0,
    max_cost: Annotated[
        float | None, typer.Option("--max-cost-usd", help="Budget: stop starting trials here.")
    ] = None,
    cpu_request_fraction: Annotated[float, typer.Option("--cpu-request-fraction")] = 1.0,
    artifact_root: Annotated[
        Path | None,
        typer.Option("--artifact-root", help="Where prompt paths resolve; default: the manifest's dir."),
    ] = None,
    relay_url: Annotated[str, typer.Option("--relay-url")] = "ws://localhost:3600",
    relay_service: Annotated[
        str, typer.Option("--relay-service", help="Relay Service name.")
    ] = "buzz-dev-relay",
    relay_port: Annotated[int, typer.Option("--relay-port")] = 3600,
    relay_secret: Annotated[
        str, typer.Option("--relay-secret", help="Secret with owner-key and postgres-dsn.")
    ] = "buzz-dev-relay",
    storage: Annotated[
        str | None, typer.Option("--storage", help="Bundle store URL (operator default).")
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Create the objects in the cluster instead of printing.")
    ] = False,
) -> None:
    """Write a BuzzSweep (+ its ConfigMaps; the API-key Secret only with --apply) after checking
    prompt digests, endpoints (no placeholders) and API-key variables."""
    request = SweepRequest(
        name=name, manifest=manifest, endpoints=endpoints, dataset=dataset, artifact_root=artifact_root,
        attempts=attempts, parallelism=parallelism, include=tuple(include or ()), exclude=tuple(exclude or ()),
        timeout_multiplier=timeout_multiplier, max_cost_usd=max_cost, cpu_request_fraction=cpu_request_fraction,
        relay_url=relay_url, relay_service=relay_service, relay_port=relay_port, relay_secret=relay_secret,
        storage_url=storage,
    )  # fmt: skip
    objects = _built(request)
    if apply:
        _apply(namespace, objects)
    else:
        _print(objects)


def _built(request: SweepRequest) -> SweepObjects:
    """The sweep's objects, or exit 1 naming what in the manifest or endpoint config is wrong."""
    try:
        return build(request)
    except (ConditionError, SweepNewError) as error:
        fail(str(error))


def _apply(namespace: str, objects: SweepObjects) -> None:
    from buzz_operator.cli.apply import apply_objects  # the Kubernetes client: only when it is used

    created = asyncio.run(apply_objects(namespace, objects))
    for line in created:
        typer.echo(line)


def _print(objects: SweepObjects) -> None:
    """The objects as YAML on stdout, all but the API-key Secret, which stderr only names."""
    typer.echo(render(objects), nl=False)
    secret = objects.secret["metadata"]["name"]
    variables = ", ".join(sorted(objects.secret["stringData"]))
    typer.echo(
        f"# Secret {secret} ({variables}) is not printed: API keys never leave the environment. "
        "Create it with --apply.",
        err=True,
    )


@app.command("watch", epilog=EXIT_CODES_HELP)
def watch(
    name: SweepName,
    namespace: NamespaceOption = "default",
    interval: Annotated[float, typer.Option("--interval", help="Seconds between refreshes.")] = 2.0,
    once: Annotated[bool, typer.Option("--once", help="Print one snapshot and exit.")] = False,
) -> None:
    """Live progress: trials by state, running trials with phase and age, cost against the
    budget, and why trials wait. Ends when the sweep is Complete or Failed."""
    from buzz_operator.cli.sweep_watch import watch as watch_sweep  # the Kubernetes client: only here

    asyncio.run(watch_sweep(namespace, name, interval=interval, once=once))


# `summary` was this command's name until 2026-12-05; "summary" now means only the documents
# named summary.json (docs/design.md#words), and the old name still runs it, unlisted
@app.command("summary", epilog=EXIT_CODES_HELP, hidden=True)
@app.command("results", epilog=EXIT_CODES_HELP)
def results(
    name: SweepName,
    output: OutputOption = Format.TABLE,
    failures: Annotated[
        bool, typer.Option("--failures", help="Also list zero-scoring trials and bundles.")
    ] = False,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Per (condition, hash): trials, mean reward, pass@k, $/trial and total (floor–ceiling),
    tokens, time and the seed summariser's flags — computed from the bundles in storage."""
    loaded = asyncio.run(load_results_table(name, store, namespace))
    document = results_document(loaded.table, loaded.store_url, with_failures=failures)
    emit(
        document,
        output,
        table=lambda console: render_results_table(console, loaded.table, document),
        csv_rows=csv_rows(loaded.table),
    )


@app.command("schema")
def schema() -> None:
    """Print the JSON Schema of `sweep results -o json`."""
    typer.echo(json.dumps(RESULTS_SCHEMA, indent=2))


@app.command("export", epilog=EXIT_CODES_HELP)
def export(
    name: SweepName,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Job directory to create.", show_default=False)
    ],
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
    output: OutputOption = Format.YAML,
    harbor: Annotated[
        str,
        typer.Option("--harbor", metavar="RELEASE",
                     help=f"The Harbor release whose job stats result.json carries: {', '.join(HARBOR_RELEASES)} "
                          "(they count different trials; docs/harbor.md#job-statistics)."),
    ] = NEWEST,
) -> None:
    """The sweep as a Harbor job directory: config.json, result.json (job stats), one dir per
    committed trial, and a leaderboard metadata.yaml derived from the roster."""
    if harbor not in HARBOR_RELEASES:
        fail(f"--harbor: {harbor!r} is not a release this build computes stats for ({', '.join(HARBOR_RELEASES)})")
    if directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        fail(f"DIR: {directory} exists and is not an empty directory")
    loaded = asyncio.run(load_results_table(name, store, namespace))
    committed = asyncio.run(export_io.download(loaded, directory))
    emit(export_io.write_job(loaded, directory, committed, harbor), output)  # type: ignore[arg-type]


@app.callback()
def _group() -> None:
    """Sweeps: create, watch, summarize, export."""
