"""The condition hash (docs/condition.md#condition-hash), pinned by canonical JSON derived by hand.

Each golden below was written by following docs/condition.md#condition-hash step by step, not by running the code:
dump every field with defaults and nulls (floats as floats), drop `harness` when it is
`buzz-agent` and `generation.thinking_effort` when null, sort keys, no whitespace, UTF-8.
"""

from __future__ import annotations

import hashlib

import pytest
import yaml
from buzz_operator.condition import ExperimentManifest

D1 = "0123456789abcdef" * 4
D2 = "fedcba9876543210" * 4

SOLO_LUNA_YAML = f"""
condition: tb-solo-luna
roster:
  - id: solo
    kind: orchestrator
    role: solo
    count: 1
    endpoint: databricks-gpt-5-6-luna
    model_revision: gpt-5.6-luna
    prompt: {{path: personas/bench/solo.md, sha256: {D1}}}
prices:
  databricks-gpt-5-6-luna:
    input_per_million_usd: 0.2
    cached_input_per_million_usd: 0.02
    output_per_million_usd: 1.2
    cache_read_rate: 0
trial_budget:
  timeout_seconds: 36000
environment:
  override_cpus: 4
  override_memory_mb: 8192
"""
SOLO_LUNA_CANONICAL = (
    '{"condition":"tb-solo-luna",'
    '"environment":{"override_cpus":4,"override_memory_mb":8192,"override_storage_mb":null},'
    '"metadata":{},'
    '"prices":{"databricks-gpt-5-6-luna":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.02,'
    '"input_per_million_usd":0.2,"output_per_million_usd":1.2}},'
    '"roster":[{"budget":{"max_calls":null,"max_cost_usd":null,"max_input_tokens":null,"max_output_tokens":null},'
    '"concurrency":1,"count":1,"endpoint":"databricks-gpt-5-6-luna",'
    '"generation":{"compact_at_percent":null,"compact_at_tokens":null,"context_window_tokens":null,'
    '"extra":{},"max_output_tokens":null},'
    '"id":"solo","include_platform_prompt":true,"kind":"orchestrator","model_revision":"gpt-5.6-luna",'
    '"persona":null,"prompt":{"path":"personas/bench/solo.md","sha256":"' + D1 + '"},'
    '"role":"solo","skills":[]}],'
    '"schema_version":"1",'
    '"trial_budget":{"max_cost_usd":null,"timeout_seconds":36000}}'
)
# sha256 of SOLO_LUNA_CANONICAL, computed with coreutils' sha256sum from the literal above.
SOLO_LUNA_SHA256 = "6536770f5c8330af233ee9622788578e55048d1cd173557a0aece9e3245227f3"

TEAM_YAML = f"""
condition: tb-gt-opus-2luna
metadata:
  worker_publish_recovery: true
roster:
  - id: lead
    kind: orchestrator
    role: lead
    count: 1
    endpoint: databricks-claude-opus-5
    model_revision: claude-opus-5
    prompt: {{path: personas/bench/lead.md, sha256: {D1}}}
    generation:
      max_output_tokens: 4096
      context_window_tokens: 128000
      compact_at_percent: 30
      thinking_effort: xhigh
  - id: scout
    kind: worker
    role: scout
    count: 1
    endpoint: databricks-gpt-5-6-luna
    model_revision: gpt-5.6-luna
    prompt: {{path: personas/bench/scout.md, sha256: {D2}}}
  - id: worker
    kind: worker
    role: worker
    count: 2
    concurrency: 2
    endpoint: databricks-gpt-5-6-luna
    model_revision: gpt-5.6-luna
    prompt: {{path: personas/bench/worker.md, sha256: {D2}}}
    budget: {{max_calls: 50, max_cost_usd: 2}}
prices:
  databricks-claude-opus-5: {{input_per_million_usd: 5, cached_input_per_million_usd: 0.5, output_per_million_usd: 25}}
  databricks-gpt-5-6-luna: {{input_per_million_usd: 0.2, cached_input_per_million_usd: 0.02, output_per_million_usd: 1.2}}
trial_budget: {{timeout_seconds: 36000, max_cost_usd: 10}}
"""
_NO_BUDGET = (
    '"budget":{"max_calls":null,"max_cost_usd":null,"max_input_tokens":null,"max_output_tokens":null}'
)
_NO_GENERATION = (
    '"generation":{"compact_at_percent":null,"compact_at_tokens":null,"context_window_tokens":null,'
    '"extra":{},"max_output_tokens":null}'
)
TEAM_CANONICAL = (
    '{"condition":"tb-gt-opus-2luna",'
    '"environment":{"override_cpus":null,"override_memory_mb":null,"override_storage_mb":null},'
    '"metadata":{"worker_publish_recovery":true},'
    '"prices":{"databricks-claude-opus-5":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.5,'
    '"input_per_million_usd":5.0,"output_per_million_usd":25.0},'
    '"databricks-gpt-5-6-luna":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.02,'
    '"input_per_million_usd":0.2,"output_per_million_usd":1.2}},'
    '"roster":['
    "{" + _NO_BUDGET + ',"concurrency":1,"count":1,"endpoint":"databricks-claude-opus-5",'
    '"generation":{"compact_at_percent":30,"compact_at_tokens":null,"context_window_tokens":128000,'
    '"extra":{},"max_output_tokens":4096,"thinking_effort":"xhigh"},'
    '"id":"lead","include_platform_prompt":true,"kind":"orchestrator","model_revision":"claude-opus-5",'
    '"persona":null,"prompt":{"path":"personas/bench/lead.md","sha256":"' + D1 + '"},'
    '"role":"lead","skills":[]},'
    "{"
    + _NO_BUDGET
    + ',"concurrency":1,"count":1,"endpoint":"databricks-gpt-5-6-luna",'
    + _NO_GENERATION
    + ","
    '"id":"scout","include_platform_prompt":true,"kind":"worker","model_revision":"gpt-5.6-luna",'
    '"persona":null,"prompt":{"path":"personas/bench/scout.md","sha256":"' + D2 + '"},'
    '"role":"scout","skills":[]},'
    '{"budget":{"max_calls":50,"max_cost_usd":2.0,"max_input_tokens":null,"max_output_tokens":null},'
    '"concurrency":2,"count":2,"endpoint":"databricks-gpt-5-6-luna",' + _NO_GENERATION + ","
    '"id":"worker","include_platform_prompt":true,"kind":"worker","model_revision":"gpt-5.6-luna",'
    '"persona":null,"prompt":{"path":"personas/bench/worker.md","sha256":"' + D2 + '"},'
    '"role":"worker","skills":[]}],'
    '"schema_version":"1",'
    '"trial_budget":{"max_cost_usd":10.0,"timeout_seconds":36000}}'
)

GOOSE_YAML = f"""
condition: tb-harness-goose-terra-high-set
roster:
  - id: solo
    kind: orchestrator
    role: solo
    count: 1
    harness: goose
    endpoint: gpt-5.6-terra
    model_revision: gpt-5.6-terra
    include_platform_prompt: false
    prompt: {{path: personas/bench/solo.md, sha256: {D1}}}
    persona: {{path: personas/extra/voice.md, sha256: {D2}}}
    skills:
      - {{path: skills/a.md, sha256: {D1}}}
      - {{path: skills/b.md, sha256: {D2}}}
    generation:
      thinking_effort: high
      extra: {{goose_system_prompt_mode: set}}
prices:
  gpt-5.6-terra: {{input_per_million_usd: 2.0, cached_input_per_million_usd: 0.2, output_per_million_usd: 12.0}}
trial_budget: {{timeout_seconds: 36000}}
"""
GOOSE_CANONICAL = (
    '{"condition":"tb-harness-goose-terra-high-set",'
    '"environment":{"override_cpus":null,"override_memory_mb":null,"override_storage_mb":null},'
    '"metadata":{},'
    '"prices":{"gpt-5.6-terra":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.2,'
    '"input_per_million_usd":2.0,"output_per_million_usd":12.0}},'
    '"roster":[{' + _NO_BUDGET + ',"concurrency":1,"count":1,"endpoint":"gpt-5.6-terra",'
    '"generation":{"compact_at_percent":null,"compact_at_tokens":null,"context_window_tokens":null,'
    '"extra":{"goose_system_prompt_mode":"set"},"max_output_tokens":null,"thinking_effort":"high"},'
    '"harness":"goose","id":"solo","include_platform_prompt":false,"kind":"orchestrator",'
    '"model_revision":"gpt-5.6-terra",'
    '"persona":{"path":"personas/extra/voice.md","sha256":"' + D2 + '"},'
    '"prompt":{"path":"personas/bench/solo.md","sha256":"' + D1 + '"},'
    '"role":"solo",'
    '"skills":[{"path":"skills/a.md","sha256":"' + D1 + '"},{"path":"skills/b.md","sha256":"' + D2 + '"}]}],'
    '"schema_version":"1",'
    '"trial_budget":{"max_cost_usd":null,"timeout_seconds":36000}}'
)

CODEX_YAML = f"""
condition: équipe-codex—ü
metadata:
  note: naïve
  weights: [1, 2.5]
roster:
  - id: solo
    kind: orchestrator
    role: pilote
    count: 1
    harness: codex
    endpoint: openai/gpt-5.6-sol
    model_revision: sol
    prompt: {{path: personas/bench/solo.md, sha256: {D1}}}
    generation: {{compact_at_tokens: 272000}}
prices:
  openai/gpt-5.6-sol:
    input_per_million_usd: 0.00001
    cached_input_per_million_usd: 0
    output_per_million_usd: 3
    cache_read_rate: 0.25
trial_budget: {{timeout_seconds: 900}}
environment: {{override_storage_mb: 20480}}
"""
CODEX_CANONICAL = (
    '{"condition":"équipe-codex—ü",'
    '"environment":{"override_cpus":null,"override_memory_mb":null,"override_storage_mb":20480},'
    '"metadata":{"note":"naïve","weights":[1,2.5]},'
    '"prices":{"openai/gpt-5.6-sol":{"cache_read_rate":0.25,"cached_input_per_million_usd":0.0,'
    '"input_per_million_usd":1e-05,"output_per_million_usd":3.0}},'
    '"roster":[{' + _NO_BUDGET + ',"concurrency":1,"count":1,"endpoint":"openai/gpt-5.6-sol",'
    '"generation":{"compact_at_percent":null,"compact_at_tokens":272000,"context_window_tokens":null,'
    '"extra":{},"max_output_tokens":null},'
    '"harness":"codex","id":"solo","include_platform_prompt":true,"kind":"orchestrator",'
    '"model_revision":"sol","persona":null,'
    '"prompt":{"path":"personas/bench/solo.md","sha256":"' + D1 + '"},'
    '"role":"pilote","skills":[]}],'
    '"schema_version":"1",'
    '"trial_budget":{"max_cost_usd":null,"timeout_seconds":900}}'
)

# Keys scrambled, defaults spelled out (harness buzz-agent, thinking_effort null, empty
# generation and environment): none of that may show in the canonical form.
M1_YAML = f"""
trial_budget: {{timeout_seconds: 1800}}
prices:
  local/placeholder-worker: {{output_per_million_usd: 0, input_per_million_usd: 0, cached_input_per_million_usd: 0}}
  local/placeholder-orchestrator: {{cached_input_per_million_usd: 0, output_per_million_usd: 0, input_per_million_usd: 0}}
environment: {{}}
schema_version: "1"
roster:
  - prompt: {{sha256: {D2}, path: personas/m1/orchestrator.md}}
    model_revision: placeholder
    endpoint: local/placeholder-orchestrator
    count: 1
    role: lead
    kind: orchestrator
    id: orchestrator
    harness: buzz-agent
    generation: {{thinking_effort: null}}
  - id: worker
    kind: worker
    role: implementer
    count: 1
    endpoint: local/placeholder-worker
    model_revision: placeholder
    prompt: {{path: personas/m1/worker.md, sha256: {D2}}}
    generation: {{}}
condition: M1-hello-world
"""
M1_CANONICAL = (
    '{"condition":"M1-hello-world",'
    '"environment":{"override_cpus":null,"override_memory_mb":null,"override_storage_mb":null},'
    '"metadata":{},'
    '"prices":{"local/placeholder-orchestrator":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.0,'
    '"input_per_million_usd":0.0,"output_per_million_usd":0.0},'
    '"local/placeholder-worker":{"cache_read_rate":0.0,"cached_input_per_million_usd":0.0,'
    '"input_per_million_usd":0.0,"output_per_million_usd":0.0}},'
    '"roster":['
    "{"
    + _NO_BUDGET
    + ',"concurrency":1,"count":1,"endpoint":"local/placeholder-orchestrator",'
    + _NO_GENERATION
    + ","
    '"id":"orchestrator","include_platform_prompt":true,"kind":"orchestrator","model_revision":"placeholder",'
    '"persona":null,"prompt":{"path":"personas/m1/orchestrator.md","sha256":"' + D2 + '"},'
    '"role":"lead","skills":[]},'
    "{"
    + _NO_BUDGET
    + ',"concurrency":1,"count":1,"endpoint":"local/placeholder-worker",'
    + _NO_GENERATION
    + ","
    '"id":"worker","include_platform_prompt":true,"kind":"worker","model_revision":"placeholder",'
    '"persona":null,"prompt":{"path":"personas/m1/worker.md","sha256":"' + D2 + '"},'
    '"role":"implementer","skills":[]}],'
    '"schema_version":"1",'
    '"trial_budget":{"max_cost_usd":null,"timeout_seconds":1800}}'
)

GOLDENS = [
    pytest.param(SOLO_LUNA_YAML, SOLO_LUNA_CANONICAL, id="solo-luna"),
    pytest.param(TEAM_YAML, TEAM_CANONICAL, id="team-opus-2luna"),
    pytest.param(GOOSE_YAML, GOOSE_CANONICAL, id="goose-set"),
    pytest.param(CODEX_YAML, CODEX_CANONICAL, id="codex-unicode"),
    pytest.param(M1_YAML, M1_CANONICAL, id="m1-scrambled-defaults"),
]


@pytest.mark.parametrize(("document", "canonical"), GOLDENS)
def test_golden_canonical_bytes(document: str, canonical: str) -> None:
    manifest = ExperimentManifest.load(yaml.safe_load(document))
    assert manifest.canonical_bytes() == canonical.encode("utf-8")
    assert manifest.sha256 == hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@pytest.mark.parametrize(("document", "canonical"), GOLDENS)
def test_golden_from_file(tmp_path, document: str, canonical: str) -> None:
    path = tmp_path / "condition.yaml"
    path.write_text(document, encoding="utf-8")
    assert ExperimentManifest.load(path).canonical_bytes() == canonical.encode("utf-8")


def test_golden_digest_literal() -> None:
    assert ExperimentManifest.load(yaml.safe_load(SOLO_LUNA_YAML)).sha256 == SOLO_LUNA_SHA256


def test_canonical_form_is_utf8_not_escaped() -> None:
    data = ExperimentManifest.load(yaml.safe_load(CODEX_YAML)).canonical_bytes()
    assert "équipe".encode() in data
    assert b"\\u00e9" not in data


def test_integer_input_for_float_fields_hashes_like_float_input() -> None:
    as_ints = yaml.safe_load(SOLO_LUNA_YAML)
    as_floats = yaml.safe_load(SOLO_LUNA_YAML)
    as_floats["prices"]["databricks-gpt-5-6-luna"]["cache_read_rate"] = 0.0
    assert ExperimentManifest.load(as_ints).sha256 == ExperimentManifest.load(as_floats).sha256


def test_harness_default_dropped_but_other_harness_kept() -> None:
    data = yaml.safe_load(SOLO_LUNA_YAML)
    data["roster"][0]["harness"] = "buzz-agent"
    assert ExperimentManifest.load(data).canonical_bytes() == SOLO_LUNA_CANONICAL.encode()
    data["roster"][0]["harness"] = "goose"
    assert b'"harness":"goose"' in ExperimentManifest.load(data).canonical_bytes()
