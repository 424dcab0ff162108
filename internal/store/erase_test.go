package store_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

var projects = store.Collection{Table: "records", Resource: "projects"}

// fill gives the tenant n projects, in one transaction.
func fill(t *testing.T, db *store.DB, tenantID int64, n int) {
	t.Helper()
	docs := make([]map[string]any, n)
	for i := range docs {
		docs[i] = map[string]any{"name": fmt.Sprintf("p%d", i)}
	}
	inTx(t, db, func(q store.Querier) error {
		_, err := db.InsertRecords(context.Background(), q, tenantID, projects, docs)
		return err
	})
}

// notesTables adds two tables the store has never heard of, the second
// referring to the first, named so that an erasure in the order of their
// names would break the foreign key.
func notesTables(t *testing.T, db *store.DB) {
	t.Helper()
	exec(t, db, `CREATE TABLE a_notes (tenant_id BIGINT NOT NULL REFERENCES tenants (id), id BIGINT NOT NULL,
		PRIMARY KEY (tenant_id, id))`)
	exec(t, db, `CREATE TABLE b_replies (tenant_id BIGINT NOT NULL REFERENCES tenants (id), id BIGINT NOT NULL, note BIGINT NOT NULL,
		PRIMARY KEY (tenant_id, id), FOREIGN KEY (tenant_id, note) REFERENCES a_notes (tenant_id, id))`)
}

func addNotes(t *testing.T, db *store.DB, tenantID int64, n int) {
	t.Helper()
	inTx(t, db, func(q store.Querier) error {
		for i := 1; i <= n; i++ {
			if _, err := q.ExecContext(context.Background(), `INSERT INTO a_notes (tenant_id, id) VALUES ($1, $2)`, tenantID, i); err != nil {
				return err
			}
			if _, err := q.ExecContext(context.Background(), `INSERT INTO b_replies (tenant_id, id, note) VALUES ($1, $2, $2)`, tenantID, i); err != nil {
				return err
			}
		}
		return nil
	})
}

// TestEraseTenant: the erasure finds every table with a tenant_id in the
// catalog, new ones included, empties the tenant's rows of each, a table
// before the one its foreign key refers to, and then its state and row;
// another tenant keeps every row. The slug can be taken again, and the
// new tenant gets an id no tenant had.
func TestEraseTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		notesTables(t, db)
		other, _ := testenv.TenantIn(t, db, "other", "admin@other.test")
		acme, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		for _, tn := range []store.Tenant{acme, other} {
			fill(t, db, tn.ID, 700)
			addNotes(t, db, tn.ID, 150)
		}
		if _, err := db.SetTenantState(ctx, "acme", store.TenantDeleting, store.TenantActive); err != nil {
			t.Fatal(err)
		}
		otherBefore := testenv.TenantRows(t, db, other.ID)

		var order []string
		perTable := map[string]int64{}
		err := db.EraseTenant(ctx, acme.ID, func(table string, n int64) {
			if !slices.Contains(order, table) {
				order = append(order, table)
			}
			perTable[table] += n
		})
		if err != nil {
			t.Fatal(err)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, db, acme.ID))
		if got := testenv.TenantRows(t, db, other.ID); !maps.Equal(got, otherBefore) {
			t.Errorf("another tenant's rows changed: %v, were %v", got, otherBefore)
		}
		if r, n := slices.Index(order, "b_replies"), slices.Index(order, "a_notes"); r < 0 || n < 0 || r > n {
			t.Errorf("erased in the order %v: replies must go before the notes they refer to", order)
		}
		if perTable["records"] < 700 || perTable["b_replies"] != 150 || perTable["tenants"] != 1 || perTable["tenant_states"] != 1 ||
			order[len(order)-1] != "tenants" {
			t.Errorf("erased %v in the order %v", perTable, order)
		}
		tables, err := db.TenantTables(ctx)
		if err != nil || !slices.Contains(tables, "a_notes") || slices.Contains(tables, "tenant_states") {
			t.Errorf("tenant tables: %v %v", tables, err)
		}

		if _, err := db.TenantBySlug(ctx, "acme"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the erased tenant: %v", err)
		}
		again, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		if again.ID <= acme.ID {
			t.Errorf("the new tenant acme has id %d, the erased one had %d", again.ID, acme.ID)
		}
		// Erasing what is gone already does nothing.
		if err := db.EraseTenant(ctx, acme.ID, nil); err != nil {
			t.Errorf("erase again: %v", err)
		}
	})
}

// TestEraseTenantCutShort: an erasure whose context ends after its first
// batch leaves the rest, and run again finishes; rows a write in flight
// adds behind the erasure go too.
func TestEraseTenantCutShort(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		acme, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		fill(t, db, acme.ID, 1000)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		err := db.EraseTenant(ctx, acme.ID, func(table string, _ int64) {
			if table == "records" {
				cancel()
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("erasure cut short: %v", err)
		}
		left := testenv.TenantRows(t, db, acme.ID)
		if left["records"] == 0 || left["records"] >= 1000 || left["users"] == 0 || left["tenants"] != 1 {
			t.Errorf("after the cut: %v", left)
		}

		// Run again; a record written while the users go (after the
		// records table was emptied) goes too.
		late := false
		err = db.EraseTenant(context.Background(), acme.ID, func(table string, _ int64) {
			if table == "users" && !late {
				late = true
				fill(t, db, acme.ID, 1)
			}
		})
		if err != nil || !late {
			t.Fatalf("erase again: %v (a late record written: %v)", err, late)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, db, acme.ID))
	})
}
