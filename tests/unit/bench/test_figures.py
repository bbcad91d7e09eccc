"""bench/figures.py: how a figure is judged, printed and read back for the one table."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from figures import HIGHER, INFO, LOWER, RUNS_HEADER, Figure, load, percentile, pool, record, table


def test_lower_is_better_is_judged_on_the_median_not_the_best_run() -> None:
    figure = Figure("p50", "ms", [100, 400, 500], LOWER, 300)
    assert figure.median == 400
    assert figure.passed is False and figure.verdict() == "MISS"
    assert Figure("p50", "ms", [100, 200, 900], LOWER, 300).passed is True


def test_higher_is_better_and_info_figures() -> None:
    assert Figure("rate", "MB/s", [49, 51, 60], HIGHER, 50).passed is True
    assert Figure("rate", "MB/s", [40, 49, 60], HIGHER, 50).passed is False
    info = Figure("upload", "MB/s", [10.0], INFO)
    assert info.passed is None and info.verdict() == "info" and info.target_text() == "-"


def test_measured_text_shows_median_spread_and_count() -> None:
    assert Figure("x", "ms", [3, 1, 2], LOWER, 5).measured() == "2.0 ms (1.0..3.0, n=3)"
    assert Figure("x", "ms", [3], LOWER, 5).measured() == "3.0 ms"


def test_a_figure_without_samples_or_with_a_goal_but_no_target_is_refused() -> None:
    with pytest.raises(ValueError, match="no samples"):
        Figure("empty", "ms", [])
    with pytest.raises(ValueError, match="needs a target"):
        Figure("no target", "ms", [1.0], LOWER)
    with pytest.raises(ValueError, match="goal"):
        Figure("bad goal", "ms", [1.0], "<", 3)


def test_percentile_interpolates_between_order_statistics() -> None:
    assert percentile([1, 2, 3, 4, 5], 50) == 3
    assert percentile([1, 2, 3, 4, 5], 100) == 5
    assert percentile([10, 20], 95) == pytest.approx(19.5)
    with pytest.raises(ValueError):
        percentile([], 50)


def test_recorded_figures_come_back_in_order_and_make_one_table(tmp_path: Path) -> None:
    results = tmp_path / "figures.jsonl"
    record(Figure("P3 provision", "ms", [90.0, 100.0, 110.0], LOWER, 300, note="p95 110 ms"), results)
    record(Figure("P2 throughput", "trials/s", [12.0, 14.0], HIGHER, 20), results)
    figures = load(results)
    assert [f.name for f in figures] == ["P3 provision", "P2 throughput"]
    assert figures[0].note == "p95 110 ms"
    lines = table(figures).splitlines()
    assert lines[0].split() == ["figure", "target", "measured", "(median", "(min..max,", "n))", "result"]
    assert lines[2].startswith("P3 provision") and lines[2].endswith("pass")
    assert lines[3].startswith("P2 throughput") and lines[3].endswith("MISS")
    assert "<= 300 ms" in lines[2] and ">= 20 trials/s" in lines[3]


def test_pooled_runs_judge_the_median_of_the_run_medians_in_first_seen_order() -> None:
    runs = [[Figure("a", "ms", [1, 2, 30], LOWER, 5, note="run 1"), Figure("b", "x", [7.0], INFO)],
            [Figure("a", "ms", [8, 9, 10], LOWER, 5, note="run 2")],
            [Figure("c", "s", [1.0], INFO), Figure("a", "ms", [3, 4], LOWER, 5, note="run 3")]]
    a, b, c = pool(runs)
    assert [a.name, b.name, c.name] == ["a", "b", "c"]
    assert a.samples == [2, 9, 3.5] and a.median == 3.5 and a.passed is True
    assert a.note == "run 3" and a.extra == {"runs": 3.0, "samples": 8.0}
    assert a.measured() == "3.5 ms (2.0..9.0, n=3)"
    assert b.samples == [7.0] and b.extra["runs"] == 1.0  # measured in one run only: n says so
    assert "measured: median of the runs' medians" in table([a], RUNS_HEADER).splitlines()[0]
