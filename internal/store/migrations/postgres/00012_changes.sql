-- +goose Up
-- The change feed: every write records its changes in the same
-- transaction (a transactional outbox). Positions are handed out per
-- tenant when the transaction is about to commit, under the tenant's
-- change_positions row lock, so they commit in the order they were
-- handed out (see docs/decisions.md "Change feed"). Written to run again
-- harmlessly.
CREATE TABLE IF NOT EXISTS change_positions (
    tenant_id      BIGINT NOT NULL REFERENCES tenants (id),
    last           BIGINT NOT NULL,
    purged_through BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id)
);
CREATE TABLE IF NOT EXISTS changes (
    tenant_id BIGINT NOT NULL REFERENCES tenants (id),
    seq       BIGINT NOT NULL,
    resource  TEXT   NOT NULL,
    record_id BIGINT NOT NULL,
    op        TEXT   NOT NULL,
    at        TEXT   NOT NULL,
    doc       JSONB     NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX IF NOT EXISTS changes_at ON changes (tenant_id, at);

-- +goose Down
DROP TABLE changes;
DROP TABLE change_positions;
