package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"

	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/store"
)

// readSecret returns a password from the flag, else stdin's first line.
func readSecret(flagValue string, stdio IO) (string, error) {
	if flagValue != "" {
		return flagValue, nil
	}
	if stdio.Stdin == nil {
		return "", fmt.Errorf("%w: no password given", ErrUsage)
	}
	line, err := bufio.NewReader(stdio.Stdin).ReadString('\n')
	if err != nil && line == "" {
		return "", fmt.Errorf("%w: no password given (flag, environment or standard input)", ErrUsage)
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// adminConfig parses an administration command's flags: --database, the
// settings of groups and those extra adds.
func adminConfig(name string, args []string, stdio IO, groups []config.Group, extra func(fs *flagSet)) (config.Config, error) {
	cfg := config.Default()
	fs := newFlags(name, &cfg, stdio, append([]config.Group{config.Database}, groups...)...)
	if extra != nil {
		extra(&flagSet{fs})
	}
	if err := parse(fs, args, stdio); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("%w: %v", ErrUsage, err)
	}
	return cfg, nil
}

// adminDatabase parses an administration command's flags and opens its
// database with the access the command needs; it never migrates.
func adminDatabase(ctx context.Context, name string, args []string, stdio IO, mode access, groups []config.Group, extra func(fs *flagSet)) (*store.DB, config.Config, error) {
	cfg, err := adminConfig(name, args, stdio, groups, extra)
	if err != nil {
		return nil, cfg, err
	}
	db, err := openCurrent(ctx, cfg, mode)
	return db, cfg, err
}

func runTenantList(ctx context.Context, args []string, stdio IO) error {
	db, cfg, err := adminDatabase(ctx, "tenant list", args, stdio, readOnly, []config.Group{config.Quota}, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	tenants, err := db.ListTenants(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "%-24s %-8s %-9s %-6s %14s %14s  %s\n", "SLUG", "ID", "STATE", "USERS", "STORAGE USED", "STORAGE CAP", "CREATED")
	for _, t := range tenants {
		limit := cfg.TenantStorageBytes
		if t.StorageBytes != nil {
			limit = *t.StorageBytes
		}
		fmt.Fprintf(stdio.Stdout, "%-24s %-8d %-9s %-6d %14d %14d  %s\n", t.Slug, t.ID, t.State, t.Users, t.StorageUsed, limit, t.CreatedAt)
	}
	return nil
}

func runTenantSetStorage(ctx context.Context, args []string, stdio IO) error {
	var slug, bytesText string
	db, _, err := adminDatabase(ctx, "tenant set-storage", args, stdio, readWrite, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "slug", "", "tenant slug")
		fs.StringVar(&bytesText, "bytes", "", "storage cap in bytes")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	n, perr := strconv.ParseInt(bytesText, 10, 64)
	if slug == "" || perr != nil || n < 0 {
		return fmt.Errorf("%w: give --slug and --bytes (a non-negative whole number)", ErrUsage)
	}
	if err := db.SetTenantStorage(ctx, slug, n); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return fmt.Errorf("no tenant %q", slug)
		}
		return err
	}
	fmt.Fprintf(stdio.Stdout, "tenant %s: storage cap %d bytes\n", slug, n)
	return nil
}

func runUserResetPassword(ctx context.Context, args []string, stdio IO) error {
	var slug, email, password string
	db, _, err := adminDatabase(ctx, "user reset-password", args, stdio, readWrite, nil, func(fs *flagSet) {
		fs.StringVar(&slug, "tenant", "", "tenant slug")
		fs.StringVar(&email, "email", "", "the user's e-mail address")
		fs.StringVar(&password, "password", "", "the new password (else PLANWERK_PASSWORD, else standard input)")
	})
	if err != nil {
		return err
	}
	defer db.Close()
	if slug == "" || email == "" {
		return fmt.Errorf("%w: give --tenant and --email", ErrUsage)
	}
	if password, err = readSecret(password, stdio); err != nil {
		return err
	}
	if password == "" {
		return fmt.Errorf("%w: the password must not be empty", ErrUsage)
	}
	t, err := db.TenantBySlug(ctx, slug)
	if err != nil {
		return fmt.Errorf("no tenant %q", slug)
	}
	// The service's hasher, without the service: building that would write
	// (its URL-signing secret) and reach for the file store and Redis.
	hash, err := auth.NewHasher(runtime.NumCPU()).Hash(ctx, password)
	if err != nil {
		return err
	}
	u, err := newTables(db).users.ResetPassword(ctx, t.ID, email, hash)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no user %q in tenant %q", email, slug)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "password of %s (user %d) in tenant %s reset; all of the user's tokens revoked\n", u.Email, u.ID, slug)
	return nil
}

func runBackup(ctx context.Context, args []string, stdio IO) error {
	var out string
	cfg, err := adminConfig("backup", args, stdio, nil, func(fs *flagSet) {
		fs.StringVar(&out, "out", "", "file to write the copy to (must not exist)")
	})
	if err != nil {
		return err
	}
	if out == "" {
		return fmt.Errorf("%w: give --out FILE", ErrUsage)
	}
	db, err := openReadOnly(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	// PostgreSQL has pg_dump: say so before asking for a migration.
	if _, ok := db.LocalFile(); !ok {
		return store.ErrBackupUnsupported
	}
	if err := checkSchema(ctx, db); err != nil {
		return err
	}
	if err := db.Backup(ctx, out); err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "backup written to %s\n", out)
	return nil
}
