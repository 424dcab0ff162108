package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/testenv"
)

// instance is one running `planwerk serve` process.
type instance struct {
	url string
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
	in := &instance{url: "http://" + addr, cmd: cmd, log: log}
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

func (in *instance) waitReady(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(in.url + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("instance %s not ready; log:\n%s", in.url, in.log.String())
}

func (in *instance) do(t *testing.T, method, path, token string, body io.Reader, ct string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, in.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", "shared")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

func (in *instance) grant(t *testing.T, form url.Values) (int, map[string]any) {
	t.Helper()
	form.Set("client_id", "cluster-test")
	form.Set("client_secret", "x")
	status, _, b := in.do(t, http.MethodPost, "/oauth2/token", "", strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return status, m
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

	create := exec.Command(bin, "tenant", "create", "--slug", "shared", "--admin-email", "admin@shared.test", "--admin-password", "shared-password")
	create.Env = append(os.Environ(), env...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}

	// A token issued by one instance works on the other.
	status, tok := a.grant(t, url.Values{"grant_type": {"password"}, "username": {"admin@shared.test"}, "password": {"shared-password"}})
	if status != 200 {
		t.Fatalf("password grant on A: %d %v", status, tok)
	}
	access, refresh := tok["access_token"].(string), tok["refresh_token"].(string)
	if status, _, body := b.do(t, http.MethodGet, "/v1/users/me", access, nil, ""); status != 200 {
		t.Fatalf("A's token on B: %d %s", status, body)
	}

	// Refresh rotation and reuse detection hold across instances.
	status, rotated := b.grant(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	if status != 200 {
		t.Fatalf("refresh on B: %d %v", status, rotated)
	}
	status, reuse := a.grant(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {refresh}})
	if status != 400 || reuse["error"] != "invalid_grant" {
		t.Fatalf("reuse of the spent refresh token on A: %d %v", status, reuse)
	}
	if status, _, _ := b.do(t, http.MethodGet, "/v1/users/me", rotated["access_token"].(string), nil, ""); status != 401 {
		t.Errorf("access token of the revoked family on B: %d, want 401", status)
	}
	if status, _ := b.grant(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {rotated["refresh_token"].(string)}}); status != 400 {
		t.Errorf("refresh token of the revoked family on B: %d, want 400", status)
	}

	// A fresh login for the file checks.
	_, tok = b.grant(t, url.Values{"grant_type": {"password"}, "username": {"admin@shared.test"}, "password": {"shared-password"}})
	access = tok["access_token"].(string)
	_, _, p := a.do(t, http.MethodPost, "/v1/projects", access, strings.NewReader(`{"name":"P"}`), "application/json")
	var project struct{ ID int64 }
	_ = json.Unmarshal(p, &project)
	_, _, d := a.do(t, http.MethodPost, "/v1/documents", access,
		strings.NewReader(fmt.Sprintf(`{"model":"project","record":%d,"category":7}`, project.ID)), "application/json")
	var doc struct{ ID int64 }
	_ = json.Unmarshal(d, &doc)

	// A file uploaded through A (rate-limited request 1) ...
	content := bytes.Repeat([]byte("planwerk cluster "), 4096)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "shared.txt")
	_, _ = part.Write(content)
	_ = mw.Close()
	status, _, up := a.do(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/document/%d?delete_others=1", doc.ID), access, &body, mw.FormDataContentType())
	if status != 201 {
		t.Fatalf("upload on A: %d %s", status, up)
	}
	var upload struct{ ID int64 }
	_ = json.Unmarshal(up, &upload)
	// ... downloads through B (request 2).
	status, _, link := b.do(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload.ID), access, nil, "")
	if status != 200 {
		t.Fatalf("download URL on B: %d %s", status, link)
	}
	var signed string
	_ = json.Unmarshal(link, &signed)
	resp, err := http.Get(signed)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !bytes.Equal(got, content) {
		t.Fatalf("download from B's link: %d, %d bytes, want %d", resp.StatusCode, len(got), len(content))
	}

	// The rate limit (4 per minute per user) is shared: requests 3 and 4
	// on A and B pass, the fifth is refused on either.
	for i, in := range []*instance{a, b} {
		if status, _, body := in.do(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload.ID), access, nil, ""); status != 200 {
			t.Fatalf("rate-limited request %d: %d %s", i+3, status, body)
		}
	}
	for _, in := range []*instance{a, b} {
		status, hdr, _ := in.do(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload.ID), access, nil, "")
		if status != 429 || hdr.Get("Retry-After") == "" {
			t.Errorf("fifth request on %s: %d, Retry-After %q; want 429 shared across instances", in.url, status, hdr.Get("Retry-After"))
		}
	}
}
