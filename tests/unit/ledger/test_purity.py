"""The ledger room is pure: importing it pulls in no cluster, network or object-store client."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("kopf", "kubernetes_asyncio", "kubernetes", "websockets", "asyncpg", "obstore")
PROBE = (
    "import json, sys\n"
    "import buzz_operator.ledger, buzz_operator.cli.ledger, buzz_operator.cli.bundle\n"
    "loaded = {name.split('.')[0] for name in sys.modules}\n"
    "print(json.dumps(sorted(loaded & set(sys.argv[1:]))))\n"
)


def loaded_among(packages: tuple[str, ...]) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *packages], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def test_importing_the_ledger_loads_no_io_clients() -> None:
    assert loaded_among(FORBIDDEN) == []


def test_the_probe_sees_what_is_loaded() -> None:
    # typer is imported by the CLI modules: the same probe must report it, or it proves nothing.
    assert loaded_among(("typer", *FORBIDDEN)) == ["typer"]
