"""bench/scale.py's heap attribution: which types grew between two heap records, per 1,000 trials,
and bench/observed_operator.py's census of the live heap it is read from."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from observed_operator import heap_by_type
from scale import heap_growth


def test_growth_names_the_types_that_grew_per_thousand_trials() -> None:
    first = {"types": {"dict": [100, 10_240], "str": [50, 2_048]}}
    last = {"types": {"dict": [2_100, 10_240 + 2_048_000], "str": [50, 2_048], "TrialSummary": [1_000, 204_800]}}
    text = heap_growth([first, last], trials=1_000)
    assert text.startswith("heap +2200 KB per 1,000 trials")
    assert "dict +2000 KB (+2000)" in text and "TrialSummary +200 KB (+1000)" in text
    assert text.index("dict") < text.index("TrialSummary")  # largest first
    assert heap_growth([first], trials=1_000) == "no heap records"


class Marker:
    pass


def test_the_census_counts_objects_the_collector_tracks_and_the_atoms_they_hold() -> None:
    kept = [Marker() for _ in range(1000)]
    words = {f"key-{i}": f"value-{i:06d}" for i in range(500)}
    heap = heap_by_type()
    assert heap["Marker"][0] >= 1000
    assert heap["str"][0] >= 500  # the dict's values, which the collector does not track itself
    assert kept and words
