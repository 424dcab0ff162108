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

// TenantRows counts the rows of the tenant in every table of db that has
// a tenant_id column, by table, and its row of tenants under "tenants".
// It reads the catalog itself (not as the store's erasure does), so that
// a table the erasure overlooks shows here.
func TenantRows(t testing.TB, db *store.DB, tenantID int64) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	catalog := `SELECT table_name FROM information_schema.columns
		 WHERE table_schema = current_schema() AND column_name = 'tenant_id' ORDER BY table_name`
	if db.Engine() == "sqlite" {
		catalog = `SELECT m.name FROM sqlite_master m WHERE m.type = 'table'
			 AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'tenant_id') ORDER BY m.name`
	}
	rows, err := db.QueryContext(ctx, catalog)
	if err != nil {
		t.Fatalf("tenant tables: %v", err)
	}
	var tables []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, name)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if len(tables) < 10 {
		t.Fatalf("the catalog names %d tables with tenant_id: %v", len(tables), tables)
	}
	counts := map[string]int64{}
	for _, table := range append(tables, "tenants") {
		col := "tenant_id"
		if table == "tenants" {
			col = "id"
		}
		var n int64
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM "`+table+`" WHERE `+col+` = $1`, tenantID).Scan(&n); err != nil {
			t.Fatalf("count %s: %v", table, err)
		}
		counts[table] = n
	}
	return counts
}

// NoRows fails the test for each table in counts (TenantRows) that
// holds rows.
func NoRows(t testing.TB, what string, counts map[string]int64) {
	t.Helper()
	for table, n := range counts {
		if n != 0 {
			t.Errorf("%s: %d rows left in %s", what, n, table)
		}
	}
}
