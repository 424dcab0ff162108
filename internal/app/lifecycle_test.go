package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// fresh makes a server look its tenants up again on every request (its
// tenant cache keeps them a microsecond), and its waiting feed reads look
// for changes often: what an operator's command changes shows at once.
func fresh(c *config.Config) {
	c.TenantCacheTTL = time.Microsecond
	c.FeedLook = 20 * time.Millisecond
}

// wantSuspended checks an answer is 403 tenant_suspended.
func wantSuspended(t *testing.T, what string, status int, raw []byte) {
	t.Helper()
	testenv.WantError(t, what, status, raw, http.StatusForbidden, "tenant_suspended")
}

// TestTenantSuspend: while a tenant is suspended every request of it is
// refused with 403 tenant_suspended (data, the token endpoint, a signed
// download link made before, a waiting read of the change feed), another
// tenant is served as before, and tenant list shows the state; resumed,
// everything works again. The commands refuse unknown tenants and those
// being imported or deleted.
func TestTenantSuspend(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, fresh)
		env := envOf(srv)
		acme, other := srv.CreateTenant(t, "acme"), srv.OtherTenant(t, "other")
		c, oc := srv.SignIn(t, acme), srv.SignIn(t, other)
		_, doc := c.Document(t)
		upload := c.UploadFile(t, "document", doc, testenv.Part{Filename: "a.txt", Data: []byte("acme's file")})
		link := c.DownloadURL(t, upload)
		_, odoc := oc.Document(t)
		oupload := oc.UploadFile(t, "document", odoc, testenv.Part{Filename: "o.txt", Data: []byte("other's file")})

		// A read of the feed waiting when the tenant is suspended ends
		// with the refusal.
		waited := make(chan error, 1)
		poll := c.Request(t, http.MethodGet, "/v1/changes?wait=20&after="+cursorNow(t, c), nil)
		go func() {
			resp, err := http.DefaultClient.Do(poll)
			if err != nil {
				waited <- err
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(raw), "tenant_suspended") {
				waited <- fmt.Errorf("the waiting read answered %d %s", resp.StatusCode, raw)
				return
			}
			waited <- nil
		}()
		waitSample(t, srv, "planwerk_feed_waiting", isOne)

		r := run(ctx, env, "", "tenant", "suspend", "--slug", "acme")
		if r.err != nil || !strings.Contains(r.stdout, "suspended") {
			t.Fatalf("suspend: %v %q %s", r.err, r.stdout, r.stderr)
		}
		select {
		case err := <-waited:
			if err != nil {
				t.Error(err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the waiting read did not end")
		}
		c.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusForbidden, "tenant_suspended")
		c.Fail(t, http.MethodPost, "/v1/projects", testenv.M{"name": "no"}, http.StatusForbidden, "tenant_suspended")
		c.Fail(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload), nil, http.StatusForbidden, "tenant_suspended")
		status, _, grant := srv.Grant(t, "acme", testenv.PasswordForm(acme.AdminEmail, acme.Password))
		if status != http.StatusForbidden || grant["code"] != "tenant_suspended" {
			t.Errorf("token endpoint of a suspended tenant: %d %v", status, grant)
		}
		status, _, raw := testenv.Fetch(t, http.MethodGet, link)
		wantSuspended(t, "a signed link of a suspended tenant", status, raw)
		if got := string(oc.Download(t, oupload)); got != "other's file" {
			t.Errorf("another tenant's download: %q", got)
		}
		oc.Create(t, "projects", testenv.M{"name": "other goes on"})
		if r := run(ctx, env, "", "tenant", "list"); r.err != nil || stateOf(t, r.stdout, "acme") != "suspended" || stateOf(t, r.stdout, "other") != "active" {
			t.Errorf("tenant list: %v\n%s", r.err, r.stdout)
		}
		if r := run(ctx, env, "", "tenant", "suspend", "--slug", "acme"); r.err != nil || !strings.Contains(r.stdout, "already") {
			t.Errorf("suspend again: %v %q", r.err, r.stdout)
		}

		r = run(ctx, env, "", "tenant", "resume", "--slug", "acme")
		if r.err != nil || !strings.Contains(r.stdout, "active") {
			t.Fatalf("resume: %v %q %s", r.err, r.stdout, r.stderr)
		}
		c.Create(t, "projects", testenv.M{"name": "back"})
		if got := string(c.Download(t, upload)); got != "acme's file" {
			t.Errorf("download after resume: %q", got)
		}
		if status, _, raw := testenv.Fetch(t, http.MethodGet, link); status != http.StatusOK || string(raw) != "acme's file" {
			t.Errorf("the link made before, after resume: %d %q", status, raw)
		}
		srv.SignIn(t, acme)
		if r := run(ctx, env, "", "tenant", "list"); stateOf(t, r.stdout, "acme") != "active" {
			t.Errorf("tenant list after resume:\n%s", r.stdout)
		}

		// Refusals change nothing.
		db := testenv.Open(t, srv.Config.Database)
		testenv.BareTenant(t, db, "gone")
		if _, err := db.SetTenantState(ctx, "gone", store.TenantDeleting, store.TenantActive); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args  []string
			usage bool
		}{
			{[]string{"tenant", "suspend", "--slug", "nobody"}, false},
			{[]string{"tenant", "resume", "--slug", "nobody"}, false},
			{[]string{"tenant", "suspend", "--slug", "gone"}, false},
			{[]string{"tenant", "resume", "--slug", "gone"}, false},
			{[]string{"tenant", "suspend"}, true},
			{[]string{"tenant", "resume", "--slug", "acme", "extra"}, true},
		} {
			r := run(ctx, env, "", c.args...)
			if r.err == nil || errors.Is(r.err, app.ErrUsage) != c.usage {
				t.Errorf("%v: err = %v, want an error (usage: %v)", c.args, r.err, c.usage)
			}
		}
		for slug, want := range map[string]string{"gone": store.TenantDeleting, "acme": store.TenantActive} {
			if tn, err := db.TenantBySlug(ctx, slug); err != nil || tn.State != want {
				t.Errorf("%s after refused commands: %+v %v, want %s", slug, tn, err, want)
			}
		}
	})
}

// TestTenantSuspendTwoInstances: two instances on one database, each
// caching tenants for a while, both refuse a suspended tenant once that
// while has passed since the command, and both serve it again the same
// while after it is resumed.
func TestTenantSuspendTwoInstances(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		const ttl = 300 * time.Millisecond
		cache := func(c *config.Config) { c.TenantCacheTTL = ttl }
		one := testenv.Start(t, b, cache)
		two := testenv.Start(t, b, cache, func(c *config.Config) { c.Database = one.Config.Database })
		acme := one.CreateTenant(t, "acme")
		clients := []*testenv.Client{one.SignIn(t, acme), two.SignIn(t, acme)}
		for _, c := range clients {
			c.List(t, "/v1/projects") // each instance has the tenant in its cache
		}
		ctx := context.Background()
		if r := run(ctx, envOf(one), "", "tenant", "suspend", "--slug", "acme"); r.err != nil {
			t.Fatal(r.err)
		}
		// Both caches were filled before the command returned: a cache's
		// while past that, each looks the tenant up afresh.
		time.Sleep(ttl)
		for i, c := range clients {
			status, _, raw := c.Send(t, http.MethodGet, "/v1/projects", nil)
			wantSuspended(t, fmt.Sprintf("instance %d", i+1), status, raw)
		}
		if r := run(ctx, envOf(one), "", "tenant", "resume", "--slug", "acme"); r.err != nil {
			t.Fatal(r.err)
		}
		time.Sleep(ttl)
		for _, c := range clients {
			c.List(t, "/v1/projects")
		}
	})
}

// cursorNow is the feed's cursor after its last change: a read after it
// waits for the next.
func cursorNow(t *testing.T, c *testenv.Client) string {
	t.Helper()
	page := c.Object(t, http.MethodGet, "/v1/changes?limit=10000", nil, http.StatusOK)
	next, _ := page["next"].(string)
	return next
}

// stateOf is the STATE column of the tenant's line in tenant list.
func stateOf(t *testing.T, list, slug string) string {
	t.Helper()
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 2 && f[0] == slug {
			return f[2]
		}
	}
	return ""
}
