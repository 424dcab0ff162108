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
	Email        string
	PasswordHash string
	IsAdmin      bool
}

// EmailKey is the case-insensitive form under which e-mail addresses are
// unique within a tenant.
func EmailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// CreateUser adds a user to the tenant. An e-mail address already used in
// the tenant, in any letter case, returns ErrConflict.
func (db *DB) CreateUser(ctx context.Context, q Querier, tenantID int64, nu NewUser) (User, error) {
	id, err := db.nextID(ctx, q, tenantID)
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	now := Timestamp(time.Now())
	doc, err := json.Marshal(map[string]any{
		"id": id, "email": nu.Email, "isAdmin": nu.IsAdmin, "createdAt": now, "updatedAt": now,
	})
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	_, err = q.ExecContext(ctx,
		`INSERT INTO users (tenant_id, id, email, email_key, password_hash, is_admin, doc, created_at, updated_at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)`,
		tenantID, id, nu.Email, EmailKey(nu.Email), nu.PasswordHash, nu.IsAdmin, string(doc), now)
	if db.dialect.uniqueViolation(err) {
		return User{}, fmt.Errorf("user %q: %w", nu.Email, ErrConflict)
	}
	if err != nil {
		return User{}, fmt.Errorf("create user: %w", err)
	}
	return User{TenantID: tenantID, ID: id, Email: nu.Email, PasswordHash: nu.PasswordHash, IsAdmin: nu.IsAdmin, Doc: doc}, nil
}

// UserByEmail finds a user of the tenant by e-mail address, ignoring case.
func (db *DB) UserByEmail(ctx context.Context, tenantID int64, email string) (User, error) {
	return db.scanUser(db.read.QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, doc FROM users WHERE tenant_id = $1 AND email_key = $2`,
		tenantID, EmailKey(email)))
}

// UserByID finds a user of the tenant by id.
func (db *DB) UserByID(ctx context.Context, tenantID, id int64) (User, error) {
	return db.scanUser(db.read.QueryRowContext(ctx,
		`SELECT tenant_id, id, email, password_hash, is_admin, doc FROM users WHERE tenant_id = $1 AND id = $2`,
		tenantID, id))
}

func (db *DB) scanUser(row *sql.Row) (User, error) {
	var u User
	var doc string
	err := row.Scan(&u.TenantID, &u.ID, &u.Email, &u.PasswordHash, &u.IsAdmin, &doc)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, fmt.Errorf("user: %w", ErrNotFound)
	}
	if err != nil {
		return User{}, fmt.Errorf("user: %w", err)
	}
	u.Doc = json.RawMessage(doc)
	return u, nil
}
