//go:build system

package app_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestImportKilled: tenant import killed (SIGKILL) after it has stored
// rows and files leaves its tenant importing, which the service does not
// serve; the next import of the same archive and slug erases what the
// killed one wrote, its files included, and completes.
func TestImportKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills an import: skipped with -short")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		src := testenv.Start(t, b, loopbackHooks)
		seedArchive(t, src, "acme", 1<<20, 1<<20, 1<<20)
		file := exportTenant(t, src, "acme", t.TempDir())
		archive := readFile(t, file)
		dst := testenv.Start(t, b)

		// The archive reaches the import through a pipe, up to the middle
		// of its last file: the import stores what it has and waits for
		// the rest, and is killed there.
		fifo := filepath.Join(t.TempDir(), "archive")
		if err := syscall.Mkfifo(fifo, 0o600); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "tenant", "import", "--in", fifo, "--slug", "acme2")
		cmd.Env = append(os.Environ(), "PLANWERK_DATABASE="+dst.Config.Database, "PLANWERK_FILES="+dst.Config.Files)
		var stderr testenv.SyncBuffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		pipe := openPipe(t, fifo, exited, &stderr)
		go func() {
			_, _ = pipe.Write(archive[:len(archive)-(512<<10)])
		}()
		waitFor(t, exited, &stderr, "two files of the import stored", func() bool {
			tn, err := dst.Service.DB.TenantBySlug(ctx, "acme2")
			return err == nil && tn.State == store.TenantImporting && len(storedFiles(t, dst.Config.Files)) >= 2
		})
		_ = cmd.Process.Kill()
		<-exited
		pipe.Close()

		if tn, err := dst.Service.DB.TenantBySlug(ctx, "acme2"); err != nil || tn.State != store.TenantImporting {
			t.Fatalf("after the kill, tenant acme2: %+v %v; want it importing", tn, err)
		}
		anonymous := &testenv.Client{Srv: dst, Slug: "acme2"}
		if status, _, raw := anonymous.Send(t, http.MethodGet, "/v1/projects", nil); status != http.StatusBadRequest || !strings.Contains(string(raw), "unknown_tenant") {
			t.Errorf("a request of the tenant being imported: %d %s, want 400 unknown_tenant", status, raw)
		}
		if status, _, _ := dst.Grant(t, "acme2", testenv.PasswordForm("admin@acme.test", "password-acme")); status == http.StatusOK {
			t.Error("the admin of the tenant being imported signed in")
		}

		r := run(ctx, envOf(dst), "", "tenant", "import", "--in", file, "--slug", "acme2")
		if r.err != nil {
			t.Fatalf("the import after the kill: %v %s", r.err, r.stderr)
		}
		if got := storedFiles(t, dst.Config.Files); len(got) != 3 {
			t.Errorf("files after the second import: %v, want its 3 alone", got)
		}
		if n := orphans(t, dst.Service.DB); n != 0 {
			t.Errorf("%d rows of no tenant after the second import", n)
		}
		// The service learns of the tenant within its cache's time.
		waitFor(t, nil, &stderr, "the imported tenant served", func() bool {
			status, _, _ := dst.Grant(t, "acme2", testenv.PasswordForm("admin@acme.test", "password-acme"))
			return status == http.StatusOK
		})
		if r := run(ctx, envOf(dst), "", "audit", "verify", "--tenant", "acme2"); r.err != nil {
			t.Errorf("audit verify: %v %s", r.err, r.stderr)
		}
	})
}

// openPipe opens the write end of the pipe at path once the process has
// opened its read end.
func openPipe(t *testing.T, path string, exited chan error, stderr *testenv.SyncBuffer) *os.File {
	t.Helper()
	var f *os.File
	waitFor(t, exited, stderr, "the import opening its archive", func() bool {
		var err error
		f, err = os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
		if err != nil && !errors.Is(err, syscall.ENXIO) {
			t.Fatal(err)
		}
		return err == nil
	})
	return f
}

// waitFor polls cond until it holds, failing the test when the process
// exits first (exited nil: none) or a minute passes.
func waitFor(t *testing.T, exited chan error, stderr *testenv.SyncBuffer, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		select {
		case err := <-exited:
			t.Fatalf("the import exited (%v) before %s:\n%s", err, what, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s within a minute:\n%s", what, stderr.String())
		}
	}
}
