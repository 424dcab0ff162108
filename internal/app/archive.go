package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"planwerk/internal/config"
	"planwerk/internal/filestore"
	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// runTenantExport writes a tenant's archive (docs/tenant-archive.md) to
// --out while the service runs: to a temporary name beside it, synced to
// disk, then renamed.
func runTenantExport(ctx context.Context, args []string, stdio IO) (err error) {
	var slug, out string
	cfg, err := adminConfig("tenant export", args, stdio, []config.Group{config.FileStore}, func(fs *flagSet) {
		fs.StringVar(&slug, "slug", "", "the tenant's slug")
		fs.StringVar(&out, "out", "", "file to write the archive to (must not exist)")
	})
	if err != nil {
		return err
	}
	if slug == "" || out == "" {
		return fmt.Errorf("%w: give --slug and --out FILE", ErrUsage)
	}
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s exists: nothing written", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	db, files, err := openStores(ctx, cfg, readOnly)
	if err != nil {
		return err
	}
	defer db.Close()
	dir := filepath.Dir(out)
	tmp, err := os.CreateTemp(dir, filepath.Base(out)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	sum, err := lifecycle.Export(ctx, db, files, slug, w, lifecycle.ExportOptions{Secrets: true, TempDir: dir})
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no tenant %q to export", slug)
	}
	if err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return err
	}
	if err := syncFolder(dir); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "exported tenant %s to %s: %s; %d bytes\n", slug, out, counts(sum), sum.Bytes)
	return nil
}

// runTenantImport creates a tenant from an archive of tenant export, in
// the database and file store it is pointed at, all or nothing.
func runTenantImport(ctx context.Context, args []string, stdio IO) error {
	var in, slug string
	cfg, err := adminConfig("tenant import", args, stdio, []config.Group{config.FileStore}, func(fs *flagSet) {
		fs.StringVar(&in, "in", "", "the archive to import")
		fs.StringVar(&slug, "slug", "", "slug of the new tenant (default: the archive's)")
	})
	if err != nil {
		return err
	}
	if in == "" {
		return fmt.Errorf("%w: give --in FILE", ErrUsage)
	}
	if slug != "" && !tenancy.ValidSlug(slug) {
		return fmt.Errorf("%w: --slug must be 2 to 63 characters of a-z, 0-9 and -", ErrUsage)
	}
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	db, files, err := openStores(ctx, cfg, readWrite)
	if err != nil {
		return err
	}
	defer db.Close()
	sum, err := lifecycle.Import(ctx, db, files, bufio.NewReaderSize(f, 1<<20), lifecycle.ImportOptions{Slug: slug, TempDir: os.TempDir()})
	if err != nil {
		return fmt.Errorf("import %s: %w", in, err)
	}
	fmt.Fprintf(stdio.Stdout, "imported tenant %s (id %d) from %s: %s; %d bytes\n", sum.Slug, sum.TenantID, in, counts(sum), sum.Bytes)
	return nil
}

// counts is the summary's rows of each table and its files.
func counts(sum lifecycle.Summary) string {
	var parts []string
	for _, name := range lifecycle.Tables() {
		parts = append(parts, fmt.Sprintf("%s %d", name, sum.Rows[name]))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(", files %d (%d bytes)", sum.Files, sum.FileBytes)
}

// syncFolder makes a rename in dir durable.
func syncFolder(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// openStores opens the file store cfg names, then its database: a file
// store that cannot be opened stops a command before it changes anything.
func openStores(ctx context.Context, cfg config.Config, mode access) (*store.DB, filestore.Store, error) {
	files, err := filestore.Open(ctx, cfg.Files)
	if err != nil {
		return nil, nil, err
	}
	db, err := openCurrent(ctx, cfg, mode)
	if err != nil {
		return nil, nil, err
	}
	return db, files, nil
}
