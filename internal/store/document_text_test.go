package store_test

import (
	"context"
	"testing"

	"planwerk/internal/query"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestDocumentText: on PostgreSQL reads answer with the document text
// stored at write time. It must be exactly what rendering the jsonb gives,
// for rows written before the column existed (the migration fills it) and
// after every kind of write, the bulk jsonb_set included.
func TestDocumentText(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		if engine(b) != "postgres" {
			t.Skip("SQLite stores the document as text already")
		}
		ctx := context.Background()
		db, err := store.Open(ctx, testenv.DSN(t, b))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if err := db.MigrateTo(ctx, 13); err != nil {
			t.Fatal(err)
		}
		applyLater(t, db, b, "00016_distribution.sql", "00019_change_sizes.sql", "00020_audit_log.sql", "00022_tenant_id_floor.sql", etagStep) // the tenant's creation locks a row of locks, sizes its changes and stores tags
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		days := store.Collection{Table: "records", Resource: "project-days"}
		insert(t, db, tn.ID, days, map[string]any{"project": 7, "day": "2026-01-02", "validationStatus": "NOTAPPROVED",
			"note": "<b>&</b> ü \u2028", "nested": map[string]any{"z": 1.5, "a": []any{1e21, nil, true}}})
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		same := func(when string) {
			t.Helper()
			var differ, rows int
			err := db.QueryRowContext(ctx, `SELECT count(*) FILTER (WHERE doc_text IS DISTINCT FROM doc::text), count(*) FROM records`).Scan(&differ, &rows)
			if err != nil {
				t.Fatal(err)
			}
			if differ != 0 || rows == 0 {
				t.Fatalf("%s: %d of %d rows' stored text is not doc::text", when, differ, rows)
			}
		}
		same("after the migration")

		insert(t, db, tn.ID, days, map[string]any{"project": 8, "day": "2026-01-03", "validationStatus": "NOTAPPROVED"})
		same("after an insert")
		var id int64
		if err := db.QueryRowContext(ctx, `SELECT min(id) FROM records WHERE resource = 'project-days'`).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if err := db.Tx(ctx, func(q store.Querier) error {
			_, err := db.UpdateRecord(ctx, q, tn.ID, days, id, "2026-01-01T00:00:00.000Z", map[string]any{"project": 7, "day": "2026-01-02", "validationStatus": "NOTAPPROVED", "note": "changed"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		same("after an update")
		where := &query.Cond{Field: query.Field{Name: "project"}, Op: query.Eq, Values: []query.Value{query.Int(8)}}
		if err := db.Tx(ctx, func(q store.Querier) error {
			n, err := db.SetAttribute(ctx, q, tn.ID, days, where, "validationStatus", "APPROVED")
			if err == nil && n != 1 {
				t.Errorf("SetAttribute changed %d records, want 1", n)
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		same("after setting an attribute")

		var want string
		if err := db.QueryRowContext(ctx, `SELECT doc::text FROM records WHERE id = $1`, id).Scan(&want); err != nil {
			t.Fatal(err)
		}
		got, err := db.Records(nil, tn.ID, days).Get(ctx, id)
		if err != nil || string(got.Doc) != want {
			t.Fatalf("Get = %s, %v; want %s", got.Doc, err, want)
		}
	})
}
