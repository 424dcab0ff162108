package app

import (
	"context"
	"log/slog"

	"planwerk/internal/config"
	"planwerk/internal/store"
)

// openDatabase opens and migrates the database of cfg.
func openDatabase(ctx context.Context, cfg config.Config, log *slog.Logger) (*store.DB, error) {
	db, err := store.Open(ctx, cfg.Database)
	if err != nil {
		return nil, err
	}
	n, err := db.Migrate(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	if n > 0 {
		log.Info("database migrated", "engine", db.Engine(), "applied", n)
	}
	if err := db.EnsureTenantRecords(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return db, nil
}
