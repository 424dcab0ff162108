-- +goose Up
-- What ACME's client keeps between runs, shared by every instance: the
-- account key, and each domain's private key and certificate chain (PEM),
-- by autocert's names for them. Global like service_secrets: it belongs
-- to the service, not to a tenant. The keys are stored as they are,
-- since the client must read them back (decisions: "HTTPS").
CREATE TABLE IF NOT EXISTS acme_cache (
    name       TEXT  COLLATE "C" PRIMARY KEY,
    data       BYTEA NOT NULL,
    updated_at TEXT  COLLATE "C" NOT NULL
);
SELECT planwerk_distribute('acme_cache', 'global');

-- +goose Down
DROP TABLE acme_cache;
