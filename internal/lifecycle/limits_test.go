package lifecycle_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestExportRefusesLongRows: a tenant with a row longer than an import
// reads (8 MiB) is not exported at all, the export naming the table and
// the row, so that every archive written can be imported.
func TestExportRefusesLongRows(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		db := srv.Service.DB
		if err := db.Tx(ctx, func(q store.Querier) error {
			id, err := db.NewID(ctx, q, tn.ID)
			if err == nil {
				_, err = db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "projects"}, id,
					map[string]any{"name": "too long", "pad": strings.Repeat("p", 9<<20)})
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		_, err := lifecycle.Export(ctx, db, srv.Service.Files, "acme", io.Discard, lifecycle.ExportOptions{Secrets: true, TempDir: t.TempDir()})
		if err == nil || !strings.Contains(err.Error(), "records: row") || !strings.Contains(err.Error(), "more than an import reads (8 MiB)") {
			t.Fatalf("export of a tenant with a row of 9 MiB: %v, want a refusal naming the table and row", err)
		}
	})
}
