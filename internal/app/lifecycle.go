package app

import (
	"context"
	"errors"
	"fmt"

	"planwerk/internal/config"
	"planwerk/internal/lifecycle"
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
	cfg.Files = fileStore
	db, fstore, err := openStores(ctx, cfg, readWrite)
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
	e, err := lifecycle.EraseTenant(ctx, db, fstore, t.ID, since.Add(tenancy.CacheTTL), func(line string) { fmt.Fprintln(stdio.Stdout, line) })
	if err != nil {
		return fmt.Errorf("tenant %s not yet deleted, run the command again to finish: %w", slug, err)
	}
	fmt.Fprintf(stdio.Stdout, "deleted tenant %s (id %d): %d rows in %d tables, %d files (%d bytes)\n",
		slug, t.ID, e.Rows, e.Tables, e.Files.Files, e.Files.Bytes)
	return nil
}
