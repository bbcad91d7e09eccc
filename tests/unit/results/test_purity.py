"""The results room is pure: importing it pulls in no cluster, network or object-store client."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = ("kopf", "kubernetes_asyncio", "kubernetes", "websockets", "asyncpg", "obstore", "aiohttp")
PROBE = (
    "import json, sys\n"
    "import buzz_operator.results\n"
    "loaded = {name.split('.')[0] for name in sys.modules}\n"
    "storage = any(name.startswith('buzz_operator.storage') for name in sys.modules)\n"
    "print(json.dumps(sorted(loaded & set(sys.argv[1:])) + (['buzz_operator.storage'] if storage else [])))\n"
)


def loaded_among(packages: tuple[str, ...]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *packages], capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_importing_results_loads_no_io_clients() -> None:
    assert loaded_among(FORBIDDEN) == []


def test_the_probe_sees_what_is_loaded() -> None:
    assert loaded_among(("plotly", *FORBIDDEN)) == ["plotly"]
