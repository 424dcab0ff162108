-- +goose Up
-- The exports tenant admins ask for of their tenant's data: one row per
-- export, pending until an instance claims it (running, with a lease it
-- renews), then done (the archive's key, size and SHA-256, kept until
-- expires_at) or failed. At most one pending or running export a tenant.
CREATE TABLE IF NOT EXISTS account_exports (
    tenant_id   INTEGER NOT NULL REFERENCES tenants (id),
    id          INTEGER NOT NULL,
    status      TEXT    NOT NULL,
    created_by  INTEGER NOT NULL,
    created_at  TEXT    NOT NULL,
    lease_until TEXT,
    storage_key TEXT,
    size        INTEGER,
    sha256      TEXT,
    finished_at TEXT,
    expires_at  TEXT,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS account_exports_one ON account_exports (tenant_id) WHERE status IN ('pending', 'running');
-- The queue, oldest first across tenants, and the purge of expired exports.
CREATE INDEX IF NOT EXISTS account_exports_queue ON account_exports (status, created_at);

-- +goose Down
DROP TABLE account_exports;
