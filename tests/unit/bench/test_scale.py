"""bench/scale.py's heap attribution: which types grew between two heap records, per 1,000 trials,
where the RSS lay at 10 % and at the end, and bench/observed_operator.py's census of the live
heap and its memory record they are read from."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "bench"))

from observed_operator import heap_by_type, memory_parts
from scale import heap_growth, memory_growth


def test_growth_names_the_types_that_grew_per_thousand_trials() -> None:
    first = {"types": {"dict": [100, 10_240], "str": [50, 2_048]}}
    last = {"types": {"dict": [2_100, 10_240 + 2_048_000], "str": [50, 2_048], "TrialView": [1_000, 204_800]}}
    text = heap_growth([first, last], trials=1_000)
    assert text.startswith("heap +2200 KB per 1,000 trials")
    assert "dict +2000 KB (+2000)" in text and "TrialView +200 KB (+1000)" in text
    assert text.index("dict") < text.index("TrialView")  # largest first
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


def test_the_memory_record_says_where_the_rss_lies() -> None:
    parts = memory_parts()
    assert parts["VmRSS"] > 0 and parts["RssAnon"] + parts["RssFile"] <= parts["VmRSS"] + 1
    # this interpreter runs pymalloc (no PYTHONMALLOC=malloc): its arenas hold the live blocks
    assert parts["pymalloc_arenas"] >= 1 and 0 < parts["pymalloc_live"] <= parts["pymalloc_arenas"]
    assert parts["glibc_used"] > 0 and parts["glibc_heap"] >= parts["glibc_used"]


def test_memory_growth_compares_the_last_record_before_10_percent_with_the_end() -> None:
    def at(t: float, rss: float, arenas: float) -> dict:
        return {"kind": "memory", "t": t, "VmRSS": rss, "pymalloc_arenas": arenas, "glibc_free": rss / 10}

    text = memory_growth([at(0, 100, 40), at(30, 120, 50), at(60, 130, 55), at(90, 150, 70)], t10=45)
    assert "VmRSS 120 -> 150" in text and "pymalloc_arenas 50 -> 70" in text and "glibc_free 12 -> 15" in text
    assert text.endswith("every 30 s: 100/40 120/50 130/55 150/70")
    assert memory_growth([at(0, 100, 40)], t10=45) == "no memory records"


def test_the_rss_levels_are_medians_over_five_percent_of_the_trials_at_each_end() -> None:
    from scale import rss_levels

    times = [float(t) for t in range(100)]  # trial i created at i s
    # a level of 100 MB to trial 50 and 104 after, with a 30 MB transient in each window and at the end
    samples = [{"t": t + 0.5, "rss_mb": 100.0 if t < 50 else 104.0} for t in range(101)]
    samples[11]["rss_mb"] = 130.0
    samples[-1]["rss_mb"] = 134.0
    start, end = rss_levels(samples, times)
    assert (start, end) == (100.0, 104.0)
    # without creation times the levels are the first and last samples, transients and all
    assert rss_levels(samples, []) == (100.0, 134.0)


def test_the_resident_pages_of_mapped_files_are_counted_by_directory(tmp_path: Path) -> None:
    import mmap

    from observed_operator import resident_of

    with (tmp_path / "column").open("w+b") as handle:
        handle.truncate(16 * mmap.PAGESIZE)
        mapped = mmap.mmap(handle.fileno(), 16 * mmap.PAGESIZE)
    assert resident_of(tmp_path) == 0  # mapped, not yet touched
    for page in range(4):
        mapped[page * mmap.PAGESIZE] = 1
    assert resident_of(tmp_path) == 4 * mmap.PAGESIZE
    mapped.madvise(mmap.MADV_DONTNEED)
    assert resident_of(tmp_path) == 0
    assert resident_of(tmp_path / "elsewhere") == 0
    mapped.close()
