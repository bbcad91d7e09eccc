-- Development relay storage, applied idempotently at start (under an advisory lock so two relay
-- processes starting together do not race on CREATE ... IF NOT EXISTS).
CREATE SCHEMA IF NOT EXISTS relay;

CREATE TABLE IF NOT EXISTS relay.events (
    id          text PRIMARY KEY,
    pubkey      text NOT NULL,
    created_at  bigint NOT NULL,
    kind        integer NOT NULL,
    tags        jsonb NOT NULL,
    content     text NOT NULL,
    sig         text NOT NULL,
    channel_id  text,            -- h tag (channel events) or d tag (relay-signed state)
    d_tag       text,            -- replaceable key of 39000-39002
    received_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX IF NOT EXISTS events_kind_created ON relay.events (kind, created_at DESC);
CREATE INDEX IF NOT EXISTS events_channel_created ON relay.events (channel_id, created_at DESC);
CREATE INDEX IF NOT EXISTS events_pubkey_kind ON relay.events (pubkey, kind);
CREATE INDEX IF NOT EXISTS events_tags ON relay.events USING gin (tags jsonb_path_ops);

CREATE TABLE IF NOT EXISTS relay.channels (
    id               text PRIMARY KEY,
    name             text NOT NULL,
    channel_type     text NOT NULL,
    visibility       text NOT NULL,
    about            text,
    topic            text,
    purpose          text,
    created_by       text NOT NULL,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    archived_at      timestamptz,
    deleted_at       timestamptz,
    ttl_seconds      integer,
    last_activity_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE IF NOT EXISTS relay.members (
    channel_id text NOT NULL REFERENCES relay.channels (id),
    pubkey     text NOT NULL,
    role       text NOT NULL,
    added_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel_id, pubkey)
);
