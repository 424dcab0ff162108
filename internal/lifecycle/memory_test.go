//go:build system

package lifecycle_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/config"
	"planwerk/internal/filestore"
	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestArchiveMemory: exporting a tenant of 96 records of 1 MiB, one of
// 7 MiB and a file of 96 MiB, and importing it into a fresh database,
// each grows the heap by less than 64 MiB: rows go through a spool a row
// at a time, files through a buffer. So does the refusal of archives
// made to take memory: a manifest with an unknown member of 128 MiB, or a
// member entry of that size, and a row of 128 MiB.
func TestArchiveMemory(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, func(c *config.Config) { c.MaxUploadBytes = 100 << 20 })
		tn := srv.CreateTenant(t, "mem")
		db := srv.Service.DB
		pad := strings.Repeat("m", 1<<20)
		// One record of 7 MiB, whose row (and its audit entry's) is
		// nearly as long as an import reads.
		if err := db.Tx(ctx, func(q store.Querier) error {
			id, err := db.NewID(ctx, q, tn.ID)
			if err == nil {
				_, err = db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "projects"}, id,
					map[string]any{"name": "huge", "pad": strings.Repeat("h", 7<<20)})
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
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

		for _, c := range []struct {
			name string
			make func(w io.Writer) error
			want string
		}{
			{"an unknown manifest member of 128 MiB", func(w io.Writer) error {
				return writeCrafted(w, `{"format":"planwerk-tenant-archive","version":2,"junk":"`, 128<<20, `","members":[]}`)
			}, "the manifest's header is larger"},
			{"a member entry of 128 MiB", func(w io.Writer) error {
				return writeCrafted(w, `{"format":"planwerk-tenant-archive","version":2,"secrets":true,"tenant":{"slug":"x","name":"x"},"members":[{"name":"`,
					128<<20, `"}]}`)
			}, "an entry of the manifest's members is larger"},
			{"a row of 128 MiB", writeLongRow, "longer than"},
		} {
			path := filepath.Join(dir, "crafted")
			f, err := os.Create(path)
			if err == nil {
				err = c.make(f)
			}
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			var ierr error
			grew := testenv.HeapPeak(func() {
				f, err := os.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				_, ierr = lifecycle.Import(ctx, testenv.OpenDB(t, b), files, f, lifecycle.ImportOptions{Slug: "crafted", TempDir: dir})
			})
			t.Logf("%s: heap growth %d MiB, %v", c.name, grew>>20, ierr)
			if ierr == nil || !strings.Contains(ierr.Error(), c.want) {
				t.Errorf("%s: import %v, want a refusal saying %q", c.name, ierr, c.want)
			}
			if grew > 64<<20 {
				t.Errorf("%s: the heap grew by %d MiB; at most 64 MiB", c.name, grew>>20)
			}
		}
	})
}

// writeCrafted writes an archive whose manifest is head, n bytes "a" and
// tail: the bytes are generated as they are compressed, never held.
func writeCrafted(w io.Writer, head string, n int64, tail string) error {
	zw, err := zstd.NewWriter(w)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "manifest.json", Size: int64(len(head)) + n + int64(len(tail)), Mode: 0o600}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, head); err != nil {
		return err
	}
	if _, err := io.Copy(tw, io.LimitReader(repeat('a'), n)); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, tail); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// writeLongRow writes an archive whose tenant member is one row of 128
// MiB, listed in the manifest with its size and SHA-256.
func writeLongRow(w io.Writer) error {
	const n = 128 << 20
	head, tail := `{"slug":"x","name":"`, `"}`+"\n"
	row := func() io.Reader {
		return io.MultiReader(strings.NewReader(head), io.LimitReader(repeat('a'), n), strings.NewReader(tail))
	}
	h := sha256.New()
	if _, err := io.Copy(h, row()); err != nil {
		return err
	}
	size := int64(len(head)) + n + int64(len(tail))
	manifest := fmt.Sprintf(`{"format":"planwerk-tenant-archive","version":2,"secrets":true,"tenant":{"slug":"x","name":"x"},"members":[{"name":"tenant.jsonl","size":%d,"sha256":"%x","rows":1}]}`,
		size, h.Sum(nil))
	zw, err := zstd.NewWriter(w)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	for _, m := range []struct {
		name string
		size int64
		r    io.Reader
	}{{"manifest.json", int64(len(manifest)), strings.NewReader(manifest)}, {"tenant.jsonl", size, row()}} {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: m.name, Size: m.size, Mode: 0o600}); err != nil {
			return err
		}
		if _, err := io.Copy(tw, m.r); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

// repeat reads the byte c for ever.
type repeat byte

func (r repeat) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(r)
	}
	return len(p), nil
}
