-- +goose Up
-- What a token may do ('read' or 'read write') and the API client it was
-- given to (none for sign-ins).
ALTER TABLE access_tokens ADD COLUMN scope TEXT NOT NULL DEFAULT 'read write';
ALTER TABLE access_tokens ADD COLUMN client BIGINT;
CREATE INDEX access_tokens_client ON access_tokens (tenant_id, client);

-- +goose Down
DROP INDEX access_tokens_client;
ALTER TABLE access_tokens DROP COLUMN client;
ALTER TABLE access_tokens DROP COLUMN scope;
