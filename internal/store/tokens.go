package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ErrTokenReused means a refresh token that was already spent came back.
var ErrTokenReused = errors.New("refresh token reused")

// FullScope is the scope of a sign-in that asked for no narrower one,
// and of every token stored before tokens carried a scope.
const FullScope = "read write"

// TokenPair is what the service stores for one issued access and refresh
// token: their hashes, never the tokens, and their scopes ("read" or
// "read write"; empty: FullScope). The refresh token's is the scope of
// its login, which a refresh may narrow for the access token only.
type TokenPair struct {
	AccessHash    []byte
	RefreshHash   []byte
	UserID        int64
	FamilyID      []byte // every token descended from one login shares it
	AccessExpiry  time.Time
	RefreshExpiry time.Time
	AccessScope   string
	RefreshScope  string
}

// SpentRefresh is what a spent refresh token names: its user, its family
// and its scope.
type SpentRefresh struct {
	UserID   int64
	FamilyID []byte
	Scope    string
}

// orFullScope is scope, or FullScope when it is empty.
func orFullScope(scope string) string {
	if scope == "" {
		return FullScope
	}
	return scope
}

// AccessToken is a stored access token joined with its user.
type AccessToken struct {
	UserID    int64
	IsAdmin   bool
	ExpiresAt time.Time
	Revoked   bool
	Scope     string // "read" or "read write"
	ClientID  int64  // the API client it was given to; 0 for a user's sign-in
}

// ClientToken is an access token given to an API client: no refresh
// token, the client's scope.
type ClientToken struct {
	Hash     []byte
	UserID   int64
	ClientID int64 // the client's record id
	FamilyID []byte
	Scope    string
	Expiry   time.Time
}

// InsertClientToken stores an access token given to an API client.
func (db *DB) InsertClientToken(ctx context.Context, q Querier, tenantID int64, t ClientToken) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO access_tokens (tenant_id, token_hash, user_id, family_id, expires_at, scope, client) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenantID, t.Hash, t.UserID, t.FamilyID, t.Expiry.UnixMilli(), t.Scope, t.ClientID)
	if err != nil {
		return fmt.Errorf("insert access token: %w", err)
	}
	return nil
}

// RevokeAccessToken revokes one access token; an unknown one is no error.
func (db *DB) RevokeAccessToken(ctx context.Context, q Querier, tenantID int64, hash []byte) (bool, error) {
	res, err := q.ExecContext(ctx,
		`UPDATE access_tokens SET revoked = TRUE WHERE tenant_id = $1 AND token_hash = $2`, tenantID, hash)
	if err != nil {
		return false, fmt.Errorf("revoke access token: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("revoke access token: %w", err)
	}
	return n > 0, nil
}

// RefreshTokenFamily returns the family of a refresh token, used or not.
func (db *DB) RefreshTokenFamily(ctx context.Context, q Querier, tenantID int64, hash []byte) ([]byte, error) {
	var family []byte
	err := q.QueryRowContext(ctx,
		`SELECT family_id FROM refresh_tokens WHERE tenant_id = $1 AND token_hash = $2`, tenantID, hash).Scan(&family)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("refresh token: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return family, nil
}

// InsertTokens stores a new access/refresh pair with their scopes.
func (db *DB) InsertTokens(ctx context.Context, q Querier, tenantID int64, p TokenPair) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO access_tokens (tenant_id, token_hash, user_id, family_id, expires_at, scope) VALUES ($1, $2, $3, $4, $5, $6)`,
		tenantID, p.AccessHash, p.UserID, p.FamilyID, p.AccessExpiry.UnixMilli(), orFullScope(p.AccessScope))
	if err != nil {
		return fmt.Errorf("insert access token: %w", err)
	}
	_, err = q.ExecContext(ctx,
		`INSERT INTO refresh_tokens (tenant_id, token_hash, user_id, family_id, expires_at, scope) VALUES ($1, $2, $3, $4, $5, $6)`,
		tenantID, p.RefreshHash, p.UserID, p.FamilyID, p.RefreshExpiry.UnixMilli(), orFullScope(p.RefreshScope))
	if err != nil {
		return fmt.Errorf("insert refresh token: %w", err)
	}
	return nil
}

// AccessTokenByHash finds an access token of the tenant whose user still
// exists. The tenant's first user is always an admin.
func (db *DB) AccessTokenByHash(ctx context.Context, tenantID int64, hash []byte) (AccessToken, error) {
	var t AccessToken
	var expires int64
	err := db.lookup.QueryRowContext(ctx,
		`SELECT t.user_id,
		        u.is_admin OR u.is_owner,
		        t.expires_at, t.revoked, t.scope, COALESCE(t.client, 0)
		   FROM access_tokens t JOIN users u ON u.tenant_id = t.tenant_id AND u.id = t.user_id
		  WHERE t.tenant_id = $1 AND t.token_hash = $2`,
		tenantID, hash).Scan(&t.UserID, &t.IsAdmin, &expires, &t.Revoked, &t.Scope, &t.ClientID)
	if errors.Is(err, sql.ErrNoRows) {
		return AccessToken{}, fmt.Errorf("access token: %w", ErrNotFound)
	}
	if err != nil {
		return AccessToken{}, fmt.Errorf("access token: %w", err)
	}
	t.ExpiresAt = time.UnixMilli(expires)
	return t, nil
}

// SpendRefreshToken is SpendRefresh without the scope.
func (db *DB) SpendRefreshToken(ctx context.Context, q Querier, tenantID int64, hash []byte, now time.Time) (userID int64, family []byte, err error) {
	r, err := db.SpendRefresh(ctx, q, tenantID, hash, now)
	return r.UserID, r.FamilyID, err
}

// SpendRefresh marks a live refresh token used and returns its user,
// family and scope. A token that was spent before returns ErrTokenReused
// with its family id, so the caller can revoke the family; anything else
// unusable returns ErrNotFound. Exactly one of several concurrent callers
// succeeds.
func (db *DB) SpendRefresh(ctx context.Context, q Querier, tenantID int64, hash []byte, now time.Time) (SpentRefresh, error) {
	var r SpentRefresh
	err := q.QueryRowContext(ctx,
		`UPDATE refresh_tokens SET used = TRUE
		  WHERE tenant_id = $1 AND token_hash = $2 AND used = FALSE AND revoked = FALSE AND expires_at > $3
		  RETURNING user_id, family_id, scope`,
		tenantID, hash, now.UnixMilli()).Scan(&r.UserID, &r.FamilyID, &r.Scope)
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return SpentRefresh{}, fmt.Errorf("spend refresh token: %w", err)
	}
	var (
		used   bool
		family []byte
	)
	err = q.QueryRowContext(ctx,
		`SELECT used, family_id FROM refresh_tokens WHERE tenant_id = $1 AND token_hash = $2`,
		tenantID, hash).Scan(&used, &family)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", ErrNotFound)
	case err != nil:
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", err)
	case used:
		return SpentRefresh{FamilyID: family}, ErrTokenReused
	default: // expired or revoked
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", ErrNotFound)
	}
}

// RevokeFamily revokes every access and refresh token descended from one login.
func (db *DB) RevokeFamily(ctx context.Context, q Querier, tenantID int64, family []byte) error {
	if _, err := q.ExecContext(ctx,
		`UPDATE access_tokens SET revoked = TRUE WHERE tenant_id = $1 AND family_id = $2`, tenantID, family); err != nil {
		return fmt.Errorf("revoke access tokens: %w", err)
	}
	if _, err := q.ExecContext(ctx,
		`UPDATE refresh_tokens SET revoked = TRUE WHERE tenant_id = $1 AND family_id = $2`, tenantID, family); err != nil {
		return fmt.Errorf("revoke refresh tokens: %w", err)
	}
	return nil
}

// RevokeUserTokens revokes every token of one user.
func (db *DB) RevokeUserTokens(ctx context.Context, q Querier, tenantID, userID int64) error {
	if _, err := q.ExecContext(ctx,
		`UPDATE access_tokens SET revoked = TRUE WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
		return fmt.Errorf("revoke access tokens: %w", err)
	}
	if _, err := q.ExecContext(ctx,
		`UPDATE refresh_tokens SET revoked = TRUE WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
		return fmt.Errorf("revoke refresh tokens: %w", err)
	}
	return nil
}
