package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"

	"planwerk/internal/audit"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// entriesOf reads the tenant's whole audit log and verifies its chain.
func entriesOf(t *testing.T, db *store.DB, tenantID int64) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	start, err := db.AuditStart(context.Background(), db, tenantID)
	if err != nil {
		t.Fatal(err)
	}
	v := audit.NewVerifier(start)
	err = db.AuditEntries(context.Background(), tenantID, store.AuditFilter{}, func(e audit.Entry) error {
		out = append(out, e)
		return v.Next(e)
	})
	if err == nil {
		err = v.End()
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuditOfWrites: creates, updates (one of them twice in a
// transaction), deletes and notes become entries in commit order, each
// with its record before and after, its changed attributes and its
// source, linked into a chain that verifies; an update's before is the
// after of the record's entry before it.
func TestAuditOfWrites(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		user := int64(5)
		ctx := audit.WithSource(context.Background(), audit.Source{Actor: audit.Actor{User: &user, Via: audit.ViaAPI}, RequestID: "r1", Reason: "weil"})
		start := len(entriesOf(t, db, tn.ID))
		projects := store.Collection{Table: "records", Resource: "projects"}
		var id int64
		err := db.Tx(ctx, func(q store.Querier) error {
			rec, err := db.Records(q, tn.ID, projects).Insert(ctx, map[string]any{"name": "p", "budget": 3})
			id = rec.ID
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"q", "r"} {
			err := db.Tx(ctx, func(q store.Querier) error {
				r := db.Records(q, tn.ID, projects)
				cur, err := r.Lock(ctx, id)
				if err != nil {
					return err
				}
				var m map[string]any
				_ = json.Unmarshal(cur.Doc, &m)
				m["name"] = name
				if _, err := r.Update(ctx, id, fmt.Sprint(m["createdAt"]), m); err != nil {
					return err
				}
				m["budget"] = 4
				_, err = r.Update(ctx, id, fmt.Sprint(m["createdAt"]), m)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		err = db.Tx(ctx, func(q store.Querier) error {
			if err := db.Audit(ctx, q, tn.ID, store.AuditNote{Resource: "settings", Op: store.OpUpdate, Before: []byte(`{"a":1}`), After: []byte(`{"a":2}`)}); err != nil {
				return err
			}
			return db.Records(q, tn.ID, projects).Delete(ctx, id)
		})
		if err != nil {
			t.Fatal(err)
		}
		es := entriesOf(t, db, tn.ID)[start:]
		ops := []string{}
		for _, e := range es {
			// updatedAt changes unless two writes share a millisecond.
			changed := slices.DeleteFunc(slices.Clone(e.Changed), func(s string) bool { return s == "updatedAt" })
			ops = append(ops, e.Resource+" "+e.Op+" "+fmt.Sprint(changed))
			if e.RequestID == nil || *e.RequestID != "r1" || e.Reason == nil || *e.Reason != "weil" || e.Actor.User == nil || *e.Actor.User != 5 {
				t.Errorf("entry %d: source %+v %v %v", e.Seq, e.Actor, e.RequestID, e.Reason)
			}
		}
		want := []string{
			"projects create [budget createdAt id name]",
			"projects update [budget name]",
			"projects update [name]",
			"settings update [a]", // in the order the transaction made them
			"projects delete [budget createdAt id name]",
		}
		if !slices.Equal(ops, want) {
			t.Fatalf("entries:\n%q\nwant\n%q", ops, want)
		}
		for i := 1; i < 3; i++ {
			if string(es[i].Before) != string(es[i-1].After) {
				t.Errorf("entry %d: before %s, the entry before's after %s", es[i].Seq, es[i].Before, es[i-1].After)
			}
		}
		if string(es[4].Before) != string(es[2].After) || es[4].After != nil {
			t.Errorf("delete: before %s after %s", es[4].Before, es[4].After)
		}
		// Each version is stored once: only the settings' before, which
		// follows no entry of a record, is stored in its entry.
		var stored int
		if err := db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND seq > $2 AND before IS NOT NULL`,
			tn.ID, es[0].Seq).Scan(&stored); err != nil {
			t.Fatal(err)
		}
		if stored != 1 {
			t.Errorf("%d entries store their before, want 1 (the settings')", stored)
		}
	})
}

// TestAuditChainUnderConcurrentWriters: writers of one tenant on two
// handles of the database make a chain without gaps that verifies.
func TestAuditChainUnderConcurrentWriters(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		dsn := testenv.MigratedDSN(t, b)
		db, other := testenv.Open(t, dsn), testenv.Open(t, dsn)
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		start := len(entriesOf(t, db, tn.ID))
		projects := store.Collection{Table: "records", Resource: "projects"}
		var wg sync.WaitGroup
		errc := make(chan error, 8)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := db
				if w%2 == 1 {
					h = other
				}
				for i := range 20 {
					err := h.Tx(context.Background(), func(q store.Querier) error {
						_, err := h.Records(q, tn.ID, projects).Insert(context.Background(), map[string]any{"name": fmt.Sprint(w, i)})
						return err
					})
					if err != nil {
						errc <- err
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errc)
		for err := range errc {
			t.Fatal(err)
		}
		if n := len(entriesOf(t, db, tn.ID)) - start; n != 160 {
			t.Errorf("%d entries, want 160", n)
		}
	})
}
