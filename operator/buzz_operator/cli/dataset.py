"""buzzctl dataset — push a task directory set to the object store, list what is there, and
say which image each task runs (`images`).

``push DIR --name N`` checks every task with the dataset room (task.toml, instruction,
tests/, environment/) and uploads it to ``datasets/<N>/<task>/`` in the store, which is what
a sweep's ``spec.dataset.objectStore.prefix: datasets/<N>`` names. A pushed dataset is never
overwritten: trials pin task digests, and a dataset that changed under a sweep would make its
results unreadable.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from pathlib import Path
from typing import Annotated, Any

import typer

from buzz_operator.api.sweep import DEFAULT_TASK_IMAGE_REGISTRY
from buzz_operator.cli.exits import EXIT_CODES_HELP, HELP_MARKUP, BuzzGroup, fail
from buzz_operator.cli.output import Format, OutputOption, emit
from buzz_operator.cli.stores import STORE_ENV, guarded, store_for
from buzz_operator.dataset import Task, TaskError, load_dataset
from buzz_operator.storage import validate_prefix

DATASETS = "datasets"

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP, cls=BuzzGroup, no_args_is_help=True, add_completion=False, epilog=EXIT_CODES_HELP)

StoreRequired = Annotated[
    str, typer.Option("--store", envvar=STORE_ENV, help="Object store (file:///path or s3://bucket/prefix).")
]


@app.command("push", epilog=EXIT_CODES_HELP)
def push(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="A task directory or a directory of tasks.")
    ],
    name: Annotated[str, typer.Option("--name", help="Dataset name (one path segment).")],
    store: StoreRequired,
) -> None:
    """Check and upload a dataset; prints the spec.dataset to use."""
    if not name or "/" in name or name.startswith("."):
        fail(f"--name: {name!r} must be one path segment")
    try:
        tasks = load_dataset(directory)
    except TaskError as error:
        fail(str(error))
    if not tasks:
        fail(f"DIR: no task directories under {directory}")
    prefix = validate_prefix(f"{DATASETS}/{name}")
    objects = store_for(store)

    async def run() -> int:
        if await guarded(f"listing {prefix}", objects.list(prefix)):
            fail(f"dataset {name!r} already exists in {objects.url}; push under a new name")
        count = 0
        for task in tasks:
            count += len(
                await guarded(f"uploading {task.name}", objects.put_dir(f"{prefix}/{task.name}", task.path))
            )
        return count

    files = asyncio.run(run())
    typer.echo(f"pushed {len(tasks)} task(s), {files} files to {objects.url}/{prefix}")
    typer.echo(f"spec:\n  dataset:\n    objectStore:\n      prefix: {prefix}")


@app.command("list", epilog=EXIT_CODES_HELP)
def list_datasets(store: StoreRequired, output: OutputOption = Format.TABLE) -> None:
    """Datasets in the store, with their tasks."""
    objects = store_for(store)
    keys = asyncio.run(guarded(f"listing {objects.url}/{DATASETS}", objects.list(DATASETS)))
    tasks: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        parts = key.split("/")
        if len(parts) >= 4:
            tasks[parts[1]].add(parts[2])
    document: list[dict[str, Any]] = [
        {"name": name, "prefix": f"{DATASETS}/{name}", "tasks": sorted(found)}
        for name, found in sorted(tasks.items())
    ]

    def table(console: Any) -> None:
        if not document:
            console.print(f"no datasets in {objects.url}")
        for entry in document:
            console.print(
                f"{entry['name']:<24} {len(entry['tasks']):>3} task(s)  {', '.join(entry['tasks'])}"
            )

    emit(document, output, table=table, csv_rows=[["name", "prefix", "tasks"]]
         + [[d["name"], d["prefix"], " ".join(d["tasks"])] for d in document])  # fmt: skip


@app.command("images", epilog=EXIT_CODES_HELP)
def images(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="A task directory or a directory of tasks.")
    ],
    name: Annotated[str, typer.Option("--name", help="The dataset's name as the sweep sees it: builtin, the "
                                                     "ConfigMap's name, or the last segment of the prefix.")],
    registry: Annotated[str, typer.Option("--registry", help="The sweep's spec.taskImageRegistry.")] = (
        DEFAULT_TASK_IMAGE_REGISTRY),
    output: OutputOption = Format.TABLE,
) -> None:
    """The image each task's trials run, and what provides it (docs/task-images.md).

    The operator builds no image: a task's `environment.docker_image` is pulled as it is; a task
    with only `environment/Dockerfile` runs `<registry>/<dataset>-<task>:<digest of environment/>`,
    which you build from the context shown and push before the sweep starts. A compose service
    (`<task>/<service>`) runs its `image`, or for a `build` `<registry>/<dataset>-<task>-<service>:<digest
    of its context>` (docs/task-toml.md#compose).
    """
    try:
        tasks = load_dataset(directory)
        rows = [row for task in tasks for row in [_image_row(task, registry, name), *_service_rows(task, registry, name)]]
    except TaskError as error:
        fail(str(error))
    if not rows:
        fail(f"DIR: no task directories under {directory}")

    def table(console: Any) -> None:
        for row in rows:
            built = (f"build {row['context']}" if row["provided_by"] in (BUILT, SERVICE_BUILT)
                     else "pull as named in docker-compose.yaml" if row["provided_by"] == SERVICE_IMAGE
                     else "pull as named in task.toml")
            console.print(f"{row['task']:<28} {row['image']}  ({built})")

    emit(rows, output, table=table, csv_rows=[["task", "image", "provided_by", "context"]]
         + [[r["task"], r["image"], r["provided_by"], r["context"] or ""] for r in rows])  # fmt: skip


PINNED, BUILT = "environment.docker_image", "environment/Dockerfile"
SERVICE_IMAGE, SERVICE_BUILT = "compose image", "compose build"


def _image_row(task: Task, registry: str, dataset: str) -> dict[str, Any]:
    pinned = task.config.environment.docker_image is not None
    return {"task": task.name, "image": task.image_ref(registry, dataset),
            "provided_by": PINNED if pinned else BUILT,
            "context": None if pinned else str(task.environment_dir.resolve())}


def _service_rows(task: Task, registry: str, dataset: str) -> list[dict[str, Any]]:
    """One row per compose service, named `<task>/<service>` (docs/task-toml.md#compose)."""
    rows = []
    for service in task.compose.services if task.compose is not None else ():
        context = (task.environment_dir / service.build.context).resolve() if service.build is not None else None
        rows.append({"task": f"{task.name}/{service.name}", "image": task.service_image_ref(service, registry, dataset),
                     "provided_by": SERVICE_BUILT if context is not None else SERVICE_IMAGE,
                     "context": str(context) if context is not None else None})
    return rows


@app.callback()
def _group() -> None:
    """Datasets: push to and list the object store; the images a dataset's trials run."""
