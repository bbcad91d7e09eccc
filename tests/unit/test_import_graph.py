"""The rooms of buzz_operator import downward only, so there is no package-level import loop.

The graph is read from the source, not from what an import happens to load: every
`buzz_operator.<room>` import in operator/buzz_operator/<room>/**/*.py is an arrow, including one
inside a function or under TYPE_CHECKING, so a lazy import cannot hide a loop. handlers.py and
main.py sit on top of the house and may import anything; they are not rooms.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "operator" / "buzz_operator"
# Bottom to top (docs/design.md#rooms): a room imports only rooms of the tiers below its own,
# never one of its own tier. api/ is the models every room shares; the other pure rooms and the
# object store need nothing more of the house (scoring/ says what passes); pod/ builds pods from
# them; kube/ and relay/ adapt APIs; inputs/ resolves what a sweep names for everyone above it
# and results/ reads finished trials' bundles; a sweep plans trials and gates them
# on the preflight canary, which runs a trial-shaped pod; the janitor, metrics and Events and the
# dev stack build on sweeps and trials; buzzctl on all.
TIERS: tuple[frozenset[str], ...] = tuple(frozenset(tier) for tier in (
    {"api"},
    {"condition", "dataset", "ledger", "storage", "scoring"},
    {"pod"},
    {"kube", "relay"},
    {"inputs", "results", "leadership"},
    {"trial"},
    {"preflight"},
    {"sweep"},
    {"janitor", "observability", "dev"},
    {"cli"},
))
# Arrows allowed upward, each with the files that draw it and why; the test fails once one is
# gone, so an exception leaves with the arrow it allowed. None now: the waiting-pod classifier
# kube/pods.py reads is pod/waiting.py, below kube/.
ALLOWED: dict[tuple[str, str], set[str]] = {}


def rooms() -> set[str]:
    return {path.parent.name for path in PACKAGE.glob("*/__init__.py")}


def imported(source: str, package: str, room: str) -> Iterator[str]:
    """The other rooms a module of `room` imports, given its source and its package (which
    relative imports start from)."""
    parents = package.split(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(parents[: len(parents) - node.level + 1]) if node.level else ""
            target = ".".join(part for part in (base, node.module or "") if part)
            # `from buzz_operator import sweep` names the room among the imported names
            names = [f"{target}.{alias.name}" for alias in node.names] if target == "buzz_operator" else [target]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "buzz_operator" and parts[1] != room:
                yield parts[1]


def graph(*, allowed: bool = False) -> dict[str, dict[str, set[str]]]:
    """room → imported room → the files that import it; with `allowed`, less the ALLOWED arrows."""
    known = rooms()
    arrows: dict[str, dict[str, set[str]]] = {room: {} for room in known}
    for room in known:
        for path in sorted((PACKAGE / room).rglob("*.py")):
            package = ".".join(("buzz_operator", *path.relative_to(PACKAGE).parts[:-1]))
            where = str(path.relative_to(PACKAGE))
            for target in imported(path.read_text(), package, room):
                if target in known and not (allowed and where in ALLOWED.get((room, target), ())):
                    arrows[room].setdefault(target, set()).add(where)
    return arrows


def loops(arrows: dict[str, dict[str, set[str]]]) -> list[list[str]]:
    """The strongly connected components of more than one room (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(room: str) -> None:
        index[room] = low[room] = len(index)
        stack.append(room)
        for target in sorted(arrows[room]):
            if target not in index:
                visit(target)
                low[room] = min(low[room], low[target])
            elif target in stack:
                low[room] = min(low[room], index[target])
        if low[room] == index[room]:
            component = []
            while (member := stack.pop()) != room:
                component.append(member)
            component.append(room)
            if len(component) > 1:
                found.append(sorted(component))

    for room in sorted(arrows):
        if room not in index:
            visit(room)
    return found


def tier(room: str) -> int:
    return next(level for level, members in enumerate(TIERS) if room in members)


def test_every_room_has_a_tier() -> None:
    placed = set().union(*TIERS)
    assert rooms() - placed == set(), "a new room needs its place in TIERS (and docs/design.md#rooms)"
    assert placed - rooms() == set(), "a room in TIERS no longer exists"


def test_no_package_level_import_loop() -> None:
    arrows = graph(allowed=True)
    assert loops(arrows) == [], {
        " ↔ ".join(component): {f"{a} → {b}": sorted(arrows[a][b]) for a in component for b in component
                                 if b in arrows[a]}
        for component in loops(arrows)
    }


def test_no_room_imports_a_room_above_it() -> None:
    upward = {f"{room} → {target}": sorted(files)
              for room, targets in graph(allowed=True).items() for target, files in targets.items()
              if tier(target) >= tier(room)}
    assert upward == {}


def test_every_allowed_arrow_is_still_drawn() -> None:
    arrows = graph()
    gone = {f"{room} → {target}": sorted(files - arrows[room].get(target, set()))
            for (room, target), files in ALLOWED.items() if files - arrows[room].get(target, set())}
    assert gone == {}, "remove these from ALLOWED (and their reason)"


def test_the_graph_sees_every_kind_of_import() -> None:
    # the forms a loop could hide behind: a lazy import, a room named as an imported name, a
    # relative import from a subpackage
    source = (
        "import buzz_operator.kube.client\n"
        "from buzz_operator import storage\n"
        "from buzz_operator.relay.client import RelayClient\n"
        "def late():\n    from buzz_operator.sweep import planner\n"
        "from ...api import common\n"
        "from . import names\n"
    )
    assert set(imported(source, "buzz_operator.trial.steps", "trial")) == {"kube", "storage", "relay", "sweep",
                                                                          "api"}
