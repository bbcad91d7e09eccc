"""bench/phases.py: a trial's phase segments from its phaseTimes and the watch, and their plot."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

import itertools

from phases import SEGMENTS, breakdown, draw, median_segments

T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC).timestamp()


def stamp(offset: float) -> str:
    return datetime.fromtimestamp(T0 + offset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# a trial as the watch saw it (no Launching, no Grading: they are written with the next phase)
WATCHED = {"created": T0 + 0.2, "Provisioning": T0 + 0.3, "Running": T0 + 2.4, "Collecting": T0 + 2.9,
           "Bundling": T0 + 3.3, "Succeeded": T0 + 4.1}
PHASE_TIMES = {"pending": stamp(0), "provisioning": stamp(0.3), "launching": stamp(1.2), "running": stamp(2.4),
               "collecting": stamp(2.9), "grading": stamp(3.1), "bundling": stamp(3.3), "finished": stamp(4.1)}


def test_every_phase_of_the_final_phase_times_is_a_segment_even_those_the_watch_never_saw() -> None:
    segments = breakdown(WATCHED["created"], WATCHED, PHASE_TIMES)
    assert [s[0] for s in segments] == list(SEGMENTS)
    by = {label: (begin, end, source) for label, begin, end, source in segments}
    # seen boundaries at the watch's time, from the trial's creation
    assert by["Provisioning"][:2] == pytest.approx((0.1, 1.3)) and by["Provisioning"][2] == "watch"
    # Launching's stamp is second 1 (the middle of it, 1.5 s), between its watched neighbours
    assert by["Launching"] == (pytest.approx(1.3), pytest.approx(2.2), "phaseTimes")
    # Grading's second (3) is mid-second 3.5, past Bundling as watched: held at Bundling
    assert by["Grading"] == (pytest.approx(3.1), pytest.approx(3.1), "phaseTimes")
    assert by["Bundling -> Succeeded"][1] == pytest.approx(3.9)
    assert segments[0][1] == 0 and all(a[2] == b[1] for a, b in itertools.pairwise(segments))


def test_a_phase_with_no_stamp_and_never_seen_has_no_segment() -> None:
    times = {k: v for k, v in PHASE_TIMES.items() if k != "grading"}
    labels = [s[0] for s in breakdown(WATCHED["created"], WATCHED, times)]
    assert "Grading" not in labels and labels[-2:] == ["Collecting", "Bundling -> Succeeded"]


def test_median_of_each_phase_stacks_from_zero() -> None:
    trials = [{"segments": [["Provisioning", 0.0, 1.0, "watch"], ["Running", 1.0, 4.0, "watch"]]},
              {"segments": [["Provisioning", 0.0, 3.0, "watch"], ["Running", 3.0, 4.0, "watch"]]},
              {"segments": [["Provisioning", 0.0, 2.0, "watch"]]}]
    assert median_segments(trials) == [["Provisioning", 0.0, 2.0, "median"], ["Running", 2.0, 3.0, "median"]]


def test_the_plot_is_a_png_and_nothing_is_drawn_without_a_trial(tmp_path: Path) -> None:
    segments = breakdown(WATCHED["created"], WATCHED, PHASE_TIMES)
    rows = [{"kind": "bare", "run": 1, "samples": [0.9, 1.0, 1.1]},
            {"kind": "trial", "run": 1, "trial": "p1-hello-file-0", "segments": segments, "active_s": 0.3}]
    assert draw(rows[:1], tmp_path / "none.png") is None
    drawn = draw(rows, tmp_path / "p1.png")
    assert drawn is not None and drawn.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
