"""Every bad input of the corpus that needs no cluster is refused by the operator's own
admission code with a message naming the field; the valid sweep they mutate is accepted.
(tests/faults/test_bad_inputs.py runs the whole corpus through a real apiserver and operator.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from buzz_operator.api.sweep import BuzzSweepSpec
from buzz_operator.inputs.errors import InputError
from buzz_operator.inputs.fetch import datasets, resolve
from buzz_operator.sweep.invalid import validation_message
from pydantic import ValidationError

from tests.support.corpus import load_corpus

ROOT = Path(__file__).resolve().parents[3]


corpus = load_corpus()
PURE = [c for c in corpus.CASES if c.stage in ("schema", "accept")]


@pytest.fixture(autouse=True)
def operator_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's environment the corpus is refused under (corpus.OPERATOR_ENV)."""
    for name, value in corpus.OPERATOR_ENV.items():
        monkeypatch.setenv(name, value)


async def refusal(body: dict) -> str | None:  # type: ignore[type-arg]
    """What the sweep reconcile would say before touching the cluster (None: accepted)."""
    try:
        spec = BuzzSweepSpec.model_validate(body["spec"])
    except ValidationError as error:
        return validation_message(error)
    try:
        condition = await resolve.load_condition(None, "ns", spec)  # type: ignore[arg-type]  # inline: no API
        if spec.endpoints is not None:  # the Secret is the cluster tier's business
            spec = spec.model_copy(update={"endpoints": spec.endpoints.model_copy(update={"secret_ref": None})})
        await resolve.load_endpoints(None, "ns", spec, condition.manifest)  # type: ignore[arg-type]
        await resolve.open_sweep_store(None, "ns", spec)  # type: ignore[arg-type]  # file://, no credentials: no I/O
        await datasets.load_tasks(None, "ns", spec, None)  # type: ignore[arg-type]  # builtin: no I/O
    except InputError as error:
        return str(error)
    return None


def test_corpus_is_large_and_distinct() -> None:
    ids = [c.id for c in corpus.CASES]
    assert len(ids) >= 40 and len(set(ids)) == len(ids)
    assert {c.stage for c in corpus.CASES} == set(corpus.STAGES)


async def test_good_sweep_is_accepted() -> None:
    assert await refusal(corpus.good_body(ROOT, store_url="file:///tmp/x")) is None


@pytest.mark.parametrize("case", PURE, ids=[c.id for c in PURE])
async def test_bad_input_is_refused_naming_the_field(case) -> None:  # type: ignore[no-untyped-def]
    body = case.apply(corpus.good_body(ROOT, store_url="file:///tmp/x"), case.id)
    message = await refusal(body)
    assert message is not None, f"{case.id} was accepted"
    assert case.named_in(message), f"{case.id}: {message!r} does not name {case.field}"
    if case.stage == "schema":
        assert message.startswith(case.field.split(".")[0]), message


def test_pure_figure(capsys: pytest.CaptureFixture[str]) -> None:
    import asyncio

    refused = 0
    for case in PURE:
        body = case.apply(corpus.good_body(ROOT, store_url="file:///tmp/x"), case.id)
        message = asyncio.run(refusal(body))
        refused += message is not None and case.named_in(message)
    with capsys.disabled():
        print(f"\nbad inputs (pure stages): {refused} refused naming the field / {len(PURE)} tried")
    assert refused == len(PURE)
