-- +goose Up
-- Where each tenant's audit chain starts once a purge has removed its
-- oldest entries: the seq and hash of the last entry removed, which the
-- first entry kept must follow. Without a row the chain starts at seq 1
-- after the zero hash, so that entries removed from its start by anyone
-- but the purge break it (docs/decisions.md "Audit log retention").
CREATE TABLE IF NOT EXISTS audit_purges (
    tenant_id BIGINT NOT NULL PRIMARY KEY REFERENCES tenants (id),
    seq       BIGINT NOT NULL,
    hash      TEXT   NOT NULL
);
SELECT planwerk_distribute('audit_purges', 'tenant');
-- Chains purged before this step start where their oldest entry says.
INSERT INTO audit_purges (tenant_id, seq, hash)
SELECT tenant_id, seq - 1, prev_hash
  FROM (SELECT DISTINCT ON (tenant_id) tenant_id, seq, prev_hash FROM audit_log ORDER BY tenant_id, seq) f
 WHERE seq > 1
ON CONFLICT (tenant_id) DO NOTHING;

-- +goose Down
DROP TABLE audit_purges;
