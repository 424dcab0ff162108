package app_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/filestore"
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
		// The tenant's own pages may read why.
		const origin = "http://acme.localhost"
		req := c.Request(t, http.MethodGet, "/v1/projects", nil)
		req.Header.Set("Origin", origin)
		status, hdr, raw := testenv.Do(t, req)
		wantSuspended(t, "a request from the tenant's origin", status, raw)
		if hdr.Get("Access-Control-Allow-Origin") != origin {
			t.Errorf("the refusal of the tenant's origin has no CORS headers: %v", hdr)
		}
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

// populate gives the tenant of c rows in most of its tables, through the
// API: records, a user, uploads with their files, an API client and its
// token, a webhook, an idempotency key, and with them tokens, changes and
// audit entries. It returns the uploads' ids.
func populate(t *testing.T, c *testenv.Client) []int64 {
	t.Helper()
	for i := range 5 {
		c.Create(t, "projects", testenv.M{"name": fmt.Sprintf("p%d", i)})
	}
	c.Member(t, "member@"+c.Slug+".test")
	var uploads []int64
	for i := range 2 {
		_, doc := c.Document(t)
		uploads = append(uploads, c.UploadFile(t, "document", doc, testenv.Part{Filename: "f.txt", Data: testenv.Data(uint64(i), 2000)}))
	}
	c.ClientSignIn(t, c.APIClient(t, "export", c.UserID, "read")).List(t, "/v1/projects")
	keyed := *c
	keyed.Header = http.Header{"Idempotency-Key": {"key-1"}}
	keyed.Create(t, "projects", testenv.M{"name": "keyed"})
	// Last, a webhook, and the one delivery of the change after it: then
	// the tenant's rows stay as they are.
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(receiver.Close)
	hook := c.Object(t, http.MethodPost, "/v1/webhooks", testenv.M{"url": receiver.URL, "resources": []string{"projects"}}, http.StatusCreated)
	c.Create(t, "projects", testenv.M{"name": "announced"})
	deliveries := fmt.Sprintf("/v1/webhooks/%d/deliveries", testenv.ID(t, hook))
	deadline := time.Now().Add(30 * time.Second)
	for {
		ds := c.Array(t, http.MethodGet, deliveries, nil, http.StatusOK)
		if len(ds) == 1 && ds[0]["status"] == "delivered" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the webhook's delivery: %v", ds)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return uploads
}

// filesUnder counts the files the store at spec keeps under prefix.
func filesUnder(t *testing.T, spec, prefix string) int {
	t.Helper()
	fs, err := filestore.Open(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := fs.Walk(context.Background(), prefix, func(string, time.Time) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestTenantDelete: refused command lines change nothing; then tenant
// delete erases every row of every table of the tenant and its files (on
// a folder and on S3), the service no longer knows it (its tokens and
// links answer as for no tenant), another tenant keeps everything, and
// the slug can be taken again, by a tenant that none of the old tokens
// reach.
func TestTenantDelete(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, fresh, func(c *config.Config) {
			c.Files = testenv.Files(t, fb)
			c.WebhookAllowPrivate = true
		})
		env := envOf(srv)
		acme, other := srv.CreateTenant(t, "acme"), srv.OtherTenant(t, "other")
		c, oc := srv.SignIn(t, acme), srv.SignIn(t, other)
		uploads := populate(t, c)
		oUploads := populate(t, oc)
		link := c.DownloadURL(t, uploads[0])
		// An account export, whose archive the store keeps under a key of
		// its own.
		export := c.Object(t, http.MethodPost, "/v1/account/exports", nil, http.StatusAccepted)
		exportPath := fmt.Sprintf("/v1/account/exports/%d", testenv.ID(t, export))
		for deadline := time.Now().Add(time.Minute); c.Object(t, http.MethodGet, exportPath, nil, http.StatusOK)["status"] != "done"; time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatal("the account export is not done after a minute")
			}
		}
		exportPrefix := fmt.Sprintf("exports/t%d/", acme.ID)
		if n := filesUnder(t, srv.Config.Files, exportPrefix); n != 1 {
			t.Fatalf("acme has %d export archives in the store, want 1", n)
		}
		db := testenv.Open(t, srv.Config.Database)
		before, otherBefore := testenv.TenantRows(t, db, acme.ID), testenv.TenantRows(t, db, other.ID)
		for _, table := range []string{"users", "records", "access_tokens", "refresh_tokens", "uploads", "api_clients",
			"webhooks", "webhook_deliveries", "idempotency_keys", "changes", "change_positions", "audit_log", "account_exports", "tenants"} {
			if before[table] == 0 {
				t.Errorf("the test gave acme no rows of %s", table)
			}
		}
		prefix := fmt.Sprintf("t%d/", acme.ID)
		if n := filesUnder(t, srv.Config.Files, prefix); n != 2 {
			t.Fatalf("acme has %d files in the store, want 2", n)
		}

		for _, c := range []struct {
			args  []string
			usage bool
		}{
			{[]string{"tenant", "delete", "--slug", "acme"}, true},
			{[]string{"tenant", "delete", "--slug", "acme", "--confirm", "acm"}, true},
			{[]string{"tenant", "delete", "--confirm", "acme"}, true},
			{[]string{"tenant", "delete", "--slug", "nobody", "--confirm", "nobody"}, false},
		} {
			if r := run(ctx, env, "", c.args...); r.err == nil || errors.Is(r.err, app.ErrUsage) != c.usage {
				t.Errorf("%v: err = %v, want an error (usage: %v)", c.args, r.err, c.usage)
			}
		}
		if got := testenv.TenantRows(t, db, acme.ID); fmt.Sprint(got) != fmt.Sprint(before) {
			t.Errorf("refused commands changed acme: %v, was %v", got, before)
		}
		c.List(t, "/v1/projects")

		r := run(ctx, env, "", "tenant", "delete", "--slug", "acme", "--confirm", "acme")
		if r.err != nil {
			t.Fatalf("delete: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		t.Logf("tenant delete:\n%s", r.stdout)
		if !strings.Contains(r.stdout, "deleted tenant acme") || !strings.Contains(r.stdout, "2 files (4000 bytes)") ||
			!strings.Contains(r.stdout, fmt.Sprintf("records: %d rows", before["records"])) || !strings.Contains(r.stdout, "uploads: 2 rows") {
			t.Errorf("delete printed:\n%s", r.stdout)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, db, acme.ID))
		if got := testenv.TenantRows(t, db, other.ID); fmt.Sprint(got) != fmt.Sprint(otherBefore) {
			t.Errorf("another tenant's rows changed: %v, were %v", got, otherBefore)
		}
		if n := filesUnder(t, srv.Config.Files, prefix) + filesUnder(t, srv.Config.Files, exportPrefix); n != 0 {
			t.Errorf("%d files of acme left in the store", n)
		}
		for _, id := range oUploads {
			oc.Download(t, id)
		}
		c.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusBadRequest, "unknown_tenant")
		if status, _, m := srv.Grant(t, "acme", testenv.PasswordForm(acme.AdminEmail, acme.Password)); status != http.StatusBadRequest || m["code"] != "unknown_tenant" {
			t.Errorf("token endpoint of the deleted tenant: %d %v", status, m)
		}
		if status, _, raw := testenv.Fetch(t, http.MethodGet, link); status != http.StatusNotFound {
			t.Errorf("a link of the deleted tenant: %d %s", status, raw)
		}
		if r := run(ctx, env, "", "tenant", "list"); r.err != nil || stateOf(t, r.stdout, "acme") != "" {
			t.Errorf("tenant list after delete: %v\n%s", r.err, r.stdout)
		}

		// The slug is free; the old tokens reach nothing of the new tenant.
		r = run(ctx, env, "", "tenant", "create", "--slug", "acme", "--admin-email", "new@acme.test", "--admin-password", "new-password")
		if r.err != nil {
			t.Fatalf("create acme again: %v %s", r.err, r.stderr)
		}
		c.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusUnauthorized, "unauthorized")
		again, err := db.TenantBySlug(ctx, "acme")
		if err != nil || again.ID == acme.ID {
			t.Errorf("the new acme: %+v %v; the deleted one had id %d", again, err, acme.ID)
		}
	})
}

// cutAfter is standard output that cancels the command writing to it
// when it writes a line with the text: the command stops there.
type cutAfter struct {
	testenv.SyncBuffer
	text   string
	cancel context.CancelFunc
}

func (w *cutAfter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.text) {
		w.cancel()
	}
	return w.SyncBuffer.Write(p)
}

// TestTenantDeleteCutShort: a tenant delete that stops after the first
// tables leaves the tenant deleting, unknown to the service, with rows
// left; run again, it erases the rest.
func TestTenantDeleteCutShort(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, fresh, func(c *config.Config) { c.WebhookAllowPrivate = true })
		acme := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, acme)
		populate(t, c)
		env := envOf(srv)

		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		out := &cutAfter{text: "access_tokens:", cancel: cancel}
		err := app.Run(ctx, []string{"tenant", "delete", "--slug", "acme", "--confirm", "acme"},
			app.IO{Stdout: out, Stderr: io.Discard, Getenv: func(k string) string { return env[k] }})
		if err == nil || !strings.Contains(err.Error(), "run the command again") {
			t.Fatalf("delete cut short: %v\n%s", err, out.String())
		}
		db := testenv.Open(t, srv.Config.Database)
		left := testenv.TenantRows(t, db, acme.ID)
		if left["access_tokens"] != 0 || left["records"] == 0 || left["tenants"] != 1 {
			t.Errorf("rows after the cut: %v", left)
		}
		if tn, err := db.TenantBySlug(context.Background(), "acme"); err != nil || tn.State != store.TenantDeleting {
			t.Errorf("acme after the cut: %+v %v", tn, err)
		}
		c.Fail(t, http.MethodGet, "/v1/projects", nil, http.StatusBadRequest, "unknown_tenant")
		if r := run(context.Background(), env, "", "tenant", "list"); stateOf(t, r.stdout, "acme") != store.TenantDeleting {
			t.Errorf("tenant list after the cut:\n%s", r.stdout)
		}

		r := run(context.Background(), env, "", "tenant", "delete", "--slug", "acme", "--confirm", "acme")
		if r.err != nil || !strings.Contains(r.stdout, "deleted tenant acme") || strings.Contains(r.stdout, "waiting") {
			t.Fatalf("delete again: %v\n%s%s", r.err, r.stdout, r.stderr)
		}
		testenv.NoRows(t, "acme", testenv.TenantRows(t, db, acme.ID))
	})
}
