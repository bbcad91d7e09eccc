"""Reading a condition document (manifest or endpoint config) into a plain mapping."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from buzz_operator.condition.errors import ConditionError


def read_mapping(source: str | Path | Mapping[str, Any], *, what: str) -> tuple[dict[str, Any], str]:
    """Return ``(mapping, source_label)``; YAML is a superset of JSON, so one parser reads both
    (as the seed does, docs/condition.md#where-it-comes-from: "cannot load manifest …", "manifest root must be a mapping").

    The label names the file in every later error; a mapping given directly has none.
    """
    if isinstance(source, Mapping):
        return dict(source), ""
    if not isinstance(source, str | Path):
        raise ConditionError(f"{what} source must be a path or a mapping, not {type(source).__name__}")
    path = Path(source).expanduser()
    label = str(source)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConditionError(f"cannot load {what}: {error.strerror or error}", source=label) from error
    except UnicodeDecodeError as error:
        raise ConditionError(f"cannot load {what}: not UTF-8 ({error.reason})", source=label) from error
    except yaml.YAMLError as error:
        raise ConditionError(f"cannot load {what}: {error}", source=label) from error
    if not isinstance(raw, dict):
        raise ConditionError(f"{what} root must be a mapping", source=label)
    return raw, label
