-- +goose Up
-- The highest id of a tenant that was erased. SQLite gives a new row of
-- tenants the highest id there plus one, which after the erasure of the
-- newest tenant would be the erased tenant's id again. A new tenant's id
-- is above this one too, so that no id ever names two tenants (caches
-- keyed by tenant id could take one for the other). One row at most.
-- PostgreSQL draws tenant ids from a sequence and needs none.
CREATE TABLE IF NOT EXISTS tenant_id_floor (
    one     INTEGER NOT NULL PRIMARY KEY CHECK (one = 1),
    last_id INTEGER NOT NULL
);

-- +goose Down
DROP TABLE tenant_id_floor;
