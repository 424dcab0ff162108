package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/exports"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// The operator's commands of a tenant's life besides its creation:
// suspend, resume and delete (docs/decisions.md "Tenant states and
// erasure").

func runTenantSuspend(ctx context.Context, args []string, stdio IO) error {
	return setTenantState(ctx, "tenant suspend", args, stdio, store.TenantSuspended, store.TenantActive)
}

func runTenantResume(ctx context.Context, args []string, stdio IO) error {
	return setTenantState(ctx, "tenant resume", args, stdio, store.TenantActive, store.TenantSuspended)
}

// verbs name what the state commands do, for their refusals; effects
// what the service does then.
var (
	verbs   = map[string]string{store.TenantSuspended: "suspended", store.TenantActive: "resumed"}
	effects = map[string]string{
		store.TenantSuspended: "every instance refuses its requests (403 tenant_suspended) and holds its webhooks",
		store.TenantActive:    "every instance serves it again",
	}
)

// setTenantState moves the tenant --slug names to state from the state
// from (or leaves it in state: running a command twice does no harm).
// A tenant being imported or deleted is neither suspended nor resumed.
func setTenantState(ctx context.Context, name string, args []string, stdio IO, state, from string) error {
	var slug string
	db, _, err := adminDatabase(ctx, name, args, stdio, readWrite, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "slug", "", "tenant slug")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if slug == "" {
		return fmt.Errorf("%w: give --slug", ErrUsage)
	}
	t, err := db.SetTenantState(ctx, slug, state, from, state)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return fmt.Errorf("no tenant %q", slug)
	case errors.Is(err, store.ErrConflict):
		return fmt.Errorf("tenant %s is %s: only a tenant that is %s can be %s", slug, t.State, from, verbs[state])
	case err != nil:
		return err
	case t.State == state:
		fmt.Fprintf(stdio.Stdout, "tenant %s (id %d) is %s already\n", slug, t.ID, state)
	default:
		fmt.Fprintf(stdio.Stdout, "tenant %s (id %d) is %s: %s within %v\n", slug, t.ID, state, effects[state], tenancy.CacheTTL)
	}
	return nil
}

func runTenantDelete(ctx context.Context, args []string, stdio IO) error {
	var slug, confirm, fileStore string
	cfg, err := adminConfig("tenant delete", args, stdio, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "slug", "", "tenant slug")
		fs.StringVar(&confirm, "confirm", "", "the slug again: a deleted tenant cannot be brought back")
		fs.StringVar(&fileStore, "files", config.Default().Files, "file store: a folder, or s3://BUCKET?endpoint=HOST:PORT&region=R&secure=false")
	})
	if err != nil {
		return err
	}
	switch {
	case slug == "":
		return fmt.Errorf("%w: give --slug and --confirm with the slug again", ErrUsage)
	case confirm != slug:
		return fmt.Errorf("%w: --confirm must repeat the slug %q: a deleted tenant cannot be brought back", ErrUsage, slug)
	}
	// The file store first: one that cannot be opened stops the command
	// before it changes anything.
	fstore, err := filestore.Open(ctx, fileStore)
	if err != nil {
		return err
	}
	db, err := openCurrent(ctx, cfg, readWrite)
	if err != nil {
		return err
	}
	defer db.Close()
	t, err := db.SetTenantState(ctx, slug, store.TenantDeleting,
		store.TenantActive, store.TenantSuspended, store.TenantImporting, store.TenantDeleting)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no tenant %q", slug)
	}
	if err != nil {
		return err
	}
	since, err := db.TenantStateSince(ctx, t.ID)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "tenant %s (id %d) is being deleted: every instance treats it as unknown within %v\n", slug, t.ID, tenancy.CacheTTL)
	e, err := eraseTenant(ctx, db, fstore, t.ID, since.Add(tenancy.CacheTTL), func(line string) { fmt.Fprintln(stdio.Stdout, line) })
	if err != nil {
		return fmt.Errorf("tenant %s not yet deleted, run the command again to finish: %w", slug, err)
	}
	fmt.Fprintf(stdio.Stdout, "deleted tenant %s (id %d): %d rows in %d tables, %d files (%d bytes)\n",
		slug, t.ID, e.rows, e.tables, e.files.Files, e.files.Bytes)
	return nil
}

// erasure counts what eraseTenant removed.
type erasure struct {
	rows, tables int64
	files        files.Erased
}

// eraseTenant erases every file and row of the tenant with id, which is
// no longer served (deleting, or an import that never completed): its
// uploads' files first, each before its row; then, once every instance
// has stopped serving the tenant (at servedUntil: the state's change and
// a tenant cache's time to live), the files of uploads in flight then
// and the rows of every table, and last the tenant's row. Cut short, it
// goes on where it stopped when run again. servedUntil is the zero time
// for a tenant that was never served (an import cut short). report, when
// set, is told what was erased, a line at a time.
func eraseTenant(ctx context.Context, db *store.DB, fs filestore.Store, id int64, servedUntil time.Time, report func(line string)) (erasure, error) {
	if report == nil {
		report = func(string) {}
	}
	var e erasure
	uploads := newTables(db).uploads
	erased, err := files.Erase(ctx, uploads, fs, id, nil)
	if err != nil {
		return e, err
	}
	if wait := time.Until(servedUntil); wait > 0 {
		report(fmt.Sprintf("waiting %v for every instance to stop serving it", wait.Round(100*time.Millisecond)))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return e, context.Cause(ctx)
		}
	}
	late, err := files.Erase(ctx, uploads, fs, id, nil)
	if err != nil {
		return e, err
	}
	// The archives of its account exports are kept under keys of their
	// own.
	if err := exports.EraseTenant(ctx, db, fs, id); err != nil {
		return e, err
	}
	e.files = files.Erased{Files: erased.Files + late.Files, Bytes: erased.Bytes + late.Bytes, Leftovers: erased.Leftovers + late.Leftovers}
	report(fmt.Sprintf("files: %d (%d bytes), and %d other files under the tenant's keys", e.files.Files, e.files.Bytes, e.files.Leftovers))
	if e.files.Files > 0 {
		report(fmt.Sprintf("uploads: %d rows", e.files.Files))
		e.rows, e.tables = e.files.Files, 1
	}
	var table string
	var rows int64
	done := func() {
		if table != "" {
			report(fmt.Sprintf("%s: %d rows", table, rows))
			e.tables++
		}
	}
	err = db.EraseTenant(ctx, id, func(t string, n int64) {
		if t != table {
			done()
			table, rows = t, 0
		}
		rows += n
		e.rows += n
	})
	if err != nil {
		return e, err
	}
	done()
	return e, nil
}
