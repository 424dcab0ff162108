-- +goose Up
-- Idempotency keys of POST requests (docs/api.md "Safe writes"): one row
-- per tenant, user and key. While the first request runs, its holder owns
-- the row until locked_until (renewed as it runs); then the fingerprint of
-- the request and its answer (status, replayed headers as a JSON object,
-- body) are kept until expires_at. Times are Unix milliseconds. Written to
-- run again harmlessly.
CREATE TABLE IF NOT EXISTS idempotency_keys (
    tenant_id    BIGINT NOT NULL REFERENCES tenants (id),
    user_id      BIGINT NOT NULL,
    key          TEXT   NOT NULL,
    state        TEXT   NOT NULL,
    holder       BLOB,
    fingerprint  BLOB,
    status       INTEGER,
    headers      TEXT,
    body         BLOB,
    created_at   BIGINT NOT NULL,
    locked_until BIGINT NOT NULL,
    expires_at   BIGINT NOT NULL,
    PRIMARY KEY (tenant_id, user_id, key)
);
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (tenant_id, expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
