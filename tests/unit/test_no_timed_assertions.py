"""No test asserts a wall-clock time: how fast something ran is a benchmark's figure (bench/,
`make bench`), and a test that fails on a loaded machine teaches nobody anything.

Found by reading every test file's syntax tree. An `assert` holding an ordering comparison
(`<`, `<=`, `>`, `>=`) is timed when one side reads a clock:
- a clock call (`time.monotonic()`, `time.perf_counter()`, `time.time()`, `loop.time()`,
  `datetime.now()`, …), or a name that a clock call or another such name was assigned from in
  the same function (`started = time.monotonic()` … `elapsed = time.monotonic() - started`);
- a duration by its name: a call of `seconds(…)`/`elapsed(…)`/`duration(…)`, a name such as
  `elapsed`, `seconds`, `waited`, `took`, `latency` or one ending `_s`/`_ms`/`_seconds`, or a
  key or file named so (`"elapsed"`, `"usage_settle_seconds.json"`).
Waiting with a deadline (`while time.monotonic() < deadline`, or `assert time.monotonic() <
deadline, "… in time"` inside such a wait) is a net against a hang, not a figure, and is fine.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
CLOCKS = {"monotonic", "perf_counter", "time", "process_time", "now", "utcnow", "monotonic_ns", "perf_counter_ns",
          "time_ns"}
DURATION_CALL = re.compile(r"^(seconds|elapsed|duration|latency)(_\w+)?$")
DURATION_NAME = re.compile(r"^(elapsed|seconds|waited|took|latency|duration)(_\w+)?$|_(s|ms|seconds)$")
# a duration read by its key or file name: `times["elapsed"]`, "usage_settle_seconds.json"
DURATION_KEY = re.compile(r"(^|_)(seconds|elapsed|duration|latency)(\.json)?$")
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)


def _callee(node: ast.Call) -> str:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _clock(node: ast.AST, tainted: set[str]) -> bool:
    """A clock reading: a clock call, a name holding one, or arithmetic on them."""
    if isinstance(node, ast.Call):
        return isinstance(node.func, ast.Attribute) and node.func.attr in CLOCKS
    if isinstance(node, ast.Name):
        return node.id in tainted
    if isinstance(node, ast.BinOp):
        return _clock(node.left, tainted) or _clock(node.right, tainted)
    if isinstance(node, ast.UnaryOp):
        return _clock(node.operand, tainted)
    return False


def _timed(side: ast.AST, tainted: set[str]) -> bool:
    """One side of a comparison reads a clock or names a duration; a deadline is a wait's net."""
    if isinstance(side, ast.Name) and "deadline" in side.id:
        return False
    for sub in ast.walk(side):
        if _clock(sub, tainted):
            return True
        if isinstance(sub, ast.Call) and DURATION_CALL.match(_callee(sub)):
            return True
        if isinstance(sub, ast.Name) and DURATION_NAME.search(sub.id):
            return True
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str) and DURATION_KEY.search(sub.value):
            return True
    return False


def _tainted_names(function: ast.AST) -> set[str]:
    """Names assigned, in `function`, a clock reading (to a fixed point)."""
    tainted: set[str] = set()
    assigns = [n for n in ast.walk(function) if isinstance(n, ast.Assign | ast.AnnAssign | ast.AugAssign)]
    while True:
        before = len(tainted)
        for node in assigns:
            if node.value is None or not _clock(node.value, tainted):
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            tainted.update(t.id for t in targets if isinstance(t, ast.Name))
        if len(tainted) == before:
            return tainted


def timed_assertions(source: str) -> list[int]:
    """Line numbers of the timed assertions in a test module's source."""
    found: set[int] = set()
    for scope in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        tainted = _tainted_names(scope)
        for node in ast.walk(scope):
            if not isinstance(node, ast.Assert):
                continue
            for compare in (n for n in ast.walk(node.test) if isinstance(n, ast.Compare)):
                sides = [compare.left, *compare.comparators]
                # a deadline on one side makes the comparison a wait's net, whatever the other reads
                if any(isinstance(op, ORDERING) for op in compare.ops) and not any(
                        isinstance(n, ast.Name) and "deadline" in n.id for n in sides) and any(
                        _timed(side, tainted) for side in sides):
                    found.add(node.lineno)
    return sorted(found)


def test_no_test_asserts_a_wall_clock_time() -> None:
    offenders = [f"{path.relative_to(TESTS.parent)}:{line}" for path in sorted(TESTS.rglob("*.py"))
                 for line in timed_assertions(path.read_text(encoding="utf-8"))]
    assert offenders == [], "timed assertions (move the figure to bench/): " + ", ".join(offenders)


@pytest.mark.parametrize("source", [
    "import time\ndef test():\n    started = time.monotonic()\n    run()\n    assert time.monotonic() - started < 0.5\n",
    "import time\ndef test():\n    t0 = time.perf_counter()\n    run()\n    took = time.perf_counter() - t0\n"
    "    assert took < 1\n",
    "def test():\n    a = time.time()\n    b = a + 1\n    assert ok and b >= 3\n",
    "def test():\n    assert seconds(status, 'running', 'collecting') < 120\n",
    "def test():\n    waited = json.loads(path.read_text())\n    assert 0.5 <= waited < 10\n",
    "def test():\n    assert fetch_s < 2\n",
    "def test():\n    assert json.loads((root / 'usage_settle_seconds.json').read_text()) < 5\n",
    "def test(loop):\n    assert loop.time() > 5\n",
    "def test():\n    assert datetime.now(UTC) - started <= limit\n",
])
def test_the_guard_finds_each_shape_of_timed_assertion(source: str) -> None:
    assert timed_assertions(source) != []


@pytest.mark.parametrize("source", [
    "import time\ndef test():\n    deadline = time.monotonic() + 60\n    while time.monotonic() < deadline:\n"
    "        pass\n    assert done\n",
    "def test():\n    assert len(items) < 5 and later.seconds > first.seconds\n",
    "def test():\n    assert spec.timeout_seconds == 300\n",
    "def test():\n    started = time.monotonic()\n    print(time.monotonic() - started)\n    assert result == 1\n",
])
def test_the_guard_leaves_waits_equalities_and_fields_alone(source: str) -> None:
    assert timed_assertions(source) == []
