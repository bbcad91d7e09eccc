"""buzzctl condition — hash and validate a team manifest (docs/condition.md).

Exit codes are an interface: 0 ok, 1 invalid input (one line on stderr naming the file
and field), 2 usage errors (typer's own).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from buzz_operator.cli.exits import HELP_MARKUP
from buzz_operator.condition import (
    ConditionError,
    EndpointConfig,
    ExperimentManifest,
    check_endpoints,
    find_placeholder_endpoints,
    plan_seats,
    verify_prompts,
)

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP,
    no_args_is_help=True,
    add_completion=False,
    help="Team manifests: hash and validate a condition.",
)

ManifestFile = Annotated[Path, typer.Argument(help="Manifest (YAML or JSON).", show_default=False)]


def _fail(error: ConditionError) -> typer.Exit:
    typer.echo(f"error: {error}", err=True)
    return typer.Exit(code=1)


@app.command("hash")
def hash_command(file: ManifestFile) -> None:
    """Print the condition's manifest_sha256 (docs/condition.md#condition-hash)."""
    try:
        manifest = ExperimentManifest.load(file)
    except ConditionError as error:
        raise _fail(error) from None
    typer.echo(manifest.sha256)


@app.command("check")
def check_command(
    file: ManifestFile,
    artifact_root: Annotated[
        Path | None,
        typer.Option(
            "--artifact-root",
            help="Directory the prompt paths are relative to; when given, prompt digests are verified.",
            show_default=False,
        ),
    ] = None,
    endpoint_config: Annotated[
        Path | None,
        typer.Option(
            "--endpoint-config",
            help="Endpoint config (docs/condition.md#endpoints); when given, every roster endpoint must be configured "
            "and none may still be a placeholder.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Validate a manifest and, with the options, its pinned prompts and endpoint config."""
    try:
        manifest = ExperimentManifest.load(file)
        if artifact_root is not None:
            verify_prompts(manifest, artifact_root)
    except ConditionError as error:
        raise _fail(error.with_source(error.source or str(file))) from None
    checked = ["prompts verified" if artifact_root is not None else "prompts not checked"]
    if endpoint_config is not None:
        try:
            endpoints = EndpointConfig.load(endpoint_config)
            check_endpoints(manifest, endpoints)
            # A real sweep refuses example values (docs/condition.md#endpoints reject_placeholder_endpoints).
            placeholders = find_placeholder_endpoints(endpoints)
            if placeholders:
                raise ConditionError(f"placeholder endpoints must be configured before a run: {placeholders}")
        except ConditionError as error:
            raise _fail(error.with_source(error.source or str(endpoint_config))) from None
        checked.append("endpoints configured")
    seats = len(plan_seats(manifest))
    typer.echo(
        f"OK {manifest.condition} {manifest.sha256[:12]} "
        f"({seats} seat{'s' if seats != 1 else ''}, {', '.join(checked)})"
    )
