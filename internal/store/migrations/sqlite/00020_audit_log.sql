-- +goose Up
-- The audit log: one entry per changed record (or per change of what is
-- no record: settings, the storage cap), written in the transaction of
-- the write, numbered per tenant without gaps (seq) and linked into one
-- hash chain per tenant (prev_hash, hash), under the tenant's
-- change_positions row lock. Documents are kept as their canonical JSON
-- text, the bytes the hash covers. Each version of a record is stored
-- once: an entry's before is the after of the record's previous entry
-- (before_seq) and is stored in the entry itself (before) only when there
-- is none to point at (a record older than the audit log, or one whose
-- previous entry was purged). See docs/decisions.md "Audit log". The
-- rows themselves are in rowid order, so that the entries of all tenants
-- that a batch of writes appends go to the same last page of the table;
-- only the two indexes have a page per tenant.
CREATE TABLE IF NOT EXISTS audit_log (
    tenant_id    BIGINT NOT NULL REFERENCES tenants (id),
    seq          BIGINT NOT NULL,
    at           TEXT   NOT NULL,
    actor_user   BIGINT,
    actor_client BIGINT,
    via          TEXT   NOT NULL,
    request_id   TEXT,
    reason       TEXT,
    resource     TEXT   NOT NULL,
    record_id    BIGINT,
    op           TEXT   NOT NULL,
    changed      TEXT   NOT NULL,
    after        TEXT,
    before       TEXT,
    before_seq   BIGINT,
    prev_hash    TEXT   NOT NULL,
    hash         TEXT   NOT NULL,
    PRIMARY KEY (tenant_id, seq)
);
CREATE INDEX IF NOT EXISTS audit_log_record ON audit_log (tenant_id, resource, record_id, seq);

-- +goose Down
DROP TABLE audit_log;
