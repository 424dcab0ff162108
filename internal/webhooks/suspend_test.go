package webhooks_test

import (
	"bytes"
	"context"
	"net/http"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// operator runs an operator's command against the database of srv.
func operator(t *testing.T, srv *testenv.Server, args ...string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"PLANWERK_DATABASE": srv.Config.Database}
	if err := app.Run(context.Background(), args, app.IO{Stdout: &out, Stderr: &errOut, Getenv: func(k string) string { return env[k] }}); err != nil {
		t.Fatalf("%v: %v %s", args, err, errOut.String())
	}
}

// TestWebhookSuspendedTenant: a suspended tenant's webhooks hold their
// deliveries, and deliver every one after it is resumed. The changes
// held are written while it is suspended through an instance that
// still has the tenant as active in its cache (as requests that were in
// flight do); another tenant's webhooks deliver meanwhile.
func TestWebhookSuspendedTenant(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b, quick, func(c *config.Config) { c.TenantCacheTTL = time.Microsecond })
		two := testenv.Start(t, b, quick, func(c *config.Config) {
			c.Database = one.Config.Database
			c.TenantCacheTTL = time.Hour
		})
		acme, other := one.CreateTenant(t, "acme"), one.OtherTenant(t, "other")
		ca, stale, co := one.SignIn(t, acme), two.SignIn(t, acme), one.SignIn(t, other)
		ra, ro := newReceiver(t), newReceiver(t)
		create(t, ca, ra, []string{"projects"})
		create(t, co, ro, []string{"projects"})
		project(t, ca, "before")
		waitFor(t, "the first delivery", func() bool { return len(ra.delivered()) == 1 })

		operator(t, one, "tenant", "suspend", "--slug", "acme")
		ca.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusForbidden, "tenant_suspended")
		project(t, stale, "held 1")
		project(t, stale, "held 2")
		// The other tenant's change, made after the held ones, is
		// delivered: the dispatchers have looked for work since.
		project(t, co, "other")
		waitFor(t, "the other tenant's delivery", func() bool { return len(ro.delivered()) == 1 })
		if got := ra.messages(); len(got) != 1 {
			t.Fatalf("a suspended tenant's webhook was called: %d requests", len(got))
		}

		operator(t, one, "tenant", "resume", "--slug", "acme")
		waitFor(t, "the held deliveries", func() bool { return len(ra.delivered()) >= 3 })
		var names []any
		for _, m := range ra.delivered() {
			names = append(names, m.Data.Record["name"])
		}
		if len(names) != 3 || names[1] != "held 1" || names[2] != "held 2" {
			t.Errorf("deliveries after resume: %v", names)
		}
	})
}
