package store_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// TestBulkLoad: several tenants created in one transaction, and records
// inserted in bulk, are what users.Tables.CreateTenant and InsertRecord write: their
// records read back stamped, under consecutive fresh ids, each with its
// change; and the e-mail check still holds across the batch.
func TestBulkLoad(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		days := store.Collection{Table: "records", Resource: "project-days"}
		var tenants []store.Tenant
		ids := map[int64][]int64{}
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range 3 {
				tn, _, err := tables(db).AddTenant(ctx, q, fmt.Sprintf("bulk%d", i), "Bulk", users.NewAdmin{Email: fmt.Sprintf("a@bulk%d.test", i), PasswordHash: testenv.FakeHash})
				if err != nil {
					return err
				}
				tenants = append(tenants, tn)
				docs := make([]map[string]any, 450) // more than one statement's rows
				for j := range docs {
					docs[j] = map[string]any{"project": j % 7, "day": fmt.Sprintf("2024-%02d-%02d", 1+j/7/28, 1+j/7%28), "n": j}
				}
				if ids[tn.ID], err = db.InsertRecords(ctx, q, tn.ID, days, docs); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, tn := range tenants {
			got := ids[tn.ID]
			if len(got) != 450 {
				t.Fatalf("%d ids", len(got))
			}
			last, _, _ := db.ChangeWindow(ctx, tn.ID)
			cs, err := db.ChangesAfter(ctx, tn.ID, 0, []string{"project-days"}, 1000)
			if err != nil || len(cs) != 450 || last != 451 { // and the admin's
				t.Fatalf("tenant %s: %d changes, last %d (%v), want 450 and 451", tn.Slug, len(cs), last, err)
			}
			for j, id := range got {
				if j > 0 && id <= got[j-1] {
					t.Fatalf("ids out of order: %v", got[j-1:j+1])
				}
				rec, err := db.Records(nil, tn.ID, days).Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				var doc struct {
					ID                   int64
					N                    int
					CreatedAt, UpdatedAt string
				}
				if err := json.Unmarshal(rec.Doc, &doc); err != nil || doc.ID != id || doc.N != j || doc.CreatedAt == "" || doc.UpdatedAt != doc.CreatedAt {
					t.Fatalf("record %d: %s", id, rec.Doc)
				}
				if cs[j].RecordID != id || cs[j].Op != store.OpCreate || string(cs[j].Doc) != string(rec.Doc) {
					t.Fatalf("change %d: %+v, want the create of %s", j, cs[j], rec.Doc)
				}
			}
		}
		// The next single insert goes on after the bulk ids.
		var next int64
		if err := db.Tx(ctx, func(q store.Querier) error {
			var err error
			next, err = db.NewID(ctx, q, tenants[0].ID)
			return err
		}); err != nil || next <= ids[tenants[0].ID][449] {
			t.Errorf("next id %d (%v), want above the bulk's", next, err)
		}
		// An admin address of another tenant is refused within a batch too.
		err = db.Tx(ctx, func(q store.Querier) error {
			_, _, err := tables(db).AddTenant(ctx, q, "again", "Again", users.NewAdmin{Email: "A@bulk1.test", PasswordHash: testenv.FakeHash})
			return err
		})
		if !errors.Is(err, store.ErrConflict) {
			t.Errorf("a taken admin address: %v, want ErrConflict", err)
		}
	})
}
