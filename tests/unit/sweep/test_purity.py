"""The pure rooms stay pure: importing them loads no client, network or framework module."""

from __future__ import annotations

import json
import subprocess
import sys

PURE = [
    "buzz_operator.api",
    "buzz_operator.api.crdgen",
    "buzz_operator.sweep",
    "buzz_operator.sweep.trialspec",
    "buzz_operator.trial.state",
    "buzz_operator.trial.failures",
    "buzz_operator.trial.podbase",
    "buzz_operator.trial.podspec",
    "buzz_operator.preflight.canary",
    "buzz_operator.trial.deadlines",
    "buzz_operator.trial.names",
]
FORBIDDEN = (
    "kopf",
    "kubernetes_asyncio",
    "websockets",
    "asyncpg",
    "obstore",
    "buzz_operator.kube",
    "buzz_operator.relay.client",
    "buzz_operator.storage",
)


def test_pure_rooms_import_nothing_impure() -> None:
    # A fresh interpreter: other tests in this process may already have imported anything.
    code = f"import json, sys, {', '.join(PURE)}; print(json.dumps(sorted(sys.modules)))"
    loaded = json.loads(
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    )
    assert set(PURE) <= set(loaded)
    offenders = [name for name in loaded if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]
    assert offenders == []
