-- +goose Up
-- The scope of a refresh token: that of its login ('read' or
-- 'read write'), which every refresh of the family keeps (a refresh may
-- narrow only the access token it issues). Access tokens carry theirs
-- since 00009. Refresh tokens from before were all of sign-ins with the
-- full scope. A new column of a distributed table needs no distribution.
-- Written to run again harmlessly.
ALTER TABLE refresh_tokens ADD COLUMN IF NOT EXISTS scope TEXT NOT NULL DEFAULT 'read write';

-- +goose Down
ALTER TABLE refresh_tokens DROP COLUMN IF EXISTS scope;
