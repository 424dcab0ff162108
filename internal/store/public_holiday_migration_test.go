package store_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"planwerk/internal/query"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// beforePublicHoliday is the last migration before 00008_public_holiday.
const beforePublicHoliday = 7

var absenceTypes = store.Collection{Table: "records", Resource: "absence-types"}

// TestPublicHolidayMigration builds a database as a release before the
// PublicHoliday type left it, with a tenant that has the type, one that
// has other absence types only and one with no records at all, and checks
// that migrating gives each tenant exactly one, with an id taken as the
// store takes ids and a document shaped as the store shapes one.
func TestPublicHolidayMigration(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := openAt(t, testenv.DSN(t, b), beforePublicHoliday)
		// The old release's data is written by today's store, which
		// records every write in the change feed (with its size on
		// PostgreSQL), locks rows of locks, reads the documents' stored
		// text on PostgreSQL and stores their tags.
		applyLater(t, db, b, "00012_changes.sql", "00014_document_text.sql", "00016_distribution.sql", "00019_change_sizes.sql", "00020_audit_log.sql", "00022_tenant_id_floor.sql", etagStep)
		kept, _ := testenv.TenantIn(t, db, "kept", "admin@kept.test")
		old, _ := testenv.TenantIn(t, db, "old", "admin@old.test")
		// Since the type exists, every new tenant gets it; an old tenant's
		// database had none, and had other absence types and records named
		// PublicHoliday of other resources.
		insert(t, db, kept.ID, absenceTypes, map[string]any{"name": "PublicHoliday"})
		exec(t, db, `DELETE FROM records WHERE tenant_id = $1 AND resource = 'absence-types'`, old.ID)
		insert(t, db, old.ID, absenceTypes, map[string]any{"name": "Vacation"})
		insert(t, db, old.ID, store.Collection{Table: "records", Resource: "tags"}, map[string]any{"name": "PublicHoliday"})
		exec(t, db, `INSERT INTO tenants (slug, name, created_at, updated_at) VALUES ('bare', 'Bare', $1, $1)`, store.Timestamp(time.Now()))
		// Read as the old release would: the tenant's state is a later column.
		var bare store.Tenant
		if err := db.QueryRowContext(ctx, `SELECT id FROM tenants WHERE slug = 'bare'`).Scan(&bare.ID); err != nil {
			t.Fatal(err)
		}
		keptBefore := publicHolidays(t, db, kept.ID)
		if len(keptBefore) != 1 {
			t.Fatalf("kept has %d PublicHoliday types before migrating, want 1", len(keptBefore))
		}
		lastID := lastIDs(t, db, kept.ID, old.ID, bare.ID)
		start := time.Now().UTC().Truncate(time.Millisecond)

		if n, err := db.Migrate(ctx); err != nil || n < 1 {
			t.Fatalf("migrate: %d applied, %v", n, err)
		}

		keptAfter := publicHolidays(t, db, kept.ID)
		if len(keptAfter) != 1 || keptAfter[0].ID != keptBefore[0].ID || !sameJSON(keptAfter[0].Doc, keptBefore[0].Doc) {
			t.Errorf("kept's PublicHoliday changed: %s, want %s", docs(keptAfter), docs(keptBefore))
		}
		given := map[int64]store.Record{}
		for _, tn := range []store.Tenant{old, bare} {
			got := publicHolidays(t, db, tn.ID)
			if len(got) != 1 {
				t.Fatalf("%s has %d PublicHoliday types, want 1: %s", tn.Slug, len(got), docs(got))
			}
			given[tn.ID] = got[0]
			checkShape(t, db, tn.ID, got[0], start)
		}
		after := lastIDs(t, db, kept.ID, old.ID, bare.ID)
		switch b.Name {
		case "sqlite":
			// The tenant's own counter: the next id of each tenant, and the
			// counter moved on; a tenant without a counter starts one at 1.
			for _, tn := range []store.Tenant{old, bare} {
				if want := lastID[tn.ID] + 1; given[tn.ID].ID != want || after[tn.ID] != want {
					t.Errorf("%s: id %d, counter %d; want both %d", tn.Slug, given[tn.ID].ID, after[tn.ID], want)
				}
			}
			if after[kept.ID] != lastID[kept.ID] {
				t.Errorf("kept's counter moved from %d to %d", lastID[kept.ID], after[kept.ID])
			}
		case "postgres":
			// The shared sequence: two fresh values, one per tenant.
			seq := lastID[0]
			ids := map[int64]bool{given[old.ID].ID: true, given[bare.ID].ID: true}
			if !ids[seq+1] || !ids[seq+2] || after[0] != seq+2 {
				t.Errorf("ids %v with record_ids at %d before and %d after, want %d and %d", ids, seq, after[0], seq+1, seq+2)
			}
		}
		// The store's next id does not collide with the migration's.
		insert(t, db, old.ID, absenceTypes, map[string]any{"name": "Sick"})
		insert(t, db, bare.ID, absenceTypes, map[string]any{"name": "Sick"})

		if n, err := db.Migrate(ctx); err != nil || n != 0 {
			t.Fatalf("second migrate: %d applied, %v", n, err)
		}
		for _, tn := range []store.Tenant{kept, old, bare} {
			if got := publicHolidays(t, db, tn.ID); len(got) != 1 {
				t.Errorf("%s has %d PublicHoliday types after migrating twice, want 1", tn.Slug, len(got))
			}
		}
	})
}

// publicHolidays finds a tenant's PublicHoliday types as the service does.
func publicHolidays(t *testing.T, db *store.DB, tenantID int64) []store.Record {
	t.Helper()
	recs, err := db.FindRecords(context.Background(), db, tenantID, absenceTypes,
		&query.Cond{Field: query.Field{Name: "name"}, Op: query.Eq, Values: []query.Value{{Kind: query.KindString, Str: "PublicHoliday"}}}, 10)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// checkShape compares a migrated record with what InsertRecord writes.
func checkShape(t *testing.T, db *store.DB, tenantID int64, rec store.Record, start time.Time) {
	t.Helper()
	var createdAt, updatedAt string
	if err := db.QueryRowContext(context.Background(),
		`SELECT created_at, updated_at FROM records WHERE tenant_id = $1 AND id = $2`, tenantID, rec.ID).Scan(&createdAt, &updatedAt); err != nil {
		t.Fatal(err)
	}
	at, err := time.Parse(store.TimeFormat, createdAt)
	if err != nil || store.Timestamp(at) != createdAt || updatedAt != createdAt {
		t.Errorf("created_at %q, updated_at %q: want equal %s timestamps (%v)", createdAt, updatedAt, store.TimeFormat, err)
	}
	if at.Before(start) || at.After(time.Now()) {
		t.Errorf("created_at %s is not the time of the migration (from %s)", createdAt, start.Format(store.TimeFormat))
	}
	want, err := json.Marshal(map[string]any{"id": rec.ID, "name": "PublicHoliday", "createdAt": createdAt, "updatedAt": createdAt})
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(rec.Doc, want) {
		t.Errorf("document %s, want %s", rec.Doc, want)
	}
	// SQLite keeps the text as written: byte for byte what the store writes.
	if db.Engine() == "sqlite" && string(rec.Doc) != string(want) {
		t.Errorf("document text %s, want %s", rec.Doc, want)
	}
}

// lastIDs reads where id allocation stands: per tenant on SQLite, under
// key 0 for PostgreSQL's shared sequence.
func lastIDs(t *testing.T, db *store.DB, tenantIDs ...int64) map[int64]int64 {
	t.Helper()
	ctx := context.Background()
	out := map[int64]int64{}
	if db.Engine() == "postgres" {
		var v int64
		if err := db.QueryRowContext(ctx, `SELECT last_value FROM record_ids`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		out[0] = v
		return out
	}
	for _, id := range tenantIDs {
		var v int64
		err := db.QueryRowContext(ctx, `SELECT COALESCE((SELECT last_id FROM tenant_sequences WHERE tenant_id = $1), 0)`, id).Scan(&v)
		if err != nil {
			t.Fatal(err)
		}
		out[id] = v
	}
	return out
}

func insert(t *testing.T, db *store.DB, tenantID int64, c store.Collection, doc map[string]any) {
	t.Helper()
	ctx := context.Background()
	if err := db.Tx(ctx, func(q store.Querier) error {
		id, err := db.NewID(ctx, q, tenantID)
		if err != nil {
			return err
		}
		_, err = db.InsertRecord(ctx, q, tenantID, c, id, doc)
		return err
	}); err != nil {
		t.Fatalf("insert %s: %v", c.Resource, err)
	}
}

// openAt opens the empty database of dsn migrated up to version, closed
// when the test ends.
func openAt(t *testing.T, dsn string, version int64) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.MigrateTo(ctx, version); err != nil {
		t.Fatal(err)
	}
	return db
}

func exec(t *testing.T, db *store.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

func sameJSON(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	ax, _ := json.Marshal(x)
	by, _ := json.Marshal(y)
	return string(ax) == string(by)
}

func docs(recs []store.Record) string {
	b, _ := json.Marshal(recs)
	return string(b)
}

// engine names the migrations folder of a backend.
func engine(b testenv.Backend) string {
	if b.Name == "postgres" {
		return "postgres"
	}
	return "sqlite"
}
