"""buzzctl entry point: each room's commands are a typer sub-app mounted here."""

import typer

from buzz_operator.cli import bundle, compare, condition, dataset, ledger, plan, report, sweep, trial
from buzz_operator.cli.exits import EXIT_CODES_HELP, HELP_MARKUP

app = typer.Typer(
    rich_markup_mode=HELP_MARKUP,
    no_args_is_help=True, help="buzzctl — Buzz benchmark sweeps on Kubernetes", epilog=EXIT_CODES_HELP
)
app.add_typer(condition.app, name="condition", help="Team manifests: hash and validate a condition.")
app.add_typer(ledger.app, name="ledger", help="Token accounting: price agent logs.")
app.add_typer(bundle.app, name="bundle", help="Trial bundles: scan for secrets.")
app.add_typer(sweep.app, name="sweep", help="Sweeps: create, watch, summarize, export.")
app.add_typer(trial.app, name="trial", help="Trials: seat logs, the transcript as a thread, the bundle.")
app.add_typer(dataset.app, name="dataset", help="Datasets in the object store: push, list.")
app.command("report", epilog=EXIT_CODES_HELP)(report.report)
app.command("compare", epilog=EXIT_CODES_HELP)(compare.compare)
app.command("plan", epilog=EXIT_CODES_HELP)(plan.plan)
