// Package testenv starts real Planwerk servers on real databases for
// tests: a fresh SQLite file or a fresh PostgreSQL schema per test.
package testenv

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver for schema set-up

	"planwerk/internal/app"
	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// Backend names a database engine to test on.
type Backend struct {
	Name string // "sqlite" or "postgres"
}

// PostgresURL is the server the PostgreSQL runs use; PLANWERK_TEST_POSTGRES
// overrides it.
func PostgresURL() string {
	if u := os.Getenv("PLANWERK_TEST_POSTGRES"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// PostgresAddr is the host:port of PostgresURL, for a proxy in front of it.
func PostgresAddr(t testing.TB) string {
	t.Helper()
	u, err := url.Parse(PostgresURL())
	if err != nil {
		t.Fatalf("PostgreSQL URL: %v", err)
	}
	return u.Host
}

var (
	pgOnce sync.Once
	pgErr  error
)

func postgresReachable() error {
	pgOnce.Do(func() {
		db, err := sql.Open("pgx", PostgresURL())
		if err != nil {
			pgErr = err
			return
		}
		defer db.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		pgErr = db.PingContext(ctx)
	})
	return pgErr
}

// Each runs fn as a subtest on SQLite and on PostgreSQL, the two side by
// side: each run has a database of its own, and so may run beside any
// other. When no PostgreSQL server answers, the PostgreSQL run is skipped
// with a message saying so, except under CI (CI=true), where it fails.
func Each(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range []Backend{{Name: "sqlite"}, {Name: "postgres"}} {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			fn(t, b)
		})
	}
}

// EachInTurn is Each with the two runs one after the other, for the
// tests that measure the whole process (its heap, its latency under
// load), which a run beside theirs would disturb.
func EachInTurn(t *testing.T, fn func(t *testing.T, b Backend)) {
	t.Helper()
	for _, b := range []Backend{{Name: "sqlite"}, {Name: "postgres"}} {
		t.Run(b.Name, func(t *testing.T) { fn(t, b) })
	}
}

// HashCost is the cost of the password hashes of the servers Start runs:
// far below the service's, so that the many users tests create stay
// quick. Verification reads the cost from each hash, so sign-in follows
// the same path as with the service's own cost.
var HashCost = auth.HashCost{Time: 1, MemoryKiB: 64}

// PostgresUnavailable says why PostgreSQL runs are skipped ("" when the
// server answers); under CI an unreachable server fails the test instead.
func PostgresUnavailable(t testing.TB) string {
	t.Helper()
	err := postgresReachable()
	if err == nil {
		return ""
	}
	msg := fmt.Sprintf("PostgreSQL at %s does not answer (%v): PostgreSQL run skipped; start it or set PLANWERK_TEST_POSTGRES", PostgresURL(), err)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	return msg
}

// DSN returns the connection string of a fresh, empty database of the
// backend, removed when the test ends.
func DSN(t testing.TB, b Backend) string {
	t.Helper()
	switch b.Name {
	case "sqlite":
		// Not t.TempDir: its name carries the test's, which may hold a
		// "#" (a second subtest of one name), and a "#" ends the path
		// of the SQLite URI the store opens.
		dir, err := os.MkdirTemp("", "planwerk-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return "sqlite:" + filepath.Join(dir, "planwerk.db")
	case "postgres":
		if msg := PostgresUnavailable(t); msg != "" {
			t.Skip(msg)
		}
		return freshSchema(t, PostgresURL())
	}
	t.Fatalf("unknown backend %q", b.Name)
	return ""
}

// CitusURL is the coordinator of the Citus cluster that
// PLANWERK_TEST_CITUS names, for the tests that need Citus; they skip
// with a message when it names none (CI has no Citus), as CitusDSN does.
func CitusURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv("PLANWERK_TEST_CITUS")
	if u == "" {
		t.Skip("PLANWERK_TEST_CITUS names no Citus coordinator: Citus test skipped (README: Running on Citus)")
	}
	return u
}

// CitusDSN returns the connection string of a fresh, empty schema on the
// Citus coordinator, removed when the test ends.
func CitusDSN(t testing.TB) string {
	t.Helper()
	return freshSchema(t, CitusURL(t))
}

func freshSchema(t testing.TB, server string) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "pwtest_" + hex.EncodeToString(b)
	admin, err := sql.Open("pgx", server)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
		admin.Close()
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		defer admin.Close()
		if _, err := admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); err != nil {
			t.Logf("drop schema %s: %v", schema, err)
		}
	})
	sep := "?"
	if strings.Contains(server, "?") {
		sep = "&"
	}
	return server + sep + "search_path=" + schema
}

// MigratedDSN is DSN with the database migrated already. On SQLite the
// database is a copy of one migrated once per test binary, which is much
// quicker than migrating each.
func MigratedDSN(t testing.TB, b Backend) string {
	t.Helper()
	dsn := DSN(t, b)
	if b.Name == "sqlite" {
		copySQLiteTemplate(t, strings.TrimPrefix(dsn, "sqlite:"))
	}
	return dsn
}

var sqliteTemplate struct {
	once sync.Once
	path string
	err  error
}

// copySQLiteTemplate writes a migrated SQLite database to path: a copy
// of the template, migrated on first use.
func copySQLiteTemplate(t testing.TB, path string) {
	t.Helper()
	tpl := &sqliteTemplate
	tpl.once.Do(func() { tpl.path, tpl.err = migrateSQLiteTemplate() })
	if tpl.err != nil {
		t.Fatalf("SQLite template: %v", tpl.err)
	}
	data, err := os.ReadFile(tpl.path)
	if err != nil {
		t.Fatalf("SQLite template: %v", err)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatalf("SQLite template: %v", err)
	}
}

// migrateSQLiteTemplate migrates a database in a folder of its own and
// closes it, which folds the write-ahead log into the file. The folder
// stays until the test binary ends (the system removes temporary files).
func migrateSQLiteTemplate() (string, error) {
	dir, err := os.MkdirTemp("", "planwerk-template-")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "planwerk.db")
	db, err := store.Open(context.Background(), "sqlite:"+path)
	if err != nil {
		return "", err
	}
	if _, err := db.Migrate(context.Background()); err != nil {
		db.Close()
		return "", err
	}
	if err := db.Close(); err != nil {
		return "", err
	}
	if _, err := os.Stat(path + "-wal"); err == nil {
		return "", errors.New("the write-ahead log outlived closing the database")
	}
	return path, nil
}

// OpenDB opens and migrates a fresh database of the backend.
func OpenDB(t testing.TB, b Backend) *store.DB {
	t.Helper()
	return Open(t, MigratedDSN(t, b))
}

// Open opens the database at dsn, closed when the test ends, and
// migrates it: a second handle on a test's database is a second instance
// of the service's storage.
func Open(t testing.TB, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return db
}

// Server is a running Planwerk on httptest.
type Server struct {
	URL     string
	Service *app.Service
	Config  config.Config
	HTTP    *httptest.Server

	stop     func()
	stopOnce sync.Once
}

// Start runs the real service on a fresh database of the backend. Options
// may change the configuration first.
func Start(t testing.TB, b Backend, opts ...func(*config.Config)) *Server {
	t.Helper()
	return StartLogged(t, b, nil, opts...)
}

// StartLogged is Start with the service's JSON log written to logw (nil:
// discarded, unless PLANWERK_TEST_LOG is set).
func StartLogged(t testing.TB, b Backend, logw io.Writer, opts ...func(*config.Config)) *Server {
	t.Helper()
	return start(t, b, logw, store.DefaultOptions(), opts...)
}

// Statement is one statement a server's database was sent, with its
// parameters.
type Statement struct {
	SQL  string
	Args []any
}

// Statements is the log of every statement a server's database is sent
// (store.Options.Statements), in the order they were sent.
type Statements struct {
	mu  sync.Mutex
	all []Statement
}

func (l *Statements) add(query string, args []any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, Statement{SQL: query, Args: args})
}

// Len is how many statements the log holds: a mark for Since.
func (l *Statements) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.all)
}

// Since returns the statements sent after the first n.
func (l *Statements) Since(n int) []Statement {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Statement(nil), l.all[n:]...)
}

// StartWithStatements is Start with every statement the server's
// database is sent in the log it returns: for tests that ask the engine
// how it plans what the service really runs.
func StartWithStatements(t testing.TB, b Backend, opts ...func(*config.Config)) (*Server, *Statements) {
	t.Helper()
	log := &Statements{}
	so := store.DefaultOptions()
	so.Statements = log.add
	return start(t, b, nil, so, opts...), log
}

func start(t testing.TB, b Backend, logw io.Writer, storeOpts store.Options, opts ...func(*config.Config)) *Server {
	t.Helper()
	cfg := config.Default()
	cfg.Database = MigratedDSN(t, b)
	cfg.Files = filepath.Join(t.TempDir(), "files")
	for _, o := range opts {
		o(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	db, err := store.OpenWith(context.Background(), cfg.Database, storeOpts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Migrate(context.Background()); err != nil {
		db.Close()
		t.Fatal(err)
	}
	if logw == nil {
		logw = io.Discard
		if os.Getenv("PLANWERK_TEST_LOG") != "" {
			logw = os.Stderr
		}
	}
	log := slog.New(slog.NewJSONHandler(logw, nil))
	svc, err := app.NewService(context.Background(), cfg, db, log, app.WithHashCost(HashCost))
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	// The server as `planwerk serve` runs it: its timeouts and its
	// idle-write listener.
	hs := httptest.NewUnstartedServer(svc.Handler)
	hs.Config = svc.Handler.HTTPServer(context.Background())
	hs.Config.Handler = documentedErrors(t, hs.Config.Handler)
	hs.Listener = svc.Handler.Listener(hs.Listener)
	hs.Start()
	svc.Start()
	srv := &Server{URL: hs.URL, Service: svc, Config: cfg, HTTP: hs}
	srv.stop = func() {
		hs.Close()
		svc.Close()
		db.Close()
	}
	t.Cleanup(srv.Stop)
	return srv
}

// Stop stops the server as a shutdown would: its requests, its
// background jobs (see app.Service.Jobs), its database. Cleanup calls
// it too; more calls do nothing.
func (s *Server) Stop() { s.stopOnce.Do(s.stop) }

// Tenant is a tenant created for a test, with its admin's credentials.
type Tenant struct {
	Slug       string
	ID         int64
	AdminEmail string
	Password   string
	AdminID    int64
}

// CreateTenant creates a tenant with an admin whose password is
// "password-" + slug.
func (s *Server) CreateTenant(t testing.TB, slug string) Tenant {
	t.Helper()
	email := "admin@" + slug + ".test"
	password := "password-" + slug
	tn, u, err := app.CreateTenant(context.Background(), s.Service, users.TenantSpec{Slug: slug, AdminEmail: email, AdminPassword: password})
	if err != nil {
		t.Fatalf("create tenant %s: %v", slug, err)
	}
	return Tenant{Slug: slug, ID: tn.ID, AdminEmail: email, Password: password, AdminID: u.ID}
}

// SkipOrFail skips the test with msg, except under CI (CI=true), where a
// missing dependency fails it.
func SkipOrFail(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}
