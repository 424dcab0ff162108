package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/audit"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// auditWrites makes entries of the tenant through the API: a project
// created, changed twice (the first time with a Change-Reason), a second
// created and deleted.
func auditWrites(t *testing.T, c *testenv.Client) {
	t.Helper()
	a := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "A"}))
	c.Header = http.Header{"Change-Reason": {"typo"}}
	c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", a), testenv.M{"name": "A2"}, http.StatusOK)
	c.Header = nil
	b := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "B"}))
	c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", a), testenv.M{"name": "A3", "budget": 5}, http.StatusOK)
	if status, _, raw := c.Send(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", b), nil); status != http.StatusOK {
		t.Fatalf("DELETE project: %d %s", status, raw)
	}
}

// apiEntries is the tenant's audit log as GET /v1/audit-log shows it.
func apiEntries(t *testing.T, c *testenv.Client) []audit.Entry {
	t.Helper()
	status, _, raw := c.Send(t, http.MethodGet, "/v1/audit-log?limit=10000", nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/audit-log: %d %s", status, raw)
	}
	var page struct{ Entries []audit.Entry }
	testenv.DecodeInto(t, raw, &page)
	return page.Entries
}

// storeEntries is the tenant's audit log as the store reads it.
func storeEntries(t *testing.T, db *store.DB, tenantID int64) []audit.Entry {
	t.Helper()
	var out []audit.Entry
	if err := db.AuditEntries(context.Background(), tenantID, store.AuditFilter{}, func(e audit.Entry) error {
		out = append(out, e)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAuditVerify: audit verify counts each tenant's entries, those made
// through the API, in slug order, a tenant without entries as 0, or the
// one tenant asked for; an unknown tenant is an error naming it; an
// unmigrated database is a usage error.
func TestAuditVerify(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		acme := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, acme)
		auditWrites(t, c)
		testenv.BareTenant(t, srv.Service.DB, "empty")
		beta := srv.CreateTenant(t, "beta")
		n := len(apiEntries(t, c))
		if n < 5 {
			t.Fatalf("%d entries of acme through the API, want at least its 5 writes", n)
		}
		nBeta := len(storeEntries(t, srv.Service.DB, beta.ID))
		env := map[string]string{"PLANWERK_DATABASE": srv.Config.Database}

		r := run(ctx, env, "", "audit", "verify")
		want := fmt.Sprintf("tenant acme: %d entries verified\ntenant beta: %d entries verified\ntenant empty: 0 entries verified\n", n, nBeta)
		if r.err != nil || r.stdout != want || r.stderr != "" {
			t.Fatalf("audit verify: %v\nstdout:\n%s\nwant:\n%s\nstderr: %s", r.err, r.stdout, want, r.stderr)
		}
		r = run(ctx, env, "", "audit", "verify", "--tenant", "acme")
		if want := fmt.Sprintf("tenant acme: %d entries verified\n", n); r.err != nil || r.stdout != want {
			t.Fatalf("audit verify --tenant acme: %v %q, want %q", r.err, r.stdout, want)
		}
		r = run(ctx, env, "", "audit", "verify", "--tenant", "nobody")
		if r.err == nil || errors.Is(r.err, app.ErrUsage) || !strings.Contains(r.err.Error(), `no tenant "nobody"`) || r.stdout != "" {
			t.Errorf("audit verify --tenant nobody: %v, stdout %q; want an error naming the tenant", r.err, r.stdout)
		}
		r = run(ctx, map[string]string{"PLANWERK_DATABASE": testenv.DSN(t, b)}, "", "audit", "verify")
		if !errors.Is(r.err, app.ErrUsage) || !strings.Contains(r.stderr, "planwerk migrate") {
			t.Errorf("audit verify of an unmigrated database: %v %q; want a usage error saying to migrate", r.err, r.stderr)
		}
	})
}

// TestAuditOfCommands: tenant create, user reset-password and tenant
// set-storage make entries of actor {"via": "cli"}: the password's shows
// "password" changed and no hash anywhere, the storage cap's is about no
// record; audit verify counts them all.
func TestAuditOfCommands(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		env := map[string]string{"PLANWERK_DATABASE": testenv.DSN(t, b)}
		for _, args := range [][]string{
			{"tenant", "create", "--slug", "acme", "--admin-email", "admin@acme.test", "--admin-password", "first-password"},
			{"user", "reset-password", "--tenant", "acme", "--email", "admin@acme.test", "--password", "second-password"},
			{"tenant", "set-storage", "--slug", "acme", "--bytes", "12345"},
		} {
			if r := run(ctx, env, "", args...); r.err != nil {
				t.Fatalf("%q: %v %s", args, r.err, r.stderr)
			}
		}
		db := openStore(t, env["PLANWERK_DATABASE"])
		tn, err := db.TenantBySlug(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		admin, err := userTables(db).UserByEmail(ctx, tn.ID, "admin@acme.test")
		if err != nil {
			t.Fatal(err)
		}
		es := storeEntries(t, db, tn.ID)
		var ops []string
		for _, e := range es {
			raw, _ := json.Marshal(e)
			if e.Actor != (audit.Actor{Via: audit.ViaCLI}) {
				t.Errorf("entry %d: actor %s, want {via: cli}", e.Seq, raw)
			}
			for _, secret := range []string{string(admin.PasswordHash), "$argon2", "first-password", "second-password", "passwordHash"} {
				if strings.Contains(string(raw), secret) {
					t.Errorf("entry %d holds %q: %s", e.Seq, secret, raw)
				}
			}
			record := "null"
			if e.Record != nil {
				record = fmt.Sprint(*e.Record)
			}
			ops = append(ops, fmt.Sprintf("%s %s %s %q", e.Resource, record, e.Op, e.Changed))
		}
		for _, want := range []string{
			fmt.Sprintf(`users %d create ["createdAt" "email" "id" "isAdmin" "updatedAt"]`, admin.ID),
			fmt.Sprintf(`users %d update ["password"]`, admin.ID),
			`tenant null update ["storageBytes"]`,
		} {
			if !slices.Contains(ops, want) {
				t.Errorf("no entry %s among\n%s", want, strings.Join(ops, "\n"))
			}
		}
		if last := es[len(es)-1]; string(last.Before) != `{"storageBytes":null}` || string(last.After) != `{"storageBytes":12345}` {
			t.Errorf("the storage cap's entry: before %s after %s", last.Before, last.After)
		}
		r := run(ctx, env, "", "audit", "verify")
		if want := fmt.Sprintf("tenant acme: %d entries verified\n", len(es)); r.err != nil || r.stdout != want {
			t.Errorf("audit verify: %v %q, want %q", r.err, r.stdout, want)
		}
	})
}

// execSQL runs a statement on db that must succeed.
func execSQL(t *testing.T, db *store.DB, query string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(context.Background(), query, args...); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
}

// insertEntry stores e in the tenant's audit log as it is, its before in
// the entry itself.
func insertEntry(t *testing.T, db *store.DB, tenantID int64, e audit.Entry) {
	t.Helper()
	doc := func(d json.RawMessage) any {
		if len(d) == 0 {
			return nil
		}
		return string(d)
	}
	id := func(p *int64) any {
		if p == nil {
			return nil
		}
		return *p
	}
	text := func(p *string) any {
		if p == nil {
			return nil
		}
		return *p
	}
	execSQL(t, db, `INSERT INTO audit_log (tenant_id, seq, at, actor_user, actor_client, via, request_id, reason, resource, record_id, op, changed, after, before, prev_hash, hash)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
		tenantID, e.Seq, e.At, id(e.Actor.User), id(e.Actor.APIClient), e.Actor.Via, text(e.RequestID), text(e.Reason), e.Resource, id(e.Record), e.Op,
		string(audit.AppendStrings(nil, e.Changed)), doc(e.After), doc(e.Before), e.PrevHash, e.Hash)
}

// TestAuditVerifyFindsTampering: an entry changed, removed, inserted or
// moved in the database makes audit verify fail naming the tenant and
// the seq of the first entry that does not verify; the other tenants
// still verify. Entries removed from the start of a chain that no purge
// cut are found; the newest entry removed is not: nothing in the
// database says how long the chain was (audit verify --expect with a
// head kept elsewhere does; TestAuditHead).
func TestAuditVerifyFindsTampering(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		db := srv.Service.DB
		env := map[string]string{"PLANWERK_DATABASE": srv.Config.Database}
		// es are a tenant's entries; k is the first change of project A
		// (it has a reason), whose after the second change's before
		// points to; last is the newest entry. Each tamper returns the
		// seq audit verify must name (0: it must pass).
		type chain struct {
			id   int64
			es   []audit.Entry
			k    audit.Entry
			last audit.Entry
		}
		cases := []struct {
			slug   string
			tamper func(c chain) int64
		}{
			{"after-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET after = $1 WHERE tenant_id = $2 AND seq = $3`, strings.Replace(string(c.k.After), `"A2"`, `"A9"`, 1), c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"reason-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET reason = 'covering up' WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"reason-removed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET reason = NULL WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"changed-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET changed = '["updatedAt"]' WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"at-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET at = '2020-01-01T00:00:00.000Z' WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"actor-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET actor_user = NULL WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"before-pointed-elsewhere", func(c chain) int64 {
				// The second change of A shows as before the after of the
				// entry before the first.
				execSQL(t, db, `UPDATE audit_log SET before_seq = $1 WHERE tenant_id = $2 AND before_seq = $3`, c.k.Seq-1, c.id, c.k.Seq)
				for _, e := range c.es {
					if e.Seq > c.k.Seq && string(e.Before) == string(c.k.After) {
						return e.Seq
					}
				}
				t.Fatal("no entry's before is the first change's after")
				return 0
			}},
			{"hash-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET hash = $1 WHERE tenant_id = $2 AND seq = $3`, strings.Repeat("f", 64), c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"prev-hash-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET prev_hash = $1 WHERE tenant_id = $2 AND seq = $3`, c.es[0].Hash, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"first-prev-hash-changed", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET prev_hash = $1 WHERE tenant_id = $2 AND seq = 1`, strings.Repeat("1", 64), c.id)
				return 1
			}},
			{"deleted-in-the-middle", func(c chain) int64 {
				execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				return c.k.Seq
			}},
			{"appended", func(c chain) int64 {
				e := c.last
				e.Seq, e.PrevHash, e.Hash = e.Seq+1, e.Hash, strings.Repeat("a", 64)
				insertEntry(t, db, c.id, e)
				return e.Seq
			}},
			{"inserted-with-its-own-hash", func(c chain) int64 {
				// A forged entry after k, hashed right and linked to k;
				// the entries after it moved up one.
				execSQL(t, db, `UPDATE audit_log SET seq = -seq WHERE tenant_id = $1 AND seq > $2`, c.id, c.k.Seq)
				execSQL(t, db, `UPDATE audit_log SET seq = 1 - seq WHERE tenant_id = $1 AND seq < 0`, c.id)
				e := c.k
				e.Seq, e.Reason = e.Seq+1, nil
				if err := audit.Link(c.k.Hash, &e); err != nil {
					t.Fatal(err)
				}
				insertEntry(t, db, c.id, e)
				return e.Seq + 1
			}},
			{"two-swapped", func(c chain) int64 {
				execSQL(t, db, `UPDATE audit_log SET seq = -1 WHERE tenant_id = $1 AND seq = $2`, c.id, c.k.Seq)
				execSQL(t, db, `UPDATE audit_log SET seq = $2 WHERE tenant_id = $1 AND seq = $3`, c.id, c.k.Seq, c.k.Seq+1)
				execSQL(t, db, `UPDATE audit_log SET seq = $2 WHERE tenant_id = $1 AND seq = -1`, c.id, c.k.Seq+1)
				return c.k.Seq
			}},
			{"oldest-deleted", func(c chain) int64 {
				// Without a purge: the chain must start at seq 1.
				execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq = 1`, c.id)
				return 1
			}},
			{"oldest-three-deleted", func(c chain) int64 {
				execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq <= 3`, c.id)
				return 1
			}},
			{"newest-deleted", func(c chain) int64 {
				execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq = $2`, c.id, c.last.Seq)
				return 0
			}},
			{"untouched", func(chain) int64 { return 0 }},
		}
		want := map[string]int64{}
		counts := map[string]int{}
		for _, tc := range cases {
			tn := srv.CreateTenant(t, tc.slug)
			auditWrites(t, srv.SignIn(t, tn))
			c := chain{id: tn.ID, es: storeEntries(t, db, tn.ID)}
			c.last = c.es[len(c.es)-1]
			for _, e := range c.es {
				if e.Reason != nil && c.k.Seq == 0 {
					c.k = e
				}
			}
			if c.k.Seq < 2 || c.k.Seq+2 > c.last.Seq || !strings.Contains(string(c.k.After), `"A2"`) {
				t.Fatalf("%s: the first change of project A is entry %+v of %d", tc.slug, c.k, len(c.es))
			}
			want[tc.slug] = tc.tamper(c)
			counts[tc.slug] = len(c.es)
			r := run(ctx, env, "", "audit", "verify", "--tenant", tc.slug)
			switch seq := want[tc.slug]; {
			case seq == 0:
				if n := len(storeEntries(t, db, tn.ID)); r.err != nil || r.stdout != fmt.Sprintf("tenant %s: %d entries verified\n", tc.slug, n) {
					t.Errorf("%s: %v %q, want %d entries verified", tc.slug, r.err, r.stdout, n)
				}
			case r.err == nil || errors.Is(r.err, app.ErrUsage) || r.stdout != "" ||
				!strings.HasPrefix(r.err.Error(), fmt.Sprintf("tenant %s: audit chain broken at seq %d: ", tc.slug, seq)):
				t.Errorf("%s: %v, stdout %q; want tenant %s broken at seq %d", tc.slug, r.err, r.stdout, tc.slug, seq)
			}
		}

		// Every tenant: the broken ones named in the one error, the others
		// counted on stdout.
		r := run(ctx, env, "", "audit", "verify")
		if r.err == nil {
			t.Fatal("audit verify of every tenant passed")
		}
		for _, tc := range cases {
			named := strings.Contains(r.err.Error(), fmt.Sprintf("tenant %s: audit chain broken at seq %d: ", tc.slug, want[tc.slug]))
			counted := strings.Contains(r.stdout, fmt.Sprintf("tenant %s: ", tc.slug))
			if named == (want[tc.slug] == 0) || counted == (want[tc.slug] != 0) {
				t.Errorf("%s: named in the error %v, counted on stdout %v\nerror: %v\nstdout:\n%s", tc.slug, named, counted, r.err, r.stdout)
			}
		}
		if !strings.Contains(r.stdout, fmt.Sprintf("tenant untouched: %d entries verified\n", counts["untouched"])) ||
			!strings.Contains(r.stdout, fmt.Sprintf("tenant newest-deleted: %d entries verified\n", counts["newest-deleted"]-1)) {
			t.Errorf("stdout:\n%s", r.stdout)
		}
	})
}

// TestAuditHead: audit head prints each tenant's last seq and hash (a
// tenant without entries at seq 0), in slug order, or the one tenant
// asked for; audit verify --expect with what it printed passes while the
// chains only grow, and fails naming the tenant when the newest entries
// were removed or an entry was changed and every later one re-hashed
// (which verify without it cannot tell); a heads file that is not what
// audit head prints, or larger than 1 MiB, is refused.
func TestAuditHead(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		db := srv.Service.DB
		env := map[string]string{"PLANWERK_DATABASE": srv.Config.Database}
		acme, beta := srv.CreateTenant(t, "acme"), srv.CreateTenant(t, "beta")
		testenv.BareTenant(t, db, "empty")
		auditWrites(t, srv.SignIn(t, acme))
		auditWrites(t, srv.SignIn(t, beta))
		headOf := func(tenantID int64) string {
			es := storeEntries(t, db, tenantID)
			return fmt.Sprintf("%d %s", es[len(es)-1].Seq, es[len(es)-1].Hash)
		}
		r := run(ctx, env, "", "audit", "head")
		want := fmt.Sprintf("acme %s\nbeta %s\nempty 0 %s\n", headOf(acme.ID), headOf(beta.ID), audit.ZeroHash)
		if r.err != nil || r.stdout != want {
			t.Fatalf("audit head: %v\n%s\nwant:\n%s", r.err, r.stdout, want)
		}
		if r := run(ctx, env, "", "audit", "head", "--tenant", "beta"); r.err != nil || r.stdout != "beta "+headOf(beta.ID)+"\n" {
			t.Fatalf("audit head --tenant beta: %v %q", r.err, r.stdout)
		}
		dir := t.TempDir()
		heads := filepath.Join(dir, "heads")
		if err := os.WriteFile(heads, []byte("# kept by the auditor\n"+r.stdout+"\n"+want), 0o600); err != nil {
			t.Fatal(err)
		}
		verify := func(tenant string) result {
			return run(ctx, env, "", "audit", "verify", "--tenant", tenant, "--expect", heads)
		}
		auditWrites(t, srv.SignIn(t, acme)) // the chain grows beyond its head
		for _, slug := range []string{"acme", "beta", "empty"} {
			if r := verify(slug); r.err != nil {
				t.Fatalf("%s: verify --expect of untouched chains: %v", slug, r.err)
			}
		}

		// beta: its two newest entries removed.
		es := storeEntries(t, db, beta.ID)
		last := es[len(es)-1].Seq
		execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq >= $2`, beta.ID, last-1)
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "beta"); r.err != nil {
			t.Fatalf("verify of beta without the heads: %v (nothing in the database tells)", r.err)
		}
		if r := verify("beta"); r.err == nil || !strings.HasPrefix(r.err.Error(), fmt.Sprintf("tenant beta: audit chain broken at seq %d: ", last-1)) {
			t.Errorf("verify --expect of beta without its newest entries: %v", r.err)
		}

		// acme: an entry's reason changed, it and every later one
		// re-hashed, as an operator with the database could.
		es = storeEntries(t, db, acme.ID)
		k := slices.IndexFunc(es, func(e audit.Entry) bool { return e.Reason != nil })
		forged := "a reason of the operator's"
		es[k].Reason = &forged
		for i := k; i < len(es); i++ {
			if err := audit.Link(es[i-1].Hash, &es[i]); err != nil {
				t.Fatal(err)
			}
			execSQL(t, db, `UPDATE audit_log SET reason = $1, prev_hash = $2, hash = $3 WHERE tenant_id = $4 AND seq = $5`,
				es[i].Reason, es[i].PrevHash, es[i].Hash, acme.ID, es[i].Seq)
		}
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "acme"); r.err != nil {
			t.Fatalf("verify of the re-hashed acme without the heads: %v (nothing in the database tells)", r.err)
		}
		headSeq, _, _ := strings.Cut(strings.TrimPrefix(strings.Split(want, "\n")[0], "acme "), " ")
		if r := verify("acme"); r.err == nil || !strings.HasPrefix(r.err.Error(), "tenant acme: audit chain broken at seq "+headSeq+": ") {
			t.Errorf("verify --expect of the re-hashed acme: %v", r.err)
		}

		// Heads files that are not what audit head prints.
		for name, content := range map[string]string{
			"fields":   "acme 12\n",
			"seq":      "acme twelve " + audit.ZeroHash + "\n",
			"hash":     "acme 12 " + strings.Repeat("G", 64) + "\n",
			"slug":     "Not-A-Slug 12 " + audit.ZeroHash + "\n",
			"too-long": strings.Repeat("# padding\n", 110000),
		} {
			path := filepath.Join(dir, name)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			r := run(ctx, env, "", "audit", "verify", "--expect", path)
			if r.err == nil || !strings.Contains(r.err.Error(), "--expect") || r.stdout != "" {
				t.Errorf("heads file %s: %v %q; want a refusal naming --expect", name, r.err, r.stdout)
			}
		}
	})
}

// TestAuditHeadAfterPurge: once the retention's purge has removed a
// tenant's oldest entries, audit verify passes from where the purge says
// the chain starts, and so does audit verify --expect with heads kept
// before the purge (the purge's own last entry among them); with the
// newest entry deleted after, --expect fails while verify alone cannot
// tell.
func TestAuditHeadAfterPurge(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, func(c *config.Config) { c.AuditRetention = 24 * time.Hour })
		db := srv.Service.DB
		env := map[string]string{"PLANWERK_DATABASE": srv.Config.Database}
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		auditWrites(t, c)
		k := len(storeEntries(t, db, tn.ID))
		auditWrites(t, c)
		// The first k entries made two days ago: each re-dated and the
		// chain linked again, as it would have been. (No write follows:
		// SQLite's writer remembers the head it linked last.)
		all := storeEntries(t, db, tn.ID)
		at := store.Timestamp(time.Now().Add(-48 * time.Hour))
		prev := audit.ZeroHash
		for i := range all {
			if i < k {
				all[i].At = at
			}
			if err := audit.Link(prev, &all[i]); err != nil {
				t.Fatal(err)
			}
			execSQL(t, db, `UPDATE audit_log SET at = $1, prev_hash = $2, hash = $3 WHERE tenant_id = $4 AND seq = $5`,
				all[i].At, all[i].PrevHash, all[i].Hash, tn.ID, all[i].Seq)
			prev = all[i].Hash
		}
		last := all[k-1]
		head := run(ctx, env, "", "audit", "head", "--tenant", "acme")
		if head.err != nil {
			t.Fatalf("audit head: %v", head.err)
		}
		heads := filepath.Join(t.TempDir(), "heads")
		kept := fmt.Sprintf("acme %d %s\n%s", last.Seq, last.Hash, head.stdout)
		if err := os.WriteFile(heads, []byte(kept), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "acme", "--expect", heads); r.err != nil {
			t.Fatalf("audit verify --expect of the re-dated chain: %v", r.err)
		}

		since := float64(time.Now().Unix())
		if !srv.Service.Jobs.Trigger("audit-purge") {
			t.Fatal("no audit purge job with --audit-retention 24h")
		}
		m := waitSample(t, srv, `planwerk_job_last_run_timestamp_seconds{job="audit-purge"}`, func(v float64) bool { return v >= since })
		if v, _ := sample(t, m, `planwerk_job_errors_total{job="audit-purge"}`); v != 0 {
			t.Fatalf("errors of the audit purge: %v, want 0", v)
		}
		left := storeEntries(t, db, tn.ID)
		if len(left) != len(all)-k || left[0].Seq != last.Seq+1 {
			t.Fatalf("after the purge %d of %d entries are left, from seq %d; want those after seq %d", len(left), len(all), left[0].Seq, last.Seq)
		}
		if start, err := db.AuditStart(ctx, db, tn.ID); err != nil || start != (audit.Head{Seq: last.Seq, Hash: last.Hash}) {
			t.Fatalf("the chain's start after the purge: %+v %v, want seq %d", start, err, last.Seq)
		}

		want := fmt.Sprintf("tenant acme: %d entries verified\n", len(left))
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "acme"); r.err != nil || r.stdout != want {
			t.Errorf("audit verify after the purge: %v %q, want %q", r.err, r.stdout, want)
		}
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "acme", "--expect", heads); r.err != nil || r.stdout != want {
			t.Errorf("audit verify --expect of heads kept before the purge: %v %q, want %q", r.err, r.stdout, want)
		}

		newest := left[len(left)-1].Seq
		execSQL(t, db, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq = $2`, tn.ID, newest)
		if r := run(ctx, env, "", "audit", "verify", "--tenant", "acme"); r.err != nil {
			t.Errorf("audit verify without the newest entry: %v (nothing in the database tells)", r.err)
		}
		r := run(ctx, env, "", "audit", "verify", "--tenant", "acme", "--expect", heads)
		if r.err == nil || !strings.HasPrefix(r.err.Error(), fmt.Sprintf("tenant acme: audit chain broken at seq %d: ", newest)) {
			t.Errorf("audit verify --expect without the newest entry: %v, want the chain broken at seq %d", r.err, newest)
		}
	})
}

// TestAuditRetention: --audit-retention (and its variable) takes 0 or a
// duration of at least 24h, else serve refuses it as a usage error naming
// it; the purge job exists only with a retention, and a run of it with
// 24h purges none of the entries just made, and the chain still verifies.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"--audit-retention", "1h"}, nil},
		{[]string{"--audit-retention", "-24h"}, nil},
		{[]string{"--audit-retention", "forever"}, nil},
		{nil, map[string]string{"PLANWERK_AUDIT_RETENTION": "23h"}},
		{nil, map[string]string{"PLANWERK_AUDIT_RETENTION": "1 year"}},
	} {
		env := map[string]string{"PLANWERK_DATABASE": "sqlite:" + t.TempDir() + "/never.db"}
		for k, v := range c.env {
			env[k] = v
		}
		r := run(ctx, env, "", append([]string{"serve"}, c.args...)...)
		if !errors.Is(r.err, app.ErrUsage) || !strings.Contains(strings.ToLower(r.stderr), "audit-retention") && !strings.Contains(r.stderr, "AUDIT_RETENTION") {
			t.Errorf("serve %q %v: %v %q; want a usage error naming the setting", c.args, c.env, r.err, r.stderr)
		}
	}

	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		if srv := testenv.Start(t, b); srv.Service.Jobs.Trigger("audit-purge") {
			t.Error("an audit purge job without --audit-retention")
		}
		srv := testenv.Start(t, b, func(c *config.Config) { c.AuditRetention = 24 * time.Hour })
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		auditWrites(t, c)
		before := apiEntries(t, c)
		since := float64(time.Now().Unix())
		if !srv.Service.Jobs.Trigger("audit-purge") {
			t.Fatal("no audit purge job with --audit-retention 24h")
		}
		m := waitSample(t, srv, `planwerk_job_last_run_timestamp_seconds{job="audit-purge"}`, func(v float64) bool { return v >= since })
		if v, _ := sample(t, m, `planwerk_job_errors_total{job="audit-purge"}`); v != 0 {
			t.Errorf("errors of the audit purge: %v, want 0", v)
		}
		after := apiEntries(t, c)
		now, _ := json.Marshal(after)
		was, _ := json.Marshal(before)
		if string(now) != string(was) || len(after) < 5 {
			t.Errorf("the purge changed the log of a day: %d entries, was %d (of seq %d to %d)", len(after), len(before), before[0].Seq, before[len(before)-1].Seq)
		}
		r := run(context.Background(), map[string]string{"PLANWERK_DATABASE": srv.Config.Database}, "", "audit", "verify", "--tenant", "acme")
		if want := fmt.Sprintf("tenant acme: %d entries verified\n", len(before)); r.err != nil || r.stdout != want {
			t.Errorf("audit verify after the purge: %v %q, want %q", r.err, r.stdout, want)
		}
	})
}
