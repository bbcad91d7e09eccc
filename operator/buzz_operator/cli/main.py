"""buzzctl entry point: each room's commands are a typer sub-app mounted here."""

import typer

from buzz_operator.cli import bundle, condition, ledger

app = typer.Typer(no_args_is_help=True, help="buzzctl — Buzz benchmark sweeps on Kubernetes")
app.add_typer(condition.app, name="condition", help="Team manifests: hash and validate a condition.")
app.add_typer(ledger.app, name="ledger", help="Token accounting: price agent logs.")
app.add_typer(bundle.app, name="bundle", help="Trial bundles: scan for secrets.")
