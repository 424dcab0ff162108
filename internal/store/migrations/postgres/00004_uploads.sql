-- +goose Up
-- Files attached to Documents and Expenses: at most one per record.
CREATE TABLE uploads (
    tenant_id    BIGINT NOT NULL REFERENCES tenants (id),
    id           BIGINT NOT NULL,
    model        TEXT   NOT NULL,
    record       BIGINT NOT NULL,
    filename     TEXT   NOT NULL,
    content_type TEXT   NOT NULL,
    size         BIGINT NOT NULL,
    storage_key  TEXT   NOT NULL,
    created_at   TEXT   COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, model, record)
);

-- Secrets of the service itself (the download URL signing key), shared by
-- every instance. Not tenant data.
CREATE TABLE service_secrets (
    name  TEXT  PRIMARY KEY,
    value BYTEA NOT NULL
);

-- +goose Down
DROP TABLE service_secrets;
DROP TABLE uploads;
