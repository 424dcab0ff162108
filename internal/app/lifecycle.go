package app

import (
	"context"
	"errors"
	"fmt"

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
		return fmt.Errorf("tenant %s is %s: only an %s tenant can be made %s", slug, t.State, from, state)
	case err != nil:
		return err
	case t.State == state:
		fmt.Fprintf(stdio.Stdout, "tenant %s (id %d) is %s already\n", slug, t.ID, state)
	default:
		fmt.Fprintf(stdio.Stdout, "tenant %s (id %d) is %s; every instance serves it so within %v\n", slug, t.ID, state, tenancy.CacheTTL)
	}
	return nil
}
