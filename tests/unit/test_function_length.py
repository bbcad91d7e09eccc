"""No function under operator/ is longer than 60 lines (its def to its last line, docstring
included): a longer one does several things, and each should have a name (docs/development.md#house-rules)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "operator" / "buzz_operator"
LONGEST = 60


def lengths() -> dict[str, int]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                where = f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name}"
                found[where] = (node.end_lineno or node.lineno) - node.lineno + 1
    return found


def test_no_function_is_longer_than_60_lines() -> None:
    too_long = {where: n for where, n in lengths().items() if n > LONGEST}
    assert not too_long, f"split these: {too_long}"


def test_the_count_sees_every_function() -> None:
    # the guard would pass on nothing: it must find the reconcile and the functions of every room
    found = lengths()
    assert any(where.startswith("sweep/drive/reconcile.py") and where.endswith(" reconcile") for where in found)
    assert {where.split("/")[0] for where in found} >= {"api", "pod", "trial", "sweep", "kube", "cli", "results"}
    assert len(found) > 1000
