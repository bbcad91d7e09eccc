"""The bad-input corpus (tests/unit/validation/corpus.py), loaded once per process for the tiers
that use it: the unit tier's corpus and property tests and the fault tier's on-cluster test.

It is loaded from its file, not imported as a package module, because the test directories are
not packages (pytest runs with --import-mode=importlib)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PATH = Path(__file__).resolve().parents[1] / "unit" / "validation" / "corpus.py"
NAME = "bad_input_corpus"


def load_corpus() -> ModuleType:
    if NAME in sys.modules:
        return sys.modules[NAME]
    spec = importlib.util.spec_from_file_location(NAME, PATH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[NAME] = module
    spec.loader.exec_module(module)
    return module
