package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"planwerk/internal/testenv"
)

// served is a `planwerk serve` process with a tenant "acme" and its
// admin's token.
type served struct {
	url   string
	cmd   *exec.Cmd
	log   *testenv.SyncBuffer
	token string
	exit  chan error
}

func serveBinary(t *testing.T, bin string, env []string, args ...string) *served {
	t.Helper()
	create := exec.Command(bin, "tenant", "create", "--slug", "acme", "--admin-email", "admin@acme.test", "--admin-password", "acme-password")
	create.Env = append(os.Environ(), env...)
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}
	addr := testenv.FreeAddr(t)
	cmd := exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	s := &served{url: "http://" + addr, cmd: cmd, log: &testenv.SyncBuffer{}, exit: make(chan error, 1)}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.exit
	})
	in := &instance{url: s.url, cmd: cmd, log: s.log}
	in.waitReady(t)
	form := url.Values{"grant_type": {"password"}, "username": {"admin@acme.test"}, "password": {"acme-password"},
		"client_id": {"t"}, "client_secret": {"t"}}
	req, _ := http.NewRequest(http.MethodPost, s.url+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("companyurl", "acme")
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || tok.AccessToken == "" {
		t.Fatalf("password grant: %d %v", resp.StatusCode, err)
	}
	s.token = tok.AccessToken
	return s
}

// TestShutdownCutsUploads: SIGTERM while an upload streams slowly. The
// service stops taking connections, gives the upload the grace period,
// then cuts it; it leaves no temporary file and no incomplete multipart
// upload behind, and exits 0.
func TestShutdownCutsUploads(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		testenv.EachFiles(t, func(t *testing.T, fb testenv.FileBackend) {
			files := testenv.Files(t, fb)
			env := []string{"PLANWERK_DATABASE=" + testenv.DSN(t, b), "PLANWERK_FILES=" + files}
			s := serveBinary(t, bin, env, "--shutdown-grace", "1s")

			req, _ := http.NewRequest(http.MethodPost, s.url+"/v1/expenses", strings.NewReader(`{}`))
			req.Header.Set("companyurl", "acme")
			req.Header.Set("Authorization", "Bearer "+s.token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var exp struct{ ID int64 }
			_ = json.NewDecoder(resp.Body).Decode(&exp)
			resp.Body.Close()

			// An upload that sends 10 MiB (more than one S3 part) and then
			// nothing more, though it announced 20 MiB.
			u, _ := url.Parse(s.url)
			conn, err := net.Dial("tcp", u.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			head := "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n"
			fmt.Fprintf(conn, "POST /v1/files/upload/expense/%d HTTP/1.1\r\nHost: %s\r\ncompanyurl: acme\r\nAuthorization: Bearer %s\r\n"+
				"Content-Type: multipart/form-data; boundary=XX\r\nContent-Length: %d\r\n\r\n%s",
				exp.ID, u.Host, s.token, len(head)+20<<20, head)
			if _, err := conn.Write(bytes.Repeat([]byte{7}, 10<<20)); err != nil {
				t.Fatal(err)
			}
			// The upload is being stored: a temporary file, or a multipart upload.
			inFlight := func() bool { return len(leftovers(t, fb, files)) > 0 }
			deadline := time.Now().Add(time.Minute)
			for !inFlight() {
				if time.Now().After(deadline) {
					t.Fatalf("the upload never reached the store; log:\n%s", s.log.String())
				}
				time.Sleep(20 * time.Millisecond)
			}

			if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-s.exit:
				if err != nil {
					t.Errorf("exit after SIGTERM: %v, want 0; log:\n%s", err, s.log.String())
				}
			case <-time.After(time.Minute):
				t.Fatalf("still running a minute after SIGTERM; log:\n%s", s.log.String())
			}
			s.exit <- nil // for the clean-up
			if left := leftovers(t, fb, files); len(left) > 0 {
				t.Errorf("left behind by the cut upload: %v", left)
			}
			if !strings.Contains(s.log.String(), "grace period over") {
				t.Errorf("the log does not say the grace period ended:\n%s", s.log.String())
			}
			// New connections are refused once it has stopped.
			if _, err := net.DialTimeout("tcp", u.Host, time.Second); err == nil {
				t.Error("the stopped service still accepts connections")
			}
		})
	})
}

// leftovers lists what an unfinished upload leaves in a store: temporary
// files in a folder, objects and incomplete multipart uploads in S3.
func leftovers(t *testing.T, fb testenv.FileBackend, files string) []string {
	t.Helper()
	var out []string
	if fb.Name != "s3" {
		_ = filepath.WalkDir(files, func(path string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				out = append(out, path)
			}
			return nil
		})
		return out
	}
	core, bucket := testenv.S3Client(t, files)
	ctx := context.Background()
	if exists, err := core.BucketExists(ctx, bucket); err != nil || !exists {
		return nil
	}
	for obj := range core.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
		out = append(out, "object "+obj.Key)
	}
	for up := range core.Client.ListIncompleteUploads(ctx, bucket, "", true) {
		out = append(out, "multipart upload "+up.Key)
	}
	return out
}

// TestMetricsAddr: with --metrics-addr, /metrics is served there and not
// on the main listener.
func TestMetricsAddr(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		metricsAddr := testenv.FreeAddr(t)
		env := []string{"PLANWERK_DATABASE=" + testenv.DSN(t, b), "PLANWERK_FILES=" + t.TempDir()}
		s := serveBinary(t, bin, env, "--metrics-addr", metricsAddr)
		get := func(u string) (int, string) {
			resp, err := http.Get(u)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(raw)
		}
		if status, _ := get(s.url + "/metrics"); status != http.StatusNotFound {
			t.Errorf("/metrics on the main listener: %d, want 404", status)
		}
		status, body := get("http://" + metricsAddr + "/metrics")
		if status != http.StatusOK || !strings.Contains(body, "planwerk_http_requests_total") {
			t.Errorf("/metrics on --metrics-addr: %d %.200s", status, body)
		}
	})
}
