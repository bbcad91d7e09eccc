"""JSON log lines carry sweep and trial ids, from kopf's object reference or the daemon's context."""

from __future__ import annotations

import io
import json
import logging

from buzz_operator.observability import logs


def render(record: logging.LogRecord) -> dict[str, object]:
    from kopf._core.actions.loggers import ObjectJsonFormatter

    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(ObjectJsonFormatter(refkey=logs.REFKEY))
    handler.addFilter(logs.IdsFilter())
    handler.handle(record)
    return json.loads(stream.getvalue())


def record(msg: str, **extra: object) -> logging.LogRecord:
    rec = logging.LogRecord("buzz_operator.trial", logging.INFO, __file__, 1, msg, None, None)
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_kopf_object_lines_name_the_trial_and_its_sweep() -> None:
    logs.remember_trial("ns", "s1-hello-1", "s1")
    line = render(record("hi", k8s_ref={"kind": "BuzzTrial", "name": "s1-hello-1", "namespace": "ns"}))
    assert line["trial"] == "s1-hello-1" and line["sweep"] == "s1" and line["message"] == "hi"
    assert line["object"]["kind"] == "BuzzTrial"  # type: ignore[index]


def test_a_trial_kopf_no_longer_watches_is_forgotten() -> None:
    """Settled or deleted: kopf logs nothing more of it, and the entry would stay for good."""
    logs.remember_trial("ns", "s1-kept", "s1")
    logs.remember_trial("ns", "s1-settled", "s1")
    logs.retain_trials([("ns", "s1-kept")])
    ref = {"kind": "BuzzTrial", "namespace": "ns"}
    assert render(record("x", k8s_ref={**ref, "name": "s1-kept"}))["sweep"] == "s1"
    assert "sweep" not in render(record("x", k8s_ref={**ref, "name": "s1-settled"}))


def test_sweep_lines_name_the_sweep() -> None:
    line = render(record("tick", k8s_ref={"kind": "BuzzSweep", "name": "s2", "namespace": "ns"}))
    assert line["sweep"] == "s2" and "trial" not in line


def test_plain_runtime_lines_use_the_daemon_context() -> None:
    token = logs.CURRENT.set(("s3", "s3-t-1"))
    try:
        line = render(record("step"))
    finally:
        logs.CURRENT.reset(token)
    assert (line["sweep"], line["trial"]) == ("s3", "s3-t-1")
    assert "sweep" not in render(record("outside"))
    token = logs.CURRENT.set(("s4", None))  # the sweep timer: a sweep, no trial
    try:
        line = render(record("tick"))
    finally:
        logs.CURRENT.reset(token)
    assert line["sweep"] == "s4" and "trial" not in line
