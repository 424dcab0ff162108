package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestPutRecords: records created and updated together (PutAll, more
// than one statement's rows of each) are what Insert and Update write:
// they read back as answered, with their tags, updates keeping their id
// and creation time; each gets its change, in the order of the puts, and
// its audit entry, an update's showing the record before. A put of a
// record the tenant does not have fails whole, and so does a record put
// twice. Existing names the tenant's records of the collection alone.
func TestPutRecords(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "puts", "admin@puts.test")
		other, _ := testenv.TenantIn(t, db, "others", "admin@others.test")
		days := store.Collection{Table: "records", Resource: "project-days"}
		projects := store.Collection{Table: "records", Resource: "projects"}
		var old []int64
		err := db.Tx(ctx, func(q store.Querier) error {
			docs := make([]map[string]any, 110)
			for i := range docs {
				docs[i] = map[string]any{"project": 1, "day": fmt.Sprintf("2025-%02d-%02d", 1+i/28, 1+i%28), "validationStatus": "NOTAPPROVED"}
			}
			var err error
			old, err = db.InsertRecords(ctx, q, tn.ID, days, docs)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		before := map[int64]map[string]any{}
		for _, id := range old {
			before[id] = decoded(t, readBack(t, db, tn.ID, days, id).Doc)
		}
		cursor, _, _ := db.ChangeWindow(ctx, tn.ID)
		auditStart := len(entriesOf(t, db, tn.ID))

		// 30 new records among the 110 updates, the first updates' rows
		// locked by a read beforehand.
		var puts []store.Put
		for i, id := range old {
			if i%4 == 0 && len(puts) < 140 {
				puts = append(puts, store.Put{Doc: map[string]any{"project": 100 + len(puts), "day": "2026-01-02", "n": len(puts)}})
			}
			puts = append(puts, store.Put{ID: id, CreatedAt: before[id]["createdAt"].(string),
				Doc: map[string]any{"project": 1, "day": before[id]["day"], "validationStatus": "APPROVED"}})
		}
		for len(puts) < 140 {
			puts = append(puts, store.Put{Doc: map[string]any{"project": 100 + len(puts), "day": "2026-02-01", "n": len(puts)}})
		}
		var recs []store.Record
		err = db.Tx(ctx, func(q store.Querier) error {
			r := db.Records(q, tn.ID, days)
			if _, err := r.FindLocked(ctx, nil, 10); err != nil {
				return err
			}
			var err error
			recs, err = r.PutAll(ctx, puts)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != len(puts) {
			t.Fatalf("%d records for %d puts", len(recs), len(puts))
		}
		changes, err := db.ChangesAfter(ctx, tn.ID, cursor, nil, 1000)
		if err != nil || len(changes) != len(puts) {
			t.Fatalf("%d changes (%v), want %d", len(changes), err, len(puts))
		}
		entries := entriesOf(t, db, tn.ID)[auditStart:]
		if len(entries) != len(puts) {
			t.Fatalf("%d audit entries, want %d", len(entries), len(puts))
		}
		for i, p := range puts {
			rec := recs[i]
			got := readBack(t, db, tn.ID, days, rec.ID)
			doc := decoded(t, rec.Doc)
			if !reflect.DeepEqual(decoded(t, got.Doc), doc) || got.Tag() != rec.ETag || rec.ETag == "" {
				t.Fatalf("put %d: answered %s %s, reads %s %s", i, rec.Doc, rec.ETag, got.Doc, got.Tag())
			}
			op := store.OpUpdate
			if p.ID == 0 {
				op = store.OpCreate
				if doc["createdAt"] != doc["updatedAt"] || doc["n"] != float64(i) {
					t.Errorf("created %d: %s", i, rec.Doc)
				}
			} else if rec.ID != p.ID || doc["createdAt"] != before[p.ID]["createdAt"] || doc["validationStatus"] != "APPROVED" || doc["updatedAt"] == doc["createdAt"] {
				t.Errorf("updated %d: %s, was %v", i, rec.Doc, before[p.ID])
			}
			if c := changes[i]; c.RecordID != rec.ID || c.Op != op || !reflect.DeepEqual(decoded(t, c.Doc), doc) {
				t.Errorf("change %d: %s %d %s, want %s %d %s", i, c.Op, c.RecordID, c.Doc, op, rec.ID, rec.Doc)
			}
			e := entries[i]
			if e.Record == nil || *e.Record != rec.ID || e.Op != op || !reflect.DeepEqual(decoded(t, e.After), doc) {
				t.Errorf("audit entry %d: %s %v %s, want %s %d %s", i, e.Op, e.Record, e.After, op, rec.ID, rec.Doc)
			}
			if p.ID != 0 && !reflect.DeepEqual(decoded(t, e.Before), before[p.ID]) {
				t.Errorf("audit entry %d: before %s, want %v", i, e.Before, before[p.ID])
			}
		}

		// Refused whole: an unknown record, a record put twice.
		last, _, _ := db.ChangeWindow(ctx, tn.ID)
		for name, bad := range map[string][]store.Put{
			"unknown": {{Doc: map[string]any{"n": 1}}, {ID: old[0], Doc: map[string]any{"n": 2}}, {ID: 999999999, Doc: map[string]any{"n": 3}}},
			"twice":   {{ID: old[0], Doc: map[string]any{"n": 2}}, {Doc: map[string]any{"n": 1}}, {ID: old[0], Doc: map[string]any{"n": 3}}},
		} {
			err := db.Tx(ctx, func(q store.Querier) error {
				_, err := db.Records(q, tn.ID, days).PutAll(ctx, bad)
				return err
			})
			if err == nil || (name == "unknown" && !errors.Is(err, store.ErrNotFound)) {
				t.Errorf("%s: %v", name, err)
			}
		}
		if now, _, _ := db.ChangeWindow(ctx, tn.ID); now != last {
			t.Errorf("refused puts recorded changes: %d → %d", last, now)
		}
		if got := readBack(t, db, tn.ID, days, old[0]); !reflect.DeepEqual(decoded(t, got.Doc), decoded(t, recs[1].Doc)) {
			t.Errorf("refused puts changed %d: %s", old[0], got.Doc)
		}

		// One new record alone.
		var one []store.Record
		if err := db.Tx(ctx, func(q store.Querier) error {
			var err error
			one, err = db.Records(q, tn.ID, days).PutAll(ctx, []store.Put{{Doc: map[string]any{"project": 9, "day": "2026-03-02"}}})
			return err
		}); err != nil || len(one) != 1 {
			t.Fatalf("one put: %v %v", one, err)
		}
		if got := readBack(t, db, tn.ID, days, one[0].ID); !reflect.DeepEqual(decoded(t, got.Doc), decoded(t, one[0].Doc)) || got.Tag() != one[0].ETag {
			t.Errorf("one put: answered %s %s, reads %s %s", one[0].Doc, one[0].ETag, got.Doc, got.Tag())
		}
		if cs, err := db.ChangesAfter(ctx, tn.ID, last, nil, 10); err != nil || len(cs) != 1 || cs[0].RecordID != one[0].ID || cs[0].Op != store.OpCreate {
			t.Errorf("one put: changes %+v (%v)", cs, err)
		}

		var project, foreign int64
		for _, x := range []struct {
			tenant int64
			id     *int64
		}{{tn.ID, &project}, {other.ID, &foreign}} {
			if err := db.Tx(ctx, func(q store.Querier) error {
				rec, err := db.Records(q, x.tenant, projects).Insert(ctx, map[string]any{"name": "p"})
				*x.id = rec.ID
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		have, err := db.Records(nil, tn.ID, projects).Existing(ctx, []int64{project, old[0], foreign, 999999999, project})
		if err != nil || !reflect.DeepEqual(have, map[int64]bool{project: true}) {
			t.Errorf("Existing: %v (%v), want only %d", have, err, project)
		}
		if have, err := db.Records(nil, tn.ID, projects).Existing(ctx, nil); err != nil || len(have) != 0 {
			t.Errorf("Existing of none: %v (%v)", have, err)
		}
	})
}

// TestLockAll: the locks of several keys are taken together, a key given
// twice among them once, and held until the transaction ends: on
// PostgreSQL the keys' rows are locked; others wait for them.
func TestLockAll(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "locks", "admin@locks.test")
		keys := []string{"day:1", "day:2", "day:1", "day:3"}
		lockAll := func(check func()) {
			t.Helper()
			err := db.Tx(ctx, func(q store.Querier) error {
				if err := db.LockAll(ctx, q, tn.ID, nil); err != nil {
					return err
				}
				if err := db.LockAll(ctx, q, tn.ID, keys); err != nil {
					return err
				}
				check()
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		// locked reports whether another connection finds the key's row
		// locked.
		locked := func(key string) bool {
			var one int
			err := db.QueryRowContext(ctx, `SELECT 1 FROM locks WHERE tenant_id = $1 AND key = $2 FOR UPDATE NOWAIT`, tn.ID, lockKey(key)).Scan(&one)
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && pgErr.Code == "55P03" {
				return true
			}
			if err != nil {
				t.Fatalf("key %s: %v", key, err)
			}
			return false
		}
		lockAll(func() {}) // the first use makes the keys' rows
		if b.Name != "postgres" {
			return
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO locks (tenant_id, key) VALUES ($1, $2)`, tn.ID, lockKey("day:4")); err != nil {
			t.Fatal(err)
		}
		lockAll(func() {
			for _, k := range append(keys, "day:4") {
				if got := locked(k); got != (k != "day:4") {
					t.Errorf("key %s: locked %v", k, got)
				}
			}
		})
		for _, k := range keys {
			if locked(k) {
				t.Errorf("key %s: locked after the commit", k)
			}
		}
	})
}

// lockKey is the store's key of a lock's name in the locks table.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

func readBack(t *testing.T, db *store.DB, tenantID int64, c store.Collection, id int64) store.Record {
	t.Helper()
	rec, err := db.Records(nil, tenantID, c).Get(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func decoded(t *testing.T, doc []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatalf("%s: %v", doc, err)
	}
	return m
}
