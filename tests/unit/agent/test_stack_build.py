"""The stack layout: five zipapps that run on a bare python3 and import only the stdlib."""

from __future__ import annotations

import ast
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from buzz_operator.dev.stack.build import ENTRY_POINTS, INTERPRETER, build_stack

AGENT_DIR = Path(__file__).resolve().parents[3] / "operator" / "buzz_operator" / "dev" / "agent"
FORWARDER = AGENT_DIR.parent / "forwarder.py"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stack")
    build_stack(out)
    return out


def test_layout(stack: Path) -> None:
    assert sorted(p.name for p in (stack / "bin").iterdir()) == sorted(ENTRY_POINTS)
    assert (stack / "ca-certificates.crt").stat().st_size > 0
    assert "python3 >= 3.9" in (stack / "README.md").read_text()
    for exe in (stack / "bin").iterdir():
        assert exe.stat().st_mode & 0o111
        assert exe.read_bytes().startswith(f"#!{INTERPRETER}\n".encode())


def test_zipapps_hold_only_the_standin_package(stack: Path) -> None:
    names = zipfile.ZipFile(stack / "bin" / "buzz-acp").namelist()
    assert "__main__.py" in names and "relay_forwarder.py" in names
    assert all(n.startswith("buzz_standin/") for n in names if n not in ("__main__.py", "relay_forwarder.py"))
    assert not any("buzz_operator" in n or n.endswith(".pyc") for n in names)


@pytest.mark.parametrize(("exe", "argv", "status", "expect"), [
    ("buzz-agent", [], 0, "buzz-agent (buzz-operator stand-in)"),
    ("buzz-dev-mcp", [], 0, "buzz-dev-mcp (buzz-operator stand-in)"),
    ("relay-forwarder", [], 2, "usage: relay-forwarder"),
    ("buzz-acp", [], 2, "missing environment"),
    ("buzz", ["messages", "get", "--channel", "c"], 1, "BUZZ_PRIVATE_KEY"),
])
def test_executables_run_isolated(stack: Path, exe: str, argv: list[str], status: int, expect: str) -> None:
    # -I: no site-packages, no PYTHONPATH — the same as a task image with a bare python3
    result = subprocess.run([sys.executable, "-I", str(stack / "bin" / exe), *argv], env={},
                            capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
    assert result.returncode == status
    assert expect in result.stdout + result.stderr


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("path", [*sorted(AGENT_DIR.glob("*.py")), FORWARDER], ids=lambda p: p.name)
def test_stdlib_only(path: Path) -> None:
    outside = {name for name in _imports(path) if name not in sys.stdlib_module_names and name != "__future__"}
    assert not outside, f"{path.name} imports non-stdlib {sorted(outside)}"
