-- +goose Up
-- A tenant's state when it is not active: suspended (every request
-- refused with 403 tenant_suspended, its data kept), importing (an import
-- not yet complete, not served, and erased when interrupted) or deleting
-- (being erased: not served, and the erasure finishes when run again).
-- A tenant without a row is active. A table of its own, as on SQLite
-- (which cannot add a column only when it is missing). Global like
-- tenants, so that finding a tenant by its slug joins the two on any
-- node of a cluster.
CREATE TABLE IF NOT EXISTS tenant_states (
    tenant_id  BIGINT NOT NULL PRIMARY KEY,
    state      TEXT   COLLATE "C" NOT NULL,
    updated_at TEXT   COLLATE "C" NOT NULL
);
SELECT planwerk_distribute('tenant_states', 'global');

-- +goose Down
DROP TABLE tenant_states;
