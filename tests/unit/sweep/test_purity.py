"""The pure rooms stay pure: importing them loads no client, network or framework module.

Every module of a pure room is covered, found on disk, so a new file is guarded the day it is
added. In the rooms that also hold the edge (inputs, sweep, trial, preflight, janitor,
observability) the I/O modules are named here with why; every other module of those rooms is
held pure too.
relay/, storage/, kube/, dev/, cli/ and handlers.py are the edge and are not held.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[3] / "operator" / "buzz_operator"
PURE_ROOMS = ("api", "condition", "dataset", "ledger", "results")
# room → its modules that do I/O (the rest of the room is held pure)
EDGE_MODULES = {
    # reads ConfigMaps, Secrets, Services and the store; git_fetch dials git servers (dulwich)
    "inputs": {"resolve", "datasets", "git_datasets", "git_fetch"},
    "sweep": {"runtime", "runtime_store", "runtime_settled"},  # runtime_settled: a watch of settled trials
    "trial": {"runtime", "runtime_context", "runtime_io", "runtime_keys", "runtime_phase", "runtime_relay_ca",
              "runtime_setup",
              "steps"},  # the corridor's steps (trial/steps/), each talks to the pod, relay or store
    "preflight": {"runner"},  # creates the canary, dials the relay and Postgres
    "janitor": {"reaper"},  # lists and deletes pods, Secrets and channels
    "observability": {"logs"},  # kopf's logging integration
}
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


def modules(room: str) -> list[str]:
    return [f"buzz_operator.{room}", *(f"buzz_operator.{room}.{m.name}"
                                       for m in pkgutil.iter_modules([str(PACKAGE / room)]))]


def pure_modules() -> list[str]:
    held = [name for room in PURE_ROOMS for name in modules(room)]
    for room, edge in EDGE_MODULES.items():
        held += [name for name in modules(room) if name.rsplit(".", 1)[-1] not in edge]
    return held


def loaded_by(names: list[str]) -> list[str]:
    # A fresh interpreter: other tests in this process may already have imported anything.
    code = f"import json, sys, {', '.join(names)}; print(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return [name for name in json.loads(done.stdout) if any(name == f or name.startswith(f + ".") for f in FORBIDDEN)]


def test_pure_rooms_import_nothing_impure() -> None:
    held = pure_modules()
    if offenders := loaded_by(held):
        # one interpreter per module only when something is wrong, to name who pulled it in
        guilty = {name: found for name in held if (found := loaded_by([name]))}
        raise AssertionError(f"{offenders} imported by {guilty}")


def test_the_edge_modules_named_exist() -> None:
    # a renamed or removed I/O module must leave this list, or it would exempt nothing
    for room, edge in EDGE_MODULES.items():
        present = {name.rsplit(".", 1)[-1] for name in modules(room)}
        assert edge <= present, f"{room}: {sorted(edge - present)} no longer exist"


def test_the_guard_covers_the_rooms_it_names() -> None:
    held = set(pure_modules())
    assert {"buzz_operator.trial.podspec", "buzz_operator.preflight.canary", "buzz_operator.sweep.planner",
            "buzz_operator.dataset.registry", "buzz_operator.results.statistics",
            "buzz_operator.inputs.errors"} <= held
    assert "buzz_operator.inputs.git_fetch" not in held
