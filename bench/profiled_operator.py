"""bench/observed_operator.py under cProfile, for `BUZZ_BENCH_OPERATOR` (bench/README.md).

    BUZZ_BENCH_OPERATOR=bench/profiled_operator.py .venv/bin/python bench/trial.py --attempts 3
    BUZZ_BENCH_OPERATOR=bench/profiled_operator.py .venv/bin/python bench/kwok.py --trials 2000 --nodes 20

The profiler's clock is the main thread's CPU time (time.thread_time), so the profile says where
the operator's CPU goes, not where it waits: the event loop, kopf and every handler run on the
main thread (the stats sampler thread is not profiled). When the operator stops (trial.py sends
SIGTERM; kopf stops gracefully) the raw stats go to operator-profile.prof in the bench output
folder (bench/out/; open with `python -m pstats`) and the top functions by own and by cumulative
CPU to operator-profile.txt beside it. The profiler costs CPU itself (a clock read per call and
return), so the CPU figure of a profiled run is not the figure; run once without it for that.
"""

from __future__ import annotations

import cProfile
import io
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import observed_operator
from figures import out_dir

TOP = 40


def main() -> None:
    out = out_dir()
    profile = cProfile.Profile(time.thread_time)
    began_cpu, began = time.process_time(), time.monotonic()
    profile.enable()
    try:
        observed_operator.main(sys.argv[1], sys.argv[2], "--sweep-path" in sys.argv[3:], "--pod-path" in sys.argv[3:])
    finally:
        profile.disable()
        profile.dump_stats(out / "operator-profile.prof")
        text = io.StringIO()
        text.write(f"operator process: {time.process_time() - began_cpu:.2f} CPU-s (all threads, profiled) "
                   f"in {time.monotonic() - began:.0f} s\n")
        stats = pstats.Stats(profile, stream=text)
        for order in ("tottime", "cumulative"):
            text.write(f"\n==== top {TOP} by {order} (main thread CPU-s) ====\n")
            stats.sort_stats(order).print_stats(TOP)
        (out / "operator-profile.txt").write_text(text.getvalue())


if __name__ == "__main__":
    main()
