-- +goose Up
-- The scope of a refresh token: that of its login ('read' or
-- 'read write'), which every refresh of the family keeps (a refresh may
-- narrow only the access token it issues). Access tokens carry theirs
-- since 00009. Refresh tokens from before were all of sign-ins with the
-- full scope.
--
-- Written to run again harmlessly. SQLite cannot add a column only when
-- it is missing, so the table is rebuilt with it: the rows are copied,
-- then each takes the scope its old row had. In that UPDATE the
-- subquery's unqualified "scope" is the old table's column when it has
-- one (a second run), and otherwise, by SQL's scoping, the new row's own,
-- its default: a second run widens no token.
ALTER TABLE refresh_tokens RENAME TO refresh_tokens_before_scope;
CREATE TABLE refresh_tokens (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    token_hash BLOB    NOT NULL,
    user_id    INTEGER NOT NULL,
    family_id  BLOB    NOT NULL,
    expires_at INTEGER NOT NULL,
    used       INTEGER NOT NULL DEFAULT 0,
    revoked    INTEGER NOT NULL DEFAULT 0,
    scope      TEXT    NOT NULL DEFAULT 'read write',
    PRIMARY KEY (tenant_id, token_hash)
);
INSERT INTO refresh_tokens (tenant_id, token_hash, user_id, family_id, expires_at, used, revoked)
SELECT tenant_id, token_hash, user_id, family_id, expires_at, used, revoked FROM refresh_tokens_before_scope;
UPDATE refresh_tokens SET scope = (
    SELECT scope FROM refresh_tokens_before_scope AS old
     WHERE old.tenant_id = refresh_tokens.tenant_id AND old.token_hash = refresh_tokens.token_hash);
DROP TABLE refresh_tokens_before_scope;
CREATE INDEX refresh_tokens_family ON refresh_tokens (tenant_id, family_id);
CREATE INDEX refresh_tokens_user ON refresh_tokens (tenant_id, user_id);
CREATE INDEX refresh_tokens_expiry ON refresh_tokens (expires_at);

-- +goose Down
ALTER TABLE refresh_tokens DROP COLUMN scope;
