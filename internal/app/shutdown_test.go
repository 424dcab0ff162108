//go:build system

package app_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"planwerk/internal/testenv"
)

// served is a `planwerk serve` process with a tenant "acme" and a client
// of its admin.
type served struct {
	*instance
	c    *testenv.Client
	exit chan error
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
	s := &served{instance: &instance{srv: &testenv.Server{URL: "http://" + addr}, cmd: cmd, log: &testenv.SyncBuffer{}}, exit: make(chan error, 1)}
	cmd.Stderr = s.log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exit <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-s.exit
	})
	s.waitReady(t)
	s.c = &testenv.Client{Srv: s.srv, Slug: "acme", Token: s.srv.Token(t, "acme", "admin@acme.test", "acme-password")}
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
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		testenv.EachFiles(t, func(t *testing.T, fb testenv.FileBackend) {
			files := testenv.Files(t, fb)
			env := []string{"PLANWERK_DATABASE=" + testenv.DSN(t, b), "PLANWERK_FILES=" + files}
			s := serveBinary(t, bin, env, "--shutdown-grace", "1s")

			exp := testenv.ID(t, s.c.Create(t, "expenses", testenv.M{}))

			// An upload that sends 10 MiB (more than one S3 part) and then
			// nothing more, though it announced 20 MiB. It is written by
			// hand on a connection of its own, which http.Client cannot
			// leave half sent; its headers are the client's.
			head := "--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.bin\"\r\n\r\n"
			req := s.c.Request(t, http.MethodPost, testenv.UploadPath("expense", exp, false), nil)
			req.Header.Set("Content-Type", "multipart/form-data; boundary=XX")
			req.Header.Set("Content-Length", strconv.Itoa(len(head)+20<<20))
			conn, err := net.Dial("tcp", req.URL.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\n", req.Method, req.URL.RequestURI(), req.URL.Host)
			if err := req.Header.Write(conn); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(conn, "\r\n%s", head)
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
			if _, err := net.DialTimeout("tcp", req.URL.Host, time.Second); err == nil {
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
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		metricsAddr := testenv.FreeAddr(t)
		env := []string{"PLANWERK_DATABASE=" + testenv.DSN(t, b), "PLANWERK_FILES=" + t.TempDir()}
		s := serveBinary(t, bin, env, "--metrics-addr", metricsAddr)
		if status, _, _ := testenv.Fetch(t, http.MethodGet, s.srv.URL+"/metrics"); status != http.StatusNotFound {
			t.Errorf("/metrics on the main listener: %d, want 404", status)
		}
		status, _, body := testenv.Fetch(t, http.MethodGet, "http://"+metricsAddr+"/metrics")
		if status != http.StatusOK || !strings.Contains(string(body), "planwerk_http_requests_total") {
			t.Errorf("/metrics on --metrics-addr: %d %.200s", status, body)
		}
	})
}
