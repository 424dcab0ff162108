package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Users is the collection of the users resource: a table of its own,
// because users also carry sign-in credentials.
var Users = Collection{Table: "users", Resource: ""}

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
}

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
// the tenant, in any letter case, returns ErrConflict.
func (db *DB) CreateUser(ctx context.Context, q Querier, tenantID int64, nu NewUser) (User, error) {
	id, err := db.nextID(ctx, q, tenantID)
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
	now := Timestamp(time.Now())
	b, err := stamp(doc, id, now, now)
	if err != nil {
		return User{}, err
	}
	_, err = q.ExecContext(ctx,
		`INSERT INTO users (tenant_id, id, email, email_key, password_hash, is_admin, is_owner, doc, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)`,
		tenantID, id, nullIfEmpty(nu.Email), nullIfEmpty(EmailKey(nu.Email)), nullIfEmpty(nu.PasswordHash), nu.IsAdmin, nu.Owner, string(b), now)
	if db.dialect.uniqueViolation(err) {
		return User{}, fmt.Errorf("user %q: %w", nu.Email, ErrConflict)
	}
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	if err := db.recordChange(ctx, q, tenantID, "users", id, OpCreate, b); err != nil {
		return User{}, err
	}
	return User{TenantID: tenantID, ID: id, Email: nu.Email, PasswordHash: nu.PasswordHash, IsAdmin: nu.IsAdmin, Doc: b}, nil
}

// UpdateUser replaces a user's document; e-mail address and admin flag are
// read from it. A non-nil passwordHash replaces the password.
func (db *DB) UpdateUser(ctx context.Context, q Querier, tenantID, id int64, createdAt string, doc map[string]any, passwordHash *string) (Doc, error) {
	now := Timestamp(time.Now())
	b, err := stamp(doc, id, createdAt, now)
	if err != nil {
		return nil, err
	}
	email, _ := doc["email"].(string)
	isAdmin, _ := doc["isAdmin"].(bool)
	res, err := q.ExecContext(ctx,
		`UPDATE users SET email = $1, email_key = $2, is_admin = $3, doc = $4, updated_at = $5,
		        password_hash = COALESCE($6, password_hash)
		  WHERE tenant_id = $7 AND id = $8`,
		nullIfEmpty(email), nullIfEmpty(EmailKey(email)), isAdmin, string(b), now, passwordHash, tenantID, id)
	if db.dialect.uniqueViolation(err) {
		return nil, fmt.Errorf("user %q: %w", email, ErrConflict)
	}
	if err != nil {
		return nil, fmt.Errorf("update user %d: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return nil, fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	return b, db.recordChange(ctx, q, tenantID, "users", id, OpUpdate, b)
}

// ErrOwner means the tenant's first user was to be deleted.
var ErrOwner = errors.New("the tenant's first user")

// DeleteUser removes a user and every token issued to them. The tenant's
// first user cannot be deleted (ErrOwner).
func (db *DB) DeleteUser(ctx context.Context, q Querier, tenantID, id int64) error {
	var owner bool
	err := q.QueryRowContext(ctx, `SELECT is_owner FROM users WHERE tenant_id = $1 AND id = $2`, tenantID, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	if owner {
		return ErrOwner
	}
	for _, table := range []string{"access_tokens", "refresh_tokens"} {
		if _, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND user_id = $2`, tenantID, id); err != nil {
			return fmt.Errorf("delete user %d tokens: %w", id, err)
		}
	}
	var doc string
	err = q.QueryRowContext(ctx, `DELETE FROM users WHERE tenant_id = $1 AND id = $2 RETURNING `+db.dialect.docColumn(), tenantID, id).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("user %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete user %d: %w", id, err)
	}
	return db.recordChange(ctx, q, tenantID, "users", id, OpDelete, []byte(doc))
}

// UserByEmail finds a user of the tenant by e-mail address, ignoring case.
func (db *DB) UserByEmail(ctx context.Context, tenantID int64, email string) (User, error) {
	return db.scanUser(db.lookup.QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, `+db.dialect.storedDoc()+` FROM users WHERE tenant_id = $1 AND email_key = $2`,
		tenantID, EmailKey(email)))
}

// UserByID finds a user of the tenant by id.
func (db *DB) UserByID(ctx context.Context, tenantID, id int64) (User, error) {
	return db.scanUser(db.lookup.QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, `+db.dialect.storedDoc()+` FROM users WHERE tenant_id = $1 AND id = $2`,
		tenantID, id))
}

func (db *DB) scanUser(row *sql.Row) (User, error) {
	var u User
	var doc string
	var email, hash sql.NullString
	err := row.Scan(&u.TenantID, &u.ID, &email, &hash, &u.IsAdmin, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user: %w", ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("user: %w", err)
	}
	u.Email, u.PasswordHash = email.String, hash.String
	u.Doc = json.RawMessage(doc)
	return u, nil
}
