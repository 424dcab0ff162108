//go:build system

package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// fairnessCase is a long-lived or background consumer of shared workers:
// run holds one tenant's (or one credential's) use of it at its worst and
// shows that another tenant, or another credential of the same tenant,
// is served as usual beside it. Each new such consumer adds its row.
type fairnessCase struct {
	name string
	run  func(t *testing.T, srv *testenv.Server)
}

var fairnessCases = []fairnessCase{
	{"webhook deliveries: a slow tenant beside a fast one", slowWebhooksBesideFast},
	{"long polls: one credential beside its tenant", pollsOfOneCredential},
	{"long polls: an idle tenant's beside another's writes", idlePollsBesideWrites},
	{"audit log: one credential's stalled reads beside its tenant and another", stalledAuditReads},
	{"account exports: made oldest first across tenants, one at a time, beside requests", exportsInTurn},
	{"list sheets and reports: one credential's stalled downloads beside its tenant and another", stalledExports},
}

// TestFairness runs every row on both databases.
func TestFairness(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.WebhookAllowPrivate = true // the receivers listen on 127.0.0.1
			c.WebhookPoll = 100 * time.Millisecond
			// A worker lets its webhook go after every delivery while others
			// wait: what the default second allows, without a clock to race.
			c.WebhookBudget = time.Nanosecond
			// Waiting reads look for changes only when a commit wakes them.
			c.FeedLook = time.Hour
		})
		for _, fc := range fairnessCases {
			t.Run(fc.name, func(t *testing.T) { fc.run(t, srv) })
		}
	})
}

// slowWebhooksBesideFast: tenant A has 8 webhooks (one instance's
// workers) at a receiver that answers only when the test lets it, and
// changes for each; tenant B's one webhook at a receiver that answers at
// once gets its delivery as soon as one of A's deliveries ends, not
// after A's backlog. The test lets A's held deliveries end one at a time
// and counts how many end before B's arrives.
func slowWebhooksBesideFast(t *testing.T, srv *testenv.Server) {
	slow := newHeldReceiver(t)
	fast := make(chan struct{}, 16)
	fastSrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fast <- struct{}{}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(fastSrv.Close)

	a := srv.SignIn(t, srv.CreateTenant(t, "slowhooks"))
	for i := range 8 {
		a.Object(t, http.MethodPost, "/v1/webhooks", M{"url": fmt.Sprintf("%s/hook/%d", slow.srv.URL, i), "resources": []string{"projects"}}, http.StatusCreated)
	}
	for i := range 5 {
		a.Create(t, "projects", M{"name": fmt.Sprint("a", i)})
	}
	slow.await(t, 8) // every worker of the instance holds one of A's deliveries

	b := srv.SignIn(t, srv.CreateTenant(t, "fasthooks"))
	b.Object(t, http.MethodPost, "/v1/webhooks", M{"url": fastSrv.URL + "/hook", "resources": []string{"projects"}}, http.StatusCreated)
	b.Create(t, "projects", M{"name": "b"})

	for released := 1; released <= 8; released++ {
		slow.releaseOne()
		select {
		case <-fast:
			t.Logf("B's delivery came after %d of A's held deliveries ended", released)
			if released > 1 {
				t.Errorf("B's delivery came after %d of A's deliveries ended, want after the first", released)
			}
			return
		case <-slow.arrived:
			// a worker went on with A: the next held delivery
		case <-time.After(time.Minute):
			t.Fatalf("nothing arrived within a minute after %d of A's deliveries ended", released)
		}
	}
	t.Fatalf("B's delivery waits while A's deliveries go on: 8 of A's ended, and A's workers took their next")
}

// heldReceiver holds each request until the test releases one.
type heldReceiver struct {
	srv     *httptest.Server
	arrived chan struct{}
	release chan struct{}
	done    chan struct{}
}

func newHeldReceiver(t *testing.T) *heldReceiver {
	h := &heldReceiver{arrived: make(chan struct{}, 256), release: make(chan struct{}), done: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.arrived <- struct{}{}
		select {
		case <-h.release:
		case <-h.done:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	// The held requests end before the server closes (Close waits for them).
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { close(h.done) })
	return h
}

// await waits until n requests have arrived.
func (h *heldReceiver) await(t *testing.T, n int) {
	t.Helper()
	for i := range n {
		select {
		case <-h.arrived:
		case <-time.After(time.Minute):
			t.Fatalf("%d of %d requests arrived within a minute", i, n)
		}
	}
}

func (h *heldReceiver) releaseOne() { h.release <- struct{}{} }

// pollsOfOneCredential: a member's read-only API client holds 8 waiting
// reads of the feed, all it may; its 9th is refused at once with 429 and
// Retry-After, while the member signed in themselves may still wait, and
// the tenant's admin is answered.
func pollsOfOneCredential(t *testing.T, srv *testenv.Server) {
	admin := srv.SignIn(t, srv.CreateTenant(t, "onecred"))
	member := admin.Member(t, "member@onecred.test")
	client := admin.ClientSignIn(t, admin.APIClient(t, "sync", member.UserID, "read"))
	waiting := waitingPolls(t, srv)
	stop := holdPolls(t, client, feedEnd(t, client), 8)
	defer stop()
	eventually(t, time.Minute, "the client's 8 reads do not wait", func() bool { return waitingPolls(t, srv) == waiting+8 })

	status, h, raw := client.Send(t, http.MethodGet, "/v1/changes?wait=30&after="+feedEnd(t, client), nil)
	testenv.WantError(t, "the client's 9th waiting read", status, raw, http.StatusTooManyRequests, "too_many_requests")
	if h.Get("Retry-After") == "" {
		t.Errorf("the 9th waiting read's 429 has no Retry-After")
	}
	if status, _, raw := client.Send(t, http.MethodGet, "/v1/changes", nil); status != http.StatusOK {
		t.Errorf("the client's read without wait: %d %s", status, raw)
	}
	if status, _, raw := member.Send(t, http.MethodGet, "/v1/changes?wait=0.2&after="+feedEnd(t, member), nil); status != http.StatusOK {
		t.Errorf("the member's own waiting read beside their client's: %d %s", status, raw)
	}
	if status, _, raw := admin.Send(t, http.MethodGet, "/v1/users/me", nil); status != http.StatusOK {
		t.Errorf("the admin beside the client's waiting reads: %d %s", status, raw)
	}
}

// idlePollsBesideWrites: 8 reads of an idle tenant wait; another tenant's
// 20 writes wake none of them (not one read of changes more), and the
// idle tenant's own write answers them.
func idlePollsBesideWrites(t *testing.T, srv *testenv.Server) {
	idle := srv.SignIn(t, srv.CreateTenant(t, "idlepolls"))
	busy := srv.SignIn(t, srv.CreateTenant(t, "busywrites"))
	end := feedEnd(t, idle)
	reads, waiting := feedReads(t, srv), waitingPolls(t, srv)
	var answered atomic.Int32
	stop := holdPolls(t, idle, end, 8, func(status int) {
		if status == http.StatusOK {
			answered.Add(1)
		}
	})
	defer stop()
	// Each waiting read has read once, so each listens for its wake-up.
	eventually(t, time.Minute, "the 8 reads do not wait", func() bool {
		return waitingPolls(t, srv) == waiting+8 && feedReads(t, srv) >= reads+8
	})
	reads = feedReads(t, srv)
	for i := range 20 {
		busy.Create(t, "projects", M{"name": fmt.Sprint("p", i)})
	}
	if more := feedReads(t, srv) - reads; more > 0 {
		t.Errorf("another tenant's 20 writes made the idle tenant's 8 waiting reads read %v times", more)
	}
	idle.Create(t, "projects", M{"name": "wake"})
	eventually(t, time.Minute, "the idle tenant's write does not answer its waiting reads", func() bool { return answered.Load() == 8 })
}

// holdPolls starts n reads by c after the cursor end that wait for a
// change, each in a goroutine; stop cuts those still waiting and waits
// for all. report, when given, learns each read's status.
func holdPolls(t *testing.T, c *testenv.Client, end string, n int, report ...func(status int)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := c.Request(t, http.MethodGet, "/v1/changes?wait=30&after="+end, nil).WithContext(ctx)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return // cut by stop
			}
			resp.Body.Close()
			for _, r := range report {
				r(resp.StatusCode)
			}
		}()
	}
	return func() { cancel(); wg.Wait() }
}

// feedEnd is the cursor after the last change c may read now.
func feedEnd(t *testing.T, c *testenv.Client) string {
	t.Helper()
	path := "/v1/changes?limit=10000"
	for {
		p := c.Object(t, http.MethodGet, path, nil, http.StatusOK)
		next, _ := p["next"].(string)
		if changes, _ := p["changes"].([]any); len(changes) == 0 {
			return next
		}
		path = "/v1/changes?limit=10000&after=" + next
	}
}

func waitingPolls(t *testing.T, srv *testenv.Server) float64 {
	return metricValue(t, scrape(t, srv), "planwerk_feed_waiting ")
}

func feedReads(t *testing.T, srv *testenv.Server) float64 {
	return metricValue(t, scrape(t, srv), "planwerk_feed_reads_total ")
}

// stalledAuditReads: an admin's API client starts 8 reads of a large
// audit log (as CSV, 8 MB each) and stops reading them. They hold no
// database connection, and the admin beside the client, and another
// tenant, read their audit logs as usual.
func stalledAuditReads(t *testing.T, srv *testenv.Server) {
	tn := srv.CreateTenant(t, "stalledaudit")
	admin := srv.SignIn(t, tn)
	other := srv.SignIn(t, srv.CreateTenant(t, "quickaudit"))
	db, ctx := srv.Service.DB, context.Background()
	doc := fmt.Appendf(nil, `{"pad":%q}`, strings.Repeat("p", 4<<10))
	err := db.Tx(ctx, func(q store.Querier) error {
		for i := range 2000 {
			if err := db.Audit(ctx, q, tn.ID, store.AuditNote{Resource: "projects", Record: int64(i + 1), Op: store.OpCreate, After: doc}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	client := admin.ClientSignIn(t, admin.APIClient(t, "archive", admin.UserID, "read")).With("Accept", "text/csv")
	for i := range 8 {
		conn, br := rawRequest(t, client, "/v1/audit-log?limit=10000")
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := br.Peek(1); err != nil {
			t.Fatalf("stalled read %d: no answer: %v", i, err)
		}
	}
	eventually(t, 30*time.Second, "database connections still in use by the stalled audit reads", func() bool {
		return poolsInUse(srv) == 0
	})
	for _, c := range []*testenv.Client{admin, other} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		status, _, body := testenv.Do(t, c.Request(t, http.MethodGet, "/v1/audit-log?limit=10", nil).WithContext(ctx))
		cancel()
		if status != http.StatusOK {
			t.Errorf("%s's audit log beside the stalled reads: %d %.200s", c.Slug, status, body)
		}
	}
}

// exportsInTurn: three tenants' exports, asked for in an order that is
// neither that of the tenants' ids nor its reverse (and made visible at
// once, in one transaction), are made one at a time in the order they
// were asked for: a tenant's export waits for those asked for before it,
// never for later ones, and each tenant has one pending at a time. A
// fourth tenant's requests are answered meanwhile.
func exportsInTurn(t *testing.T, srv *testenv.Server) {
	var tenants []testenv.Tenant
	for _, slug := range []string{"export-x", "export-y", "export-z"} {
		tn := srv.CreateTenant(t, slug)
		srv.SignIn(t, tn).Create(t, "projects", M{"name": slug})
		tenants = append(tenants, tn)
	}
	order := []testenv.Tenant{tenants[1], tenants[2], tenants[0]}
	db, ctx := srv.Service.DB, context.Background()
	ids := map[int64]int64{}
	asked := time.Now().Add(-time.Minute)
	err := db.Tx(ctx, func(q store.Querier) error {
		for i, tn := range order {
			id, err := db.NewID(ctx, q, tn.ID)
			if err != nil {
				return err
			}
			ids[tn.ID] = id
			if _, err := q.ExecContext(ctx, `INSERT INTO account_exports (tenant_id, id, status, created_by, created_at) VALUES ($1, $2, 'pending', $3, $4)`,
				tn.ID, id, tn.AdminID, store.Timestamp(asked.Add(time.Duration(i)*time.Millisecond))); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	other := srv.SignIn(t, srv.CreateTenant(t, "export-bystander"))
	finished := map[int64]string{}
	eventually(t, time.Minute, "the three exports are not all done", func() bool {
		other.Create(t, "projects", M{"name": "meanwhile"})
		for _, tn := range order {
			var status string
			var at *string
			if err := db.QueryRowContext(ctx, `SELECT status, finished_at FROM account_exports WHERE tenant_id = $1 AND id = $2`, tn.ID, ids[tn.ID]).Scan(&status, &at); err != nil {
				t.Fatal(err)
			}
			if status != "done" {
				return false
			}
			finished[tn.ID] = *at
		}
		return true
	})
	for i := 1; i < len(order); i++ {
		if finished[order[i-1].ID] > finished[order[i].ID] {
			t.Errorf("%s's export, asked for earlier, finished at %s, after %s's at %s", order[i-1].Slug, finished[order[i-1].ID], order[i].Slug, finished[order[i].ID])
		}
	}
}

// stalledExports: one credential of a tenant downloads its time entries
// as CSV and as XLSX and its time report as PDF, on eight connections it
// then stops reading; while they stall, neither that tenant's other
// requests nor another tenant's wait for them: the stalled answers hold
// no database connection (a list is read whole into its spool, a report
// summed, before a byte is sent), and the tenant's and the other tenant's
// lists and reports are answered.
func stalledExports(t *testing.T, srv *testenv.Server) {
	tn := srv.CreateTenant(t, "stalledexports")
	admin := srv.SignIn(t, tn)
	other := srv.SignIn(t, srv.CreateTenant(t, "quickexports"))
	db, ctx := srv.Service.DB, context.Background()
	pad := strings.Repeat("p", 2<<10)
	docs := make([]map[string]any, 4000)
	for i := range docs {
		docs[i] = map[string]any{"trackingType": "BREAK", "user": tn.AdminID, "day": fmt.Sprintf("2026-01-%02d", 1+i%28),
			"duration": 60, "sorting": i, "notes": pad, "ticket": fmt.Sprint("T-", i)}
	}
	if err := db.Tx(ctx, func(q store.Querier) error {
		_, err := db.InsertRecords(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, docs)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	archive := admin.ClientSignIn(t, admin.APIClient(t, "exports", admin.UserID, "read"))
	for i := range 8 {
		path, accept := "/v1/time-entries?limit=10000", "text/csv"
		switch i % 4 {
		case 1:
			accept = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
		case 2:
			path, accept = "/v1/reports/time?from=2026-01-01&to=2026-01-31&groupBy=ticket", "application/pdf"
		}
		conn, br := rawRequest(t, archive.With("Accept", accept), path)
		t.Cleanup(func() { conn.Close() })
		_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := br.Peek(1); err != nil {
			t.Fatalf("stalled download %d (%s as %s): no answer: %v", i, path, accept, err)
		}
	}
	eventually(t, 30*time.Second, "database connections still in use by the stalled downloads", func() bool {
		return poolsInUse(srv) == 0
	})
	for _, c := range []*testenv.Client{admin, other} {
		for _, path := range []string{"/v1/time-entries?limit=10", "/v1/reports/time?from=2026-01-01&to=2026-01-31&groupBy=user"} {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			status, _, body := testenv.Do(t, c.With("Accept", "text/csv").Request(t, http.MethodGet, path, nil).WithContext(ctx))
			cancel()
			if status != http.StatusOK {
				t.Errorf("%s's %s as CSV beside the stalled downloads: %d %.200s", c.Slug, path, status, body)
			}
		}
	}
}
