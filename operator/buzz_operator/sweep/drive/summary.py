"""The sweep's summary.json in object storage (docs/bundle.md#layout): written when due
(sweep/summary_doc.summary_due) and only when the trials' results changed since the last one
written (status.summaryDigest), so an idle sweep writes nothing."""

from __future__ import annotations

import logging
import time

from buzz_operator.api.sweep import BuzzSweepStatus
from buzz_operator.storage import StorageError
from buzz_operator.sweep.drive import documents
from buzz_operator.sweep.drive.inputs import SweepInputs
from buzz_operator.sweep.drive.plan import Plan
from buzz_operator.sweep.drive.tick import Tick
from buzz_operator.sweep.rollup import SweepRollup
from buzz_operator.sweep.summary_doc import results_digest, summary_due, summary_head

log = logging.getLogger(__name__)
# sweep uid -> when this process last wrote its summary.json (summary_doc.summary_due); a
# restarted operator writes at its first chance
_written: dict[str, float] = {}


async def write_summary(tick: Tick, read: SweepInputs, planned: Plan, figures: SweepRollup,
                        new: BuzzSweepStatus) -> BuzzSweepStatus:
    """`new` with the summary's URL and digest once written; as it was when not due, unchanged,
    or when storage fails (the digest left as it was, so the next tick writes it)."""
    written = _written.get(tick.uid)
    since = None if written is None else time.monotonic() - written
    if not summary_due(planned.created, figures.finished, since):
        return new
    results = results_digest(tick.mine)
    if results is None or results == tick.previous.summary_digest:
        return new
    head = summary_head(sweep=tick.name, namespace=tick.namespace, condition=read.manifest.condition,
                        condition_hash=read.manifest.sha256, rollup=figures, trials=tick.mine,
                        attempts=read.spec.attempts, now=tick.now)
    try:
        url = await documents.write_summary(read.store, tick.name, head, tick.mine.by_name())
    except StorageError as error:
        log.warning("sweep %s/%s: summary.json not written: %s", tick.namespace, tick.name, error)
        return new
    _written[tick.uid] = time.monotonic()
    return new.model_copy(update={"summary_url": url, "summary_digest": results})
