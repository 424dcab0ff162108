package main

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/lifecycle"
	"planwerk/internal/store"
	"planwerk/internal/tally"
	"planwerk/internal/users"
)

// The company: a project for every ten people (at least 40) of 10 tasks
// each, WORK entries over the workdays of 2026: about four entries a
// person a day make a project-day of about 40 entries.
const (
	companyProjects = 40
	companyTasks    = 10
	companyPerDay   = 4 // entries of a person a day
	companySeeders  = 16
	companyWriters  = 8
	// companyBatch is how many entries one transaction of the direct
	// seeding (--seed store) inserts.
	companyBatch = 2000
)

// companyTenant is one seeded tenant as its admin sees it over HTTP.
type companyTenant struct {
	slug     string
	base     string
	token    string
	client   *http.Client
	users    []int64
	projects []int64
	tasks    []int64 // companyTasks per project, in project order
	// days are the workdays the tenant's entries cover: the first ones
	// of 2026, as many as its people fill at companyPerDay entries each.
	days    []time.Time
	id      int64 // the tenant's id, for the direct seeding
	entries int
	rate    float64 // entries/s while seeding
}

// workdays2026 are the Mondays to Fridays of 2026.
func workdays2026() []time.Time {
	var days []time.Time
	for d := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2026; d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			days = append(days, d)
		}
	}
	return days
}

// do sends one request as the tenant's admin and returns the status,
// the body and the response's headers.
func (t *companyTenant) do(ctx context.Context, method, path, body string) (int, []byte, http.Header, error) {
	return t.doAs(ctx, method, path, body, "")
}

// doAs is do asking for the media type accept ("": none named).
func (t *companyTenant) doAs(ctx context.Context, method, path, body, accept string) (int, []byte, http.Header, error) {
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, t.base+path, r)
	req.Header.Set("companyurl", t.slug)
	req.Header.Set("Authorization", "Bearer "+t.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, resp.Header, err
}

// must is do that fails unless the status is want.
func (t *companyTenant) must(ctx context.Context, method, path, body string, want int) ([]byte, error) {
	code, b, _, err := t.do(ctx, method, path, body)
	if err != nil {
		return nil, err
	}
	if code != want {
		return nil, fmt.Errorf("%s %s: %d %.300s", method, path, code, b)
	}
	return b, nil
}

// parallel runs do(i) for i in 0..n from k goroutines; the first error wins.
func parallel(n, k int, do func(i int) error) error {
	var next atomic.Int64
	var first atomic.Value
	var wg sync.WaitGroup
	for w := 0; w < k; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || first.Load() != nil {
					return
				}
				if err := do(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := first.Load().(error); err != nil {
		return err
	}
	return nil
}

// companyDays are the workdays a company of nUsers people and nEntries
// entries covers at companyPerDay entries a person a day: all of 2026's
// for a million entries of 1,000 people, the first eight for 30,000, so
// that a small company's day, week and tenant-wide day are as big as a
// large one's of the same people.
func companyDays(nUsers, nEntries int) []time.Time {
	all := workdays2026()
	n := (nEntries + nUsers*companyPerDay - 1) / (nUsers * companyPerDay)
	return all[:max(1, min(len(all), n))]
}

// entryDoc is the i-th WORK entry of the company: entries fill (user,
// workday) slots round-robin, about four per user and day.
func (t *companyTenant) entryDoc(i int) map[string]any {
	slots := len(t.users) * len(t.days)
	s, k := i%slots, i/slots
	u, d := s%len(t.users), s/len(t.users)
	p := (u*3 + k) % len(t.projects)
	return map[string]any{"trackingType": "WORK", "user": t.users[u], "project": t.projects[p],
		"task": t.tasks[p*companyTasks+(d+k)%companyTasks], "day": t.days[d].Format(time.DateOnly),
		"duration": 1800 + (i%8)*900, "sorting": k + 1}
}

// entryBody is the i-th WORK entry of the company as a request's body.
func (t *companyTenant) entryBody(i int) string {
	b, _ := json.Marshal(t.entryDoc(i))
	return string(b)
}

// seedCompany creates nUsers users, the projects and tasks and nEntries
// WORK entries, plus a WORKTIME and a BREAK entry of each user's first day,
// through the public API; with db, the WORK entries are written straight
// into its store instead (seedDirect), to be exported.
func seedCompany(ctx context.Context, t *companyTenant, nUsers, nEntries int, db *store.DB) error {
	t.days = companyDays(nUsers, nEntries)
	t.users = make([]int64, nUsers)
	if err := parallel(nUsers, companySeeders, func(i int) error {
		b, err := t.must(ctx, http.MethodPost, "/v1/users", fmt.Sprintf(`{"email":"user%d@%s.test","name":"User %d"}`, i, t.slug, i), 201)
		if err != nil {
			return err
		}
		_, err = fmt.Sscan(idOf(string(b)), &t.users[i])
		return err
	}); err != nil {
		return err
	}
	t.projects = make([]int64, max(companyProjects, nUsers/10))
	if err := parallel(len(t.projects), companySeeders, func(i int) error {
		b, err := t.must(ctx, http.MethodPost, "/v1/projects", fmt.Sprintf(`{"name":"Project %d"}`, i), 201)
		if err != nil {
			return err
		}
		_, err = fmt.Sscan(idOf(string(b)), &t.projects[i])
		return err
	}); err != nil {
		return err
	}
	t.tasks = make([]int64, len(t.projects)*companyTasks)
	if err := parallel(len(t.tasks), companySeeders, func(i int) error {
		b, err := t.must(ctx, http.MethodPost, "/v1/tasks", fmt.Sprintf(`{"name":"Task %d","project":%d}`, i, t.projects[i/companyTasks]), 201)
		if err != nil {
			return err
		}
		_, err = fmt.Sscan(idOf(string(b)), &t.tasks[i])
		return err
	}); err != nil {
		return err
	}
	start := time.Now()
	if db != nil {
		if err := t.seedDirect(ctx, db, nEntries); err != nil {
			return err
		}
	} else if err := parallel(nEntries, companySeeders, func(i int) error {
		_, err := t.must(ctx, http.MethodPost, "/v1/time-entries", t.entryBody(i), 201)
		return err
	}); err != nil {
		return err
	}
	t.rate = float64(nEntries) / time.Since(start).Seconds()
	t.entries = nEntries
	d := t.days[0].Format(time.DateOnly)
	return parallel(nUsers, companySeeders, func(i int) error {
		if _, err := t.must(ctx, http.MethodPost, "/v1/time-entries", fmt.Sprintf(
			`{"trackingType":"WORKTIME","user":%d,"day":"%s","startTime":"%sT08:00:00.000Z","endTime":"%sT16:30:00.000Z"}`, t.users[i], d, d, d), 201); err != nil {
			return err
		}
		_, err := t.must(ctx, http.MethodPost, "/v1/time-entries", fmt.Sprintf(
			`{"trackingType":"BREAK","user":%d,"day":"%s","duration":1800,"sorting":91}`, t.users[i], d), 201)
		return err
	})
}

// seedDirect writes the tenant's nEntries WORK entries into the store in
// transactions of companyBatch, with their changes and audit entries but
// without the API's checks, and then builds their time totals: a million
// entries in minutes where the API takes an hour on a loaded PostgreSQL.
func (t *companyTenant) seedDirect(ctx context.Context, db *store.DB, nEntries int) error {
	entries := store.Collection{Table: "records", Resource: "time-entries"}
	for start := 0; start < nEntries; start += companyBatch {
		docs := make([]map[string]any, 0, companyBatch)
		for i := start; i < min(start+companyBatch, nEntries); i++ {
			doc := t.entryDoc(i)
			doc["validationStatus"] = "NOTAPPROVED" // as a create of a WORK entry stores it
			docs = append(docs, doc)
		}
		if err := db.Tx(ctx, func(q store.Querier) error {
			_, err := db.InsertRecords(ctx, q, t.id, entries, docs)
			return err
		}); err != nil {
			return fmt.Errorf("seed entries: %w", err)
		}
	}
	run := func(fn func(q tally.Querier) error) error {
		return db.Tx(ctx, func(q store.Querier) error { return fn(q) })
	}
	return tally.Rebuild(ctx, run, t.id, db.StoredDoc())
}

// companyQuestion is one question of the company, asked samples times.
type companyQuestion struct {
	name   string
	target time.Duration
	// samples caps the number of samples (0: --samples).
	samples int
	// old is a measure of the old path, asked alone only: beside the
	// writers it would take minutes and tell nothing new.
	old bool
	// ask asks the i-th variant and times only what the question is;
	// it answers false when the service cannot answer it (n/a).
	ask func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error)
}

// timed runs one request and times it.
func timed(ctx context.Context, t *companyTenant, method, path, body string) (time.Duration, bool, error) {
	return timedAs(ctx, t, method, path, body, "")
}

// timedAs is timed asking for the media type accept.
func timedAs(ctx context.Context, t *companyTenant, method, path, body, accept string) (time.Duration, bool, error) {
	start := time.Now()
	code, b, _, err := t.doAs(ctx, method, path, body, accept)
	d := time.Since(start)
	if err != nil {
		return 0, false, err
	}
	if code == 404 {
		return 0, false, nil
	}
	if code != 200 {
		return 0, false, fmt.Errorf("%s %s: %d %.300s", method, path, code, b)
	}
	return d, true, nil
}

func whereQ(where string) string { return "where=" + url.QueryEscape(where) }

// oldTotals lists the entries of from..to 50,000 at a time and sums them
// by group on the client: how totals were had before the service summed.
func oldTotals(ctx context.Context, t *companyTenant, from, to, groupBy string) (time.Duration, bool, error) {
	start := time.Now()
	sums := map[any]int64{}
	where := whereQ(fmt.Sprintf(`{"day":{">=":"%s","<=":"%s"}}`, from, to))
	for skip := 0; ; skip += 50000 {
		b, err := t.must(ctx, http.MethodGet, fmt.Sprintf("/v1/time-entries?%s&limit=50000&skip=%d", where, skip), "", 200)
		if err != nil {
			return 0, false, err
		}
		var page []map[string]any
		if err := json.Unmarshal(b, &page); err != nil {
			return 0, false, err
		}
		for _, e := range page {
			d, _ := e["duration"].(float64)
			sums[e[groupBy]] += int64(d)
		}
		if len(page) < 50000 {
			break
		}
	}
	return time.Since(start), true, nil
}

func companyQuestions() []companyQuestion {
	pick := func(t *companyTenant, i int) time.Time { return t.days[(i*37)%len(t.days)] }
	day := func(t *companyTenant, i int) string { return pick(t, i).Format(time.DateOnly) }
	user := func(t *companyTenant, i int) int64 { return t.users[(i*13)%len(t.users)] }
	project := func(t *companyTenant, i int) int64 { return t.projects[(i*7)%len(t.projects)] }
	// monthOf is one of the months the tenant's days touch; month its
	// first and last day.
	monthOf := func(t *companyTenant, i int) time.Month { return 1 + time.Month(i)%t.days[len(t.days)-1].Month() }
	month := func(t *companyTenant, i int) (string, string) {
		m := time.Date(2026, monthOf(t, i), 1, 0, 0, 0, 0, time.UTC)
		return m.Format(time.DateOnly), m.AddDate(0, 1, -1).Format(time.DateOnly)
	}
	get := func(path func(t *companyTenant, i int) string) func(context.Context, *companyTenant, int) (time.Duration, bool, error) {
		return func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
			return timed(ctx, t, http.MethodGet, path(t, i), "")
		}
	}
	const ms5, ms20, ms30, ms100, ms150 = 5 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond, 100 * time.Millisecond, 150 * time.Millisecond
	qs := []companyQuestion{
		{name: "a user's day (where)", target: ms5, ask: get(func(t *companyTenant, i int) string {
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":"%s"}`, user(t, i), day(t, i)))
		})},
		{name: "a user's day (?user&day)", target: ms5, ask: get(func(t *companyTenant, i int) string {
			return fmt.Sprintf("/v1/time-entries?user=%d&day=%s", user(t, i), day(t, i))
		})},
		{name: "a user's week", target: ms5, ask: get(func(t *companyTenant, i int) string {
			d := pick(t, i)
			mon := d.AddDate(0, 0, -int((d.Weekday()+6)%7))
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":{">=":"%s","<=":"%s"}}`, user(t, i), mon.Format(time.DateOnly), mon.AddDate(0, 0, 6).Format(time.DateOnly)))
		})},
		{name: "a user's month", target: ms5, ask: get(func(t *companyTenant, i int) string {
			f, l := month(t, i)
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":{">=":"%s","<=":"%s"}}`, user(t, i), f, l))
		})},
		{name: "a project's month, sort=day", target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(t, i)
			return "/v1/time-entries?sort=day&limit=50000&" + whereQ(fmt.Sprintf(`{"project":%d,"day":{">=":"%s","<=":"%s"}}`, project(t, i), f, l))
		})},
		{name: "one day across the tenant", target: ms30, ask: get(func(t *companyTenant, i int) string {
			return "/v1/time-entries?limit=50000&" + whereQ(fmt.Sprintf(`{"day":"%s"}`, day(t, i)))
		})},
	}
	for _, g := range []string{"user", "project", "day"} {
		qs = append(qs, companyQuestion{name: "totals of a month by " + g, target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(t, i)
			return fmt.Sprintf("/v1/analytics/time-totals?from=%s&to=%s&groupBy=%s", f, l, g)
		})}, companyQuestion{name: "  old path: list+sum a month by " + g, samples: 5, old: true,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				f, l := month(t, i)
				return oldTotals(ctx, t, f, l, g)
			}})
	}
	for _, g := range []string{"user", "project"} {
		qs = append(qs, companyQuestion{name: "totals of the year by " + g, target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/analytics/time-totals?from=2026-01-01&to=2026-12-31&groupBy=" + g
		})}, companyQuestion{name: "  old path: list+sum the year by " + g, samples: 2, old: true,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				return oldTotals(ctx, t, "2026-01-01", "2026-12-31", g)
			}})
	}
	qs = append(qs,
		companyQuestion{name: "report of a month by project", target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(t, i)
			return fmt.Sprintf("/v1/reports/time?from=%s&to=%s&groupBy=project", f, l)
		})},
		companyQuestion{name: "report of the year by user", target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/reports/time?from=2026-01-01&to=2026-12-31&groupBy=user"
		})},
		companyQuestion{name: "report of the year by project", target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/reports/time?from=2026-01-01&to=2026-12-31&groupBy=project"
		})},
		companyQuestion{name: "report of a month by project and user, where", samples: 10, ask: get(func(t *companyTenant, i int) string {
			f, l := month(t, i)
			return fmt.Sprintf("/v1/reports/time?from=%s&to=%s&groupBy=project,user&", f, l) + whereQ(`{"trackingType":"WORK"}`)
		})},
		companyQuestion{name: "approve a project-day", target: ms20,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				items := fmt.Sprintf(`[{"project":%d,"day":"%s"}]`, project(t, i), day(t, i))
				return approveTimed(ctx, t, items)
			}},
		companyQuestion{name: "approve a project's month", target: ms150,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				m := monthOf(t, i)
				var items []string
				for _, d := range t.days {
					if d.Month() == m {
						items = append(items, fmt.Sprintf(`{"project":%d,"day":"%s"}`, project(t, i), d.Format(time.DateOnly)))
					}
				}
				return approveTimed(ctx, t, "["+strings.Join(items, ",")+"]")
			}},
		companyQuestion{name: "the year's first 50,000 entries as CSV", samples: 5,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				return timedAs(ctx, t, http.MethodGet, "/v1/time-entries?limit=50000&"+whereQ(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`), "", "text/csv")
			}},
		companyQuestion{name: "the year's first 50,000 entries as XLSX", samples: 5,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				return timedAs(ctx, t, http.MethodGet, "/v1/time-entries?limit=50000&"+whereQ(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`), "",
					"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
			}},
		companyQuestion{name: "the year, page 1 of 10,000 (skip)", samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/time-entries?limit=10000&skip=0&" + whereQ(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`)
		})},
		companyQuestion{name: "the year, page 20 of 10,000 (skip)", samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/time-entries?limit=10000&skip=190000&" + whereQ(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`)
		})},
		companyQuestion{name: "the year, next page via Link", samples: 10,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				_, _, h, err := t.do(ctx, http.MethodGet, "/v1/time-entries?limit=10000&"+whereQ(`{"day":{">=":"2026-01-01","<=":"2026-12-31"}}`), "")
				if err != nil {
					return 0, false, err
				}
				next := nextLink(h.Get("Link"))
				if next == "" {
					return 0, false, nil
				}
				if u, err := url.Parse(next); err == nil {
					next = u.RequestURI()
				}
				return timed(ctx, t, http.MethodGet, next, "")
			}},
	)
	return qs
}

// nextLink is the target of rel="next" in a Link header, or "".
func nextLink(h string) string {
	for _, part := range strings.Split(h, ",") {
		if strings.Contains(part, `rel="next"`) {
			if i, j := strings.Index(part, "<"), strings.Index(part, ">"); i >= 0 && j > i {
				return part[i+1 : j]
			}
		}
	}
	return ""
}

// approveTimed approves items, timed, then unapproves them, untimed.
func approveTimed(ctx context.Context, t *companyTenant, items string) (time.Duration, bool, error) {
	d, ok, err := timed(ctx, t, http.MethodPost, "/v1/approval/bulk-approve", `{"action":"approve","items":`+items+`}`)
	if err != nil || !ok {
		return d, ok, err
	}
	_, err = t.must(ctx, http.MethodPost, "/v1/approval/bulk-approve", `{"action":"unapprove","items":`+items+`}`, 200)
	return d, true, err
}

// companyStat is one question's p50/p95, or n/a.
type companyStat struct {
	p50, p95 time.Duration
	na       bool
}

func (s companyStat) String() string {
	if s.na {
		return "n/a"
	}
	return fmt.Sprintf("%s / %s", ms(s.p50), ms(s.p95))
}

func askAll(ctx context.Context, t *companyTenant, qs []companyQuestion, samples int, loaded bool) ([]companyStat, error) {
	out := make([]companyStat, len(qs))
	for qi, q := range qs {
		if loaded && q.old {
			out[qi].na = true
			continue
		}
		n := samples
		if q.samples > 0 && q.samples < n {
			n = q.samples
		}
		var ds []time.Duration
		for i := 0; i < n; i++ {
			d, ok, err := q.ask(ctx, t, i)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", q.name, err)
			}
			if !ok {
				out[qi].na = true
				break
			}
			ds = append(ds, d)
		}
		if !out[qi].na {
			slices.Sort(ds)
			out[qi].p50, out[qi].p95 = ds[len(ds)/2], ds[min(len(ds)-1, len(ds)*95/100)]
		}
	}
	return out, nil
}

// runCompany builds a big and a small company on each engine and asks
// them a company's questions.
// The small company has the big one's people and fewer days: its
// answers about a person's day or week, or about one day of the tenant,
// are as big as the big one's, and the growth column shows what the
// tenant's other rows cost. With viaArchive, both companies are built
// once (buildArchives) and each engine gets them through tenant import.
// With keep the databases stay, for a look at them, and are named.
func runCompany(ctx context.Context, pgURL, engine string, nUsers, nEntries, samples int, viaArchive, keep bool) error {
	if engine == "sqlite" {
		pgURL = ""
	}
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "databases kept: %q\n", dsns)
	} else {
		defer cleanup()
	}
	small := 30000
	if nEntries <= small {
		small = max(1000, nEntries/10)
	}
	seeding := "through POST /v1/time-entries"
	var archives map[string]companyArchive
	if viaArchive {
		seeding = "through tenant import of an archive (--seed archive)"
		dir, err := os.MkdirTemp("", "planwerk-bench-archives-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		if archives, err = buildArchives(ctx, dir, nUsers, nEntries, small); err != nil {
			return err
		}
	}
	fmt.Printf("\nPlanwerk company benchmark: %d users with %d entries beside the same users with %d, seeded %s, %d samples, %s, %d cores, %s\n",
		nUsers, nEntries, small, seeding, samples, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	for _, dsn := range dsns {
		if engine != "" && !strings.HasPrefix(dsn, engine) {
			continue
		}
		if err := companyEngine(ctx, dsn, nUsers, nEntries, small, samples, archives); err != nil {
			return err
		}
	}
	return nil
}

// companyService is a service of the benchmark's own on the database at
// dsn, served over HTTP, with its background jobs running as in the
// served binary (among them the renewal of SQLite's statistics every
// minute, by which a company loaded into a fresh database is planned).
type companyService struct {
	svc    *app.Service
	srv    *httptest.Server
	client *http.Client
	close  func()
}

func startCompanyService(ctx context.Context, dsn string) (*companyService, error) {
	cfg := config.Default()
	cfg.Database = dsn
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, err
	}
	cfg.Files = filepath.Join(os.TempDir(), fmt.Sprintf("planwerk-bench-files-%s-%d", db.Engine(), time.Now().UnixNano()))
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		db.Close()
		return nil, err
	}
	svc.Start()
	srv := serve(svc)
	return &companyService{svc: svc, srv: srv, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}},
		close: func() { srv.Close(); svc.Close(); db.Close(); os.RemoveAll(cfg.Files) }}, nil
}

// tenant creates a tenant and signs its admin in.
func (cs *companyService) tenant(ctx context.Context, slug string) (*companyTenant, error) {
	email := "admin@" + slug + ".test"
	created, _, err := app.CreateTenant(ctx, cs.svc, users.TenantSpec{Slug: slug, AdminEmail: email, AdminPassword: "bench-password"})
	if err != nil {
		return nil, err
	}
	return cs.signIn(slug, created.ID)
}

func (cs *companyService) signIn(slug string, id int64) (*companyTenant, error) {
	token, err := signIn(cs.client, cs.srv.URL, slug, "admin@"+slug+".test", "bench-password")
	return &companyTenant{slug: slug, id: id, base: cs.srv.URL, token: token, client: cs.client}, err
}

// companyArchive is a company built once: its tenant archive and what
// the questions need to know of it (its ids are kept by the import).
type companyArchive struct {
	file string
	t    *companyTenant
}

// buildArchives builds the small and the big company in a SQLite database
// of their own, the WORK entries written straight into its store (the
// rest through the API), and exports each with tenant export.
func buildArchives(ctx context.Context, dir string, nUsers, nEntries, nSmall int) (map[string]companyArchive, error) {
	cs, err := startCompanyService(ctx, "sqlite:"+filepath.Join(dir, "build.db"))
	if err != nil {
		return nil, err
	}
	defer cs.close()
	out := map[string]companyArchive{}
	for _, c := range []struct {
		slug string
		n    int
	}{{"small", nSmall}, {"big", nEntries}} {
		t, err := cs.tenant(ctx, c.slug)
		if err != nil {
			return nil, err
		}
		if err := seedCompany(ctx, t, nUsers, c.n, cs.svc.DB); err != nil {
			return nil, err
		}
		file := filepath.Join(dir, c.slug+".tar.zst")
		f, err := os.Create(file)
		if err != nil {
			return nil, err
		}
		w := bufio.NewWriterSize(f, 1<<20)
		_, err = lifecycle.Export(ctx, cs.svc.DB, cs.svc.Files, c.slug, w, lifecycle.ExportOptions{Secrets: true, TempDir: dir})
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", c.slug, err)
		}
		out[c.slug] = companyArchive{file: file, t: t}
	}
	return out, nil
}

// importCompany makes the archived company in the service's database
// with tenant import, timed, and signs its admin in.
func (cs *companyService) importCompany(ctx context.Context, a companyArchive) (*companyTenant, error) {
	f, err := os.Open(a.file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	start := time.Now()
	sum, err := lifecycle.Import(ctx, cs.svc.DB, cs.svc.Files, bufio.NewReaderSize(f, 1<<20), lifecycle.ImportOptions{TempDir: filepath.Dir(a.file)})
	if err != nil {
		return nil, fmt.Errorf("import %s: %w", a.t.slug, err)
	}
	took := time.Since(start)
	t, err := cs.signIn(a.t.slug, sum.TenantID)
	if err != nil {
		return nil, err
	}
	t.users, t.projects, t.tasks, t.days, t.entries = a.t.users, a.t.projects, a.t.tasks, a.t.days, a.t.entries
	t.rate = float64(sum.Rows["records"]) / took.Seconds()
	return t, nil
}

func companyEngine(ctx context.Context, dsn string, nUsers, nEntries, nSmall, samples int, archives map[string]companyArchive) error {
	cs, err := startCompanyService(ctx, dsn)
	if err != nil {
		return err
	}
	defer cs.close()
	db := cs.svc.DB
	var smallT, bigT *companyTenant
	if archives != nil {
		if smallT, err = cs.importCompany(ctx, archives["small"]); err != nil {
			return err
		}
		if bigT, err = cs.importCompany(ctx, archives["big"]); err != nil {
			return err
		}
		fmt.Printf("\n%s: seeded through tenant import: small %.0f records/s, big %.0f records/s\n\n", db.Engine(), smallT.rate, bigT.rate)
	} else {
		if smallT, err = cs.tenant(ctx, "small"); err != nil {
			return err
		}
		if bigT, err = cs.tenant(ctx, "big"); err != nil {
			return err
		}
		if err := seedCompany(ctx, smallT, nUsers, nSmall, nil); err != nil {
			return err
		}
		if err := seedCompany(ctx, bigT, nUsers, nEntries, nil); err != nil {
			return err
		}
		fmt.Printf("\n%s: seeded through POST /v1/time-entries by %d clients: small %.0f entries/s, big %.0f entries/s\n\n",
			db.Engine(), companySeeders, smallT.rate, bigT.rate)
	}
	// The questions are planned by statistics of what the seeding wrote,
	// as the statistics job (SQLite) and autovacuum (PostgreSQL) soon
	// leave them.
	if err := db.Analyze(ctx, "records", "time_totals"); err != nil {
		return err
	}
	qs := companyQuestions()
	atSmall, err := askAll(ctx, smallT, qs, samples, false)
	if err != nil {
		return err
	}
	atBig, err := askAll(ctx, bigT, qs, samples, false)
	if err != nil {
		return err
	}
	// The same questions while 8 clients keep creating entries in the big
	// tenant (an approved day refuses some of them: counted, not fatal).
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var written, refused atomic.Int64
	for w := 0; w < companyWriters; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := nEntries + w; ; i += companyWriters {
				select {
				case <-stop:
					return
				default:
				}
				code, _, _, err := bigT.do(ctx, http.MethodPost, "/v1/time-entries", bigT.entryBody(i))
				if err == nil && code == 201 {
					written.Add(1)
				} else {
					refused.Add(1)
				}
			}
		}(w)
	}
	start := time.Now()
	loaded, err := askAll(ctx, bigT, qs, samples, true)
	close(stop)
	wg.Wait()
	if err != nil {
		return err
	}
	fmt.Printf("(beside the questions under load, %d clients wrote %.0f entries/s; %d refused, e.g. on an approved day)\n\n",
		companyWriters, float64(written.Load())/time.Since(start).Seconds(), refused.Load())
	fmt.Printf("| question (%s) | p50 / p95 at %d | p50 / p95 at %d | at %d, %d writing | growth (p95) | target | met |\n", db.Engine(), nSmall, nEntries, nEntries, companyWriters)
	fmt.Println("|---|---|---|---|---|---|---|")
	for i, q := range qs {
		growth, target, met := "", "", ""
		if !atSmall[i].na && !atBig[i].na {
			g := a2b(atBig[i].p95, atSmall[i].p95)
			growth = fmt.Sprintf("%.2f×", g)
			if q.target > 0 {
				met = "met"
				if atBig[i].p95 > q.target || g > 1.5 {
					met = "missed"
				}
				if !loaded[i].na && loaded[i].p95 > q.target {
					met += " (loaded: missed)"
				}
			}
		} else if q.target > 0 {
			met = "n/a"
		}
		if q.target > 0 {
			target = fmt.Sprintf("≤ %s, ≤ 1.5×", ms(q.target))
		}
		fmt.Printf("| %s | %s | %s | %s | %s | %s | %s |\n", q.name, atSmall[i], atBig[i], loaded[i], growth, target, met)
	}
	return printCompanySize(ctx, db.Engine(), dsn)
}

// printCompanySize prints the stored size of both tenants: the SQLite
// file, or each table of the PostgreSQL schema; and the audit log's and
// the changes' part.
func printCompanySize(ctx context.Context, engine, dsn string) error {
	sizes := map[string]int64{}
	var total int64
	if engine == "sqlite" {
		file := strings.TrimPrefix(dsn, "sqlite:")
		for _, f := range []string{file, file + "-wal"} {
			if st, err := os.Stat(f); err == nil {
				total += st.Size()
			}
		}
		if conn, err := sql.Open("sqlite", "file:"+file+"?mode=ro"); err == nil {
			defer conn.Close()
			rows, err := conn.QueryContext(ctx, `SELECT name, SUM(pgsize) FROM dbstat GROUP BY name`)
			if err == nil {
				defer rows.Close()
				for rows.Next() {
					var n string
					var s int64
					if rows.Scan(&n, &s) == nil {
						sizes[n] = s
					}
				}
			}
		}
	} else {
		conn, err := sql.Open("pgx", dsn)
		if err != nil {
			return err
		}
		defer conn.Close()
		rows, err := conn.QueryContext(ctx, `SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var n string
			var s int64
			if err := rows.Scan(&n, &s); err != nil {
				return err
			}
			sizes[n] = s
			total += s
		}
	}
	part := func(prefix string) int64 {
		var s int64
		for n, v := range sizes {
			if n == prefix || strings.HasPrefix(n, prefix+"_") || strings.HasPrefix(n, "sqlite_autoindex_"+prefix+"_") {
				s += v
			}
		}
		return s
	}
	mb := func(b int64) string { return fmt.Sprintf("%.1f MB", float64(b)/1e6) }
	audit, changes := part("audit_log"), part("changes")
	if len(sizes) == 0 {
		fmt.Printf("\n%s: stored %s (no per-table sizes)\n", engine, mb(total))
		return nil
	}
	fmt.Printf("\n%s: stored %s, of it audit_log %s (%.0f%%), changes %s (%.0f%%), records %s\n", engine, mb(total),
		mb(audit), 100*float64(audit)/float64(total), mb(changes), 100*float64(changes)/float64(total), mb(part("records")))
	return nil
}
