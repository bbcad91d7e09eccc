-- The harness's own schema (docs/tenant.md#benchmark-schema), owned by buzz-operator and never by relay migrations.
-- Differences from the seed: trial_id is text (operator trial names are not uuids) and
-- `handle` holds only public data — no secret key, auth tag or API key is ever stored.
CREATE SCHEMA IF NOT EXISTS benchmark;

CREATE TABLE IF NOT EXISTS benchmark.trial_manifest (
    run_id        text NOT NULL,
    trial_id      text NOT NULL,
    manifest_hash text NOT NULL,
    channel_id    uuid NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    handle        jsonb NOT NULL DEFAULT '{}',
    archived_at   timestamptz,
    PRIMARY KEY (run_id, trial_id)
);

CREATE TABLE IF NOT EXISTS benchmark.llm_receipts (
    receipt_id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id              text NOT NULL,
    trial_id            text NOT NULL,
    agent_id            text NOT NULL,
    role                text NOT NULL,
    condition           text NOT NULL,
    endpoint            text NOT NULL,
    model_revision      text NOT NULL,
    request_id          text NOT NULL,
    requested_at        timestamptz NOT NULL,
    latency_ms          integer,
    input_tokens        bigint NOT NULL DEFAULT 0,
    cached_input_tokens bigint NOT NULL DEFAULT 0,
    output_tokens       bigint NOT NULL DEFAULT 0,
    cost_usd            numeric(12, 6),
    source              text NOT NULL CHECK (source IN ('ai_gateway', 'litellm', 'client')),
    raw                 jsonb,
    UNIQUE (source, request_id),
    FOREIGN KEY (run_id, trial_id) REFERENCES benchmark.trial_manifest (run_id, trial_id)
);
CREATE INDEX IF NOT EXISTS llm_receipts_trial_agent ON benchmark.llm_receipts (run_id, trial_id, agent_id);

CREATE TABLE IF NOT EXISTS benchmark.spans (
    span_id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      text NOT NULL,
    trial_id    text NOT NULL,
    agent_id    text,
    kind        text NOT NULL,
    started_at  timestamptz NOT NULL,
    duration_ms integer NOT NULL CHECK (duration_ms >= 0),
    detail      jsonb,
    FOREIGN KEY (run_id, trial_id) REFERENCES benchmark.trial_manifest (run_id, trial_id)
);
CREATE INDEX IF NOT EXISTS spans_trial_kind ON benchmark.spans (run_id, trial_id, kind);
