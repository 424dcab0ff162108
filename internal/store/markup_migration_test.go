package store_test

import (
	"context"
	"fmt"
	"testing"

	"planwerk/internal/etag"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestMarkupMigration: migration 00028 writes the markup escapes that
// encoding/json put into SQLite's stored documents (records and users)
// as the characters themselves, and nothing else: an escaped backslash
// before "u003c" stays, other escapes stay, the tag read is the
// content's as before. On PostgreSQL, whose jsonb keeps no escapes, the
// documents are as they were.
func TestMarkupMigration(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := openAt(t, testenv.DSN(t, b), 27)
		tn, user := testenv.TenantIn(t, db, "markup", "admin@markup.test")
		admin := user.ID
		const escaped = `{"createdAt":"2026-12-01T00:00:00.000Z","id":%d,"name":"\u003cb\u003e Tom \u0026 Jerry \u003c/b\u003e","path":"C:\\u003cdir","quote":"\"\u00e4\n","updatedAt":"2026-12-01T00:00:00.000Z"}`
		const want = `{"createdAt":"2026-12-01T00:00:00.000Z","id":%d,"name":"<b> Tom & Jerry </b>","path":"C:\\u003cdir","quote":"\"\u00e4\n","updatedAt":"2026-12-01T00:00:00.000Z"}`
		var id int64
		if err := db.Tx(ctx, func(q store.Querier) (err error) {
			id, err = db.NewID(ctx, q, tn.ID)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		exec(t, db, `INSERT INTO records (tenant_id, id, resource, doc, created_at, updated_at) VALUES ($1, $2, 'projects', $3, $4, $4)`,
			tn.ID, id, fmt.Sprintf(escaped, id), "2026-12-01T00:00:00.000Z")
		exec(t, db, `UPDATE users SET doc = $1 WHERE tenant_id = $2 AND id = $3`, fmt.Sprintf(escaped, admin), tn.ID, admin)
		storedDoc := func(table string, rowID int64) string {
			var doc string
			if err := db.QueryRowContext(ctx, `SELECT `+db.StoredDoc()+` FROM `+table+` WHERE tenant_id = $1 AND id = $2`, tn.ID, rowID).Scan(&doc); err != nil {
				t.Fatal(err)
			}
			return doc
		}
		before := map[string]string{"records": storedDoc("records", id), "users": storedDoc("users", admin)}
		if _, err := db.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		for table, rowID := range map[string]int64{"records": id, "users": admin} {
			got := storedDoc(table, rowID)
			switch {
			case b.Name == "sqlite" && got != fmt.Sprintf(want, rowID):
				t.Errorf("%s: %s\nwant %s", table, got, fmt.Sprintf(want, rowID))
			case b.Name == "postgres" && got != before[table]:
				t.Errorf("%s changed on PostgreSQL: %s, was %s", table, got, before[table])
			}
			if etag.Of([]byte(got)) != etag.Of([]byte(before[table])) {
				t.Errorf("%s: the tag of the document changed", table)
			}
		}
		rec, err := db.Records(db, tn.ID, store.Collection{Table: "records", Resource: "projects"}).Get(ctx, id)
		if err != nil || rec.Tag() != etag.Of([]byte(before["records"])) {
			t.Errorf("the record read after the step: %v, tag %s, want %s", err, rec.Tag(), etag.Of([]byte(before["records"])))
		}
	})
}
