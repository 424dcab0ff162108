-- +goose Up
-- The tenant's first user is an admin for good: marked once, not derived
-- from whoever has the lowest id now.
ALTER TABLE users ADD COLUMN is_owner INTEGER NOT NULL DEFAULT 0;
UPDATE users SET is_owner = 1
 WHERE id = (SELECT MIN(f.id) FROM users f WHERE f.tenant_id = users.tenant_id);

-- +goose Down
ALTER TABLE users DROP COLUMN is_owner;
