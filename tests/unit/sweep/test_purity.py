"""The house's rule, checked on disk: a room's modules are pure, and its I/O lives in a subfolder
named for it (docs/design.md#rooms).

- `drive/` — a room's driver: the sweep's reconcile, one trial's driver, the preflight canary's
  runner, the janitor's reaper;
- `steps/` — the trial corridor's steps, each talks to the pod, the relay or the store;
- `fetch/` — inputs/ reading the cluster, the store and git.

Every other module of a room is held pure, found by walking the folders, so a new file is guarded
the day it is added and there is no list of exemptions to keep: a module that needs I/O moves
into its room's I/O subfolder. Whole rooms left out, each because it *is* the edge: the adapters
kube/, relay/ and storage/ (they translate an API), dev/ (the development stack) and cli/
(buzzctl); handlers.py and main.py are not rooms.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "buzz_operator"
IO_FOLDERS = frozenset({"drive", "steps", "fetch"})
EDGE_ROOMS = frozenset({"kube", "relay", "storage", "dev", "cli"})
FORBIDDEN = (
    "kopf",
    "kubernetes_asyncio",
    "websockets",
    "asyncpg",
    "obstore",
    "dulwich",
    "buzz_operator.kube",
    "buzz_operator.relay.client",
    "buzz_operator.storage",
)


def rooms() -> list[str]:
    return sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py"))


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def pure_modules() -> list[str]:
    """Every module of every room but the edge rooms, less the I/O subfolders (at any depth)."""
    held = []
    for room in rooms():
        if room in EDGE_ROOMS:
            continue
        for path in sorted((PACKAGE / room).rglob("*.py")):
            inside = path.relative_to(PACKAGE / room).parts[:-1]
            if not IO_FOLDERS & set(inside):
                held.append(module_name(path))
    return held


def loaded_by(names: list[str]) -> list[str]:
    # A fresh interpreter: other tests in this process may already have imported anything.
    code = f"import json, sys, {', '.join(names)}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return [name for name in json.loads(done.stdout) if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]


def test_pure_modules_import_nothing_impure() -> None:
    held = pure_modules()
    if offenders := loaded_by(held):
        # one interpreter per module only when something is wrong, to name who pulled it in
        guilty = {name: found for name in held if (found := loaded_by([name]))}
        raise AssertionError(f"{offenders} imported by {guilty}")


def test_io_folders_sit_directly_in_a_room() -> None:
    # An I/O folder deeper down would let a pure-looking path hide I/O; a room's drive/ or steps/
    # is where a reader looks for it.
    for room in rooms():
        for folder in (PACKAGE / room).rglob("*"):
            if folder.is_dir() and folder.name in IO_FOLDERS:
                assert folder.parent == PACKAGE / room, f"{folder.relative_to(PACKAGE)} is not a room's I/O folder"


def test_the_guard_covers_every_room_it_does_not_name() -> None:
    held = set(pure_modules())
    assert {"buzz_operator.pod.trial_pod", "buzz_operator.preflight.canary", "buzz_operator.sweep.planner",
            "buzz_operator.dataset.registry", "buzz_operator.results.statistics", "buzz_operator.scoring.failures",
            "buzz_operator.trial.state", "buzz_operator.inputs.errors", "buzz_operator.observability.logs"} <= held
    assert not {name for name in held if ".drive" in name or ".steps" in name or ".fetch" in name}
    covered = {name.split(".")[1] for name in held}
    assert covered | EDGE_ROOMS == set(rooms()), "a room is neither held pure nor named as the edge"
