package feed_test

// The change feed (docs/api.md "Change feed").

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/feed"
	"planwerk/internal/testenv"
)

type M = testenv.M

// change is an entry of the feed as a test reads it.
type change struct {
	Cursor   string
	Resource string
	ID       int64
	Op       string
	At       string
	Record   M
}

type page struct {
	Changes []change
	Next    string
}

// read reads the feed once.
func read(t *testing.T, c *testenv.Client, params url.Values) page {
	t.Helper()
	status, _, raw := c.Send(t, http.MethodGet, "/v1/changes?"+params.Encode(), nil)
	if status != http.StatusOK {
		t.Fatalf("GET /v1/changes?%s: %d %s", params.Encode(), status, raw)
	}
	var p page
	testenv.DecodeInto(t, raw, &p)
	return p
}

// follow reads from after to the end of the feed, limit at a time.
func follow(t *testing.T, c *testenv.Client, after string, limit int) ([]change, string) {
	t.Helper()
	var all []change
	for {
		p := read(t, c, url.Values{"after": {after}, "limit": {fmt.Sprint(limit)}})
		all = append(all, p.Changes...)
		if p.Next == after || len(p.Changes) == 0 {
			return all, p.Next
		}
		after = p.Next
	}
}

// summary is what changed, as "resource op id".
func summary(cs []change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = fmt.Sprintf("%s %s %d", c.Resource, c.Op, c.ID)
	}
	return out
}

// TestFeedWritePaths: every kind of write makes exactly its changes, in
// order, each with the record as a read shows it (none for a delete).
func TestFeedWritePaths(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		start := read(t, admin, nil)
		// A new tenant starts with its admin and its PublicHoliday type.
		if got := summary(start.Changes); len(got) != 2 || got[0] != fmt.Sprintf("users create %d", admin.UserID) {
			t.Errorf("a new tenant's changes: %v", got)
		}
		cursor := start.Next

		expect := func(what string, want ...string) {
			t.Helper()
			got, next := follow(t, admin, cursor, 2)
			cursor = next
			if fmt.Sprint(summary(got)) != fmt.Sprint(want) {
				t.Errorf("%s: changes %v, want %v", what, summary(got), want)
			}
			for _, c := range got {
				if c.Op == "delete" && c.Record != nil {
					t.Errorf("%s: a delete carries %v", what, c.Record)
				}
				if c.Op != "delete" && (c.Record == nil || testenv.Num(c.Record["id"]) != c.ID) {
					t.Errorf("%s: %s %d carries %v", what, c.Resource, c.ID, c.Record)
				}
			}
			// The last change of a record is the record as a read shows it.
			if n := len(got); n > 0 && got[n-1].Op != "delete" && got[n-1].Resource != "uploads" {
				if now := admin.Get(t, got[n-1].Resource, got[n-1].ID); fmt.Sprint(now) != fmt.Sprint(got[n-1].Record) {
					t.Errorf("%s: the change's record %v, GET %v", what, got[n-1].Record, now)
				}
			}
		}

		project := admin.Create(t, "projects", M{"name": "Apollo"})
		pid := testenv.ID(t, project)
		expect("create", fmt.Sprintf("projects create %d", pid))
		admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", pid), M{"name": "Apollo 11"}, http.StatusOK)
		expect("update", fmt.Sprintf("projects update %d", pid))

		task := admin.Create(t, "tasks", M{"name": "T", "project": pid})
		tid := testenv.ID(t, task)
		entry := admin.Create(t, "time-entries", M{"trackingType": "WORK", "project": pid, "task": tid, "duration": 3600, "sorting": 1, "day": "2026-03-02"})
		eid := testenv.ID(t, entry)
		expect("task and entry", fmt.Sprintf("tasks create %d", tid), fmt.Sprintf("time-entries create %d", eid))
		days := admin.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": "approve", "items": []M{{"project": pid, "day": "2026-03-02"}}}, http.StatusOK)
		// In the order the transaction made them: the entries, then the day.
		expect("approval", fmt.Sprintf("time-entries update %d", eid), fmt.Sprintf("project-days create %d", testenv.ID(t, days[0])))

		doc := admin.Create(t, "documents", M{"model": "project", "record": pid, "category": 7})
		did := testenv.ID(t, doc)
		expect("document", fmt.Sprintf("documents create %d", did))
		up := admin.UploadFile(t, "document", did, testenv.Part{Filename: "a.txt", Data: []byte("hello")})
		expect("upload", fmt.Sprintf("uploads create %d", up), fmt.Sprintf("documents update %d", did))
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/files/%d", up), nil, http.StatusOK)
		expect("file delete", fmt.Sprintf("uploads delete %d", up), fmt.Sprintf("documents update %d", did))

		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", pid), nil, http.StatusOK)
		expect("delete", fmt.Sprintf("projects delete %d", pid))

		// Refused writes change nothing.
		admin.Fail(t, http.MethodPost, "/v1/time-entries", M{"trackingType": "NOTHING"}, http.StatusBadRequest, "invalid")
		expect("refused write")
	})
}

// TestFeedVisibility: a member reads the changes of records it may read,
// and not of another user's user documents; the cursor passes over them.
func TestFeedVisibility(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		member := admin.Member(t, "m@acme.test")
		cursor := read(t, admin, nil).Next
		other := admin.Create(t, "users", M{"email": "o@acme.test", "password": "other-password", "isAdmin": false})
		hidden := admin.Create(t, "documents", M{"model": "user", "record": testenv.ID(t, other), "category": 1})
		own := admin.Create(t, "documents", M{"model": "user", "record": member.UserID, "category": 1, "visibleToUser": true})
		mine, _ := follow(t, member, cursor, 1000)
		all, _ := follow(t, admin, cursor, 1000)
		if len(all) != 3 {
			t.Fatalf("admin sees %v", summary(all))
		}
		want := []string{fmt.Sprintf("users create %d", testenv.ID(t, other)), fmt.Sprintf("documents create %d", testenv.ID(t, own))}
		if fmt.Sprint(summary(mine)) != fmt.Sprint(want) {
			t.Errorf("member sees %v, want %v (not document %d)", summary(mine), want, testenv.ID(t, hidden))
		}
		// Another tenant's feed has none of them.
		beta := srv.SignIn(t, srv.CreateTenant(t, "beta"))
		for _, c := range read(t, beta, url.Values{"limit": {"1000"}}).Changes {
			if c.Resource == "documents" {
				t.Errorf("beta sees %v", c)
			}
		}
	})
}

// TestFeedParameters: limits, the resources filter, bad cursors and
// parameters, and retention (410 for a cursor older than the kept
// changes).
func TestFeedParameters(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		start := read(t, admin, nil).Next
		for i := range 5 {
			admin.Create(t, "projects", M{"name": fmt.Sprint("p", i)})
			admin.Create(t, "clients", M{"name": fmt.Sprint("c", i)})
		}
		p := read(t, admin, url.Values{"after": {start}, "limit": {"3"}})
		if len(p.Changes) != 3 || p.Next != p.Changes[2].Cursor {
			t.Errorf("limit 3: %v, next %s", summary(p.Changes), p.Next)
		}
		only := read(t, admin, url.Values{"after": {start}, "resources": {"clients"}})
		if len(only.Changes) != 5 || only.Changes[0].Resource != "clients" {
			t.Errorf("resources=clients: %v", summary(only.Changes))
		}
		// A name given again and again is the name once; the read is the
		// same, and costs what one name does.
		repeated := read(t, admin, url.Values{"after": {start}, "resources": {strings.Repeat("clients,", 2000) + "projects"}})
		if both := read(t, admin, url.Values{"after": {start}, "resources": {"projects,clients"}}); fmt.Sprint(summary(repeated.Changes)) != fmt.Sprint(summary(both.Changes)) || len(both.Changes) != 10 {
			t.Errorf("resources repeated: %v, want %v", summary(repeated.Changes), summary(both.Changes))
		}
		end := read(t, admin, url.Values{"after": {only.Next}})
		if len(end.Changes) != 0 || end.Next != only.Next {
			t.Errorf("at the end: %v, next %s (sent %s)", summary(end.Changes), end.Next, only.Next)
		}
		for _, q := range []string{"limit=0", "limit=10001", "limit=x", "wait=31", "wait=-1", "resources=nothing",
			"resources=clients,nothing,clients", "resources=clients,,projects", "resources=Clients",
			"after=abc", "after=" + start + "&after=" + start, "sort=id", "after=" + cursorPast(t, admin)} {
			admin.Fail(t, http.MethodGet, "/v1/changes?"+q, nil, http.StatusBadRequest, "invalid")
		}

		// Everything before now purged: the old cursor is gone; without a
		// cursor the feed starts after the purged changes.
		if err := srv.Service.DB.PurgeChanges(context.Background(), time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		admin.Fail(t, http.MethodGet, "/v1/changes?after="+url.QueryEscape(start), nil, http.StatusGone, "cursor_expired")
		fresh := admin.Create(t, "projects", M{"name": "after the purge"})
		if got := read(t, admin, nil).Changes; len(got) != 1 || got[0].ID != testenv.ID(t, fresh) {
			t.Errorf("after a purge the feed starts with %v", summary(got))
		}
	})
}

// TestFeedPageBudget: a page of large records ends at the feed's byte
// budget, whatever the limit, with next where it stopped; following next
// yields every change once, in order, for an admin and for a member
// (whose read checks each change's visibility).
func TestFeedPageBudget(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		member := admin.Member(t, "member@acme.test")
		start := read(t, admin, url.Values{"limit": {"10000"}}).Next
		big := strings.Repeat("x", 1<<20-1024)
		var all []int64
		for i := range 12 {
			who := admin
			if i%3 == 0 {
				who = member
			}
			e := who.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": "2026-01-05",
				"startTime": "2026-01-05T08:00:00Z", "endTime": "2026-01-05T09:00:00Z", "notes": big, "n": i})
			all = append(all, testenv.ID(t, e))
		}
		for _, c := range []struct {
			who  *testenv.Client
			want []int64
		}{{admin, all}, {member, all}} {
			var got []int64
			after, pages := start, 0
			for {
				p := read(t, c.who, url.Values{"after": {after}, "limit": {"10000"}})
				var bytes int
				for _, ch := range p.Changes {
					got = append(got, ch.ID)
					bytes += len(ch.Record["notes"].(string))
				}
				if bytes > feed.PageBytes+(1<<20) {
					t.Errorf("a page of %d changes holds %d bytes of records, more than the budget of %d and one record", len(p.Changes), bytes, feed.PageBytes)
				}
				if p.Next == after {
					break
				}
				after, pages = p.Next, pages+1
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("following next: %v, want %v", got, c.want)
			}
			if pages < 3 {
				t.Errorf("12 records of 1 MiB came in %d pages, want pages ended at the budget", pages)
			}
		}
	})
}

// cursorPast is a well-formed cursor beyond the tenant's last change.
func cursorPast(t *testing.T, c *testenv.Client) string {
	t.Helper()
	p := read(t, c, url.Values{"limit": {"10000"}})
	last := p.Changes[len(p.Changes)-1].Cursor
	// Cursors are opaque to clients, but the test knows the form.
	return testenv.FeedCursor(t, last, 1000)
}

// TestFeedWait: a waiting read returns as soon as a change is made, on
// the same instance or another.
func TestFeedWait(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b)
		two := testenv.Start(t, b, func(c *config.Config) { c.Database = one.Config.Database })
		tn := one.CreateTenant(t, "acme")
		a, b2 := one.SignIn(t, tn), two.SignIn(t, tn)
		for _, writer := range []*testenv.Client{a, b2} {
			cursor := read(t, a, url.Values{"limit": {"10000"}}).Next
			got := make(chan page, 1)
			go func() {
				p := read(t, a, url.Values{"after": {cursor}, "wait": {"25"}})
				got <- p
			}()
			p := writer.Create(t, "projects", M{"name": "waited for"})
			select {
			case pg := <-got:
				if len(pg.Changes) != 1 || pg.Changes[0].ID != testenv.ID(t, p) {
					t.Errorf("the waiting read got %v", summary(pg.Changes))
				}
			case <-time.After(60 * time.Second):
				t.Fatal("the waiting read did not return")
			}
		}
	})
}

// TestFeedNeverSkips: many writers on two instances commit out of order
// while a reader follows the feed: every change is seen exactly once, in
// cursor order.
func TestFeedNeverSkips(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b)
		two := testenv.Start(t, b, func(c *config.Config) { c.Database = one.Config.Database })
		tn := one.CreateTenant(t, "acme")
		writers := []*testenv.Client{one.SignIn(t, tn), two.SignIn(t, tn)}
		reader := writers[0]
		cursor := read(t, reader, url.Values{"limit": {"10000"}}).Next

		const perWriter, goroutines = 40, 6
		var wg sync.WaitGroup
		created := make(chan int64, perWriter*goroutines)
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := writers[g%2]
				for i := range perWriter {
					// Creates and updates, so that transactions differ in length.
					p := c.Create(t, "projects", M{"name": fmt.Sprintf("w%d-%d", g, i)})
					created <- testenv.ID(t, p)
					if i%3 == 0 {
						c.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", testenv.ID(t, p)), M{"name": "again"}, http.StatusOK)
					}
				}
			}()
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()

		seen := map[string]int{}
		var order []string
		finished := false
		for !finished {
			select {
			case <-done:
				finished = true // one more read after the last write
			default:
			}
			p := read(t, reader, url.Values{"after": {cursor}, "limit": {"7"}})
			for _, c := range p.Changes {
				key := fmt.Sprintf("%s %d", c.Op, c.ID)
				seen[key]++
				order = append(order, c.Cursor)
			}
			cursor = p.Next
			if finished {
				rest, _ := follow(t, reader, cursor, 50)
				for _, c := range rest {
					seen[fmt.Sprintf("%s %d", c.Op, c.ID)]++
				}
			}
		}
		close(created)
		n := 0
		for id := range created {
			n++
			if seen[fmt.Sprintf("create %d", id)] != 1 {
				t.Errorf("project %d: its create seen %d times", id, seen[fmt.Sprintf("create %d", id)])
			}
		}
		for k, v := range seen {
			if v != 1 {
				t.Errorf("%s seen %d times", k, v)
			}
		}
		// In commit order: positions only grow.
		prev := int64(-1)
		for _, c := range order {
			seq, err := feed.ParseCursor(c)
			if err != nil || seq <= prev {
				t.Fatalf("cursor %s (%d) after %d", c, seq, prev)
			}
			prev = seq
		}
		if n != perWriter*goroutines {
			t.Fatalf("%d creates", n)
		}
		t.Logf("%d changes followed while written", len(seen))
	})
}
