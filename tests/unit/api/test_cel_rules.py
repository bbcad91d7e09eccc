"""The CRDs' CEL rules (x-kubernetes-validations): each names the field it guards, reads only
fields the schema declares, stays cheap, and — evaluated by a real CEL evaluator (cel-python,
via celeval) — refuses exactly the samples of cel_cases that its pydantic twin refuses.
(tests/integration/operator/test_crd_cel.py sends the same samples to a real API server.)"""

from __future__ import annotations

import re
from typing import Any

import pytest
from buzz_operator.api import SpecError, validate_sweep_spec, validate_trial_spec

from tests.unit.api import cel_cases, celeval

RULES = celeval.rules("BuzzSweep") + celeval.rules("BuzzTrial")
BY_ID = {rule.id: rule for rule in RULES}
REASONS = {"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate"}
# self, self.a.b or oldSelf.a: the field chain a rule reads (a method call, .size(), is not a field)
READS = re.compile(r"\b(?:self|oldSelf)((?:\.\w+\b(?!\())*)")


def _child(node: dict[str, Any], chain: str) -> dict[str, Any] | None:
    for name in filter(None, chain.split(".")):
        node = node.get("properties", {}).get(name)
        if node is None:
            return None
    return node


def test_the_crds_carry_rules() -> None:
    assert set(BY_ID) == {sample.rule for sample in cel_cases.SAMPLES}
    assert {rule.kind for rule in RULES} == {"BuzzSweep", "BuzzTrial"}


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_every_rule_has_a_message_naming_its_field(rule: celeval.Rule) -> None:
    entry = rule.entry
    assert set(entry) <= {"rule", "message", "fieldPath", "reason"}, entry
    message = entry["message"]
    # the API server shows the message as the reason; it must say which field, as the user spells it
    assert message.startswith(f"{rule.path} ") or message.startswith(f"{rule.path}."), message
    assert "\n" not in message and message == message.strip()
    if "fieldPath" in entry:
        assert _child(rule.node, entry["fieldPath"]) is not None, entry["fieldPath"]
        assert f"{rule.path}{entry['fieldPath']}" in message, message
    assert entry.get("reason", "FieldValueInvalid") in REASONS


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_rules_read_only_declared_fields(rule: celeval.Rule) -> None:
    # has(self.typo) is simply false to an evaluator that knows no schema; the API server
    # would refuse the CRD, so the unit tier checks every field a rule names exists.
    for chain in READS.findall(rule.entry["rule"]):
        assert _child(rule.node, chain) is not None, f"{rule.id} reads undeclared {chain}"


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_rules_walk_only_bounded_strings_and_lists(rule: celeval.Rule) -> None:
    # The API server estimates a rule's cost at the largest value the schema allows; an
    # unbounded string or list a rule walks makes that estimate the request size limit.
    expression = rule.entry["rule"]
    for match in READS.finditer(expression):
        if expression[: match.start()].endswith("has("):
            continue  # has() looks at the key, not the value
        node = _child(rule.node, match.group(1)) or {}
        if node.get("type") == "string":
            assert "maxLength" in node, f"{rule.id}: {match.group(0)} is a string without maxLength"
        if node.get("type") == "array":
            assert "maxItems" in node, f"{rule.id}: {match.group(0)} is a list without maxItems"


@pytest.mark.parametrize("rule", [r for r in RULES if "default" in r.node], ids=lambda rule: rule.id)
def test_rules_hold_for_the_schema_default(rule: celeval.Rule) -> None:
    # The API server checks a node's default against the node's rules as written, before the
    # default's own fields are defaulted: `retry: {}` must pass a rule about retry's fields.
    assert celeval.evaluate(rule.entry["rule"], rule.node["default"])


@pytest.mark.parametrize("rule", RULES, ids=lambda rule: rule.id)
def test_every_rule_has_a_refused_and_a_passing_sample(rule: celeval.Rule) -> None:
    verdicts = {sample.refused for sample in cel_cases.SAMPLES if sample.rule == rule.id}
    assert verdicts == {True, False}, rule.id


@pytest.mark.parametrize("kind", ["BuzzSweep", "BuzzTrial"])
def test_the_valid_objects_pass(kind: str) -> None:
    body = cel_cases.BASES[kind]()
    assert celeval.refusals(kind, body) == []
    assert celeval.refusals(kind, body, old=body) == []


@pytest.mark.parametrize("sample", cel_cases.SAMPLES, ids=lambda sample: sample.id)
def test_sample_is_judged_by_its_rule(sample: cel_cases.Sample) -> None:
    rule = BY_ID[sample.rule]
    old = sample.stored(sample.id) if sample.update else None
    found = celeval.refusals(sample.kind, sample.body(sample.id), old=old)
    if sample.refused:
        where = rule.path + rule.entry.get("fieldPath", "")
        assert found == [celeval.Refusal(where, rule.entry["message"])]
    else:
        assert found == []


TWINNED = [sample for sample in cel_cases.SAMPLES if not sample.update]


@pytest.mark.parametrize("sample", TWINNED, ids=lambda sample: sample.id)
def test_the_operator_refuses_what_the_rule_refuses(sample: cel_cases.Sample) -> None:
    # An API server without CEL (before 1.25) admits everything these rules refuse; the
    # operator's own validation must then refuse it, naming the same field.
    validate = validate_sweep_spec if sample.kind == "BuzzSweep" else validate_trial_spec
    spec = sample.body(sample.id)["spec"]
    if not sample.refused:
        validate(spec)
        return
    with pytest.raises(SpecError) as caught:
        validate(spec)
    # the rule's node, or the field its fieldPath names there (where the API server reports it)
    rule = BY_ID[sample.rule]
    assert caught.value.field in {rule.path, rule.path + rule.entry.get("fieldPath", "")}, str(caught.value)
