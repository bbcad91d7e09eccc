"""The condition room is pure (docs/design.md#rooms): importing it loads no kube, relay
client, storage, kopf or network library."""

from __future__ import annotations

import json
import subprocess
import sys

FORBIDDEN = (
    "kopf",
    "kubernetes_asyncio",
    "websockets",
    "asyncpg",
    "obstore",
    "buzz_operator.storage",
    "buzz_operator.kube",
    "buzz_operator.relay",
)


def _offenders(extra_import: str = "") -> list[str]:
    probe = (
        "import json, sys\n"
        "import buzz_operator.condition\n"
        "import buzz_operator.condition.agent_env, buzz_operator.condition.endpoints\n"
        f"{extra_import}\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    loaded = json.loads(completed.stdout)
    assert "buzz_operator.condition.manifest" in loaded
    return [name for name in loaded if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]


def test_importing_condition_loads_nothing_impure() -> None:
    assert _offenders() == []


def test_probe_sees_an_impure_import() -> None:
    # Control: the same probe reports a forbidden module once something loads it.
    assert "websockets" in _offenders("import websockets")
