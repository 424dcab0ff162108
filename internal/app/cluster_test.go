//go:build system

package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/testenv"
	"planwerk/internal/testenv/canonical"
)

// instance is one running `planwerk serve` process.
type instance struct {
	srv *testenv.Server
	cmd *exec.Cmd
	log *testenv.SyncBuffer
}

func startInstance(t *testing.T, bin string, env []string) *instance {
	t.Helper()
	addr := testenv.FreeAddr(t)
	cmd := exec.Command(bin, "serve", "--addr", addr)
	cmd.Env = append(os.Environ(), env...)
	log := &testenv.SyncBuffer{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{srv: &testenv.Server{URL: "http://" + addr}, cmd: cmd, log: log}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	return in
}

// waitReady polls /readyz with a plain http.Get: until the process
// listens, its requests fail, which the test client would report.
func (in *instance) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(in.srv.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("instance %s not ready; log:\n%s", in.srv.URL, in.log.String())
}

// TestTwoInstances runs two `planwerk serve` processes on one PostgreSQL
// schema, one Redis and one S3-compatible store, started at the same time,
// and checks that they behave as one service.
func TestTwoInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testenv.BuildBinary(t, dir)
	dsn := testenv.DSN(t, testenv.Backend{Name: "postgres"})
	files := testenv.S3(t) // sets the AWS credentials in the environment
	const redisURL = "redis://127.0.0.1:6379/7"
	opts, _ := redis.ParseURL(redisURL)
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis: %v", err)
		}
		t.Skipf("redis at %s does not answer: %v", redisURL, err)
	}
	// This test owns Redis database 7.
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	env := []string{
		"PLANWERK_DATABASE=" + dsn,
		"PLANWERK_FILES=" + files,
		"PLANWERK_REDIS=" + redisURL,
		"PLANWERK_FILE_RATE=4",
	}
	// Both start (and migrate the empty schema) at once.
	a, b := startInstance(t, bin, env), startInstance(t, bin, env)
	a.waitReady(t)
	b.waitReady(t)

	const slug, email, password = "shared", "admin@shared.test", "shared-password"
	create := exec.Command(bin, "tenant", "create", "--slug", slug, "--admin-email", email, "--admin-password", password)
	create.Env = append(os.Environ(), env...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}

	// A token issued by one instance works on the other.
	on := func(in *instance, token string) *testenv.Client {
		return &testenv.Client{Srv: in.srv, Slug: slug, Token: token}
	}
	status, _, tok := a.srv.Grant(t, slug, testenv.PasswordForm(email, password))
	if status != 200 {
		t.Fatalf("password grant on A: %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if status, _, body := on(b, access).Send(t, http.MethodGet, "/v1/users/me", nil); status != 200 {
		t.Fatalf("A's token on B: %d %s", status, body)
	}

	// Refresh rotation and reuse detection hold across instances.
	status, _, rotated := b.srv.Grant(t, slug, testenv.RefreshForm(refresh))
	if status != 200 {
		t.Fatalf("refresh on B: %d %v", status, rotated)
	}
	status, _, reuse := a.srv.Grant(t, slug, testenv.RefreshForm(refresh))
	if status != 400 || reuse["error"] != "invalid_grant" {
		t.Fatalf("reuse of the spent refresh token on A: %d %v", status, reuse)
	}
	if status, _, _ := on(b, rotated["access_token"].(string)).Send(t, http.MethodGet, "/v1/users/me", nil); status != 401 {
		t.Errorf("access token of the revoked family on B: %d, want 401", status)
	}
	if status, _, _ := b.srv.Grant(t, slug, testenv.RefreshForm(rotated["refresh_token"].(string))); status != 400 {
		t.Errorf("refresh token of the revoked family on B: %d, want 400", status)
	}

	// A fresh login for the file checks.
	access = b.srv.Token(t, slug, email, password)
	ca, cb := on(a, access), on(b, access)

	// Eight writers, four on each instance, make one chain of audit
	// entries without gaps that verifies, recomputed without the
	// service's code; the command's entries say so.
	const writers, each = 8, 15
	var wg sync.WaitGroup
	for w := range writers {
		c := []*testenv.Client{ca, cb}[w%2]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if status, _, body := c.Send(t, http.MethodPost, "/v1/projects", testenv.M{"name": fmt.Sprintf("w%d-%d", w, i)}); status != 201 {
					t.Errorf("writer %d: %d %s", w, status, body)
					return
				}
			}
		}()
	}
	wg.Wait()
	var log []json.RawMessage
	for after := ""; ; {
		var page struct {
			Entries []json.RawMessage
			Next    string
		}
		status, _, body := ca.Send(t, http.MethodGet, "/v1/audit-log?limit=50"+after, nil)
		if status != 200 {
			t.Fatalf("audit log: %d %s", status, body)
		}
		testenv.DecodeInto(t, body, &page)
		if len(page.Entries) == 0 {
			break
		}
		log, after = append(log, page.Entries...), "&after="+page.Next
	}
	entries := canonical.CheckAuditChain(t, log)
	projects := 0
	for _, e := range entries {
		if e["resource"] == "projects" {
			projects++
		}
		if e["resource"] == "tenant" && fmt.Sprint(e["actor"]) != "map[apiClient:<nil> user:<nil> via:cli]" {
			t.Errorf("the tenant's creation by the command: actor %v", e["actor"])
		}
	}
	if projects != writers*each {
		t.Errorf("%d entries of projects, want %d", projects, writers*each)
	}
	verify := exec.Command(bin, "audit", "verify", "--tenant", slug)
	verify.Env = append(os.Environ(), env...)
	if out, err := verify.CombinedOutput(); err != nil {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
	_, doc := ca.Document(t)

	// A file uploaded through A (rate-limited request 1) ...
	content := bytes.Repeat([]byte("planwerk cluster "), 4096)
	status, _, up := ca.Upload(t, testenv.UploadPath("document", doc, true), testenv.Part{Filename: "shared.txt", Data: content})
	if status != 201 {
		t.Fatalf("upload on A: %d %s", status, up)
	}
	var upload testenv.M
	if err := json.Unmarshal(up, &upload); err != nil {
		t.Fatalf("upload on A: %s: %v", up, err)
	}
	link := fmt.Sprintf("/v1/files/download/%d", testenv.ID(t, upload))
	// ... downloads through B (request 2).
	if got := cb.Download(t, testenv.ID(t, upload)); !bytes.Equal(got, content) {
		t.Fatalf("download from B's link: %d bytes, want %d", len(got), len(content))
	}

	// The rate limit (4 per minute per user) is shared: requests 3 and 4
	// on A and B pass, the fifth is refused on either.
	for i, c := range []*testenv.Client{ca, cb} {
		if status, _, body := c.Send(t, http.MethodGet, link, nil); status != 200 {
			t.Fatalf("rate-limited request %d: %d %s", i+3, status, body)
		}
	}
	for _, c := range []*testenv.Client{ca, cb} {
		status, hdr, _ := c.Send(t, http.MethodGet, link, nil)
		if status != 429 || hdr.Get("Retry-After") == "" {
			t.Errorf("fifth request on %s: %d, Retry-After %q; want 429 shared across instances", c.Srv.URL, status, hdr.Get("Retry-After"))
		}
	}
}
