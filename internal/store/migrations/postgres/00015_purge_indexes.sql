-- +goose Up
-- Housekeeping deletes what expired across all tenants in bounded
-- batches, each found through an index leading with the column it purges
-- by, so that a run costs what it deletes and not one lookup per tenant.
-- These are the only indexes that do not lead with tenant_id: they serve
-- deliberate cross-tenant housekeeping statements, never a request, and
-- stay valid on a schema distributed by tenant (each shard indexes its
-- own rows). The indexes on (tenant_id, expires_at) and (tenant_id, at)
-- they replace served only the per-tenant purges. users (email_key)
-- serves the one cross-tenant check of tenant creation (an admin's
-- e-mail address is free in every tenant). Written to run again
-- harmlessly.
CREATE INDEX IF NOT EXISTS access_tokens_expiry ON access_tokens (expires_at);
CREATE INDEX IF NOT EXISTS refresh_tokens_expiry ON refresh_tokens (expires_at);
DROP INDEX IF EXISTS idempotency_keys_expiry;
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry_all ON idempotency_keys (expires_at);
DROP INDEX IF EXISTS changes_at;
CREATE INDEX IF NOT EXISTS changes_at_all ON changes (at);
CREATE INDEX IF NOT EXISTS users_email_key ON users (email_key);

-- +goose Down
DROP INDEX IF EXISTS users_email_key;
DROP INDEX IF EXISTS changes_at_all;
CREATE INDEX IF NOT EXISTS changes_at ON changes (tenant_id, at);
DROP INDEX IF EXISTS idempotency_keys_expiry_all;
CREATE INDEX IF NOT EXISTS idempotency_keys_expiry ON idempotency_keys (tenant_id, expires_at);
DROP INDEX IF EXISTS refresh_tokens_expiry;
DROP INDEX IF EXISTS access_tokens_expiry;
