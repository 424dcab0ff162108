package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// auditNotes writes n notes about records 1..records of the tenant, each
// an update of its record whose before is the record's previous after
// (so that the store keeps it as a pointer to that entry), every
// seventh about record 1, every thirteenth of no record; perTx a
// transaction. docs holds each record's last document across calls.
func auditNotes(t *testing.T, db *store.DB, tenantID int64, n, records, perTx int, docs map[int64][]byte) {
	t.Helper()
	ctx := context.Background()
	for done := 0; done < n; {
		k := min(perTx, n-done)
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range k {
				j := done + i
				id := int64(j%records + 1)
				if j%7 == 0 {
					id = 1
				}
				after := fmt.Appendf(nil, `{"id":%d,"name":"version %d","note":"%s"}`, id, j, "x")
				note := store.AuditNote{Resource: "projects", Record: id, Op: store.OpUpdate, Before: docs[id], After: after}
				if j%13 == 0 {
					note = store.AuditNote{Resource: "settings", Op: store.OpUpdate, Before: []byte(`{"a":1}`), After: []byte(`{"a":2}`)}
				} else {
					docs[id] = after
				}
				if err := db.Audit(ctx, q, tenantID, note); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		done += k
	}
}

// cutAfter returns a timestamp later than the at of every entry of the
// tenant so far, and not later than any entry's to come: the clock's
// next millisecond.
func cutAfter(t *testing.T, db *store.DB, tenantID int64) string {
	t.Helper()
	var last string
	if err := db.QueryRowContext(context.Background(), `SELECT max(at) FROM audit_log WHERE tenant_id = $1`, tenantID).Scan(&last); err != nil {
		t.Fatal(err)
	}
	for {
		if now := store.Timestamp(time.Now()); now > last {
			return now
		}
	}
}

// sameEntries fails unless got are the entries of want from seq from
// on, each as it was (its before included, as GET shows it).
func sameEntries(t *testing.T, got, want []audit.Entry, from int64) {
	t.Helper()
	var kept []audit.Entry
	for _, e := range want {
		if e.Seq >= from {
			kept = append(kept, e)
		}
	}
	if len(got) != len(kept) {
		t.Fatalf("%d entries left, want %d (seq %d on)", len(got), len(kept), from)
	}
	for i := range got {
		g, _ := json.Marshal(got[i])
		w, _ := json.Marshal(kept[i])
		if string(g) != string(w) {
			t.Fatalf("entry %d changed by the purge:\n got %s\nwant %s", kept[i].Seq, g, w)
		}
	}
}

// TestPurgeAudit: a purge deletes a tenant's entries older than its
// cutoff, from the oldest up, in batches (the notes here span several),
// leaves every other entry exactly as GET showed it (the befores that
// pointed at deleted entries included) and the chain verifiable from
// the start the purge keeps (the last entry it removed); a cutoff before every entry deletes nothing, one
// after every entry keeps the newest; other tenants' entries stay.
func TestPurgeAudit(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		other, _ := testenv.TenantIn(t, db, "other", "admin@other.test")
		docs := map[int64][]byte{}
		auditNotes(t, db, other.ID, 50, 5, 50, map[int64][]byte{})
		otherBefore := entriesOf(t, db, other.ID)

		if n, err := db.PurgeAudit(ctx, tn.ID, store.Timestamp(time.Now().Add(-time.Hour))); err != nil || n != 0 {
			t.Fatalf("purge before every entry: %d, %v; want 0", n, err)
		}
		// Two cuts, each inside a batch, the second past several; the
		// last entries update records of all.
		auditNotes(t, db, tn.ID, 2500, 300, 500, docs)
		cut1 := cutAfter(t, db, tn.ID)
		auditNotes(t, db, tn.ID, 3200, 300, 800, docs)
		cut2 := cutAfter(t, db, tn.ID)
		auditNotes(t, db, tn.ID, 700, 300, 100, docs)
		all := entriesOf(t, db, tn.ID)
		// Most befores are pointers to the record's entry before, which
		// a purge must not leave dangling.
		var pointers int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND before_seq IS NOT NULL`, tn.ID).Scan(&pointers); err != nil {
			t.Fatal(err)
		}
		if pointers < len(all)/2 {
			t.Fatalf("%d of %d entries keep their before as a pointer: the test would test no moving of befores", pointers, len(all))
		}
		for _, c := range []struct {
			name string
			cut  string
		}{{"over two batches and a part", cut1}, {"over three more batches and a part", cut2}} {
			var want int64
			for _, e := range all {
				if e.At < c.cut {
					want = e.Seq
				}
			}
			var before int
			if err := db.QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE tenant_id = $1`, tn.ID).Scan(&before); err != nil {
				t.Fatal(err)
			}
			n, err := db.PurgeAudit(ctx, tn.ID, c.cut)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			left := entriesOf(t, db, tn.ID) // verifies the chain
			if int(n) != before-len(left) || left[0].Seq != want+1 {
				t.Fatalf("%s: %d purged, %d of %d left from seq %d; want the entries up to seq %d gone", c.name, n, len(left), before, left[0].Seq, want)
			}
			sameEntries(t, left, all, want+1)
			// The chain left starts after the last entry removed, as
			// the purge keeps it.
			if start, err := db.AuditStart(ctx, db, tn.ID); err != nil || start != (audit.Head{Seq: want, Hash: all[want-1].Hash}) {
				t.Fatalf("%s: the chain's start is %+v (%v), want seq %d and its hash", c.name, start, err, want)
			}
		}

		// The newest entry stays, however old.
		n, err := db.PurgeAudit(ctx, tn.ID, store.Timestamp(time.Now().Add(time.Hour)))
		left := entriesOf(t, db, tn.ID)
		if err != nil || len(left) != 1 || n == 0 {
			t.Fatalf("purge after every entry: %d, %v, %d left; want all but one gone", n, err, len(left))
		}
		sameEntries(t, left, all, all[len(all)-1].Seq)
		if n, err := db.PurgeAudit(ctx, tn.ID, store.Timestamp(time.Now().Add(time.Hour))); err != nil || n != 0 {
			t.Fatalf("purge of the newest entry alone: %d, %v; want 0", n, err)
		}
		sameEntries(t, entriesOf(t, db, other.ID), otherBefore, 1)
	})
}

// TestAuditTenants: the tenants with audit entries, in order; a tenant
// without any is not one of them.
func TestAuditTenants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		db := testenv.OpenDB(t, b)
		a, _ := testenv.TenantIn(t, db, "a", "admin@a.test")
		testenv.BareTenant(t, db, "bare")
		c, _ := testenv.TenantIn(t, db, "c", "admin@c.test")
		got, err := db.AuditTenants(context.Background())
		if err != nil || fmt.Sprint(got) != fmt.Sprint([]int64{a.ID, c.ID}) {
			t.Errorf("AuditTenants = %v, %v; want %v", got, err, []int64{a.ID, c.ID})
		}
	})
}
