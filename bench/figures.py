"""One figure per benchmark measure, and the single table `make bench` ends with.

Each benchmark script builds `Figure`s from its samples and calls `record`: the figure is
printed at once and, when ``BUZZ_BENCH_RESULTS`` names a file (bench/run.py sets it), appended
to it as one JSON line. bench/run.py reads that file back after every script has run and prints
one table: figure, target, measured (median and spread), pass/miss.
"""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

RESULTS_ENV = "BUZZ_BENCH_RESULTS"
# Where the benchmarks leave files for a reader (the P1 phase plot, the operator profile):
# bench/out/ in the clone, ignored by git; bench/run.py passes the same folder to each benchmark.
OUT_ENV = "BUZZ_BENCH_OUT"
# The run (1-based) of bench/run.py --runs N a benchmark process is; unset when run on its own.
RUN_ENV = "BUZZ_BENCH_RUN"
LOWER, HIGHER, INFO = "<=", ">=", "info"


@dataclass(frozen=True)
class Figure:
    """A measure: its samples, the unit, and the target it is judged against.

    ``goal`` is ``<=`` (lower is better), ``>=`` (higher is better) or ``info`` (reported, no
    target). The median of the samples is judged; the spread is printed with it so the machine's
    noise is visible next to the verdict.
    """

    name: str
    unit: str
    samples: list[float]
    goal: str = INFO
    target: float | None = None
    note: str = ""
    decimals: int = 1
    extra: dict[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.samples:
            raise ValueError(f"figure {self.name!r} has no samples")
        if self.goal not in (LOWER, HIGHER, INFO):
            raise ValueError(f"figure {self.name!r}: goal must be <=, >= or info, not {self.goal!r}")
        if self.goal != INFO and self.target is None:
            raise ValueError(f"figure {self.name!r}: a {self.goal} goal needs a target")

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    @property
    def passed(self) -> bool | None:
        if self.goal == INFO or self.target is None:
            return None
        return self.median <= self.target if self.goal == LOWER else self.median >= self.target

    def measured(self) -> str:
        d = self.decimals
        text = f"{self.median:.{d}f} {self.unit}".rstrip()
        if len(self.samples) > 1:
            text += f" ({min(self.samples):.{d}f}..{max(self.samples):.{d}f}, n={len(self.samples)})"
        return text

    def target_text(self) -> str:
        if self.goal == INFO or self.target is None:
            return "-"
        return f"{self.goal} {self.target:g} {self.unit}".rstrip()

    def verdict(self) -> str:
        passed = self.passed
        return "info" if passed is None else "pass" if passed else "MISS"


def percentile(samples: Sequence[float], q: float) -> float:
    """The q-th percentile (0..100), linear between order statistics (p95 of 7 samples is honest
    about being near the maximum)."""
    if not samples:
        raise ValueError("no samples")
    ordered = sorted(samples)
    rank = (len(ordered) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def out_dir(environ: dict[str, str] | None = None) -> Path:
    env = os.environ if environ is None else environ
    path = Path(env.get(OUT_ENV) or Path(__file__).resolve().parent / "out")
    path.mkdir(parents=True, exist_ok=True)
    return path


def record(figure: Figure, results: Path | None = None) -> Figure:
    """Print the figure and append it to the results file, if one is configured."""
    print(
        f"  {figure.name}: {figure.measured()}  target {figure.target_text()}  {figure.verdict()}"
        + (f"  [{figure.note}]" if figure.note else ""),
        flush=True,
    )
    path = results or (Path(os.environ[RESULTS_ENV]) if os.environ.get(RESULTS_ENV) else None)
    if path is not None:
        with path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(asdict(figure)) + "\n")
    return figure


def load(path: Path) -> list[Figure]:
    figures = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            figures.append(Figure(**json.loads(line)))
    return figures


def pool(runs: Sequence[Sequence[Figure]]) -> list[Figure]:
    """One figure per name over several runs of the same benchmarks: its samples are the runs'
    medians (each run judged as a whole, so a run of 5 trials and one of 3 weigh the same, and the
    spread printed is the run-to-run spread), the median of them is what is judged. Unit, target
    and decimals come from the last run that measured it, and so does the note; ``extra`` keeps
    how many runs and samples went in. In the order the figures were first recorded."""
    grouped: dict[str, list[Figure]] = {}
    for figures in runs:
        for figure in figures:
            grouped.setdefault(figure.name, []).append(figure)
    pooled = []
    for name, seen in grouped.items():
        last = seen[-1]
        pooled.append(Figure(name, last.unit, [f.median for f in seen], last.goal, last.target, note=last.note,
                             decimals=last.decimals,
                             extra={"runs": float(len(seen)), "samples": float(sum(len(f.samples) for f in seen))}))
    return pooled


SAMPLES_HEADER = "measured (median (min..max, n))"
RUNS_HEADER = "measured: median of the runs' medians (min..max of them, n runs)"


def table(figures: Iterable[Figure], measured_header: str = SAMPLES_HEADER) -> str:
    rows = [("figure", "target", measured_header, "result")]
    rows += [(f.name, f.target_text(), f.measured(), f.verdict()) for f in figures]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    lines = []
    for index, (name, target, measured, verdict) in enumerate(rows):
        lines.append(f"{name:<{widths[0]}}  {target:<{widths[1]}}  {measured:<{widths[2]}}  {verdict}")
        if index == 0:
            lines.append("-" * (sum(widths) + 6 + len("result")))
    return "\n".join(lines)
