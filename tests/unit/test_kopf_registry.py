"""The premise of handlers.NoDiffBase: kopf keeps a last-handled configuration only to diff an
object for on.create / on.update / on.resume / on.field handlers. The operator registers none —
its only changing handler is on.delete, which kopf tells by deletionTimestamp — so a new one of
those kinds must come with a real diff-base storage again, and this test says so."""

from __future__ import annotations

import kopf
from buzz_operator import handlers
from kopf._core.intents.causes import Reason


def test_the_only_changing_handler_is_on_delete() -> None:
    changing = kopf.get_default_registry()._changing.get_all_handlers()
    assert [(h.id, h.reason) for h in changing] == [("release_trial", Reason.DELETE)], (
        "a handler that needs kopf's diff of the object was registered: give startup() a real "
        "DiffBaseStorage (kopf.AnnotationsDiffBaseStorage) instead of handlers.NoDiffBase")


def test_no_diff_base_is_kept_or_read() -> None:
    storage = handlers.NoDiffBase()
    body = kopf.Body({"metadata": {"name": "t", "annotations": {}}, "spec": {"task": "x"}})
    patch = kopf.Patch()
    storage.store(body=body, patch=patch, essence=storage.build(body=body))
    assert not patch and storage.fetch(body=body) is None


def test_no_timer_waits_for_idleness() -> None:
    """NoDiffBase builds an empty essence, so kopf's diff no longer says whether an object changed;
    only timers with idle= read that (kopf's spawning cause, reset=bool(diff))."""
    spawning = kopf.get_default_registry()._spawning.get_all_handlers()
    assert spawning and all(getattr(h, "idle", None) is None for h in spawning), (
        "a daemon or timer with idle= needs kopf to tell essential changes: build the essence again")


def test_the_essence_is_not_a_copy_of_the_body() -> None:
    body = kopf.Body({"metadata": {"name": "t"}, "spec": {"task": "x" * 1000}, "status": {"phase": "Running"}})
    assert handlers.NoDiffBase().build(body=body) == {}


def test_a_field_handler_still_gets_kopfs_essence() -> None:
    """on.field handlers (kopf's extra fields) fire on their field's value in the essence."""
    from kopf._cogs.structs.dicts import parse_field

    body = kopf.Body({"metadata": {"name": "p"}, "status": {"phase": "Succeeded"}})
    essence = handlers.NoDiffBase().build(body=body, extra_fields=[parse_field("status.phase")])
    assert essence.get("status", {}).get("phase") == "Succeeded"
