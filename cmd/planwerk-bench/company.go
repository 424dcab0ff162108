package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
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
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// The company: a project for every ten people (at least 40) of 10 tasks
// each, WORK entries over the workdays of 2026: about four entries a
// person a day make a project-day of about 40 entries.
const (
	companyProjects = 40
	companyTasks    = 10
	companySeeders  = 16
	companyWriters  = 8
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
	entries  int
	rate     float64 // entries/s while seeding
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

// entryBody is the i-th WORK entry of a company of nUsers users: entries
// fill (user, workday) slots round-robin, about four per user and day.
func (t *companyTenant) entryBody(i int, days []time.Time) string {
	slots := len(t.users) * len(days)
	s, k := i%slots, i/slots
	u, d := s%len(t.users), s/len(t.users)
	p := (u*3 + k) % len(t.projects)
	task := t.tasks[p*companyTasks+(d+k)%companyTasks]
	return fmt.Sprintf(`{"trackingType":"WORK","user":%d,"project":%d,"task":%d,"day":"%s","duration":%d,"sorting":%d}`,
		t.users[u], t.projects[p], task, days[d].Format(time.DateOnly), 1800+(i%8)*900, k+1)
}

// seedCompany creates nUsers users, the projects and tasks and nEntries
// WORK entries, plus a WORKTIME and a BREAK entry of each user's first day,
// through the public API.
func seedCompany(ctx context.Context, t *companyTenant, nUsers, nEntries int) error {
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
	days := workdays2026()
	start := time.Now()
	if err := parallel(nEntries, companySeeders, func(i int) error {
		_, err := t.must(ctx, http.MethodPost, "/v1/time-entries", t.entryBody(i, days), 201)
		return err
	}); err != nil {
		return err
	}
	t.rate = float64(nEntries) / time.Since(start).Seconds()
	t.entries = nEntries
	d := days[0].Format(time.DateOnly)
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

// companyQuestion is one question of the company, asked samples times.
type companyQuestion struct {
	name   string
	target time.Duration
	// samples caps the number of samples (0: --samples).
	samples int
	// ask asks the i-th variant and times only what the question is;
	// it answers false when the service cannot answer it (n/a).
	ask func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error)
}

// timed runs one request and times it.
func timed(ctx context.Context, t *companyTenant, method, path, body string) (time.Duration, bool, error) {
	start := time.Now()
	code, b, _, err := t.do(ctx, method, path, body)
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

func companyQuestions(days []time.Time) []companyQuestion {
	day := func(i int) string { return days[(i*37)%len(days)].Format(time.DateOnly) }
	user := func(t *companyTenant, i int) int64 { return t.users[(i*13)%len(t.users)] }
	project := func(t *companyTenant, i int) int64 { return t.projects[(i*7)%len(t.projects)] }
	month := func(i int) (string, string) {
		m := time.Date(2026, time.Month(1+i%12), 1, 0, 0, 0, 0, time.UTC)
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
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":"%s"}`, user(t, i), day(i)))
		})},
		{name: "a user's day (?user&day)", target: ms5, ask: get(func(t *companyTenant, i int) string {
			return fmt.Sprintf("/v1/time-entries?user=%d&day=%s", user(t, i), day(i))
		})},
		{name: "a user's week", target: ms5, ask: get(func(t *companyTenant, i int) string {
			d := days[(i*37)%len(days)]
			mon := d.AddDate(0, 0, -int((d.Weekday()+6)%7))
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":{">=":"%s","<=":"%s"}}`, user(t, i), mon.Format(time.DateOnly), mon.AddDate(0, 0, 6).Format(time.DateOnly)))
		})},
		{name: "a user's month", target: ms5, ask: get(func(t *companyTenant, i int) string {
			f, l := month(i)
			return "/v1/time-entries?" + whereQ(fmt.Sprintf(`{"user":%d,"day":{">=":"%s","<=":"%s"}}`, user(t, i), f, l))
		})},
		{name: "a project's month, sort=day", target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(i)
			return "/v1/time-entries?sort=day&limit=50000&" + whereQ(fmt.Sprintf(`{"project":%d,"day":{">=":"%s","<=":"%s"}}`, project(t, i), f, l))
		})},
		{name: "one day across the tenant", target: ms30, ask: get(func(t *companyTenant, i int) string {
			return "/v1/time-entries?limit=50000&" + whereQ(fmt.Sprintf(`{"day":"%s"}`, day(i)))
		})},
	}
	for _, g := range []string{"user", "project", "day"} {
		qs = append(qs, companyQuestion{name: "totals of a month by " + g, target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(i)
			return fmt.Sprintf("/v1/analytics/time-totals?from=%s&to=%s&groupBy=%s", f, l, g)
		})}, companyQuestion{name: "  old path: list+sum a month by " + g, samples: 10,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				f, l := month(i)
				return oldTotals(ctx, t, f, l, g)
			}})
	}
	for _, g := range []string{"user", "project"} {
		qs = append(qs, companyQuestion{name: "totals of the year by " + g, target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/analytics/time-totals?from=2026-01-01&to=2026-12-31&groupBy=" + g
		})}, companyQuestion{name: "  old path: list+sum the year by " + g, samples: 3,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				return oldTotals(ctx, t, "2026-01-01", "2026-12-31", g)
			}})
	}
	qs = append(qs,
		companyQuestion{name: "report of a month by project", target: ms30, ask: get(func(t *companyTenant, i int) string {
			f, l := month(i)
			return fmt.Sprintf("/v1/reports/time?from=%s&to=%s&groupBy=project", f, l)
		})},
		companyQuestion{name: "report of the year by user", target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/reports/time?from=2026-01-01&to=2026-12-31&groupBy=user"
		})},
		companyQuestion{name: "report of the year by project", target: ms100, samples: 10, ask: get(func(t *companyTenant, i int) string {
			return "/v1/reports/time?from=2026-01-01&to=2026-12-31&groupBy=project"
		})},
		companyQuestion{name: "report of a month by project and user, where", samples: 10, ask: get(func(t *companyTenant, i int) string {
			f, l := month(i)
			return fmt.Sprintf("/v1/reports/time?from=%s&to=%s&groupBy=project,user&", f, l) + whereQ(`{"trackingType":"WORK"}`)
		})},
		companyQuestion{name: "approve a project-day", target: ms20,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				items := fmt.Sprintf(`[{"project":%d,"day":"%s"}]`, project(t, i), day(i))
				return approveTimed(ctx, t, items)
			}},
		companyQuestion{name: "approve a project's month", target: ms150,
			ask: func(ctx context.Context, t *companyTenant, i int) (time.Duration, bool, error) {
				m := time.Month(1 + i%12)
				var items []string
				for _, d := range days {
					if d.Month() == m {
						items = append(items, fmt.Sprintf(`{"project":%d,"day":"%s"}`, project(t, i), d.Format(time.DateOnly)))
					}
				}
				return approveTimed(ctx, t, "["+strings.Join(items, ",")+"]")
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

func askAll(ctx context.Context, t *companyTenant, qs []companyQuestion, samples int) ([]companyStat, error) {
	out := make([]companyStat, len(qs))
	for qi, q := range qs {
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
func runCompany(ctx context.Context, pgURL string, nUsers, nEntries, samples int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	small := 30000
	if nEntries <= small {
		small = max(1000, nEntries/10)
	}
	smallUsers := max(10, nUsers*small/nEntries)
	fmt.Printf("\nPlanwerk company benchmark: %d users and %d entries beside %d users and %d entries, %d samples, %s, %d cores, %s\n",
		nUsers, nEntries, smallUsers, small, samples, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	for _, dsn := range dsns {
		if err := companyEngine(ctx, dsn, nUsers, nEntries, smallUsers, small, samples); err != nil {
			return err
		}
	}
	return nil
}

func companyEngine(ctx context.Context, dsn string, nUsers, nEntries, smallUsers, nSmall, samples int) error {
	cfg := config.Default()
	cfg.Database = dsn
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	cfg.Files = filepath.Join(os.TempDir(), "planwerk-bench-files-"+db.Engine())
	defer os.RemoveAll(cfg.Files)
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer svc.Close()
	// The background jobs run as in the served binary: among them the
	// renewal of SQLite's statistics every ten minutes, by which a
	// company loaded into a fresh database is planned.
	svc.Start()
	srv := serve(svc)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	tenant := func(slug string) (*companyTenant, error) {
		email := "admin@" + slug + ".test"
		if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slug, AdminEmail: email, AdminPassword: "bench-password"}); err != nil {
			return nil, err
		}
		token, err := signIn(client, srv.URL, slug, email, "bench-password")
		return &companyTenant{slug: slug, base: srv.URL, token: token, client: client}, err
	}
	smallT, err := tenant("small")
	if err != nil {
		return err
	}
	bigT, err := tenant("big")
	if err != nil {
		return err
	}
	if err := seedCompany(ctx, smallT, smallUsers, nSmall); err != nil {
		return err
	}
	if err := seedCompany(ctx, bigT, nUsers, nEntries); err != nil {
		return err
	}
	fmt.Printf("\n%s: seeded through POST /v1/time-entries by %d clients: small %.0f entries/s, big %.0f entries/s\n\n",
		db.Engine(), companySeeders, smallT.rate, bigT.rate)
	days := workdays2026()
	qs := companyQuestions(days)
	atSmall, err := askAll(ctx, smallT, qs, samples)
	if err != nil {
		return err
	}
	atBig, err := askAll(ctx, bigT, qs, samples)
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
				code, _, _, err := bigT.do(ctx, http.MethodPost, "/v1/time-entries", bigT.entryBody(i, days))
				if err == nil && code == 201 {
					written.Add(1)
				} else {
					refused.Add(1)
				}
			}
		}(w)
	}
	start := time.Now()
	loaded, err := askAll(ctx, bigT, qs, samples)
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
