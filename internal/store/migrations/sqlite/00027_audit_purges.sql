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
-- Chains purged before this step start where their oldest entry says.
INSERT INTO audit_purges (tenant_id, seq, hash)
SELECT tenant_id, first - 1, prev_hash
  FROM (SELECT tenant_id, min(seq) AS first, prev_hash FROM audit_log GROUP BY tenant_id)
 WHERE first > 1
ON CONFLICT (tenant_id) DO NOTHING;

-- +goose Down
DROP TABLE audit_purges;
