"""The stack layout: five zipapps that run on a bare python3 and import only the stdlib."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from buzz_operator.dev.stack.build import ENTRY_POINTS, INTERPRETER, build_stack

AGENT_DIR = Path(__file__).resolve().parents[3] / "operator" / "buzz_operator" / "dev" / "agent"
FORWARDER = AGENT_DIR.parents[1] / "relay" / "forwarder.py"


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


OLDEST_TASK_PYTHON = (3, 9)  # task images may ship python3 as old as this


def _version(python: str) -> tuple[int, int] | None:
    try:
        done = subprocess.run([python, "-I", "-c", "import sys; print(*sys.version_info[:2])"],
                              capture_output=True, text=True, timeout=30, env={})
    except OSError:
        return None
    major, minor = done.stdout.split() if done.returncode == 0 else ("0", "0")
    return (int(major), int(minor)) if done.returncode == 0 else None


def _oldest_python() -> str:
    """An interpreter no newer than OLDEST_TASK_PYTHON: BUZZ_OLDEST_PYTHON, else python3.9 on
    PATH or under pyenv. None at hand is a skip that says so, never a run on this interpreter."""
    pyenv = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv")) / "versions"
    found = [os.environ.get("BUZZ_OLDEST_PYTHON"), *(str(p) for p in sorted(pyenv.glob("3.9*/bin/python3"))),
             shutil.which("python3.9")]
    # pyenv shims need pyenv's own environment, which the isolated run below does not have
    for python in (p for p in found if p and Path(p).exists() and "/shims/" not in p):
        version = _version(python)
        if version is not None and version <= OLDEST_TASK_PYTHON:
            return python
    pytest.skip(f"no Python {'.'.join(map(str, OLDEST_TASK_PYTHON))} or older at hand (set BUZZ_OLDEST_PYTHON, or "
                "install it under pyenv): the stand-in stack was not run on the oldest python3 a task image has")


SELF_CHECK = """
import sys
sys.path.insert(0, sys.argv[1])
from buzz_standin import acp, cli, about, policies, model_loop, event_prompt, llm, shell, endpoint
from buzz_standin.nostr import Keys, sign_event, verify_event
from buzz_standin.tasks import recognise
from buzz_standin.tracing import EnvFilter
import relay_forwarder
keys = Keys.from_text("01" * 32)
event = sign_event(keys, 9, "hi", [["h", "c"]], auth_tag=["auth", "aa" * 32, "", "bb" * 64])
assert verify_event(event)
assert EnvFilter("acp::usage=debug").enabled("acp::usage", "debug")
assert recognise("Create a file at `/app/hello.txt` whose content is exactly `Hello, world!`.") is not None
print(sys.version_info[:2], sorted(policies.POLICIES))
"""


def test_stack_runs_on_the_oldest_python(stack: Path) -> None:
    python = _oldest_python()
    result = subprocess.run([python, "-I", "-c", SELF_CHECK, str(stack / "bin" / "buzz-acp")],
                            capture_output=True, text=True, timeout=60, env={})
    assert result.returncode == 0, f"{python}: {result.stderr}"
    version, _, policies = result.stdout.partition(")")
    assert tuple(int(n) for n in version.strip("(").split(",")) <= OLDEST_TASK_PYTHON, result.stdout
    assert "oracle" in policies


def test_a_second_build_is_byte_for_byte_the_first(stack: Path, tmp_path: Path) -> None:
    # the stack image is cached by its context's digest (hack/images.sh): a rebuild of unchanged
    # sources must not change a byte, or every build makes and loads a new image
    for exe in (stack / "bin").iterdir():  # no entry carries the time it was staged at
        assert {info.date_time for info in zipfile.ZipFile(exe).infolist()} == {(1980, 1, 1, 0, 0, 0)}, exe.name
    again = tmp_path / "again"
    build_stack(again)
    for exe in (stack / "bin").iterdir():
        assert (again / "bin" / exe.name).read_bytes() == exe.read_bytes(), exe.name
