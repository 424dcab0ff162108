-- +goose Up
CREATE TABLE tenants (
    id            INTEGER PRIMARY KEY,
    slug          TEXT    NOT NULL UNIQUE,
    name          TEXT    NOT NULL,
    storage_bytes INTEGER,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL
);

-- One counter per tenant hands out record ids (SQLite has a single writer).
CREATE TABLE tenant_sequences (
    tenant_id INTEGER PRIMARY KEY REFERENCES tenants (id),
    last_id   INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE users (
    tenant_id     INTEGER NOT NULL REFERENCES tenants (id),
    id            INTEGER NOT NULL,
    email         TEXT,
    email_key     TEXT,
    password_hash TEXT,
    is_admin      INTEGER NOT NULL DEFAULT 0,
    doc           TEXT    NOT NULL,
    created_at    TEXT    NOT NULL,
    updated_at    TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, email_key)
);

CREATE TABLE access_tokens (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    token_hash BLOB    NOT NULL,
    user_id    INTEGER NOT NULL,
    family_id  BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    revoked    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, token_hash)
);
CREATE INDEX access_tokens_family ON access_tokens (tenant_id, family_id);
CREATE INDEX access_tokens_user ON access_tokens (tenant_id, user_id);

CREATE TABLE refresh_tokens (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    token_hash BLOB    NOT NULL,
    user_id    INTEGER NOT NULL,
    family_id  BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    used       INTEGER NOT NULL DEFAULT 0,
    revoked    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, token_hash)
);
CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant_id, family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (tenant_id, user_id);

-- +goose Down
DROP TABLE refresh_tokens;
DROP TABLE access_tokens;
DROP TABLE users;
DROP TABLE tenant_sequences;
DROP TABLE tenants;
