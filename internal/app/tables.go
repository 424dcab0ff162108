package app

import (
	"context"

	"planwerk/internal/auth"
	"planwerk/internal/files"
	"planwerk/internal/idempotency"
	"planwerk/internal/store"
	"planwerk/internal/timetrack"
	"planwerk/internal/users"
	"planwerk/internal/webhooks"
)

// tables are the domains' tables on one database: the domains keep their
// own queries, on the engine's surface.
type tables struct {
	auth        *auth.Tables
	users       *users.Tables
	settings    *timetrack.SettingsTable
	uploads     *files.Tables
	webhooks    *webhooks.Tables
	idempotency *idempotency.Keys
}

func newTables(db *store.DB) tables {
	a := auth.NewTables(db)
	return tables{auth: a, users: users.NewTables(db, a), settings: timetrack.NewSettingsTable(db),
		uploads: files.NewTables(db), webhooks: webhooks.NewTables(db), idempotency: idempotency.NewKeys(db)}
}

// accounts is what sign-in needs of the users' table (auth.Users).
type accounts struct{ users *users.Tables }

func account(u users.User, err error) (auth.Account, error) {
	if err != nil {
		return auth.Account{}, err
	}
	return auth.Account{ID: u.ID, PasswordHash: u.PasswordHash}, nil
}

func (a accounts) UserByEmail(ctx context.Context, tenantID int64, email string) (auth.Account, error) {
	return account(a.users.UserByEmail(ctx, tenantID, email))
}

func (a accounts) UserByID(ctx context.Context, tenantID, id int64) (auth.Account, error) {
	return account(a.users.UserByID(ctx, tenantID, id))
}

func (a accounts) LockAdmin(ctx context.Context, q store.Querier, tenantID, userID int64) (bool, error) {
	return a.users.LockAdmin(ctx, q, tenantID, userID)
}
