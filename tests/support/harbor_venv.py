"""Harbor's own code as a test oracle: tests/support/harbor_checker.py run in Harbor's virtualenv,
which hack/harbor.sh creates once (idempotent; cached under ~/.cache/buzz-operator) so that a
fresh machine's `make test` gets it too. Harbor needs Python >= 3.12 and its own dependency pins,
so it never shares the project's .venv.

    reports = harbor_check(("job", export_dir), ("sweep", store / sweep))
    assert all(not r["problems"] for r in reports), reports
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHECKER = Path(__file__).with_name("harbor_checker.py")


@cache
def harbor_python() -> str:
    """The Harbor virtualenv's python, creating the virtualenv on first use (about a minute)."""
    done = subprocess.run(["bash", str(ROOT / "hack" / "harbor.sh"), "python"], capture_output=True, text=True,
                          timeout=900)  # fmt: skip
    assert done.returncode == 0, f"hack/harbor.sh python failed:\n{done.stderr[-3000:]}"
    return done.stdout.strip().splitlines()[-1]


def harbor_check(*targets: tuple[str, Path]) -> list[dict[str, Any]]:
    """One report per (kind, directory); kind is "job" (an export) or "sweep" (a store's sweep)."""
    argv = [str(part) for target in targets for part in target]
    done = subprocess.run([harbor_python(), str(CHECKER), *argv], capture_output=True, text=True, timeout=600)
    assert done.returncode in (0, 1), f"harbor_checker.py failed to run:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def problems(reports: list[dict[str, Any]]) -> list[str]:
    """Every problem of every report, each prefixed with its directory."""
    return [f"{r['dir']}: {p}" for r in reports for p in r["problems"]]
