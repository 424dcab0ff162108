//go:build system

package app_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestDeleteKilled: tenant delete killed (SIGKILL) after it has erased
// the tenant's files and while it waits for every instance to stop
// serving it leaves the tenant deleting, which the service treats as
// unknown, with its rows still there; running the command again finishes
// the erasure, and the slug can be taken again.
func TestDeleteKilled(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and kills a delete: skipped with -short")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.TenantCacheTTL = time.Microsecond
			c.WebhookAllowPrivate = true
		})
		acme := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, acme)
		populate(t, c)
		db := testenv.Open(t, srv.Config.Database)
		prefix := fmt.Sprintf("t%d/", acme.ID)
		if n := filesUnder(t, srv.Config.Files, prefix); n == 0 {
			t.Fatal("the test gave acme no files")
		}

		cmd := exec.Command(bin, "tenant", "delete", "--slug", "acme", "--confirm", "acme")
		cmd.Env = append(os.Environ(), "PLANWERK_DATABASE="+srv.Config.Database, "PLANWERK_FILES="+srv.Config.Files)
		var stdout, stderr testenv.SyncBuffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// The command erases the files, then waits for every instance's
		// cache to let the tenant go before it erases the rows: it is
		// killed there.
		waitFor(t, exited, &stderr, "the delete waiting for the instances", func() bool {
			return strings.Contains(stdout.String(), "waiting")
		})
		_ = cmd.Process.Kill()
		<-exited

		tn, err := db.TenantBySlug(ctx, "acme")
		if err != nil || tn.State != store.TenantDeleting {
			t.Fatalf("after the kill, tenant acme: %+v %v; want it deleting", tn, err)
		}
		if rows := testenv.TenantRows(t, db, acme.ID); rows["records"] == 0 {
			t.Fatalf("the kill came after the rows were erased: %v", rows)
		}
		if n := filesUnder(t, srv.Config.Files, prefix); n != 0 {
			t.Errorf("%d of acme's files left after the kill; they go before the wait", n)
		}
		c.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusBadRequest, "unknown_tenant")

		r := run(ctx, envOf(srv), "", "tenant", "delete", "--slug", "acme", "--confirm", "acme")
		if r.err != nil {
			t.Fatalf("delete after the kill: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, db, acme.ID))
		again := srv.CreateTenant(t, "acme")
		srv.SignIn(t, again).List(t, "/v1/projects")
	})
}
