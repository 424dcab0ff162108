-- +goose Up
-- Files attached to Documents and Expenses: at most one per record.
CREATE TABLE uploads (
    tenant_id    INTEGER NOT NULL REFERENCES tenants (id),
    id           INTEGER NOT NULL,
    model        TEXT    NOT NULL,
    record       INTEGER NOT NULL,
    filename     TEXT    NOT NULL,
    content_type TEXT    NOT NULL,
    size         INTEGER NOT NULL,
    storage_key  TEXT    NOT NULL,
    created_at   TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, model, record)
);

-- Secrets of the service itself (the download URL signing key), shared by
-- every instance. Not tenant data.
CREATE TABLE service_secrets (
    name  TEXT PRIMARY KEY,
    value BLOB NOT NULL
);

-- +goose Down
DROP TABLE service_secrets;
DROP TABLE uploads;
