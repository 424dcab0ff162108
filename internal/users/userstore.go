package users

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"planwerk/internal/etag"
	"planwerk/internal/records"
	"planwerk/internal/store"
)

// Engine is what the users' table is built on: the storage engine (a
// *store.DB).
type Engine interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	Lookup() store.Querier
	ForUpdate() string
	IsUniqueViolation(err error) bool
	DocColumn() string
	StoredDoc() string
	RecordChange(ctx context.Context, q store.Querier, tenantID int64, resource string, id int64, op string, doc []byte, extra ...string) error
	CrossTenantRead(ctx context.Context, q store.Querier) error
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
	InsertTenant(ctx context.Context, q store.Querier, slug, name string) (store.Tenant, error)
}

// Credentials are the sign-in credentials of users, kept in tables that
// are not the users': the tokens issued to them and the API clients they
// created (auth's Tables). A change of a user ends some of them.
type Credentials interface {
	RevokeUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error
	DeleteUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error
	RevokeClientsCreatedBy(ctx context.Context, q store.Querier, tenantID, userID int64) (int, error)
}

// Tables are the table of users, and the creation of tenants with their
// first user. They implement Store.
type Tables struct {
	db    Engine
	creds Credentials
}

// NewTables returns the tables on db; creds are the users' credentials,
// which their changes end.
func NewTables(db Engine, creds Credentials) *Tables { return &Tables{db: db, creds: creds} }

// User is a person who signs in to a tenant.
type User struct {
	TenantID     int64
	ID           int64
	Email        string
	PasswordHash string
	IsAdmin      bool
	// Doc is the user's record as the API returns it: never the password
	// or its hash.
	Doc json.RawMessage
	// ETag is the entity tag stored with the document.
	ETag string
}

// Record is the user as the API answers it: its document and the tag
// stored with it.
func (u User) Record() store.Record { return store.Record{ID: u.ID, Doc: u.Doc, ETag: u.ETag} }

// NewUser is what CreateUser needs.
type NewUser struct {
	Email        string // may be empty: such a user cannot sign in
	PasswordHash string // may be empty: such a user cannot sign in
	IsAdmin      bool
	// Owner marks the tenant's first user, an admin whatever isAdmin says.
	Owner bool
	// Attrs are the record's other attributes.
	Attrs map[string]any
}

// ErrOwner means the tenant's first user was to be deleted.
var ErrOwner = errors.New("the tenant's first user")

// EmailKey is the case-insensitive form under which e-mail addresses are
// unique within a tenant.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// CreateUser adds a user to the tenant. An e-mail address already used in
// the tenant, in any letter case, returns store.ErrConflict.
func (t *Tables) CreateUser(ctx context.Context, q store.Querier, tenantID int64, nu NewUser) (User, error) {
	id, err := t.db.NewID(ctx, q, tenantID)
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	doc := make(map[string]any, len(nu.Attrs)+3)
	for k, v := range nu.Attrs {
		doc[k] = v
	}
	if nu.Email != "" {
		doc["email"] = nu.Email
	}
	doc["isAdmin"] = nu.IsAdmin
	now := store.Timestamp(time.Now())
	b, err := store.Stamp(doc, id, now, now)
	if err != nil {
		return User{}, err
	}
	tag := etag.Of(b)
	_, err = q.ExecContext(ctx,
		`INSERT INTO users (tenant_id, id, email, email_key, password_hash, is_admin, is_owner, doc, etag, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)`,
		tenantID, id, nullIfEmpty(nu.Email), nullIfEmpty(EmailKey(nu.Email)), nullIfEmpty(nu.PasswordHash), nu.IsAdmin, nu.Owner, string(b), tag, now)
	if t.db.IsUniqueViolation(err) {
		return User{}, fmt.Errorf("user %q: %w", nu.Email, store.ErrConflict)
	}
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	if err := t.db.RecordChange(ctx, q, tenantID, "users", id, store.OpCreate, b); err != nil {
		return User{}, err
	}
	return User{TenantID: tenantID, ID: id, Email: nu.Email, PasswordHash: nu.PasswordHash, IsAdmin: nu.IsAdmin, Doc: b, ETag: tag}, nil
}

// UpdateUser replaces a user's document and returns the record as it is
// now; e-mail address and admin flag are read from the document. A
// non-nil passwordHash replaces the password.
func (t *Tables) UpdateUser(ctx context.Context, q store.Querier, tenantID, id int64, createdAt string, doc map[string]any, passwordHash *string) (store.Record, error) {
	now := store.Timestamp(time.Now())
	b, err := store.Stamp(doc, id, createdAt, now)
	if err != nil {
		return store.Record{}, err
	}
	email, _ := records.Doc(doc).String("email")
	isAdmin := records.Doc(doc).Bool("isAdmin")
	tag := etag.Of(b)
	res, err := q.ExecContext(ctx,
		`UPDATE users SET email = $1, email_key = $2, is_admin = $3, doc = $4, etag = $5, updated_at = $6,
		        password_hash = COALESCE($7, password_hash)
		  WHERE tenant_id = $8 AND id = $9`,
		nullIfEmpty(email), nullIfEmpty(EmailKey(email)), isAdmin, string(b), tag, now, passwordHash, tenantID, id)
	if t.db.IsUniqueViolation(err) {
		return store.Record{}, fmt.Errorf("user %q: %w", email, store.ErrConflict)
	}
	if err != nil {
		return store.Record{}, fmt.Errorf("update user %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.Record{}, fmt.Errorf("user %d: %w", id, store.ErrNotFound)
	}
	var extra []string
	if passwordHash != nil {
		extra = []string{"password"}
	}
	return store.Record{ID: id, Doc: b, ETag: tag}, t.db.RecordChange(ctx, q, tenantID, "users", id, store.OpUpdate, b, extra...)
}

// DeleteUser removes a user and every token issued to them. The tenant's
// first user cannot be deleted (ErrOwner).
func (t *Tables) DeleteUser(ctx context.Context, q store.Querier, tenantID, id int64) error {
	var owner bool
	err := q.QueryRowContext(ctx, `SELECT is_owner FROM users WHERE tenant_id = $1 AND id = $2`, tenantID, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("user %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	if owner {
		return ErrOwner
	}
	if err := t.creds.DeleteUserTokens(ctx, q, tenantID, id); err != nil {
		return fmt.Errorf("delete user %d tokens: %w", id, err)
	}
	var doc string
	err = q.QueryRowContext(ctx, `DELETE FROM users WHERE tenant_id = $1 AND id = $2 RETURNING `+t.db.DocColumn(), tenantID, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("user %d: %w", id, store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	return t.db.RecordChange(ctx, q, tenantID, "users", id, store.OpDelete, []byte(doc))
}

// UserByEmail finds a user of the tenant by e-mail address, ignoring case.
func (t *Tables) UserByEmail(ctx context.Context, tenantID int64, email string) (User, error) {
	return t.userByEmail(ctx, t.db.Lookup(), tenantID, email)
}

func (t *Tables) userByEmail(ctx context.Context, q store.Querier, tenantID int64, email string) (User, error) {
	return scanUser(q.QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, `+t.db.StoredDoc()+`, COALESCE(etag, '') FROM users WHERE tenant_id = $1 AND email_key = $2`,
		tenantID, EmailKey(email)))
}

// UserByID finds a user of the tenant by id.
func (t *Tables) UserByID(ctx context.Context, tenantID, id int64) (User, error) {
	return scanUser(t.db.Lookup().QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, `+t.db.StoredDoc()+`, COALESCE(etag, '') FROM users WHERE tenant_id = $1 AND id = $2`,
		tenantID, id))
}

func scanUser(row *sql.Row) (User, error) {
	var u User
	var doc string
	var email, hash sql.NullString
	err := row.Scan(&u.TenantID, &u.ID, &email, &hash, &u.IsAdmin, &doc, &u.ETag)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user: %w", store.ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("user: %w", err)
	}
	u.Email, u.PasswordHash = email.String, hash.String
	u.Doc = json.RawMessage(doc)
	return u, nil
}

// LockAdmin locks a user's row until the transaction ends and reports
// whether the user is an admin of the tenant (the tenant's first user
// always is); false when there is no such user. An API client created in
// the transaction is then seen by the change that takes the user's admin
// away, or made after it and refused.
func (t *Tables) LockAdmin(ctx context.Context, q store.Querier, tenantID, userID int64) (bool, error) {
	var admin bool
	err := q.QueryRowContext(ctx,
		`SELECT is_admin OR is_owner FROM users WHERE tenant_id = $1 AND id = $2`+t.db.ForUpdate(),
		tenantID, userID).Scan(&admin)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("lock admin %d: %w", userID, err)
	}
	return admin, nil
}

// ResetPassword gives a user a new password hash and revokes all the
// user's tokens, in one transaction.
func (t *Tables) ResetPassword(ctx context.Context, tenantID int64, email, hash string) (User, error) {
	var u User
	err := t.db.Tx(ctx, func(q store.Querier) error {
		var err error
		if u, err = t.userByEmail(ctx, q, tenantID, email); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE users SET password_hash = $1 WHERE tenant_id = $2 AND id = $3`, hash, tenantID, u.ID); err != nil {
			return fmt.Errorf("reset password: %w", err)
		}
		// The document stays as it was: the entry names the password alone.
		note := store.AuditNote{Resource: "users", Record: u.ID, Op: store.OpUpdate, Before: u.Doc, After: u.Doc, Extra: []string{"password"}}
		if err := t.db.Audit(ctx, q, tenantID, note); err != nil {
			return err
		}
		return t.creds.RevokeUserTokens(ctx, q, tenantID, u.ID)
	})
	return u, err
}

// RevokeUserTokens revokes every token of one user (see Credentials).
func (t *Tables) RevokeUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error {
	return t.creds.RevokeUserTokens(ctx, q, tenantID, userID)
}

// RevokeClientsCreatedBy ends the API clients the user created unless the
// user is an admin (see Credentials); it belongs in the transaction that
// deletes the user or takes their admin away, after that change.
func (t *Tables) RevokeClientsCreatedBy(ctx context.Context, q store.Querier, tenantID, userID int64) (int, error) {
	return t.creds.RevokeClientsCreatedBy(ctx, q, tenantID, userID)
}
