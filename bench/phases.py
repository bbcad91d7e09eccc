"""Where a P1 trial's time goes: its phases from created to Succeeded, and the plot of them.

bench/trial.py calls `breakdown` for each finished trial and appends the rows to
``p1-phases.jsonl`` in the bench output folder (bench/out/; bench/run.py empties it once, so the
file holds every run of one `bench/run.py`, while trial.py on its own starts it anew), then
`draw` plots every row in the file as ``p1-phases.png`` beside it: one stacked bar per trial,
one segment per phase, the bare pod's create -> exec-ready of each run below them as the
baseline, and on top the median of each phase over all the trials drawn.

Which phases a trial went through comes from its final status.phaseTimes: entering Launching
and Grading is written together with the next phase (trial/state.write_can_wait), so a watch
never sees those two. phaseTimes are RFC 3339 to the second, though, and most phases of an
instantly-answering trial last less than one; so a boundary the benchmark's watch saw (the
write that entered the phase, landing) is taken at the watch's sub-second time, and one it could
not see at the middle of its phaseTimes second, held between its seen neighbours.

    .venv/bin/python bench/phases.py [bench/out/p1-phases.jsonl]   # redraw the PNG from the rows
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

# status.phaseTimes keys in corridor order, the phase a watch sees for each, and the segment
# that begins there (the last boundary, finished, ends the bar).
BOUNDARIES = (
    ("pending", None, "created -> Provisioning"),
    ("provisioning", "Provisioning", "Provisioning"),
    ("launching", "Launching", "Launching"),
    ("running", "Running", "Running"),
    ("collecting", "Collecting", "Collecting"),
    ("grading", "Grading", "Grading"),
    ("bundling", "Bundling", "Bundling -> Succeeded"),
    ("finished", "Succeeded", None),
)
SEGMENTS = tuple(label for _, _, label in BOUNDARIES if label is not None)
COLOURS = dict(zip(SEGMENTS, ("#bdbdbd", "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#b07aa1", "#edc948"),
                   strict=True))
BARE_COLOUR = "#76b7b2"
ROWS_FILE, PLOT_FILE = "p1-phases.jsonl", "p1-phases.png"


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def breakdown(created: float, watched: Mapping[str, float], phase_times: Mapping[str, Any]) -> list[list[Any]]:
    """A finished trial's segments as ``[label, start, end, source]``, seconds from ``created``.

    ``created`` and ``watched`` (phase -> when the watch first saw it) are epoch seconds on this
    host; ``phase_times`` is the trial's final status.phaseTimes. A phase the trial skipped (no
    stamp and never seen) has no segment; its time is in the segment before it. ``source`` says
    where the segment's start came from: ``watch`` or ``phaseTimes`` (1 s resolution).
    """
    points: list[tuple[str | None, float, str]] = [(BOUNDARIES[0][2], created, "watch")]
    for key, phase, label in BOUNDARIES[1:]:
        if phase is not None and phase in watched:
            points.append((label, watched[phase], "watch"))
        elif phase_times.get(key):
            points.append((label, _epoch(str(phase_times[key])) + 0.5, "phaseTimes"))
    # a stamp read from phaseTimes lies between the boundaries the watch saw around it
    for i, (label, at, source) in enumerate(points):
        if source == "phaseTimes":
            low = max((t for _, t, s in points[:i] if s == "watch"), default=at)
            high = min((t for _, t, s in points[i + 1:] if s == "watch"), default=at)
            points[i] = (label, min(max(at, low), max(high, low)), source)
    for i in range(1, len(points)):  # and in corridor order
        if points[i][1] < points[i - 1][1]:
            points[i] = (points[i][0], points[i - 1][1], points[i][2])
    return [[label, round(at - created, 3), round(points[i + 1][1] - created, 3), source]
            for i, (label, at, source) in enumerate(points[:-1])]


def read_rows(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def median_segments(trials: Sequence[Mapping[str, Any]]) -> list[list[Any]]:
    """The median duration of each phase over the trials (a phase a trial skipped counts as 0)."""
    out, start = [], 0.0
    for label in SEGMENTS:
        durations = [sum(end - begin for name, begin, end, _ in t["segments"] if name == label) for t in trials]
        length = statistics.median(durations) if durations else 0.0
        if length > 0:
            out.append([label, start, start + length, "median"])
            start += length
    return out


def draw(rows: Sequence[Mapping[str, Any]], path: Path) -> Path | None:
    """The stacked-bar PNG of every trial and bare-pod row; None when there is nothing to draw."""
    trials = [r for r in rows if r.get("kind") == "trial"]
    bare = [r for r in rows if r.get("kind") == "bare"]
    if not trials:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    bars: list[tuple[str, list[list[Any]], float | None]] = []
    bars.append(("median of each phase", median_segments(trials),
                 statistics.median(t["active_s"] for t in trials if t.get("active_s") is not None)
                 if any(t.get("active_s") is not None for t in trials) else None))
    bars += [(f"run {t['run']} · {t['trial'][-14:]}", t["segments"], t.get("active_s")) for t in trials]
    bars += [(f"run {b['run']} · bare pod (median of {len(b['samples'])})",
              [["bare pod create -> exec-ready", 0.0, statistics.median(b["samples"]), "bare"]], None) for b in bare]
    height = max(2.6, 1.4 + 0.34 * len(bars))
    fig, ax = plt.subplots(figsize=(10, height), dpi=110)
    ys = list(range(len(bars)))[::-1]
    for y, (_, segments, active) in zip(ys, bars, strict=True):
        for label, begin, end, _source in segments:
            colour = BARE_COLOUR if label.startswith("bare") else COLOURS[label]
            ax.barh(y, end - begin, left=begin, color=colour, edgecolor="white", linewidth=0.6, height=0.72)
            if label == "Running" and active:
                # the stand-in oracle's active time (task posted -> DONE:) is not the operator's
                ax.barh(y, min(active, end - begin), left=begin, color="none", edgecolor="#1f4d1a", hatch="///",
                        linewidth=0, height=0.72)
        total = segments[-1][2] if segments else 0.0
        ax.text(total + 0.05, y, f"{total:.2f} s", va="center", fontsize=8)
    ax.set_yticks(ys, [name for name, _, _ in bars], fontsize=8)
    ax.set_xlabel("seconds from the trial's creation (bare pod: from its create)\n"
                  "Launching and Grading from status.phaseTimes (1 s stamps, taken mid-second between the watched "
                  "neighbours); the other boundaries as the benchmark's watch saw them", fontsize=8)
    runs = sorted({t["run"] for t in trials})
    ax.set_title(f"P1: where an instantly-answering trial's time goes ({len(trials)} trials, "
                 f"{len(runs)} run(s) of bench/trial.py)", fontsize=10)
    handles = [plt.Rectangle((0, 0), 1, 1, color=COLOURS[s]) for s in SEGMENTS]
    handles += [plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#1f4d1a", hatch="///"),
                plt.Rectangle((0, 0), 1, 1, color=BARE_COLOUR)]
    labels = [*SEGMENTS, "agent active (stand-in oracle),\nnot operator time", "bare pod create -> exec-ready"]
    ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    ax.grid(axis="x", color="#e0e0e0", linewidth=0.6)
    ax.set_axisbelow(True)
    ax.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)
    return path


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from figures import out_dir

    rows = Path(argv[0]) if argv else out_dir() / ROWS_FILE
    drawn = draw(read_rows(rows), rows.with_name(PLOT_FILE))
    print(drawn or f"no trial rows in {rows}")
    return 0 if drawn else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
