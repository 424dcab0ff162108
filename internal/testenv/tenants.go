package testenv

import (
	"context"
	"fmt"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// FakeHash is a password hash for tests of the tables, which never look
// inside one.
const FakeHash = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"

// TenantIn creates a tenant with its admin (password hash FakeHash) on db,
// as the service does, without a server.
func TenantIn(t testing.TB, db *store.DB, slug, email string) (store.Tenant, users.User) {
	t.Helper()
	tables := users.NewTables(db, auth.NewTables(db))
	tn, u, err := tables.CreateTenant(context.Background(), slug, "Name of "+slug, users.NewAdmin{Email: email, PasswordHash: FakeHash})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn, u
}

// TenantsIn creates n tenants with their admins on db: t000, t001, …
func TenantsIn(t testing.TB, db *store.DB, n int) []store.Tenant {
	t.Helper()
	out := make([]store.Tenant, n)
	for i := range out {
		out[i], _ = TenantIn(t, db, fmt.Sprintf("t%03d", i), fmt.Sprintf("admin@t%03d.test", i))
	}
	return out
}

// BareTenant adds a tenant row alone, without users: what the foreign
// keys of a domain's own tables need.
func BareTenant(t testing.TB, db *store.DB, slug string) store.Tenant {
	t.Helper()
	tn, err := db.InsertTenant(context.Background(), db, slug, "Name of "+slug)
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return tn
}
