"""buzzctl trial — logs, evidence, resources, bundle of one trial, read from its bundle in the store
(and `logs` live from the trial's pod while it runs).

The trial is found by ``--sweep`` (with ``--store``, no cluster needed) or, without it, from
its BuzzTrial (spec.sweepName, and the sweep's store).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from buzz_operator.cli.exits import EXIT_CODES_HELP, HELP_MARKUP, BuzzGroup, fail
from buzz_operator.cli.options import NamespaceOption
from buzz_operator.cli.stores import StoreOption, guarded, store_for
from buzz_operator.results import render_thread
from buzz_operator.results.files import AGENT_DIR, EVIDENCE, RESULT, TRANSCRIPT, is_agent_log
from buzz_operator.results.resources import render_resources
from buzz_operator.results.trial import load_json
from buzz_operator.storage import ObjectStore
from buzz_operator.storage.bundle import bundle_store
from buzz_operator.storage.prefixed import PrefixedStore

if TYPE_CHECKING:  # the Kubernetes client is imported only when the cluster must be asked
    from buzz_operator.kube.client import Kube

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP, cls=BuzzGroup, no_args_is_help=True, add_completion=False, epilog=EXIT_CODES_HELP)

TrialName = Annotated[str, typer.Argument(metavar="TRIAL", help="The BuzzTrial's name.", show_default=False)]
SweepOption = Annotated[
    str | None,
    typer.Option("--sweep", help="The trial's sweep; without it the BuzzTrial is read from the cluster."),
]


async def _locate(
    trial: str, sweep: str | None, store: str | None, namespace: str
) -> tuple[ObjectStore, str]:
    """(store, key prefix of the trial's bundle); a trial with no bundle there is a user error."""
    if sweep is None or store is None:
        # the Kubernetes client is imported only when the cluster must be asked
        from buzz_operator.cli.cluster import get_trial, sweep_store_url, with_kube

        if sweep is None:
            body = await with_kube(lambda kube: get_trial(kube, namespace, trial))
            if body is None:
                fail(
                    f"no BuzzTrial {trial!r} in namespace {namespace!r}; give --sweep and --store to read storage alone"
                )
            sweep = str((body.get("spec") or {}).get("sweepName"))
        store = store or await sweep_store_url(namespace, sweep)
    objects = store_for(store)
    prefix = f"{sweep}/{trial}"
    home = await guarded(f"reading {objects.url}/{prefix}", bundle_store(objects, sweep, trial))
    if isinstance(home, PrefixedStore):  # quarantined.json: the bundle had suspected secrets
        prefix = f"{home.prefix}/{prefix}"
    if not await guarded(f"listing {objects.url}/{prefix}", objects.list(prefix)):
        fail(f"no bundle for trial {trial!r} of sweep {sweep!r} under {objects.url}")
    return objects, prefix


async def _read_first(trial: str, sweep: str | None, store: str | None, namespace: str,
                      names: tuple[str, ...]) -> bytes | None:
    """The first of `names` the trial's bundle holds, None when it holds none of them."""
    objects, prefix = await _locate(trial, sweep, store, namespace)
    for name in names:
        key = f"{prefix}/{name}"
        if await guarded(f"reading {key}", objects.exists(key)):
            return await guarded(f"reading {key}", objects.get(key))
    return None


@app.command("logs", epilog=EXIT_CODES_HELP)
def logs(
    trial: TrialName,
    seat: Annotated[str | None, typer.Option("--seat", help="Only this seat (e.g. lead-1).")] = None,
    from_bundle: Annotated[
        bool, typer.Option("--bundle", help="Read the committed bundle even while the trial's pod runs.")
    ] = False,
    sweep: SweepOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Every seat's stdout and stderr log, each under a header: live from the trial's pod while
    it runs (found through the cluster), otherwise from its bundle."""

    def wanted(name: str) -> bool:
        return is_agent_log(f"{AGENT_DIR}/{name}") and (seat is None or name.split(".")[0] == seat)

    async def live() -> list[tuple[str, bytes]] | None:
        from buzz_operator.cli.cluster import get_trial, live_seat_logs, with_kube

        async def read(kube: Kube) -> tuple[str, dict[str, bytes]] | None:
            body = await get_trial(kube, namespace, trial)
            return None if body is None else await live_seat_logs(kube, namespace, body)

        found = await with_kube(read)
        if found is None:
            return None
        pod, files = found
        return [(f"{name} (live from pod {pod})", data) for name, data in sorted(files.items()) if wanted(name)]

    async def run() -> list[tuple[str, bytes]]:
        if sweep is None and not from_bundle and (found := await live()) is not None:
            return found
        objects, prefix = await _locate(trial, sweep, store, namespace)
        keys = await guarded("listing logs", objects.list(f"{prefix}/{AGENT_DIR}"))
        chosen = [key for key in keys if is_agent_log(key[len(prefix) + 1 :]) and wanted(key.rsplit("/", 1)[1])]
        return [(key.rsplit("/", 1)[1], await guarded(f"reading {key}", objects.get(key))) for key in chosen]

    found = asyncio.run(run())
    if not found:
        fail(f"no seat logs{f' for seat {seat!r}' if seat else ''} in trial {trial!r}")
    for name, data in found:
        typer.echo(f"==> {name} <==")
        typer.echo(data.decode("utf-8", errors="replace").rstrip("\n"))


@app.command("evidence", epilog=EXIT_CODES_HELP)
def evidence(
    trial: TrialName,
    raw: Annotated[bool, typer.Option("--json", help="Print buzz-evidence.json as stored.")] = False,
    sweep: SweepOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """The channel as a readable thread: who said what, replies indented, mentions as names."""

    data = asyncio.run(_read_first(trial, sweep, store, namespace, (EVIDENCE, TRANSCRIPT)))
    if data is None:
        fail(f"trial {trial!r} has no {EVIDENCE} or {TRANSCRIPT} (its evidence export failed)")
    document = load_json(data)
    if raw:
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(render_thread(document), nl=False)


@app.command("resources", epilog=EXIT_CODES_HELP)
def resources(
    trial: TrialName,
    raw: Annotated[bool, typer.Option("--json", help="Print the headroom and resource_usage as stored.")] = False,
    sweep: SweepOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """The trial's box: the headroom it had and what its task container used, agents and verifier apart."""

    data = asyncio.run(_read_first(trial, sweep, store, namespace, (RESULT,)))
    if data is None:
        fail(f"trial {trial!r} has no {RESULT} yet (its bundle is not committed)")
    document = load_json(data)
    if raw:
        metadata = (document.get("agent_result") or {}).get("metadata") or {}
        typer.echo(json.dumps({key: metadata.get(key) for key in ("headroom", "resource_usage")}, indent=2))
    else:
        typer.echo(render_resources(document), nl=False)


@app.command("bundle", epilog=EXIT_CODES_HELP)
def bundle(
    trial: TrialName,
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Where to put the bundle.", show_default=False)
    ],
    sweep: SweepOption = None,
    store: StoreOption = None,
    namespace: NamespaceOption = "default",
) -> None:
    """Fetch the trial's whole bundle (retries/ included) into DIR."""

    async def run() -> list[Path]:
        objects, prefix = await _locate(trial, sweep, store, namespace)
        return await guarded(f"downloading {prefix}", objects.get_dir(prefix, directory))

    paths = asyncio.run(run())
    typer.echo(f"{len(paths)} files in {directory}")


@app.callback()
def _group() -> None:
    """Trials: seat logs, the transcript as a thread, the box's resources, the bundle."""
