package store_test

import (
	"context"
	"encoding/json"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestChangesOfATransaction: a transaction's changes get consecutive
// positions in statement order (also past one statement's rows), and
// several changes of one record merge into what the transaction did.
func TestChangesOfATransaction(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
		last, _, err := db.ChangeWindow(ctx, tn.ID)
		if err != nil {
			t.Fatal(err)
		}
		projects := store.Collection{Table: "records", Resource: "projects"}
		var ids []int64
		var merged, gone int64
		err = db.Tx(ctx, func(q store.Querier) error {
			r := db.Records(q, tn.ID, projects)
			for range 250 {
				rec, err := r.Insert(ctx, map[string]any{"name": "p"})
				if err != nil {
					return err
				}
				ids = append(ids, rec.ID)
			}
			// Created, then changed: one create with the last document.
			merged = ids[0]
			if _, err := r.Update(ctx, merged, "", map[string]any{"name": "changed"}); err != nil {
				return err
			}
			// Created, then deleted: nothing.
			gone = ids[1]
			return r.Delete(ctx, gone)
		})
		if err != nil {
			t.Fatal(err)
		}
		cs, err := db.ChangesAfter(ctx, tn.ID, last, nil, 1000)
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 249 {
			t.Fatalf("%d changes, want 249", len(cs))
		}
		for i, c := range cs {
			if c.Seq != last+1+int64(i) || c.Op != store.OpCreate || c.Resource != "projects" {
				t.Fatalf("change %d: %+v", i, c)
			}
			if c.RecordID == gone {
				t.Errorf("the created and deleted record has a change")
			}
		}
		var first struct{ Name string }
		if err := json.Unmarshal(cs[0].Doc, &first); err != nil || cs[0].RecordID != merged || first.Name != "changed" {
			t.Errorf("the first change: %d %s, want record %d as changed", cs[0].RecordID, cs[0].Doc, merged)
		}
		// A transaction that fails records nothing.
		_ = db.Tx(ctx, func(q store.Querier) error {
			if _, err := db.Records(q, tn.ID, projects).Insert(ctx, map[string]any{"name": "rolled back"}); err != nil {
				return err
			}
			return context.Canceled
		})
		if after, _, _ := db.ChangeWindow(ctx, tn.ID); after != last+249 {
			t.Errorf("a rolled back transaction moved the positions to %d (want %d)", after, last+249)
		}
		// The audit log has an entry for each change, stored many to a
		// statement, in a chain that verifies.
		var creates int
		for _, e := range entriesOf(t, db, tn.ID) {
			if e.Resource == "projects" {
				creates++
			}
		}
		if creates != 249 {
			t.Errorf("%d audit entries of projects, want 249", creates)
		}
	})
}
