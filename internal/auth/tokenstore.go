package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"planwerk/internal/store"
)

// Engine is what the tables of tokens and API clients are built on: the
// storage engine (a *store.DB).
type Engine interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	Reader() store.Querier
	Lookup() store.Querier
	ForUpdate() string
	PurgeRows(ctx context.Context, what, del string, args ...any) (int64, error)
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
}

// Tables are the tables of sign-in: access and refresh tokens and API
// clients. They implement Store, and Credentials of the users package.
type Tables struct {
	db Engine
}

// NewTables returns the tables on db.
func NewTables(db Engine) *Tables { return &Tables{db: db} }

// Tx runs fn in a transaction of the engine's.
func (t *Tables) Tx(ctx context.Context, fn func(q store.Querier) error) error {
	return t.db.Tx(ctx, fn)
}

// NewID allocates a record id for the tenant (an API client's).
func (t *Tables) NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error) {
	return t.db.NewID(ctx, q, tenantID)
}

// Lock takes the tenant's lock named key until q's transaction ends.
func (t *Tables) Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error {
	return t.db.Lock(ctx, q, tenantID, key)
}

// ErrTokenReused means a refresh token that was already spent came back.
var ErrTokenReused = errors.New("refresh token reused")

// TokenPair is what the service stores for one issued access and refresh
// token: their hashes, never the tokens, and their scopes ("read" or
// "read write"; empty: ScopeReadWrite). The refresh token's is the scope
// of its login, which a refresh may narrow for the access token only.
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

// orFullScope is scope, or ScopeReadWrite (the scope of a sign-in that
// asked for no narrower one) when it is empty.
func orFullScope(scope string) string {
	if scope == "" {
		return ScopeReadWrite
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
func (t *Tables) InsertClientToken(ctx context.Context, q store.Querier, tenantID int64, c ClientToken) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO access_tokens (tenant_id, token_hash, user_id, family_id, expires_at, scope, client) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		tenantID, c.Hash, c.UserID, c.FamilyID, c.Expiry.UnixMilli(), c.Scope, c.ClientID)
	if err != nil {
		return fmt.Errorf("insert access token: %w", err)
	}
	return nil
}

// RevokeAccessToken revokes one access token; an unknown one is no error.
func (t *Tables) RevokeAccessToken(ctx context.Context, q store.Querier, tenantID int64, hash []byte) (bool, error) {
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
func (t *Tables) RefreshTokenFamily(ctx context.Context, q store.Querier, tenantID int64, hash []byte) ([]byte, error) {
	var family []byte
	err := q.QueryRowContext(ctx,
		`SELECT family_id FROM refresh_tokens WHERE tenant_id = $1 AND token_hash = $2`, tenantID, hash).Scan(&family)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("refresh token: %w", store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("refresh token: %w", err)
	}
	return family, nil
}

// InsertTokens stores a new access/refresh pair with their scopes.
func (t *Tables) InsertTokens(ctx context.Context, q store.Querier, tenantID int64, p TokenPair) error {
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
func (t *Tables) AccessTokenByHash(ctx context.Context, tenantID int64, hash []byte) (AccessToken, error) {
	var a AccessToken
	var expires int64
	err := t.db.Lookup().QueryRowContext(ctx,
		`SELECT t.user_id,
		        u.is_admin OR u.is_owner,
		        t.expires_at, t.revoked, t.scope, COALESCE(t.client, 0)
		   FROM access_tokens t JOIN users u ON u.tenant_id = t.tenant_id AND u.id = t.user_id
		  WHERE t.tenant_id = $1 AND t.token_hash = $2`,
		tenantID, hash).Scan(&a.UserID, &a.IsAdmin, &expires, &a.Revoked, &a.Scope, &a.ClientID)
	if errors.Is(err, sql.ErrNoRows) {
		return AccessToken{}, fmt.Errorf("access token: %w", store.ErrNotFound)
	}
	if err != nil {
		return AccessToken{}, fmt.Errorf("access token: %w", err)
	}
	a.ExpiresAt = time.UnixMilli(expires)
	return a, nil
}

// SpendRefresh marks a live refresh token used and returns its user,
// family and scope. A token that was spent before returns ErrTokenReused
// with its family id, so the caller can revoke the family; anything else
// unusable returns store.ErrNotFound. Exactly one of several concurrent
// callers succeeds.
func (t *Tables) SpendRefresh(ctx context.Context, q store.Querier, tenantID int64, hash []byte, now time.Time) (SpentRefresh, error) {
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
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", store.ErrNotFound)
	case err != nil:
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", err)
	case used:
		return SpentRefresh{FamilyID: family}, ErrTokenReused
	default: // expired or revoked
		return SpentRefresh{}, fmt.Errorf("refresh token: %w", store.ErrNotFound)
	}
}

// RevokeFamily revokes every access and refresh token descended from one login.
func (t *Tables) RevokeFamily(ctx context.Context, q store.Querier, tenantID int64, family []byte) error {
	return revokeWhere(ctx, q, tenantID, "family_id", family)
}

// RevokeUserTokens revokes every token of one user.
func (t *Tables) RevokeUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error {
	return revokeWhere(ctx, q, tenantID, "user_id", userID)
}

// revokeWhere revokes the access and refresh tokens of the tenant whose
// column (a constant of this file) holds value.
func revokeWhere(ctx context.Context, q store.Querier, tenantID int64, column string, value any) error {
	for _, table := range []string{"access_tokens", "refresh_tokens"} {
		if _, err := q.ExecContext(ctx,
			`UPDATE `+table+` SET revoked = TRUE WHERE tenant_id = $1 AND `+column+` = $2`, tenantID, value); err != nil {
			return fmt.Errorf("revoke %s: %w", strings.ReplaceAll(table, "_", " "), err)
		}
	}
	return nil
}

// DeleteUserTokens deletes every token issued to one user: it belongs in
// the transaction that deletes the user.
func (t *Tables) DeleteUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error {
	for _, table := range []string{"access_tokens", "refresh_tokens"} {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND user_id = $2`, tenantID, userID); err != nil {
			return fmt.Errorf("delete %s: %w", table, err)
		}
	}
	return nil
}

// PurgeExpiredTokens deletes the access and refresh tokens of every tenant
// that expired before cutoff: cross-tenant housekeeping over the tables'
// expires_at indexes, in the engine's batches (see store.DB.PurgeRows).
func (t *Tables) PurgeExpiredTokens(ctx context.Context, cutoff time.Time) error {
	for _, table := range []string{"access_tokens", "refresh_tokens"} {
		// The subquery picks the batch by expiry; the outer statement
		// deletes it by primary key (row values: both engines have them).
		if _, err := t.db.PurgeRows(ctx, table,
			`DELETE FROM `+table+` WHERE (tenant_id, token_hash) IN (
			   SELECT tenant_id, token_hash FROM `+table+` WHERE expires_at < $1 LIMIT $2)`,
			cutoff.UnixMilli()); err != nil {
			return err
		}
	}
	return nil
}
