//go:build system

package lifecycle_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/filestore"
	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestArchiveMemory: exporting a tenant of 96 records of 1 MiB and a
// file of 96 MiB, and importing it into a fresh database, each grows the
// heap by less than 64 MiB: rows go through a spool a row at a time,
// files through a buffer.
func TestArchiveMemory(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, func(c *config.Config) { c.MaxUploadBytes = 100 << 20 })
		tn := srv.CreateTenant(t, "mem")
		db := srv.Service.DB
		pad := strings.Repeat("m", 1<<20)
		for range 12 {
			err := db.Tx(ctx, func(q store.Querier) error {
				for i := range 8 {
					id, err := db.NewID(ctx, q, tn.ID)
					if err != nil {
						return err
					}
					doc := map[string]any{"name": fmt.Sprint("big ", i), "pad": pad}
					if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "projects"}, id, doc); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		admin := srv.SignIn(t, tn)
		_, doc := admin.Document(t)
		admin.UploadFile(t, "document", doc, testenv.Part{Filename: "big.bin", Data: testenv.Data(7, 96<<20)})

		dir := t.TempDir()
		archive := filepath.Join(dir, "mem.tar.zst")
		var sum lifecycle.Summary
		exported := testenv.HeapPeak(func() {
			f, err := os.Create(archive)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if sum, err = lifecycle.Export(ctx, db, srv.Service.Files, "mem", f, lifecycle.ExportOptions{Secrets: true, TempDir: dir}); err != nil {
				t.Fatal(err)
			}
		})
		if sum.Rows["records"] < 96 || sum.FileBytes != 96<<20 {
			t.Fatalf("exported %+v", sum)
		}

		target := testenv.OpenDB(t, b)
		files, err := filestore.Open(ctx, filepath.Join(dir, "files"))
		if err != nil {
			t.Fatal(err)
		}
		imported := testenv.HeapPeak(func() {
			f, err := os.Open(archive)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := lifecycle.Import(ctx, target, files, f, lifecycle.ImportOptions{TempDir: dir}); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("heap growth: export %d MiB, import %d MiB (%d MiB of rows, %d MiB of files, archive of %d MiB)",
			exported>>20, imported>>20, 96, sum.FileBytes>>20, sum.Bytes>>20)
		if exported > 64<<20 || imported > 64<<20 {
			t.Errorf("heap grew by %d MiB exporting, %d MiB importing; at most 64 MiB", exported>>20, imported>>20)
		}
	})
}
