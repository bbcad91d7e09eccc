"""The CRDs' CEL rules (x-kubernetes-validations) on the real API server: the installed CRDs
keep every rule (a server older than 1.25 would drop them unseen), and each sample of
tests/unit/api/cel_cases.py sent with `kubectl apply --dry-run=server` is refused with its rule's
message at the field the rule names, or admitted when it keeps the rules. Dry runs store nothing;
the transition rule's samples store a BuzzTrial first, in the test's own namespace. No operator
runs: this is the API server alone."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import pytest

from tests.support.cluster import kubectl
from tests.unit.api import cel_cases, celeval

RULES = {rule.id: rule for kind in celeval.FILES for rule in celeval.rules(kind)}
CREATES = [sample for sample in cel_cases.SAMPLES if not sample.update]
UPDATES = [sample for sample in cel_cases.SAMPLES if sample.update]


def _dry_run_apply(namespace: str, body: dict[str, Any]) -> str | None:
    """None when the API server admits `body`; else what kubectl printed about the refusal."""
    try:
        kubectl("-n", namespace, "apply", "--dry-run=server", "-f", "-", stdin=json.dumps(body))
    except subprocess.CalledProcessError as error:
        return f"{error.stderr}{error.stdout}"
    return None


def _assert_judged(sample: cel_cases.Sample, refusal: str | None) -> None:
    if not sample.refused:
        assert refusal is None, f"{sample.id} was refused: {refusal}"
        return
    rule = RULES[sample.rule]
    assert refusal is not None, f"{sample.id} was admitted; {rule.id} should refuse it"
    where = rule.path + rule.entry.get("fieldPath", "")
    assert "is invalid" in refusal, refusal
    assert f"{where}: " in refusal, f"{sample.id}: {refusal!r} does not point at {where}"
    assert rule.entry["message"] in refusal, f"{sample.id}: {refusal!r} lacks the rule's message"


def test_installed_crds_keep_their_rules(crds: None) -> None:
    for kind in celeval.FILES:
        installed = json.loads(kubectl("get", "crd", f"{kind.lower()}s.bench.buzz.dev", "-o", "json"))
        schema = installed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        served = {rule.id: rule.entry for rule in celeval.rules(kind, schema)}
        assert served == {rule.id: rule.entry for rule in celeval.rules(kind)}, kind


@pytest.mark.parametrize("sample", CREATES, ids=lambda sample: sample.id)
def test_create_is_judged_by_the_rule(sample: cel_cases.Sample, crds: None, namespace: str) -> None:
    _assert_judged(sample, _dry_run_apply(namespace, sample.body(f"cel-{sample.id}")))


@pytest.mark.parametrize("sample", UPDATES, ids=lambda sample: sample.id)
def test_update_is_judged_by_the_rule(sample: cel_cases.Sample, crds: None, namespace: str) -> None:
    name = f"cel-{sample.id}"
    kubectl("-n", namespace, "apply", "-f", "-", stdin=json.dumps(sample.stored(name)))
    _assert_judged(sample, _dry_run_apply(namespace, sample.body(name)))
