-- +goose Up
-- Webhooks: each delivers the tenant's changes after its position, one
-- at a time, in order. The secret signs deliveries, so it is kept as
-- issued (a hash could not sign). A lease (lease_until, lease_holder)
-- keeps each webhook's delivery in flight on one instance at a time;
-- retry_at is when the pending delivery is due ('' when none is). Times
-- are timestamps in the store's text form, which sort as they compare.
-- Written to run again harmlessly.
CREATE TABLE IF NOT EXISTS webhooks (
    tenant_id     BIGINT  NOT NULL REFERENCES tenants (id),
    id            BIGINT  NOT NULL,
    url           TEXT    NOT NULL,
    resources     TEXT    NOT NULL,
    secret        TEXT    NOT NULL,
    enabled       INTEGER NOT NULL,
    position      BIGINT  NOT NULL,
    failing_since TEXT    NOT NULL DEFAULT '',
    retry_at      TEXT    NOT NULL DEFAULT '',
    lease_until   TEXT    NOT NULL DEFAULT '',
    lease_holder  TEXT    NOT NULL DEFAULT '',
    created_at    TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX IF NOT EXISTS webhooks_lease ON webhooks (enabled, lease_until);
-- The deliveries log: one row per change a webhook sent or is sending.
-- id is the message id (the webhook-id header), the same on retries.
CREATE TABLE IF NOT EXISTS webhook_deliveries (
    tenant_id        BIGINT  NOT NULL REFERENCES tenants (id),
    webhook_id       BIGINT  NOT NULL,
    id               TEXT    NOT NULL,
    seq              BIGINT  NOT NULL,
    status           TEXT    NOT NULL,
    attempts         INTEGER NOT NULL,
    last_status_code INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  TEXT    NOT NULL DEFAULT '',
    created_at       TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, webhook_id, id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_seq ON webhook_deliveries (tenant_id, webhook_id, seq);

-- +goose Down
DROP TABLE webhook_deliveries;
DROP TABLE webhooks;
