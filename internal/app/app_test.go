package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/auth"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/users"
)

// userTables are the users' tables on db.
func userTables(db *store.DB) *users.Tables { return users.NewTables(db, auth.NewTables(db)) }

type result struct {
	stdout, stderr string
	err            error
}

// run calls app.Run with the given environment and standard input.
func run(ctx context.Context, env map[string]string, stdin string, args ...string) result {
	var stdout, stderr testenv.SyncBuffer
	err := app.Run(ctx, args, app.IO{
		Stdin:  strings.NewReader(stdin),
		Stdout: &stdout,
		Stderr: &stderr,
		Getenv: func(k string) string { return env[k] },
	})
	return result{stdout: stdout.String(), stderr: stderr.String(), err: err}
}

var hasher = sync.OnceValue(func() *auth.Hasher { return auth.NewHasher(2) })

func openStore(t *testing.T, dsn string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func count(t *testing.T, db *store.DB, table string) int {
	t.Helper()
	var n int
	if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", table, err)
	}
	return n
}

func checkPassword(t *testing.T, u users.User, password string, want bool) {
	t.Helper()
	ok, err := hasher().Verify(context.Background(), password, u.PasswordHash)
	if err != nil {
		t.Fatalf("verify password of %s: %v", u.Email, err)
	}
	if ok != want {
		t.Errorf("password %q matches the hash of %s: %v, want %v", password, u.Email, ok, want)
	}
}

func TestTenantCreate(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)
		r := run(ctx, nil, "", "tenant", "create", "--database", dsn,
			"--slug", "acme", "--admin-email", "Admin@Acme.test", "--admin-password", "flag-password", "--name", "Acme Ltd")
		if r.err != nil {
			t.Fatalf("tenant create: %v\nstderr: %s", r.err, r.stderr)
		}
		if strings.Count(r.stdout, "\n") != 1 || !strings.HasSuffix(r.stdout, "\n") {
			t.Errorf("stdout is not one line: %q", r.stdout)
		}
		if !strings.Contains(r.stdout, "acme") || !strings.Contains(r.stdout, "Admin@Acme.test") {
			t.Errorf("summary %q names neither the slug nor the admin", r.stdout)
		}

		db := openStore(t, dsn)
		tn, err := db.TenantBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		if tn.Name != "Acme Ltd" {
			t.Errorf("tenant name = %q, want %q", tn.Name, "Acme Ltd")
		}
		if !strings.Contains(r.stdout, strconv.FormatInt(tn.ID, 10)) {
			t.Errorf("summary %q does not carry the tenant id %d", r.stdout, tn.ID)
		}
		u, err := userTables(db).UserByEmail(ctx, tn.ID, "admin@acme.test")
		if err != nil {
			t.Fatal(err)
		}
		if !u.IsAdmin || u.Email != "Admin@Acme.test" {
			t.Errorf("admin = %+v", u)
		}
		checkPassword(t, u, "flag-password", true)

		// Duplicate slug: an error, and nothing written.
		r = run(ctx, nil, "", "tenant", "create", "--database", dsn,
			"--slug", "acme", "--admin-email", "other@elsewhere.test", "--admin-password", "other-password")
		if r.err == nil {
			t.Fatalf("duplicate slug: no error; stdout %q", r.stdout)
		}
		if strings.Contains(r.stdout, "created") {
			t.Errorf("duplicate slug printed %q", r.stdout)
		}
		if n := count(t, db, "tenants"); n != 1 {
			t.Errorf("after duplicate slug: %d tenants, want 1", n)
		}
		if n := count(t, db, "users"); n != 1 {
			t.Errorf("after duplicate slug: %d users, want 1", n)
		}
		if _, err := userTables(db).UserByEmail(ctx, tn.ID, "other@elsewhere.test"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the rejected admin exists: %v", err)
		}
		if again, _ := db.TenantBySlug(ctx, "acme"); again.Name != "Acme Ltd" {
			t.Errorf("duplicate slug changed the tenant name to %q", again.Name)
		}

		// Duplicate admin e-mail (another slug, same address in other case).
		r = run(ctx, nil, "", "tenant", "create", "--database", dsn,
			"--slug", "beta", "--admin-email", "admin@ACME.test", "--admin-password", "beta-password")
		if r.err == nil {
			t.Fatalf("duplicate admin e-mail: no error; stdout %q", r.stdout)
		}
		if _, err := db.TenantBySlug(ctx, "beta"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("tenant beta was created despite the taken e-mail: %v", err)
		}
		if n := count(t, db, "tenants"); n != 1 {
			t.Errorf("after duplicate e-mail: %d tenants, want 1", n)
		}
		if n := count(t, db, "users"); n != 1 {
			t.Errorf("after duplicate e-mail: %d users, want 1", n)
		}
	})
}

func TestTenantCreatePasswordSources(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "pw.db")
	db := openStore(t, dsn)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	admin := func(t *testing.T, slug string) users.User {
		t.Helper()
		tn, err := db.TenantBySlug(ctx, slug)
		if err != nil {
			t.Fatal(err)
		}
		u, err := userTables(db).UserByEmail(ctx, tn.ID, "admin@"+slug+".test")
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	create := func(slug string, env map[string]string, stdin string, extra ...string) result {
		args := append([]string{"tenant", "create", "--database", dsn, "--slug", slug, "--admin-email", "admin@" + slug + ".test"}, extra...)
		return run(ctx, env, stdin, args...)
	}

	t.Run("env", func(t *testing.T) {
		r := create("from-env", map[string]string{"PLANWERK_ADMIN_PASSWORD": "env-password"}, "stdin-password\n")
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.stderr)
		}
		u := admin(t, "from-env")
		checkPassword(t, u, "env-password", true)
		checkPassword(t, u, "stdin-password", false)
	})
	t.Run("stdin", func(t *testing.T) {
		r := create("from-stdin", nil, "stdin-password\r\n")
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.stderr)
		}
		checkPassword(t, admin(t, "from-stdin"), "stdin-password", true)
	})
	t.Run("flag beats env", func(t *testing.T) {
		r := create("from-flag", map[string]string{"PLANWERK_ADMIN_PASSWORD": "env-password"}, "", "--admin-password", "flag-password")
		if r.err != nil {
			t.Fatalf("%v\n%s", r.err, r.stderr)
		}
		checkPassword(t, admin(t, "from-flag"), "flag-password", true)
	})
	// A password only has to be non-empty: no minimum length.
	t.Run("short from the flag", func(t *testing.T) {
		r := create("short-flag", nil, "", "--admin-password", "x")
		if r.err != nil {
			t.Fatalf("one-character password refused: %v\n%s", r.err, r.stderr)
		}
		checkPassword(t, admin(t, "short-flag"), "x", true)
	})
	t.Run("short from stdin", func(t *testing.T) {
		r := create("short-stdin", nil, "ab\n")
		if r.err != nil {
			t.Fatalf("two-character password refused: %v\n%s", r.err, r.stderr)
		}
		checkPassword(t, admin(t, "short-stdin"), "ab", true)
	})
	t.Run("empty line on stdin", func(t *testing.T) {
		before := count(t, db, "tenants")
		r := create("empty-stdin", nil, "\n")
		if !errors.Is(r.err, app.ErrUsage) {
			t.Errorf("empty password: err = %v, want ErrUsage", r.err)
		}
		if n := count(t, db, "tenants"); n != before {
			t.Errorf("tenants %d → %d with an empty password", before, n)
		}
	})
	t.Run("none", func(t *testing.T) {
		before := count(t, db, "tenants")
		r := create("no-password", nil, "")
		if !errors.Is(r.err, app.ErrUsage) {
			t.Errorf("no password anywhere: err = %v, want ErrUsage", r.err)
		}
		if n := count(t, db, "tenants"); n != before {
			t.Errorf("tenants %d → %d without a password", before, n)
		}
	})
}

func TestTenantCreateInvalid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := "sqlite:" + filepath.Join(t.TempDir(), "invalid.db")
	db := openStore(t, dsn)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
	}{
		{"upper-case slug", []string{"--slug", "Acme", "--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"underscore slug", []string{"--slug", "acme_corp", "--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"one-letter slug", []string{"--slug", "a", "--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"64-letter slug", []string{"--slug", strings.Repeat("a", 64), "--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"dotted slug", []string{"--slug", "acme.corp", "--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"missing slug", []string{"--admin-email", "a@b.test", "--admin-password", "long-enough"}},
		{"bad e-mail", []string{"--slug", "acme", "--admin-email", "not-an-address", "--admin-password", "long-enough"}},
		{"empty password", []string{"--slug", "acme", "--admin-email", "a@b.test", "--admin-password", ""}},
		{"stray argument", []string{"--slug", "acme", "--admin-email", "a@b.test", "--admin-password", "long-enough", "extra"}},
		{"unknown flag", []string{"--slug", "acme", "--admin-email", "a@b.test", "--admin-password", "long-enough", "--colour", "red"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"tenant", "create", "--database", dsn}, c.args...)
			r := run(ctx, nil, "", args...)
			if !errors.Is(r.err, app.ErrUsage) {
				t.Errorf("err = %v, want ErrUsage", r.err)
			}
			if r.stdout != "" {
				t.Errorf("stdout = %q, want nothing", r.stdout)
			}
		})
	}
	if n := count(t, db, "tenants"); n != 0 {
		t.Errorf("%d tenants written by invalid commands", n)
	}
}

// firstNumber returns the first integer in s, or -1.
func firstNumber(s string) int {
	m := regexp.MustCompile(`\d+`).FindString(s)
	if m == "" {
		return -1
	}
	n, _ := strconv.Atoi(m)
	return n
}

func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.DSN(t, b)
		r1 := run(ctx, nil, "", "migrate", "--database", dsn)
		if r1.err != nil {
			t.Fatalf("first migrate: %v\n%s", r1.err, r1.stderr)
		}
		r2 := run(ctx, nil, "", "migrate", "--database", dsn)
		if r2.err != nil {
			t.Fatalf("second migrate: %v\n%s", r2.err, r2.stderr)
		}
		if n := firstNumber(r1.stdout); n < 1 {
			t.Errorf("first migrate reported %q, want a positive count", r1.stdout)
		}
		if n := firstNumber(r2.stdout); n != 0 {
			t.Errorf("second migrate reported %q, want 0 applied", r2.stdout)
		}
		if !strings.Contains(r1.stdout, b.Name) {
			t.Errorf("migrate output %q does not name the engine %s", r1.stdout, b.Name)
		}
		db := openStore(t, dsn)
		if n, err := db.Migrate(ctx); err != nil || n != 0 {
			t.Errorf("after two migrate commands Migrate() = %d, %v; want 0, nil", n, err)
		}
		if n := count(t, db, "tenants"); n != 0 {
			t.Errorf("%d tenants in a migrated fresh database", n)
		}
	})
}

func TestVersion(t *testing.T) {
	t.Parallel()
	r := run(context.Background(), nil, "", "version")
	if r.err != nil {
		t.Fatal(r.err)
	}
	if !strings.HasPrefix(r.stdout, "planwerk ") || strings.Count(r.stdout, "\n") != 1 || len(r.stdout) <= len("planwerk \n") {
		t.Errorf("version printed %q", r.stdout)
	}

	old := app.Version
	t.Cleanup(func() { app.Version = old })
	app.Version = "9.8.7-test"
	r = run(context.Background(), nil, "", "version")
	if r.err != nil || r.stdout != "planwerk 9.8.7-test\n" {
		t.Errorf("with Version set: %q, %v", r.stdout, r.err)
	}
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func TestDatabaseFromEnv(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // a default sqlite:data/planwerk.db would land here
	ctx := context.Background()
	envPath := filepath.Join(dir, "env", "env.db")
	flagPath := filepath.Join(dir, "flag", "flag.db")
	env := map[string]string{"PLANWERK_DATABASE": "sqlite:" + envPath}

	r := run(ctx, env, "", "migrate")
	if r.err != nil {
		t.Fatalf("migrate with PLANWERK_DATABASE: %v\n%s", r.err, r.stderr)
	}
	if !exists(envPath) {
		t.Errorf("PLANWERK_DATABASE was not used: %s missing", envPath)
	}
	if exists(filepath.Join(dir, "data")) {
		t.Errorf("the default database was created despite PLANWERK_DATABASE")
	}
	db := openStore(t, "sqlite:"+envPath)
	if n, err := db.Migrate(ctx); err != nil || n != 0 {
		t.Errorf("the env database is not fully migrated: %d, %v", n, err)
	}

	r = run(ctx, map[string]string{"PLANWERK_DATABASE": "sqlite:" + filepath.Join(dir, "other", "other.db")}, "",
		"migrate", "--database", "sqlite:"+flagPath)
	if r.err != nil {
		t.Fatalf("migrate with flag and env: %v\n%s", r.err, r.stderr)
	}
	if !exists(flagPath) {
		t.Errorf("--database was not used: %s missing", flagPath)
	}
	if exists(filepath.Join(dir, "other")) {
		t.Errorf("PLANWERK_DATABASE beat the --database flag")
	}

	// tenant create reads it too.
	r = run(ctx, env, "", "tenant", "create", "--slug", "envtenant", "--admin-email", "a@env.test", "--admin-password", "env-tenant-pw")
	if r.err != nil {
		t.Fatalf("tenant create with PLANWERK_DATABASE: %v\n%s", r.err, r.stderr)
	}
	if _, err := db.TenantBySlug(ctx, "envtenant"); err != nil {
		t.Errorf("tenant not in the PLANWERK_DATABASE database: %v", err)
	}

	// A bad value in the environment is a usage error.
	r = run(ctx, map[string]string{"PLANWERK_DATABASE": "mysql://nope"}, "", "serve")
	if !errors.Is(r.err, app.ErrUsage) {
		t.Errorf("serve with PLANWERK_DATABASE=mysql://nope: err = %v, want ErrUsage", r.err)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		nil,
		{"frobnicate"},
		{"tenant"},
		{"tenant", "delete"},
		{"migrate", "--no-such-flag"},
		{"migrate", "stray"},
		{"serve", "--token-ttl", "-1"},
	} {
		r := run(context.Background(), nil, "", args...)
		if !errors.Is(r.err, app.ErrUsage) {
			t.Errorf("Run(%q): err = %v, want ErrUsage", args, r.err)
		}
	}
	r := run(context.Background(), nil, "", "frobnicate")
	if !strings.Contains(r.stderr, "frobnicate") {
		t.Errorf("unknown command: stderr %q does not name it", r.stderr)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

func TestServeGracefulShutdown(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	addr := freeAddr(t)
	base := "http://" + addr
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	var stdout, stderr testenv.SyncBuffer
	done := make(chan error, 1)
	go func() {
		done <- app.Run(ctx, []string{"serve", "--demo", "--addr", addr,
			"--database", "sqlite:" + filepath.Join(dir, "serve.db"), "--files", filepath.Join(dir, "files")},
			app.IO{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
	}()

	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}

	// Wait until /healthz answers.
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case err := <-done:
			t.Fatalf("serve returned before it was ready: %v\nstderr: %s", err, stderr.String())
		default:
		}
		resp, err := client.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz did not answer within 20s (last error %v)\nstderr: %s", err, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	transport.CloseIdleConnections()

	// Each request asks for "100 Continue" and sends its form only when the
	// server's handler starts reading it: once every request has written
	// its body, all four are in the handler, not in the accept queue.
	transport.ExpectContinueTimeout = 10 * time.Second
	const n = 4
	form := url.Values{
		"grant_type": {"password"}, "username": {"admin@demo.test"}, "password": {"demo-password"},
		"client_id": {"x"}, "client_secret": {"y"},
	}.Encode()
	type answer struct {
		status   int
		body     map[string]any
		err      error
		got100   bool
		finished time.Time
	}
	answers := make([]answer, n)
	var written, finished sync.WaitGroup
	written.Add(n)
	finished.Add(n)
	for i := range n {
		go func() {
			defer finished.Done()
			defer func() { answers[i].finished = time.Now() }()
			var once sync.Once
			wrote := func() { once.Do(written.Done) }
			defer wrote() // never leave the waiter hanging
			trace := &httptrace.ClientTrace{
				Got100Continue: func() { answers[i].got100 = true },
				WroteRequest:   func(httptrace.WroteRequestInfo) { wrote() },
			}
			req, err := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
				http.MethodPost, base+"/oauth2/token", strings.NewReader(form))
			if err != nil {
				answers[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			req.Header.Set("Expect", "100-continue")
			req.Header.Set("companyurl", "demo")
			resp, err := client.Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer resp.Body.Close()
			answers[i].status = resp.StatusCode
			raw, _ := io.ReadAll(resp.Body)
			if err := json.Unmarshal(raw, &answers[i].body); err != nil {
				answers[i].err = fmt.Errorf("body %q: %w", raw, err)
			}
		}()
	}
	written.Wait()
	time.Sleep(20 * time.Millisecond)
	cancelled := time.Now()
	cancel()
	finished.Wait()

	lateAnswers := 0
	for i, a := range answers {
		if a.err != nil {
			t.Errorf("request %d: %v\nstderr:\n%s", i, a.err, stderr.String())
			continue
		}
		if !a.got100 {
			t.Errorf("request %d: sent without 100 Continue; it may not have been in flight", i)
		}
		if a.finished.After(cancelled) {
			lateAnswers++
		}
		if a.status != http.StatusOK {
			t.Errorf("request %d: status %d (%v), want 200", i, a.status, a.body)
			continue
		}
		if tok, _ := a.body["access_token"].(string); tok == "" {
			t.Errorf("request %d: no access_token in %v", i, a.body)
		}
		if a.body["token_type"] != "Bearer" {
			t.Errorf("request %d: token_type %v", i, a.body["token_type"])
		}
	}
	if lateAnswers == 0 {
		t.Errorf("every request finished before the cancel: the shutdown overlapped no request")
	}

	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve returned %v, want nil after a graceful shutdown", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return within 30s of the cancel")
	}
	transport.CloseIdleConnections()
	if resp, err := client.Get(base + "/healthz"); err == nil {
		resp.Body.Close()
		t.Errorf("the server still answers after shutdown: %d", resp.StatusCode)
	}

	curl := ""
	for _, line := range strings.Split(stdout.String(), "\n") {
		if strings.Contains(line, "curl ") {
			curl = line
		}
	}
	if !strings.Contains(curl, "/oauth2/token") || !strings.Contains(curl, addr) || !strings.Contains(curl, "demo") {
		t.Errorf("serve --demo printed no usable curl line for %s/oauth2/token:\n%s", addr, stdout.String())
	}
}
