-- +goose Up
-- Who created each API client: the admin whose clients end when they are
-- deleted or lose admin. NULL for the clients created before it was
-- recorded, which nothing revokes. No index: a tenant has at most 100
-- clients, found through the primary key's tenant_id. A new column of a
-- distributed table needs no distribution. Written to run again
-- harmlessly.
ALTER TABLE api_clients ADD COLUMN IF NOT EXISTS created_by BIGINT;

-- +goose Down
ALTER TABLE api_clients DROP COLUMN IF EXISTS created_by;
