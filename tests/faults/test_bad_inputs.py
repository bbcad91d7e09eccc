"""Every bad input of the corpus (tests/unit/validation/corpus.py) against a real apiserver and
one in-process operator watching one namespace: each is refused at admission by the CRD schema
or lands in Accepted=False with a message naming the field; no trial is ever created, and no
handler of the operator fails because of them — nothing escapes into a Ready=False condition
(api/escapes.py: what an unclassified exception becomes) or the operator's log.

Prints: bad inputs: <n> cases, <n> refused with a field named, 0 escaped (…).
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from buzz_operator.api.common import GROUP, VERSION
from buzz_operator.kube.client import Kube
from kopf.testing import KopfRunner
from kubernetes_asyncio.client.exceptions import ApiException

from .conftest import ROOT, corpus

SETTLE_S = 300.0


def operator_args(namespace: str) -> list[str]:
    return ["run", "--standalone", "-n", namespace, "-m", "buzz_operator.handlers"]


def condition(body: dict[str, Any], type_: str) -> dict[str, Any] | None:
    return next((c for c in (body.get("status") or {}).get("conditions", []) if c["type"] == type_), None)


def accepted(body: dict[str, Any]) -> dict[str, Any] | None:
    return condition(body, "Accepted")


async def _create_objects(kube: Kube, namespace: str) -> None:
    for case in corpus.CASES:
        for obj in case.objects:
            if obj["kind"] == "ConfigMap":
                await kube.core.create_namespaced_config_map(namespace, obj)
            else:
                await kube.core.create_namespaced_secret(namespace, obj)


async def test_bad_inputs_are_refused_naming_the_field(  # type: ignore[no-untyped-def]
    kube: Kube, namespace, crds, sweep_secrets, tmp_path: Path, monkeypatch
) -> None:
    for name, value in corpus.OPERATOR_ENV.items():  # the in-process operator's environment
        monkeypatch.setenv(name, value)
    good = corpus.good_body(ROOT, store_url=f"file://{tmp_path}")
    await _create_objects(kube, namespace)
    verdicts: dict[str, str] = {}  # case id -> the message that refused it ("" while waiting)
    created: dict[str, str] = {}  # sweep name -> case id
    escaped: dict[str, str] = {}  # case id -> what escaped a handler (its Ready=False message)
    with KopfRunner(operator_args(namespace), timeout=60) as runner:
        for index, case in enumerate(corpus.CASES):
            name = f"bad-{index:02d}"
            body = case.apply(good, name)
            try:
                await kube.custom.create_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps", body)
            except ApiException as error:
                verdicts[case.id] = f"HTTP {error.status}: {error.body}"
                continue
            created[name] = case.id
            verdicts[case.id] = ""
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            listed = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzzsweeps")
            for item in listed["items"]:
                case_id = created[item["metadata"]["name"]]
                refusal, ready = accepted(item), condition(item, "Ready")
                if refusal and refusal["status"] == "False":
                    verdicts[case_id] = f"{refusal['reason']}: {refusal['message']}"
                if ready and ready["status"] == "False":
                    escaped[case_id] = f"{ready['reason']}: {ready['message']}"
            if all(verdicts.values()):
                break
            await asyncio.sleep(2)
        trials = await kube.custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "buzztrials")
    output = runner.output
    by_case = {case.id: case for case in corpus.CASES}
    named = [cid for cid, message in verdicts.items() if message and by_case[cid].named_in(message)]
    named = [cid for cid in named if cid not in escaped]  # refused, but something escaped on the way
    schema = sum(1 for cid in named if verdicts[cid].startswith("HTTP 422"))
    handler_failures = output.count("failed with an exception") + output.count("failed temporarily")
    print(f"\nbad inputs: {len(corpus.CASES)} cases, {len(named)} refused with a field named, "
          f"{len(escaped)} escaped ({schema} by the CRD schema, {len(named) - schema} as Accepted=False); "
          f"trials created: {len(trials['items'])}; handler failures: {handler_failures}")
    for cid, message in verdicts.items():
        mark = "  " if cid in named else "!!"
        print(f"{mark} {cid:42} {' '.join((escaped.get(cid) or message).split())[:150]}")
    assert runner.exception is None and runner.exit_code == 0
    assert trials["items"] == []
    assert not escaped, escaped
    assert handler_failures == 0, output[-3000:]
    wrong_stage = [cid for cid in named if (by_case[cid].stage == "schema") != verdicts[cid].startswith("HTTP 422")]
    assert not wrong_stage, wrong_stage
    assert len(named) == len(corpus.CASES)
