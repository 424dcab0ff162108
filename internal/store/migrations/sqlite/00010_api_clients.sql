-- +goose Up
-- API clients: credentials for integrations (the client-credentials
-- grant). The secret is stored as its SHA-256 hash, as tokens are; it
-- carries 256 random bits, so a fast hash is enough. Written to run
-- again harmlessly.
CREATE TABLE IF NOT EXISTS api_clients (
    tenant_id   BIGINT NOT NULL REFERENCES tenants (id),
    id          BIGINT NOT NULL,
    client_id   TEXT   NOT NULL,
    secret_hash BLOB  NOT NULL,
    name        TEXT   NOT NULL,
    user_id     BIGINT NOT NULL,
    scope       TEXT   NOT NULL,
    created_at  TEXT   NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE UNIQUE INDEX IF NOT EXISTS api_clients_client_id ON api_clients (tenant_id, client_id);

-- +goose Down
DROP TABLE api_clients;
