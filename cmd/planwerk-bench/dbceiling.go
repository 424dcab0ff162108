package main

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"planwerk/internal/store"
)

// The ceilings with the database: what a bare net/http handler achieves
// when it reads the same rows the service reads, from the same table,
// through the same driver and a pool opened as the service opens its
// read pool, and writes the stored bytes with nothing in between: no
// authentication, no tenant look-up, no fair shares, no spool, no entity
// tag. A record's document is stored as the API returns it (the column
// doc on SQLite, the generated text column doc_text on PostgreSQL), in
// the table records, whose key leads with tenant_id; like every query of
// the service, the ceiling's queries filter by tenant.

// dbCeiling serves GET /v1/project-days/{id} and GET /v1/project-days
// from the database with a bare handler.
type dbCeiling struct {
	*httptest.Server
	pool *sql.DB
	one  *sql.Stmt
	// list reads the rows of a list: limit rows of the tenant's
	// ProjectDays in id order; emit gets each stored document, valid only
	// during the call.
	list      func(ctx context.Context, tenantID int64, limit int, emit func(doc []byte) error) error
	closeList func()
}

// sqliteReadPragmas are the pragmas of the service's SQLite read pool
// (store.openSQLite): the same connection settings for the same reads.
const sqliteReadPragmas = "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=journal_size_limit(67108864)&_pragma=query_only(1)"

// openDBCeiling opens a read pool on dsn as the store opens the
// service's and serves the tenant's ProjectDays from it.
func openDBCeiling(ctx context.Context, dsn string, tenantID int64) (*dbCeiling, error) {
	c := &dbCeiling{closeList: func() {}}
	column := "doc"
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		pool, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")+"?"+sqliteReadPragmas)
		if err != nil {
			return nil, err
		}
		pool.SetMaxOpenConns(8)
		pool.SetMaxIdleConns(8)
		pool.SetConnMaxIdleTime(5 * time.Minute)
		c.pool = pool
	default:
		cfg, err := pgConfig(dsn)
		if err != nil {
			return nil, err
		}
		size := store.DefaultOptions().PoolSize
		pool := stdlib.OpenDB(*cfg)
		pool.SetMaxOpenConns(size)
		pool.SetMaxIdleConns(size)
		pool.SetConnMaxIdleTime(5 * time.Minute)
		c.pool = pool
		column = "doc_text"
	}
	one, err := c.pool.PrepareContext(ctx, "SELECT "+column+" FROM records WHERE tenant_id = $1 AND resource = 'project-days' AND id = $2")
	if err != nil {
		c.pool.Close()
		return nil, fmt.Errorf("database ceiling: %w", err)
	}
	c.one = one
	list := "SELECT " + column + " FROM records WHERE tenant_id = $1 AND resource = 'project-days' ORDER BY id LIMIT $2"
	if column == "doc" {
		stmt, err := c.pool.PrepareContext(ctx, list)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("database ceiling: %w", err)
		}
		c.closeList = func() { stmt.Close() }
		c.list = func(ctx context.Context, tenantID int64, limit int, emit func([]byte) error) error {
			return sqliteDocs(ctx, stmt, tenantID, limit, emit)
		}
	} else {
		// pgx prepares the statement on each connection the first time it
		// runs there and keeps it (its statement cache).
		c.list = func(ctx context.Context, tenantID int64, limit int, emit func([]byte) error) error {
			return pgDocs(ctx, c.pool, list, tenantID, limit, emit)
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/project-days/{id}", func(w http.ResponseWriter, r *http.Request) {
		c.serveOne(w, r, tenantID)
	})
	mux.HandleFunc("GET /v1/project-days", func(w http.ResponseWriter, r *http.Request) {
		c.serveList(w, r, tenantID)
	})
	c.Server = httptest.NewServer(mux)
	return c, nil
}

// pgConfig is the connection configuration of the service's PostgreSQL
// pool (store.postgresConfig, without tracing).
func pgConfig(dsn string) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = 5 * time.Second
	}
	setDefault := func(name string, d time.Duration) {
		if _, ok := cfg.RuntimeParams[name]; !ok {
			cfg.RuntimeParams[name] = strconv.FormatInt(d.Milliseconds(), 10)
		}
	}
	setDefault("statement_timeout", store.DefaultOptions().StatementTimeout)
	setDefault("idle_in_transaction_session_timeout", time.Minute)
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}}
	cfg.DialFunc = dialer.DialContext
	return cfg, nil
}

// Close stops the server and closes the pool.
func (c *dbCeiling) Close() {
	if c.Server != nil {
		c.Server.Close()
	}
	c.closeList()
	if c.one != nil {
		c.one.Close()
	}
	c.pool.Close()
}

// serveOne answers a single GET: one prepared primary-key SELECT, the
// stored bytes and a line end, as the service frames a record.
func (c *dbCeiling) serveOne(w http.ResponseWriter, r *http.Request, tenantID int64) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		http.Error(w, "bad id", http.StatusBadRequest)
		return
	}
	rows, err := c.one.QueryContext(r.Context(), tenantID, id)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	defer rows.Close()
	if !rows.Next() {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	var doc sql.RawBytes
	if err := rows.Scan(&doc); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(doc)+1))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(doc)
	_, _ = w.Write([]byte{'\n'})
}

// serveList answers a list: the stored documents streamed as they are
// read, framed as the service frames a list ("[", documents separated by
// ",", "]" and a line end), through a 32 KiB buffer as the service's.
func (c *dbCeiling) serveList(w http.ResponseWriter, r *http.Request, tenantID int64) {
	limit, err := strconv.Atoi(r.URL.Query().Get("limit"))
	if err != nil {
		limit = 100
	}
	bw := bufio.NewWriterSize(w, 32<<10)
	started := false
	err = c.list(r.Context(), tenantID, limit, func(doc []byte) error {
		if !started {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			started = true
			bw.WriteByte('[')
		} else {
			bw.WriteByte(',')
		}
		_, err := bw.Write(doc)
		return err
	})
	switch {
	case err != nil && !started:
		http.Error(w, err.Error(), http.StatusInternalServerError)
	case err != nil:
		panic(http.ErrAbortHandler)
	case !started:
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte("[]\n"))
	default:
		bw.WriteString("]\n")
		if bw.Flush() != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// sqliteDocs runs the prepared list statement and hands over each row's
// bytes as the driver read them.
func sqliteDocs(ctx context.Context, stmt *sql.Stmt, tenantID int64, limit int, emit func([]byte) error) error {
	rows, err := stmt.QueryContext(ctx, tenantID, limit)
	if err != nil {
		return err
	}
	defer rows.Close()
	var doc sql.RawBytes
	for rows.Next() {
		if err := rows.Scan(&doc); err != nil {
			return err
		}
		if err := emit(doc); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pgDocs runs the list statement on a connection of pool with pgx itself,
// as the service reads lists on PostgreSQL, and hands over each row's
// bytes as pgx read them.
func pgDocs(ctx context.Context, pool *sql.DB, query string, tenantID int64, limit int, emit func([]byte) error) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		sc, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a PostgreSQL connection of %T", dc)
		}
		rows, err := sc.Conn().Query(ctx, query, tenantID, limit)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := emit(rows.RawValues()[0]); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// printDBCeilings prints the single GETs and the plain lists beside the
// ceilings with the database.
func printDBCeilings(results []result) {
	fmt.Println("\nAgainst the database ceilings (a bare handler reading the same rows through the same driver and pool, same client, same run):")
	fmt.Println()
	fmt.Println("| engine | single GET req/s | ceiling (a) req/s | ratio (target ≥ 0.70) | list, plain | ceiling (b) | ratio (target ≤ 1.30) | bytes |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %s | %s | %.2f | %.1f MB |\n",
			r.engine, r.getRate, r.getDBCeilingRate, r.getRate/r.getDBCeilingRate,
			ms(r.listPlainTime), ms(r.listDBCeiling), a2b(r.listPlainTime, r.listDBCeiling), float64(r.listPlainBytes)/1e6)
	}
}
