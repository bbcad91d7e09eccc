"""The settled trials' summaries, which the operator keeps without kopf (docs/design.md#settled-trials).

A trial that is terminal and torn down is *settled*: its trial daemon labels it
`bench.buzz.dev/settled=true` and takes kopf's finalizer off in the same patch
(trial/settle.py). kopf's watch of BuzzTrials selects `!bench.buzz.dev/settled`, so the apiserver
tells kopf the trial is gone and kopf forgets everything it held for it (its memory of the object,
its daemon, its index entry): about 0.9 KB a trial, most of what a 100,000-trial sweep cost the
operator (bench/scale.py). What the sweep still needs of a settled trial — its TrialView, for
the planner, the rollup, summary.json, rerun and regrade — is kept here, from a watch of its own
that selects only settled trials: each one's summary and metrics record, kept in columns
(sweep/columns.py) rather than as objects, so the live heap does not grow with them.

One watch per namespace, started by the first reconcile of a sweep there, which waits until its
first listing (read a page at a time) is complete: a restarted operator sees every settled trial
before it plans anything, so nothing is created twice. The watch then keeps the summaries exact —
a settled trial deleted (by spec.rerun, by hand, with its sweep) is dropped when its DELETED event
comes, and one unlabelled for a regrade leaves here and comes back to kopf. A watch that expires
(410) or fails is listed again from scratch.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from kubernetes_asyncio import watch
from kubernetes_asyncio.client.exceptions import ApiException

from buzz_operator.api.common import GROUP, TRIALS, VERSION
from buzz_operator.api.labels import SETTLED
from buzz_operator.kube import resources
from buzz_operator.kube.client import Kube
from buzz_operator.sweep.columns import MEMORY, Store, Table
from buzz_operator.sweep.settled_sums import SettledSums
from buzz_operator.sweep.trial_view import TrialView, view_trial

log = logging.getLogger(__name__)
SELECTOR = f"{SETTLED}=true"
WATCH_S = 300  # the server ends each watch after this; it is resumed from the last version seen
RETRY_S = (1.0, 30.0)  # backoff after a failed list or watch: first, most
LIST_WAIT_S = 120.0  # how long a reconcile waits for a namespace's first listing before it fails

Record = Callable[[Mapping[str, Any]], Any]  # a settled trial's metrics record, from its body


def _no_record(_: Mapping[str, Any]) -> None:
    return None


def summary_table(store: Store = MEMORY) -> Table[TrialView]:
    return Table(TrialView, floats=("cost_floor", "cost_ceiling"), ints=("attempt",), store=store)


class Namespace:
    """The settled trials of one namespace, and the task that keeps them: each trial's summary and
    metrics record, kept in columns (sweep/columns.py), so a settled trial holds no object."""

    def __init__(self, record: Record = _no_record, records: Callable[[Store], Table[Any]] | None = None,
                 store: Store = MEMORY) -> None:
        self.record = record
        self.trials = summary_table(store)
        self.records: Table[Any] | None = records(store) if records is not None else None
        self.sums: dict[str, SettledSums] = {}  # sweep -> its settled trials added up (sweep/settled_sums.py)
        self.listed = asyncio.Event()
        self.task: asyncio.Task[None] | None = None
        self.added: dict[str, float] = {}  # name -> when `add` put it here (kept across a relist)

    def apply(self, kind: str, body: Mapping[str, Any]) -> None:
        """One watch event of a settled trial."""
        name = str((body.get("metadata") or {}).get("name", ""))
        self.added.pop(name, None)  # the watch has seen it: no relisting needs to remember it
        if kind == "DELETED":
            self.drop(name)
        elif kind in ("ADDED", "MODIFIED"):
            self.keep(body)

    def keep(self, body: Mapping[str, Any]) -> None:
        self.keep_view(view_trial(body))
        if self.records is not None:
            self.records.put(self.record(body))

    def keep_view(self, view: TrialView) -> None:
        """Keep (or replace) a trial's summary, and count it in its sweep's sums."""
        if (old := self.trials.get(view.name)) is not None:
            self._uncount(old)
        self.trials.put(view)
        sums = self.sums.get(view.sweep)
        if sums is None:
            sums = self.sums[view.sweep] = SettledSums()
        sums.add(view)

    def drop(self, name: str) -> None:
        if (old := self.trials.get(name)) is not None:
            self._uncount(old)
            self.trials.remove(name)
        if self.records is not None:
            self.records.remove(name)

    def _uncount(self, view: TrialView) -> None:
        sums = self.sums[view.sweep]
        sums.remove(view)
        if not sums:
            del self.sums[view.sweep]  # its last settled trial gone (the sweep deleted, or all rerun)

    def relisted(self, listed: Namespace, began: float) -> None:
        """A fresh listing (begun at monotonic `began`, kept in `listed`) replaces what was kept,
        except the trials settled here while it ran: the list may predate their label, their ADDED
        follows it."""
        for name, at in self.added.items():
            if at >= began and (late := self.trials.get(name)) is not None:
                listed.keep_view(late)
                if self.records is not None and listed.records is not None and (record := self.records.get(name)):
                    listed.records.put(record)
        self.trials, self.records, self.sums = listed.trials, listed.records, listed.sums
        self.added = {name: at for name, at in self.added.items() if at >= began}


class SettledTrials:
    def __init__(self, record: Record = _no_record, records: Callable[[Store], Table[Any]] | None = None,
                 store: Store = MEMORY) -> None:
        """`record` makes a settled trial's metrics record from its body, kept in a table from
        `records` (observability/metrics.py sums them at a scrape); none kept without them. The
        columns' numbers live in `store`: the operator's maps files (sweep/drive/mapped.py)."""
        self.record = record
        self.new_records = records
        self.store = store
        self.namespaces: dict[str, Namespace] = {}

    def _namespace(self) -> Namespace:
        return Namespace(self.record, self.new_records, self.store)

    def rest(self) -> None:
        """A reconcile is over: the store may let go of the pages it read."""
        self.store.rest()

    async def ready(self, kube: Kube, namespace: str, *, within_s: float = LIST_WAIT_S) -> None:
        """Start following `namespace` if nothing does yet, and wait for its first listing."""
        kept = self.namespaces.get(namespace)
        if kept is None or kept.task is None or kept.task.done():
            kept = kept or self._namespace()
            self.namespaces[namespace] = kept
            kept.task = asyncio.create_task(self._follow(kube, namespace, kept), name=f"settled trials of {namespace}")
        async with asyncio.timeout(within_s):
            await kept.listed.wait()

    def add(self, body: Mapping[str, Any]) -> None:
        """A trial this operator is settling (its body as it is labelled), kept before its label is
        written, so no reconcile finds it in neither kopf's index nor here."""
        name, namespace = str(body["metadata"]["name"]), str(body["metadata"]["namespace"])
        # made only when missing: a namespace is two tables of some forty mapped files, and
        # setdefault's default, made on every call, cost each settled trial 7 ms of making and
        # dropping them (bench/kwok.py's profile, docs/performance.md#scale-with-pods-kwok)
        kept = self.namespaces.get(namespace)
        if kept is None:
            kept = self.namespaces[namespace] = self._namespace()
        kept.keep(body)
        kept.added[name] = time.monotonic()

    def discard(self, namespace: str, name: str) -> None:
        """A trial `add` kept whose label was not written after all: kopf still has it."""
        if (kept := self.namespaces.get(namespace)) is not None:
            kept.drop(name)
            kept.added.pop(name, None)

    def summaries(self, namespace: str | None = None, sweep: str | None = None) -> Iterator[TrialView]:
        """The settled trials' summaries (of one namespace, of one sweep there), each built as it
        is read: hold them no longer than a reconcile."""
        for name, kept in list(self.namespaces.items()):
            if namespace is None or name == namespace:
                yield from (kept.trials.rows() if sweep is None else kept.trials.rows(sweep=sweep))

    def get(self, namespace: str, name: str) -> TrialView | None:
        """One settled trial's summary, found by name in the columns' index."""
        kept = self.namespaces.get(namespace)
        return None if kept is None else kept.trials.get(name)

    def sums(self, namespace: str, sweep: str) -> SettledSums:
        """One sweep's settled trials added up, kept as they settle (an empty sum for none). The
        reconcile reads this and not the trials: holding it no longer than a tick."""
        kept = self.namespaces.get(namespace)
        found = None if kept is None else kept.sums.get(sweep)
        return found if found is not None else SettledSums()

    def summaries_by_name(self, namespace: str, sweep: str) -> Iterator[TrialView]:
        """One sweep's settled trials' summaries in name order (summary.json's), built as read."""
        kept = self.namespaces.get(namespace)
        return iter(()) if kept is None else kept.trials.rows_by_key(sweep=sweep)

    def records(self) -> Iterator[tuple[Any, ...]]:
        """Every settled trial's metrics record as a tuple in the record's field order."""
        for kept in list(self.namespaces.values()):
            if kept.records is not None:
                yield from kept.records.tuples()

    def __len__(self) -> int:
        return sum(len(kept.trials) for kept in self.namespaces.values())

    async def close(self) -> None:
        tasks = [kept.task for kept in self.namespaces.values() if kept.task is not None]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _follow(self, kube: Kube, namespace: str, kept: Namespace) -> None:
        delay = RETRY_S[0]
        while True:
            try:
                version = await self._list(kube, namespace, kept)
                delay = RETRY_S[0]
                while version is not None:
                    version = await self._watch(kube, namespace, kept, version)
            except asyncio.CancelledError:
                raise
            except Exception as error:  # the apiserver may be away: list again after a while, never stop
                log.warning("settled trials of %s: %s: %s; listing again in %.0f s", namespace,
                            type(error).__name__, error, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_S[1])

    async def _list(self, kube: Kube, namespace: str, kept: Namespace) -> str:
        began = time.monotonic()
        listed = self._namespace()
        version = ""
        async for items, page_version in resources.pages(kube, TRIALS, namespace, selector=SELECTOR):
            version = page_version
            for body in items:
                listed.keep(body)
        kept.relisted(listed, began)
        kept.listed.set()
        return version

    async def _watch(self, kube: Kube, namespace: str, kept: Namespace, version: str) -> str | None:
        """Follow from `version` until the server ends the watch; the version to resume from,
        None when it expired (410: list again)."""
        stream = watch.Watch()
        try:
            async for event in stream.stream(
                kube.custom.list_namespaced_custom_object, GROUP, VERSION, namespace, TRIALS,
                label_selector=SELECTOR, resource_version=version, allow_watch_bookmarks=True,
                timeout_seconds=WATCH_S,
            ):
                body = event["object"]
                version = (body.get("metadata") or {}).get("resourceVersion") or version
                if event["type"] != "BOOKMARK":
                    kept.apply(event["type"], body)
        except ApiException as error:
            if error.status == 410:
                return None
            raise
        finally:
            with contextlib.suppress(Exception):
                await stream.close()  # each Watch owns an aiohttp session
        return version
