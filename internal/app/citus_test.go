//go:build system

package app_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// The tests of this file need a Citus cluster: PLANWERK_TEST_CITUS names
// its coordinator (README: Running on Citus). Without it they skip.

// TestCitusMigrate: planwerk migrate distributes the schema: every table
// of Planwerk's is a reference table (tenants, tenant_states,
// service_secrets, acme_cache) or distributed by tenant_id, all of those in one
// co-location group; the migration library's version table stays on the
// coordinator. A second
// run changes nothing, and a Citus worker is refused as an entry point.
func TestCitusMigrate(t *testing.T) {
	dsn := testenv.CitusDSN(t)
	ctx := context.Background()
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(t.TempDir(), "files")}
	for range 2 {
		if r := run(ctx, env, "", "migrate"); r.err != nil {
			t.Fatalf("migrate: %v %s", r.err, r.stderr)
		}
	}
	db := openStore(t, dsn)
	rows, err := db.QueryContext(ctx, `
		SELECT c.relname, COALESCE(p.partmethod::text, ''), COALESCE(p.repmodel::text, ''), COALESCE(p.colocationid, 0),
		       COALESCE(column_to_column_name(p.logicalrelid, p.partkey), '')
		  FROM pg_class c LEFT JOIN pg_dist_partition p ON p.logicalrelid = c.oid
		 WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
		 ORDER BY c.relname`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	groups := map[int64][]string{}
	var distributed int
	for rows.Next() {
		var name, method, model, column string
		var group int64
		if err := rows.Scan(&name, &method, &model, &group, &column); err != nil {
			t.Fatal(err)
		}
		switch {
		case name == "schema_migrations":
			if method != "" {
				t.Errorf("schema_migrations is a Citus table (%s), want it local to the coordinator", method)
			}
		case name == "tenants" || name == "service_secrets" || name == "tenant_states" || name == "acme_cache":
			if method != "n" || model != "t" {
				t.Errorf("%s: method %q, replication %q; want a reference table", name, method, model)
			}
		default:
			if method != "h" || column != "tenant_id" {
				t.Errorf("%s: method %q by %q; want distributed by tenant_id", name, method, column)
			}
			groups[group] = append(groups[group], name)
			distributed++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(groups) != 1 || distributed < 12 {
		t.Errorf("tenant tables by co-location group: %v; want all %d in one", groups, distributed)
	}

	var host string
	var port int
	if err := db.QueryRowContext(ctx, `SELECT nodename, nodeport FROM pg_dist_node WHERE groupid > 0 AND isactive ORDER BY nodeid LIMIT 1`).
		Scan(&host, &port); err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = fmt.Sprintf("%s:%d", host, port)
	worker := map[string]string{"PLANWERK_DATABASE": u.String(), "PLANWERK_FILES": env["PLANWERK_FILES"]}
	if r := run(ctx, worker, "", "migrate"); r.err == nil || !strings.Contains(r.err.Error(), "connect to the Citus coordinator") {
		t.Errorf("migrate on a worker: %v, want it refused, naming the coordinator", r.err)
	}
}

// TestCitusCommands: the operator commands on Citus. Of two tenants
// created at once with one admin e-mail address, one is created; the
// list counts users and storage; set-storage and reset-password work.
func TestCitusCommands(t *testing.T) {
	dsn := testenv.CitusDSN(t)
	ctx := context.Background()
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(t.TempDir(), "files")}
	if r := run(ctx, env, "", "migrate"); r.err != nil {
		t.Fatalf("migrate: %v %s", r.err, r.stderr)
	}
	create := func(slug, email string) result {
		return run(ctx, env, "", "tenant", "create", "--slug", slug, "--admin-email", email, "--admin-password", "first-password")
	}
	if r := create("alpha", "a@alpha.test"); r.err != nil {
		t.Fatalf("tenant create: %v %s", r.err, r.stderr)
	}
	results := make([]result, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() { results[i] = create(fmt.Sprintf("race-%d", i), "same@race.test") })
	}
	wg.Wait()
	var created []string
	for i, r := range results {
		if r.err == nil {
			created = append(created, fmt.Sprintf("race-%d", i))
		} else if !strings.Contains(r.err.Error(), "already taken") {
			t.Errorf("race-%d: %v, want created or refused as taken", i, r.err)
		}
	}
	if len(created) != 1 {
		t.Fatalf("tenants created with one admin e-mail address at once: %v, want one", created)
	}
	if r := create("beta", "a@alpha.test"); r.err == nil {
		t.Error("a tenant was created with an admin e-mail address alpha's admin has")
	}

	for _, args := range [][]string{
		{"tenant", "set-storage", "--slug", "alpha", "--bytes", "12345"},
		{"user", "reset-password", "--tenant", "alpha", "--email", "a@alpha.test", "--password", "second-password"},
	} {
		if r := run(ctx, env, "", args...); r.err != nil {
			t.Errorf("%v: %v %s", args, r.err, r.stderr)
		}
	}
	r := run(ctx, env, "", "tenant", "list")
	if r.err != nil {
		t.Fatalf("tenant list: %v %s", r.err, r.stderr)
	}
	var slugs []string
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n")[1:] {
		f := strings.Fields(line)
		slugs = append(slugs, f[0])
		if f[3] != "1" {
			t.Errorf("tenant list: %q, want one user", line)
		}
		if f[0] == "alpha" && f[5] != "12345" {
			t.Errorf("tenant list: %q, want alpha's cap 12345", line)
		}
	}
	if want := []string{"alpha", created[0]}; !slices.Equal(slugs, want) {
		t.Errorf("tenant list: %v, want %v", slugs, want)
	}
}

// TestCitusRouting: every statement a request runs goes to one shard.
// The service runs with Citus told to refuse any statement over several
// shards (citus.multi_task_query_log_level=error), and a workload over
// the kinds of requests answers without a server error: sign-in,
// creates, a filtered list, a time entry, its approval, a file, the
// change feed. (Tenants are created first, without the refusal: their
// admin e-mail check reads every tenant's users.)
func TestCitusRouting(t *testing.T) {
	dsn := testenv.CitusDSN(t)
	ctx := context.Background()
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(t.TempDir(), "files")}
	if r := run(ctx, env, "", "migrate"); r.err != nil {
		t.Fatalf("migrate: %v %s", r.err, r.stderr)
	}
	tenants := []testenv.Tenant{{Slug: "alpha"}, {Slug: "beta"}}
	for i := range tenants {
		tn := &tenants[i]
		tn.AdminEmail, tn.Password = "admin@"+tn.Slug+".test", "password-"+tn.Slug
		if r := run(ctx, env, "", "tenant", "create", "--slug", tn.Slug, "--admin-email", tn.AdminEmail, "--admin-password", tn.Password); r.err != nil {
			t.Fatalf("tenant create: %v %s", r.err, r.stderr)
		}
	}
	srv := testenv.Start(t, testenv.Backend{Name: "postgres"}, func(c *config.Config) {
		c.Database = dsn + "&citus.multi_task_query_log_level=error"
	})
	// The refusal holds: a statement over all shards fails.
	if _, err := srv.Service.DB.ListTenants(ctx); err == nil || !strings.Contains(err.Error(), "multi-task") {
		t.Fatalf("a read of every tenant's users: %v, want it refused", err)
	}
	for _, tn := range tenants {
		c := srv.SignIn(t, tn)
		project := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "Routing"}))
		task := testenv.ID(t, c.Create(t, "tasks", testenv.M{"name": "Routing"}))
		entry := c.Create(t, "time-entries", testenv.M{"project": project, "task": task, "day": "2026-03-02", "duration": 1800, "sorting": 1})
		c.Get(t, "time-entries", testenv.ID(t, entry))
		c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, entry)), testenv.M{"duration": 3600}, http.StatusOK)
		c.List(t, "/v1/time-entries?where="+url.QueryEscape(`{"day":{">=":"2026-03-01"}}`)+"&sort=-day")
		c.Array(t, http.MethodPost, "/v1/approval/bulk-approve",
			testenv.M{"action": "approve", "items": []testenv.M{{"project": project, "day": "2026-03-02"}}}, http.StatusOK)
		c.List(t, "/v1/project-days")
		c.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK)
		_, doc := c.Document(t)
		upload := c.UploadFile(t, "document", doc, testenv.Part{Filename: "r.txt", Data: []byte("routed")})
		if got := c.Download(t, upload); string(got) != "routed" {
			t.Errorf("download: %q", got)
		}
		c.Object(t, http.MethodGet, "/v1/changes?limit=100", nil, http.StatusOK)
		// A company's common questions: a user's day, week and month, a
		// project's month by day, one day across the tenant, the totals
		// of a month and a year, a month of a project approved at once.
		q := func(where string, more ...string) string {
			return "/v1/time-entries?" + strings.Join(append([]string{"where=" + url.QueryEscape(where)}, more...), "&")
		}
		me := fmt.Sprint(c.UserID)
		for _, path := range []string{
			q(`{"user":` + me + `,"day":"2026-03-02"}`),
			fmt.Sprintf("/v1/time-entries?user=%s&day=2026-03-02", me),
			q(`{"user":` + me + `,"day":{">=":"2026-03-02","<=":"2026-03-08"}}`),
			q(`{"user":` + me + `,"day":{">=":"2026-03-01","<=":"2026-03-31"}}`),
			q(fmt.Sprintf(`{"project":%d,"day":{">=":"2026-03-01","<=":"2026-03-31"}}`, project), "sort=day"),
			q(`{"day":"2026-03-02"}`),
		} {
			c.List(t, path)
		}
		// The pages of the year by their links: a cursor's condition
		// stays on the tenant's shard too.
		c.Create(t, "time-entries", testenv.M{"project": project, "task": task, "day": "2026-03-04", "duration": 900, "sorting": 1})
		c.FollowPages(t, q(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`, "limit=1"))
		for _, groupBy := range []string{"", "user", "project", "day"} {
			c.Object(t, http.MethodGet, "/v1/analytics/time-totals?from=2026-03-01&to=2026-03-31&groupBy="+groupBy, nil, http.StatusOK)
			c.Object(t, http.MethodGet, "/v1/analytics/time-totals?from=2026-01-15&to=2026-12-31&groupBy="+groupBy, nil, http.StatusOK)
		}
		var month []testenv.M
		for d := 9; d <= 13; d++ {
			month = append(month, testenv.M{"project": project, "day": fmt.Sprintf("2026-03-%02d", d)})
		}
		c.Array(t, http.MethodPost, "/v1/approval/bulk-approve", testenv.M{"action": "approve", "items": month}, http.StatusOK)
		c.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, c.Create(t, "time-entries",
			testenv.M{"project": project, "task": task, "day": "2026-03-03", "duration": 60, "sorting": 2}))), nil, http.StatusOK)
	}
}

// TestCitusImport: a tenant exported from SQLite is imported into Citus
// (the command runs on the coordinator), and the imported tenant's
// requests stay single-shard: the service runs with statements over
// several shards refused while its users sign in with their passwords,
// read and write records, download their files, and its API client asks
// for a token; its time totals are those it had; its audit chain verifies.
func TestCitusImport(t *testing.T) {
	dsn := testenv.CitusDSN(t)
	ctx := context.Background()
	src := testenv.Start(t, testenv.Backend{Name: "sqlite"}, loopbackHooks)
	a := seedArchive(t, src, "moved", 1<<10, 1<<12)
	file := exportTenant(t, src, "moved", t.TempDir())
	env := map[string]string{"PLANWERK_DATABASE": dsn, "PLANWERK_FILES": filepath.Join(t.TempDir(), "files")}
	if r := run(ctx, env, "", "migrate"); r.err != nil {
		t.Fatalf("migrate: %v %s", r.err, r.stderr)
	}
	if r := run(ctx, env, "", "tenant", "import", "--in", file); r.err != nil {
		t.Fatalf("tenant import into Citus: %v %s", r.err, r.stderr)
	}
	srv := testenv.Start(t, testenv.Backend{Name: "postgres"}, func(c *config.Config) {
		c.Database = dsn + "&citus.multi_task_query_log_level=error"
		c.Files = env["PLANWERK_FILES"]
	})
	c := srv.SignIn(t, a.tenant)
	if len(c.List(t, "/v1/projects")) == 0 {
		t.Error("the imported tenant has no projects")
	}
	id := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "After the move"}))
	c.Get(t, "projects", id)
	c.List(t, "/v1/time-entries?where="+url.QueryEscape(`{"day":{">=":"2026-01-01"}}`)+"&sort=-day")
	// The import computed the tenant's time totals: its year sums as
	// they did before the move.
	const year = "/v1/analytics/time-totals?from=2026-01-01&to=2026-12-31"
	before := src.SignIn(t, a.tenant).Object(t, http.MethodGet, year, nil, http.StatusOK)["totals"]
	if after := c.Object(t, http.MethodGet, year, nil, http.StatusOK)["totals"]; fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("the year's time totals after the move: %v, want %v as before", after, before)
	}
	for upload, data := range a.files {
		if got := c.Download(t, upload); string(got) != string(data) {
			t.Errorf("file %d: %d bytes, want the %d imported", upload, len(got), len(data))
		}
	}
	if status, _, m := srv.Grant(t, a.tenant.Slug, testenv.ClientForm(a.clientID, a.clientSecret)); status != http.StatusOK {
		t.Errorf("the API client's grant after the move: %d %v", status, m)
	}
	if r := run(ctx, env, "", "audit", "verify", "--tenant", "moved"); r.err != nil {
		t.Errorf("audit verify: %v %s", r.err, r.stderr)
	}
}
