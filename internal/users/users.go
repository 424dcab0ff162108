// Package users holds the rules of users and tenants: a user's e-mail
// address and password (stored apart from the record, as a slow hash), the
// sessions a change of password or role ends, the first user who stays,
// and what a new tenant starts with.
package users

import (
	"context"
	"errors"
	"net/mail"

	"planwerk/internal/errs"
	"planwerk/internal/records"
	"planwerk/internal/store"
)

// Store is what the rules need of the database: the users' table and
// the credentials a change of a user ends (Tables).
type Store interface {
	CreateTenant(ctx context.Context, slug, name string, admin NewAdmin, setup ...store.TenantSetup) (store.Tenant, User, error)
	CreateUser(ctx context.Context, q store.Querier, tenantID int64, nu NewUser) (User, error)
	UpdateUser(ctx context.Context, q store.Querier, tenantID, id int64, createdAt string, doc map[string]any, passwordHash *string) (store.Record, error)
	DeleteUser(ctx context.Context, q store.Querier, tenantID, id int64) error
	RevokeUserTokens(ctx context.Context, q store.Querier, tenantID, userID int64) error
	RevokeClientsCreatedBy(ctx context.Context, q store.Querier, tenantID, userID int64) (int, error)
}

// Hasher turns a password into its slow hash.
type Hasher interface {
	Hash(ctx context.Context, password string) (string, error)
}

// Sessions forgets what it cached of tokens, so that a change of password
// or role takes effect at once.
type Sessions interface {
	ForgetCachedTokens()
}

// Service applies the rules.
type Service struct {
	db       Store
	hasher   Hasher
	sessions Sessions
	setup    []store.TenantSetup
}

// New returns a Service; setup runs for every new tenant.
func New(db Store, hasher Hasher, sessions Sessions, setup ...store.TenantSetup) *Service {
	return &Service{db: db, hasher: hasher, sessions: sessions, setup: setup}
}

// ValidEmail reports whether s is a bare e-mail address.
func ValidEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s && a.Name == ""
}

// HashPassword (Prepare) hashes a new password before the transaction:
// hashing is slow.
func (s *Service) HashPassword(ctx context.Context, w *records.Write) error {
	pw, ok := w.WriteOnly.String("password")
	if !ok {
		return nil
	}
	if pw == "" {
		return errs.Field("password", "must not be empty")
	}
	hash, err := s.hasher.Hash(ctx, pw)
	if err != nil {
		return err
	}
	w.Prepared["passwordHash"] = hash
	return nil
}

// NormalizeUser (Normalize): a user is no admin unless made one.
func NormalizeUser(_ context.Context, w *records.Write) error {
	if !w.New.Has("isAdmin") {
		w.New["isAdmin"] = false
	}
	return nil
}

// CheckUser (Check): the e-mail address must be one, and a password sent
// must have been hashed (a null password is none).
func CheckUser(_ context.Context, c records.Change) error {
	if email, ok := c.New.String("email"); ok && !ValidEmail(email) {
		return errs.Field("email", "must be an e-mail address")
	}
	if c.WriteOnly.Names("password") && !c.Prepared.Has("passwordHash") {
		return errs.Field("password", "must be a string")
	}
	return nil
}

func conflictOnEmail(err error) error {
	if errors.Is(err, store.ErrConflict) {
		e := errs.Conflicts("a user with this e-mail address exists")
		e.Problems = []errs.Problem{{Field: "email", Message: "is taken"}}
		return e
	}
	return err
}

// InsertUser (Insert) stores a new user with the password's hash.
func (s *Service) InsertUser(ctx context.Context, w *records.Write) (store.Record, error) {
	email, _ := w.New.String("email")
	hash, _ := w.Prepared.String("passwordHash")
	isAdmin := w.New.Bool("isAdmin")
	attrs := make(map[string]any, len(w.New))
	for k, v := range w.New {
		if k != "email" && k != "isAdmin" {
			attrs[k] = v
		}
	}
	user, err := s.db.CreateUser(ctx, w.Tx, w.Caller.TenantID, NewUser{Email: email, PasswordHash: hash, IsAdmin: isAdmin, Attrs: attrs})
	if err != nil {
		return store.Record{}, conflictOnEmail(err)
	}
	return user.Record(), nil
}

// UpdateUser (Update) stores a changed user; a new password or a lost
// admin role ends what the user held by the old one.
func (s *Service) UpdateUser(ctx context.Context, w *records.Write) (store.Record, error) {
	var hash *string
	if h, ok := w.Prepared.String("passwordHash"); ok {
		hash = &h
		// A new password ends every session of the user.
		if err := s.db.RevokeUserTokens(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
			return store.Record{}, err
		}
	}
	rec, err := s.db.UpdateUser(ctx, w.Tx, w.Caller.TenantID, w.ID, w.CreatedAt, w.New, hash)
	if err != nil {
		return store.Record{}, conflictOnEmail(err)
	}
	// An admin who loses admin loses the API clients they created, and
	// those clients' tokens (the tenant's first user stays an admin
	// whatever isAdmin says, and keeps them).
	if w.Old.Bool("isAdmin") && !w.New.Bool("isAdmin") {
		if _, err := s.db.RevokeClientsCreatedBy(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
			return store.Record{}, err
		}
	}
	if hash != nil || w.Changed("isAdmin") {
		w.AfterCommit(s.sessions.ForgetCachedTokens)
	}
	return rec, nil
}

// DeleteUser (Delete) removes a user, but neither the caller nor the
// tenant's first user.
func (s *Service) DeleteUser(ctx context.Context, w *records.Write) (store.Record, error) {
	if w.ID == w.Caller.UserID {
		return store.Record{}, errs.Conflicts("you cannot delete your own user")
	}
	if err := s.db.DeleteUser(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
		if errors.Is(err, ErrOwner) {
			return store.Record{}, errs.Conflicts("the tenant's first user cannot be deleted")
		}
		return store.Record{}, err
	}
	// The API clients the user created end with them; those acting as
	// the user stay listed but get no tokens (their user is gone).
	if _, err := s.db.RevokeClientsCreatedBy(ctx, w.Tx, w.Caller.TenantID, w.ID); err != nil {
		return store.Record{}, err
	}
	w.AfterCommit(s.sessions.ForgetCachedTokens)
	return store.Record{}, nil
}
