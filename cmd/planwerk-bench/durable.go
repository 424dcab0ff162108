package main

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// durableCeiling is the most creates a second SQLite reaches on this
// disk when each is durable on its own: one goroutine inserting a
// project-sized row into a file next to the service's, each insert its
// own transaction, with the service's journal and sync settings (WAL,
// synchronous FULL), for d. Group commit is measured against it: the
// service's creates make many clients' writes durable with each sync.
func durableCeiling(ctx context.Context, path string, d time.Duration) (float64, error) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)")
	if err != nil {
		return 0, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS ceiling (tenant_id INTEGER NOT NULL, id INTEGER NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (tenant_id, id))`); err != nil {
		return 0, err
	}
	stmt, err := db.PrepareContext(ctx, `INSERT INTO ceiling (tenant_id, id, doc) VALUES (1, ?, ?)`)
	if err != nil {
		return 0, err
	}
	defer stmt.Close()
	doc := `{"name":"Bench ` + strings.Repeat("x", 16) + `","createdAt":"2026-01-01T00:00:00.000Z","updatedAt":"2026-01-01T00:00:00.000Z","id":%d}`
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		n++
		if _, err := stmt.ExecContext(ctx, n, fmt.Sprintf(doc, n)); err != nil {
			return 0, err
		}
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
