"""buzzctl starts without the Kubernetes client: only commands that ask the cluster import it."""

from __future__ import annotations

import subprocess
import sys

PROBE = "import sys, buzz_operator.cli.main; print(sorted(m for m in ('kubernetes_asyncio', 'typer') if m in sys.modules))"


def test_importing_buzzctl_does_not_load_the_kubernetes_client() -> None:
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "['typer']"  # typer proves the probe sees what is loaded
