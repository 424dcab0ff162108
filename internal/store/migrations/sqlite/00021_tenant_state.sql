-- +goose Up
-- A tenant's state when it is not active: suspended (every request
-- refused with 403 tenant_suspended, its data kept), importing (an import
-- not yet complete, not served, and erased when interrupted) or deleting
-- (being erased: not served, and the erasure finishes when run again).
-- A tenant without a row is active. A table of its own rather than a
-- column of tenants: SQLite cannot add a column only when it is missing,
-- and every step must run again harmlessly.
CREATE TABLE IF NOT EXISTS tenant_states (
    tenant_id  INTEGER NOT NULL PRIMARY KEY,
    state      TEXT    NOT NULL,
    updated_at TEXT    NOT NULL
);

-- +goose Down
DROP TABLE tenant_states;
