"""The corridor as files (trial/steps/): a step never imports another step, so a trial's walk
goes forward only through the STEPS table; the shared helpers import no step; and the table
names one step module per corridor phase."""

from __future__ import annotations

import ast
import pkgutil
from pathlib import Path

from buzz_operator.api.trial import Phase
from buzz_operator.trial import steps
from buzz_operator.trial.drive import driver

STEPS_DIR = Path(steps.__file__).parent


def _imported_steps(module: str) -> set[str]:
    """The trial/steps modules `module` imports, however it spells the import."""
    tree = ast.parse((STEPS_DIR / f"{module}.py").read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module == "buzz_operator.trial.steps":
                found |= {alias.name for alias in node.names}
            elif node.module.startswith("buzz_operator.trial.steps."):
                found.add(node.module.rsplit(".", 1)[-1])
        elif isinstance(node, ast.Import):
            found |= {a.name.rsplit(".", 1)[-1] for a in node.names if a.name.startswith("buzz_operator.trial.steps.")}
    return found


def test_every_module_is_named_a_step_or_a_shared_helper() -> None:
    on_disk = {m.name for m in pkgutil.iter_modules([str(STEPS_DIR)])}
    assert on_disk == set(steps.STEP_MODULES) | set(steps.SHARED_MODULES)


def test_no_step_imports_another_step() -> None:
    for module in steps.STEP_MODULES:
        others = _imported_steps(module) & (set(steps.STEP_MODULES) - {module})
        assert not others, f"trial/steps/{module}.py imports the step(s) {sorted(others)}"


def test_the_shared_helpers_import_no_step() -> None:
    for module in steps.SHARED_MODULES:
        assert not _imported_steps(module) & set(steps.STEP_MODULES), module


def test_the_table_maps_each_corridor_phase_to_its_own_step_module() -> None:
    mapped = {phase: fn.__module__.rsplit(".", 1)[-1] for phase, fn in driver.STEPS.items()}
    assert mapped == {Phase.PROVISIONING: "provision", Phase.LAUNCHING: "launch", Phase.RUNNING: "run",
                      Phase.COLLECTING: "collect", Phase.GRADING: "grade", Phase.BUNDLING: "bundle"}
