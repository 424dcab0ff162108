package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver
)

// freshSchema creates an empty schema on the PostgreSQL server and
// returns a DSN using it and a function that drops it.
func freshSchema(ctx context.Context, serverURL string) (string, func(), error) {
	admin, err := sql.Open("pgx", serverURL)
	if err != nil {
		return "", nil, err
	}
	if err := admin.PingContext(ctx); err != nil {
		admin.Close()
		return "", nil, err
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "pwbench_" + hex.EncodeToString(b)
	if _, err := admin.ExecContext(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close()
		return "", nil, err
	}
	drop := func() {
		_, _ = admin.Exec("DROP SCHEMA " + schema + " CASCADE")
		admin.Close()
	}
	sep := "?"
	if strings.Contains(serverURL, "?") {
		sep = "&"
	}
	return serverURL + sep + "search_path=" + schema, drop, nil
}

// databases returns the DSNs to measure: a fresh SQLite file and, when
// the server answers, a fresh PostgreSQL schema; cleanup removes both.
func databases(ctx context.Context, pgURL string) ([]string, func(), error) {
	dir, err := os.MkdirTemp("", "planwerk-bench-")
	if err != nil {
		return nil, nil, err
	}
	cleanups := []func(){func() { os.RemoveAll(dir) }}
	cleanup := func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	dsns := []string{"sqlite:" + filepath.Join(dir, "bench.db")}
	if pgURL != "" {
		dsn, drop, err := freshSchema(ctx, pgURL)
		if err != nil {
			fmt.Fprintf(os.Stderr, "PostgreSQL skipped: %v\n", err)
		} else {
			cleanups = append(cleanups, drop)
			dsns = append(dsns, dsn)
		}
	}
	return dsns, cleanup, nil
}
