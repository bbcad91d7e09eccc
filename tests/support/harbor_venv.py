"""Harbor's own code as a test oracle: tests/support/harbor_checker.py run in a virtualenv of one
Harbor release, which hack/harbor.sh creates once per release (idempotent; cached under
~/.cache/buzz-operator) so that a fresh machine's `make test` gets it too. Harbor needs Python
>= 3.12 and its own dependency pins, so it never shares the project's .venv.

    for release in harbor_releases():
        reports = harbor_check(("job", export_dir), ("sweep", store / sweep), release=release)
        assert problems(reports) == [], reports
"""

from __future__ import annotations

import json
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHECKER = Path(__file__).with_name("harbor_checker.py")


def _harbor_sh(*argv: str) -> list[str]:
    done = subprocess.run(["bash", str(ROOT / "hack" / "harbor.sh"), *argv], capture_output=True, text=True,
                          timeout=1800)  # fmt: skip
    assert done.returncode == 0, f"hack/harbor.sh {' '.join(argv)} failed:\n{done.stderr[-3000:]}"
    return done.stdout.split()


@cache
def harbor_releases() -> tuple[str, ...]:
    """The releases the Harbor tier runs under, oldest first: the pinned ones, and the newest the
    package index serves when it is newer (hack/harbor.sh releases)."""
    return tuple(_harbor_sh("releases"))


@cache
def harbor_python(release: str) -> str:
    """The release's virtualenv's python, creating the virtualenv on first use (about a minute)."""
    return _harbor_sh("python", release)[-1]


def stats_release(release: str) -> str:
    """The stats an export made for ``release`` carries (``buzzctl sweep export --harbor``): the
    newest this build computes that is not newer than it. A newer release is held to those, so a
    change in how it counts fails the Harbor tier rather than passing unseen."""
    from buzz_operator.results.harbor_stats import HARBOR_RELEASES

    def key(text: str) -> tuple[int, ...]:
        return tuple(int(part) for part in text.split(".")[:2])

    return max((r for r in HARBOR_RELEASES if key(r) <= key(release)), key=key)


def harbor_check(*targets: tuple[str, Path], release: str) -> list[dict[str, Any]]:
    """One report per (kind, directory); kind is "job" (an export) or "sweep" (a store's sweep)."""
    argv = [str(part) for target in targets for part in target]
    done = subprocess.run([harbor_python(release), str(CHECKER), *argv], capture_output=True, text=True,
                          timeout=600)  # fmt: skip
    assert done.returncode in (0, 1), f"harbor_checker.py failed to run:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def harbor_policy_table(release: str) -> dict[str, list[bool]] | None:
    """The release's error-policy table (name → retry, grade, valid reward); None before 0.26."""
    done = subprocess.run([harbor_python(release), str(CHECKER), "policies"], capture_output=True, text=True,
                          timeout=300)  # fmt: skip
    assert done.returncode == 0, f"harbor_checker.py policies failed:\n{done.stderr[-3000:]}"
    return json.loads(done.stdout)


def problems(reports: list[dict[str, Any]]) -> list[str]:
    """Every problem of every report, each prefixed with its directory."""
    return [f"{r['dir']}: {p}" for r in reports for p in r["problems"]]


def export_job(store: str, sweep: str, target: Path, release: str) -> Path:
    """``buzzctl sweep export`` of the sweep into ``target``, its stats those ``release`` computes:
    the installed command in a process of its own, so an async test's running loop is no matter."""
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "buzzctl"), "sweep", "export", sweep, str(target),
                           "--store", store, "--harbor", stats_release(release)],
                          capture_output=True, text=True, timeout=600)  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return target
