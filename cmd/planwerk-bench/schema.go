package main

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
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
