"""The caveats printed under the summary table, one per kind of flag present — the notes and
warnings of the seed's ``format_table`` (docs/failures.md#summaries), which say what each flag does to a score."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from .table import ConditionRow


def caveats(rows: Sequence[ConditionRow]) -> list[str]:
    notes: list[str] = []
    stacks = Counter(r.manifest_sha256 for r in rows)
    if any(count > 1 for count in stacks.values()):
        notes.append(
            "WARNING: a condition hash ran under more than one stack, so it has a row per stack digest: "
            "the stack (buzz-acp's base prompt among it) changes behaviour without changing the hash, "
            "so those rows are different experiments and are not pooled."
        )
    if any(not r.stack_digest for r in rows):
        notes.append(
            "NOTE: a row whose stack is '-' holds trials that recorded no stack digest (bundles of an "
            "earlier build, or tries whose pod never installed a stack); which binaries produced them is unknown."
        )
    if any(r.launch_failures for r in rows):
        notes.append(
            "WARNING: LAUNCH-FAILED trials never started an agent, so their task was scored without a "
            "model attempting it; fix the cause and re-run — these rows understate the real score."
        )
    if any(r.verifier_broken for r in rows):
        notes.append(
            "WARNING: a VERIFIER-BROKEN trial could not install its own tests; its 0 says nothing about "
            "the agent. A flagged condition must be re-run, not reported."
        )
    if any(m != 1.0 for r in rows for m in r.timeout_multipliers):
        notes.append(
            "NOTE: a clock×N row ran with every deadline multiplied by N: not comparable to published "
            "leaderboard numbers, and Harbor refuses it as a submission."
        )
    if any(len(r.timeout_multipliers) > 1 for r in rows):
        notes.append("WARNING: a row pools trials run under different clocks, which is not one condition.")
    if any(r.stopped_without_done for r in rows):
        notes.append(
            "NOTE: a no-done trial ended without posting DONE; its reward is real but the completion "
            "protocol was dropped."
        )
    if any(r.round_capped for r in rows):
        notes.append(
            "WARNING: a ROUND-CAPPED turn ends silently mid-task; the condition is not comparable until "
            "the round cap is raised and it is re-run."
        )
    if any(r.unreconciled for r in rows):
        notes.append(
            "WARNING: unpriced trials reported no usage; their cost counts as $0, understating the row."
        )
    return notes
