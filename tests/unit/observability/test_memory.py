"""observability/memory.py: freed memory goes back to the system at most once per TRIM_EVERY_S
(glibc's malloc_trim, which this machine's Python runs on)."""

from __future__ import annotations

from buzz_operator.observability import memory


def test_trim_runs_on_glibc_at_most_once_per_interval(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    calls: list[int] = []
    assert memory._TRIM is not None, "Debian's Python runs on glibc, which has malloc_trim"
    monkeypatch.setattr(memory, "_TRIM", lambda pad: calls.append(pad) or 1)
    monkeypatch.setattr(memory, "_last", 0.0)
    start = 1000.0
    assert memory.trim(start) is True
    assert memory.trim(start + memory.TRIM_EVERY_S - 1) is False
    assert memory.trim(start + memory.TRIM_EVERY_S) is True
    assert calls == [0, 0]


def test_without_malloc_trim_nothing_runs(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(memory, "_TRIM", None)
    monkeypatch.setattr(memory, "_last", 0.0)
    assert memory.trim(10_000.0) is False
