"""The one error a task directory can raise.

Task directories are written by people (ours under tasks/, or a Terminal-Bench checkout), and
the error is read by a person running `buzzctl` or watching a BuzzSweep fail admission, so it
always names the file and, where there is one, the field or line inside it.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from buzz_operator.dataset.config import DIRECTORY_FORMS


class TaskError(ValueError):
    """A task directory (or dataset directory) that cannot be used.

    ``source`` is the offending file or directory; ``field`` is the dotted path inside it
    ("" when the problem is the whole file).
    """

    def __init__(self, reason: str, *, source: Path | str = "", field: str = "") -> None:
        self.reason = " ".join(reason.split())
        self.source = str(source)
        self.field = field
        super().__init__(str(self))

    def __str__(self) -> str:
        return ": ".join(part for part in (self.source, self.field, self.reason) if part)

    @classmethod
    def from_validation(cls, error: ValidationError, *, source: Path | str) -> TaskError:
        """Translate pydantic's error list into one line naming each dotted field."""
        problems = []
        first_field = ""
        for item in error.errors():
            field = ".".join(str(part) for part in _without_form_tags(item["loc"]))
            first_field = first_field or field
            problems.append(f"{field}: {item['msg']}" if field else item["msg"])
        return cls("; ".join(problems), source=source, field="" if len(problems) > 1 else first_field)


def _without_form_tags(loc: tuple[int | str, ...]) -> list[int | str]:
    """`buzz.directory.<n>.<form>.<field>` → `buzz.directory.<n>.<field>` (config.DIRECTORY_FORMS)."""
    parts = list(loc)
    if len(parts) > 3 and parts[:2] == ["buzz", "directory"] and parts[3] in DIRECTORY_FORMS:
        del parts[3]
    return parts
