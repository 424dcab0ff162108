// Command planwerk-bench measures Planwerk on this machine and prints the
// numbers as tables.
//
//	planwerk-bench lists [--records 50000] [--postgres URL] [--duration 5s]
//
// "load" drives a mixed workload with vegeta and compares it with a bare
// net/http handler (with --tls, single GETs over HTTPS too, HTTP/1.1 and
// HTTP/2, in turns with the same GETs over plain HTTP); "entries" measures time entry creation with and without the
// approved-day check; "files" measures uploads and downloads; "safe"
// measures record creation without and with an Idempotency-Key;
// "webhooks" measures how fast a backlog of changes is delivered to a
// local receiver by one webhook and by eight.
//
// "writes" measures record creation with 32 clients and with one: on
// SQLite committed per request and with group commit, side by side.
//
// "noisy" measures one tenant's latency alone and beside a tenant whose
// member runs slow readers, expansions of big records, expensive filters
// and writes, and prints the process's peak resident memory.
//
// "tenants" seeds 10,000 tenants of 200 records each through the store,
// in bulk, into a fresh SQLite file and a fresh PostgreSQL schema, and
// compares with a database holding one of them alone: start-up until
// /readyz answers, one housekeeping run, and that tenant's list,
// where-list and single GET latencies.
//
// "audit" fills one tenant's audit log with --entries entries in bulk and
// times planwerk audit verify over them (entries per second, peak heap
// growth), a purge of the older half, and verify again.
//
// "lifecycle" seeds a tenant of --records records (default 100,000) and
// --file-bytes of files (default 1 GiB) into a fresh SQLite database and
// moves it with planwerk tenant export and import, each a process of its
// own: to PostgreSQL and back to SQLite, printing each step's time,
// records/s, MB/s of archive and peak resident memory. Then, on each
// engine, a service serves a small tenant beside the moved one to
// --clients clients (default 8), for --duration alone and then while
// planwerk tenant delete erases the moved tenant; it prints the small
// tenant's latencies in both windows and the delete's time.
//
// "peers" serves the same records from Planwerk and from PocketBase (its
// example server, built once with go install into the user's cache), both
// on SQLite and Planwerk also on PostgreSQL, and drives them in turns with
// the same client and member tokens: single GETs, lists of 1000 (plain
// and with gzip asked for) and creates, printing each as a ratio to
// PocketBase beside its target.
//
// "company" builds a company through the public API on each engine (--users
// users, a project for every ten of them (at least 40) of 10 tasks,
// --entries WORK entries over the workdays of 2026, four a person a day;
// default 300 and 287,000; --seed archive builds them once and gives each
// engine a tenant archive to import) beside a small one of the same people with 30,000 entries
// over fewer days, and times a company's questions over --samples varied requests: a
// user's day, week and month, a project's month, a day of the tenant,
// time totals against listing and summing on the client, approvals and
// paging, alone and while 8 clients write; p50/p95 beside their targets.
//
// "lists" seeds ProjectDay records into a fresh SQLite file and a fresh
// PostgreSQL schema and measures, over HTTP against the real handler: the
// full list at limit=50000 (time, bytes, peak heap growth), a where range
// over day returning about 1000 rows, and authenticated single-record GET
// throughput. Each is also measured against its ceiling in the same run:
// the same client fetching the same answer from a bare net/http handler
// that serves it from memory with the same headers and body bytes. The
// service compresses the list (the client asks for gzip); the ceiling
// serves the plain JSON the client reads, and a second ceiling serves
// the compressed bytes exactly as the service sent them. With
// --cpuprofile PREFIX it then profiles the list and the single GETs of
// each engine into PREFIX-ENGINE-list.pprof and PREFIX-ENGINE-get.pprof,
// and the database ceiling's single GETs into
// PREFIX-ENGINE-get-ceiling.pprof.
//
// "sheets" seeds --entries time entries (default 1,000,000) into one
// tenant of each engine and reads all of them, 50,000 to a page by Link,
// as JSON, CSV (plain and gzip) and XLSX: rows/s, bytes and peak heap
// growth of each walk.
//
// Two more ceilings include the database (dbceiling.go): a bare handler
// that reads the same rows through the same driver and a pool opened as
// the service's read pool, and writes the stored documents as they are.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "planwerk" {
		// planwerk itself, for the steps of "lifecycle" to run as
		// processes of their own.
		runPlanwerk(ctx, os.Args[2:])
		return
	}
	switch {
	case len(os.Args) < 2:
	case os.Args[1] == "lists", os.Args[1] == "entries", os.Args[1] == "files", os.Args[1] == "load", os.Args[1] == "noisy", os.Args[1] == "safe", os.Args[1] == "webhooks", os.Args[1] == "writes", os.Args[1] == "tenants", os.Args[1] == "citus", os.Args[1] == "polls", os.Args[1] == "audit", os.Args[1] == "lifecycle", os.Args[1] == "peers", os.Args[1] == "company", os.Args[1] == "sheets":
	default:
		os.Args = os.Args[:1]
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: planwerk-bench lists|entries|files|load|noisy|safe|webhooks|writes|tenants|citus|polls|audit|lifecycle|peers|company|sheets [--records N] [--file-bytes N] [--entries N] [--postgres URL] [--citus URL] [--add-worker HOST:PORT] [--duration D] [--big BYTES] [--clients N] [--requests N] [--tenants N] [--per-tenant N] [--users N] [--samples N] [--seed api|archive] [--engine sqlite|postgres] [--keep] [--tls] [--tracing] [--cpuprofile FILE]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	records := fs.Int("records", 50000, "ProjectDay records to seed (lists; lifecycle: records of the tenant, default 100000)")
	fileBytes := fs.Int64("file-bytes", 1<<30, "bytes of the tenant's files (lifecycle)")
	entries := fs.Int("entries", 1000000, "audit entries of the one tenant (audit); time entries (sheets); WORK entries of the big company (company, default 287000)")
	pg := fs.String("postgres", "postgres://postgres@127.0.0.1:5432/test?sslmode=disable", "PostgreSQL server (empty: SQLite only)")
	duration := fs.Duration("duration", 5*time.Second, "how long to drive each load")
	big := fs.Int64("big", 1<<30, "size of the large upload (files)")
	clients := fs.Int("clients", 0, "concurrent clients (load: 50, writes: 32, lifecycle: 8 of the served tenant)")
	requests := fs.Int("requests", 400, "requests of the quiet tenant, alone and beside the noise (noisy)")
	changes := fs.Int("changes", 2000, "changes to deliver to each webhook (webhooks)")
	tenants := fs.Int("tenants", 10000, "tenants of the crowded database (tenants)")
	perTenant := fs.Int("per-tenant", 200, "records of each tenant (tenants)")
	keep := fs.Bool("keep", false, "keep the seeded databases and name them (tenants, audit, lifecycle, company)")
	citus := fs.String("citus", "", "coordinator of a Citus cluster (citus)")
	addWorker := fs.String("add-worker", "", "host:port of a Citus node to add and rebalance onto under load, then drain and remove (citus)")
	traced := fs.Bool("tracing", false, "load: the rows again with OpenTelemetry tracing on, every request sampled")
	withTLS := fs.Bool("tls", false, "also GET over HTTPS, with HTTP/1.1 and with HTTP/2, beside plain HTTP (load)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (lists, peers: of their single GETs, to files with this prefix)")
	companyUsers := fs.Int("users", 300, "users of the big company (company)")
	samples := fs.Int("samples", 50, "varied requests of each question (company)")
	seed := fs.String("seed", "api", "how the companies are built: api (POST /v1/time-entries) or archive (built once, entries straight into a store, exported and imported into each engine with tenant import) (company)")
	engine := fs.String("engine", "", "only this engine: sqlite or postgres (company)")
	_ = fs.Parse(os.Args[2:])
	if *cpuProfile != "" && os.Args[1] != "lists" && os.Args[1] != "peers" {
		stopProfile, err := startCPUProfile(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "planwerk-bench:", err)
			os.Exit(1)
		}
		defer stopProfile()
	}
	if *clients <= 0 {
		*clients = map[string]int{"writes": 32, "lifecycle": 8, "peers": 16}[os.Args[1]]
		if *clients == 0 {
			*clients = 50
		}
	}
	var err error
	switch os.Args[1] {
	case "peers":
		err = runPeers(ctx, *pg, *duration, *clients, *cpuProfile)
	case "lists":
		err = runLists(ctx, *records, *pg, *duration, *cpuProfile)
	case "entries":
		err = runEntries(ctx, *pg, *duration)
	case "load":
		err = runLoad(ctx, *pg, *duration, *clients, *withTLS, *traced)
	case "noisy":
		err = runNoisy(ctx, *pg, *requests)
	case "safe":
		err = runSafe(ctx, *pg, *duration)
	case "webhooks":
		err = runWebhooks(ctx, *pg, *changes)
	case "writes":
		err = runWrites(ctx, *pg, *duration, *clients)
	case "tenants":
		err = runTenants(ctx, *pg, *tenants, *perTenant, *duration, *keep)
	case "citus":
		err = runCitus(ctx, *pg, *citus, *addWorker, *duration, *clients)
	case "polls":
		err = runPolls(ctx, *pg, *duration)
	case "audit":
		err = runAudit(ctx, *pg, *entries, *keep)
	case "sheets":
		err = runSheets(ctx, *pg, *entries)
	case "company":
		n := 287000
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "entries" {
				n = *entries
			}
		})
		if (*seed != "api" && *seed != "archive") || (*engine != "" && *engine != "sqlite" && *engine != "postgres") {
			fmt.Fprintln(os.Stderr, "planwerk-bench company: --seed is api or archive, --engine sqlite or postgres")
			os.Exit(2)
		}
		err = runCompany(ctx, *pg, *engine, *companyUsers, n, *samples, *seed == "archive", *keep)
	case "lifecycle":
		n := 100000
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "records" {
				n = *records
			}
		})
		err = runLifecycle(ctx, *pg, n, *fileBytes, *duration, *clients, *keep)
	default:
		err = runFiles(ctx, *big)
	}
	if err != nil {
		pprof.StopCPUProfile()
		fmt.Fprintln(os.Stderr, "planwerk-bench:", err)
		os.Exit(1)
	}
}

// startCPUProfile profiles the process's CPU into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

type result struct {
	engine                string
	listTime              time.Duration
	listBytes             int64
	listPeakHeap          uint64
	rangeTime             time.Duration
	rangeRows, rangeBytes int64
	getRate               float64
	getP50, getP99        time.Duration
	getErrors             int64
	// listPlainTime is the list asked for without compression.
	listPlainTime  time.Duration
	listPlainBytes int64
	// The same answers served from memory by a bare handler.
	listCeiling time.Duration
	// listSentCeiling serves the list as the service sent it: compressed.
	listSentCeiling time.Duration
	listWireBytes   int64
	getCeilingRate  float64
	// The same rows read from the database by a bare handler
	// (dbceiling.go).
	listDBCeiling    time.Duration
	getDBCeilingRate float64
}

func runLists(ctx context.Context, n int, pgURL string, d time.Duration, cpuprofile string) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []result
	for _, dsn := range dsns {
		r, err := benchEngine(ctx, dsn, n, d, cpuprofile)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk list benchmark: %d ProjectDay records, %s, %d cores, %s\n\n", n, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| engine | GET ?limit=50000 | bytes | peak heap growth | where day range | rows | single GET req/s | p50 | p99 | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %.1f MB | %.1f MB | %s | %d | %.0f | %s | %s | %d |\n",
			r.engine, ms(r.listTime), float64(r.listBytes)/1e6, float64(r.listPeakHeap)/(1<<20),
			ms(r.rangeTime), r.rangeRows, r.getRate, ms(r.getP50), ms(r.getP99), r.getErrors)
	}
	fmt.Println("\nAgainst the ceiling (the same answer from memory, same client, same run):")
	fmt.Println()
	fmt.Println("| engine | list, plain | ceiling | ratio | list, gzip | ceiling as sent (gzip) | ratio | bytes sent | peak heap growth | single GET req/s | ceiling req/s | ratio |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		if r.listPlainBytes != r.listBytes {
			fmt.Printf("(%s: the plain list has %d bytes, the decoded gzip one %d)\n", r.engine, r.listPlainBytes, r.listBytes)
		}
		fmt.Printf("| %s | %s | %s | %.2f | %s | %s | %.2f | %.2f MB | %.1f MB | %.0f | %.0f | %.2f |\n",
			r.engine, ms(r.listPlainTime), ms(r.listCeiling), a2b(r.listPlainTime, r.listCeiling), ms(r.listTime),
			ms(r.listSentCeiling), a2b(r.listTime, r.listSentCeiling), float64(r.listWireBytes)/1e6,
			float64(r.listPeakHeap)/(1<<20), r.getRate, r.getCeilingRate, r.getRate/r.getCeilingRate)
	}
	if len(results) == 2 {
		a, b := results[0], results[1]
		fmt.Printf("\nratios postgres/sqlite: list %.2f, range %.2f, GET req/s %.2f\n",
			a2b(b.listTime, a.listTime), a2b(b.rangeTime, a.rangeTime), b.getRate/a.getRate)
	}
	printDBCeilings(results)
	return nil
}

func a2b(x, y time.Duration) float64 { return float64(x) / float64(y) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000) }

func benchEngine(ctx context.Context, dsn string, n int, d time.Duration, cpuprofile string) (result, error) {
	cfg := config.Default()
	cfg.Database = dsn
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return result{}, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return result{}, err
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	cfg.Files = filepath.Join(os.TempDir(), "planwerk-bench-files-"+db.Engine())
	defer os.RemoveAll(cfg.Files)
	svc, err := app.NewService(ctx, cfg, db, log)
	if err != nil {
		return result{}, err
	}
	defer svc.Close()
	tn, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"})
	if err != nil {
		return result{}, err
	}
	firstDay, firstID, err := seed(ctx, db, tn.ID, n)
	if err != nil {
		return result{}, err
	}
	srv := serve(svc)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token, err := login(client, srv.URL)
	if err != nil {
		return result{}, err
	}
	// get asks for gzip, as Go's client does by itself; getPlain asks for
	// the plain answer (Accept-Encoding: identity), the bytes the plain
	// ceiling serves.
	fetch := func(base, path, encoding string) (int64, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		if encoding != "" {
			req.Header.Set("Accept-Encoding", encoding)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		nb, err := io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != 200 {
			return nb, fmt.Errorf("GET %s: %d", path, resp.StatusCode)
		}
		return nb, err
	}
	get := func(base, path string) (int64, error) { return fetch(base, path, "") }
	getPlain := func(base, path string) (int64, error) { return fetch(base, path, "identity") }
	r := result{engine: db.Engine()}

	// The full list: the heap sampled during a first run, before the
	// ceilings hold their copies (a larger live heap lets more garbage
	// pile up between collections); then the median of 7, each beside the
	// same answer from memory.
	const list = "/v1/project-days?limit=50000"
	stopSampling := sampleHeap()
	_, err = get(srv.URL, list)
	r.listPeakHeap = stopSampling()
	if err != nil {
		return r, err
	}
	wire, err := capture(ctx, srv.URL+list, token)
	if err != nil {
		return r, err
	}
	r.listWireBytes = int64(len(wire.body))
	bare := ceiling(wire.decoded([]byte(mustBody(client, srv.URL+list, token))))
	defer bare.Close()
	sent := ceiling(wire)
	defer sent.Close()
	dbc, err := openDBCeiling(ctx, dsn, tn.ID)
	if err != nil {
		return r, err
	}
	defer dbc.Close()
	// The service has answered the list three times above; the ceiling
	// does so too before the timed runs.
	for i := 0; i < 3; i++ {
		if _, err := getPlain(dbc.URL, list); err != nil {
			return r, err
		}
	}
	var times, plainTimes, ceilings, sentCeilings, dbCeilings []time.Duration
	for i := 0; i < 7; i++ {
		start := time.Now()
		pb, err := getPlain(srv.URL, list)
		plainTimes = append(plainTimes, time.Since(start))
		if err != nil {
			return r, err
		}
		r.listPlainBytes = pb
		start = time.Now()
		nb, err := get(srv.URL, list)
		times = append(times, time.Since(start))
		if err != nil {
			return r, err
		}
		r.listBytes = nb
		start = time.Now()
		cb, err := get(bare.URL, list)
		ceilings = append(ceilings, time.Since(start))
		if err != nil {
			return r, err
		}
		if cb != nb {
			return r, fmt.Errorf("the ceiling's list has %d bytes, the service's %d", cb, nb)
		}
		start = time.Now()
		if _, err := get(sent.URL, list); err != nil {
			return r, err
		}
		sentCeilings = append(sentCeilings, time.Since(start))
		start = time.Now()
		dbb, err := getPlain(dbc.URL, list)
		dbCeilings = append(dbCeilings, time.Since(start))
		if err != nil {
			return r, err
		}
		if dbb != pb {
			return r, fmt.Errorf("the database ceiling's list has %d bytes, the service's %d", dbb, pb)
		}
	}
	r.listTime = median(times)
	r.listPlainTime = median(plainTimes)
	r.listCeiling = median(ceilings)
	r.listSentCeiling = median(sentCeilings)
	r.listDBCeiling = median(dbCeilings)

	// A where range over day: 20 days of 50 projects ≈ 1000 rows.
	from := firstDay
	to := firstDay.AddDate(0, 0, 20)
	where := fmt.Sprintf(`{"day":{">=":"%s","<":"%s"}}`, from.Format(time.DateOnly), to.Format(time.DateOnly))
	path := "/v1/project-days?where=" + url.QueryEscape(where)
	times = times[:0]
	for i := 0; i < 20; i++ {
		start := time.Now()
		nb, err := get(srv.URL, path)
		times = append(times, time.Since(start))
		if err != nil {
			return r, err
		}
		r.rangeBytes = nb
	}
	r.rangeTime = median(times)
	r.rangeRows = int64(strings.Count(mustBody(client, srv.URL+path, token), `"validationStatus"`))

	// Single-record GETs from 16 concurrent clients, then one record's
	// answer from memory at the same rate of asking.
	one, err := capture(ctx, fmt.Sprintf("%s/v1/project-days/%d", srv.URL, firstID), token)
	if err != nil {
		return r, err
	}
	bareOne := ceiling(one)
	defer bareOne.Close()
	getLoad := func(base string) getStats {
		return singleGets(d, func(w, i int) error {
			id := firstID + int64((w*7919+i*104729)%n)
			_, err := get(base, fmt.Sprintf("/v1/project-days/%d", id))
			return err
		})
	}
	g := getLoad(srv.URL)
	r.getRate, r.getP50, r.getP99, r.getErrors = g.rate, g.p50, g.p99, g.errors
	r.getCeilingRate = getLoad(bareOne.URL).rate
	if b := mustBody(client, fmt.Sprintf("%s/v1/project-days/%d", dbc.URL, firstID), token); b != string(one.body) {
		return r, fmt.Errorf("the database ceiling answers %q, the service %q", b, one.body)
	}
	dg := getLoad(dbc.URL)
	if dg.errors > 0 {
		return r, fmt.Errorf("the database ceiling failed %d single GETs", dg.errors)
	}
	r.getDBCeilingRate = dg.rate

	if cpuprofile != "" {
		prefix := cpuprofile + "-" + db.Engine()
		err := profile(prefix+"-list.pprof", func() error {
			for i := 0; i < 20; i++ {
				if _, err := get(srv.URL, list); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return r, err
		}
		if err := profile(prefix+"-get.pprof", func() error { getLoad(srv.URL); return nil }); err != nil {
			return r, err
		}
		// The database ceiling's single GETs under the same load, to
		// compare frame by frame.
		if err := profile(prefix+"-get-ceiling.pprof", func() error { getLoad(dbc.URL); return nil }); err != nil {
			return r, err
		}
	}
	return r, nil
}

// getStats is the outcome of a run of single GETs.
type getStats struct {
	rate     float64
	p50, p99 time.Duration
	errors   int64
}

// singleGets runs do from 16 concurrent clients for d; do gets the
// client's number and its request's.
func singleGets(d time.Duration, do func(w, i int) error) getStats {
	var (
		wg       sync.WaitGroup
		count    atomic.Int64
		errs     atomic.Int64
		mu       sync.Mutex
		latency  []time.Duration
		deadline = time.Now().Add(d)
	)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var local []time.Duration
			for i := 0; time.Now().Before(deadline); i++ {
				start := time.Now()
				if err := do(w, i); err != nil {
					errs.Add(1)
				}
				local = append(local, time.Since(start))
				count.Add(1)
			}
			mu.Lock()
			latency = append(latency, local...)
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	g := getStats{rate: float64(count.Load()) / d.Seconds(), errors: errs.Load()}
	slices.Sort(latency)
	if len(latency) > 0 {
		g.p50 = latency[len(latency)/2]
		g.p99 = latency[len(latency)*99/100]
	}
	return g
}

func mustBody(client *http.Client, u, token string) string {
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	req.Header.Set("companyurl", "bench")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// sampleHeap samples live heap bytes every millisecond until the returned
// function is called; that returns the peak growth over the starting level.
func sampleHeap() func() uint64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				if v := read(); v > base && v-base > peak.Load() {
					peak.Store(v - base)
				}
			}
		}
	}()
	return func() uint64 {
		close(done)
		<-stopped
		return peak.Load()
	}
}

// seed inserts n ProjectDay records: 50 projects, consecutive days.
func seed(ctx context.Context, db *store.DB, tenantID int64, n int) (time.Time, int64, error) {
	first := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	const projects = 50
	projectIDs := make([]int64, projects)
	var firstID int64
	err := db.Tx(ctx, func(q store.Querier) error {
		for i := range projectIDs {
			id, err := db.NewID(ctx, q, tenantID)
			if err != nil {
				return err
			}
			if _, err := db.InsertRecord(ctx, q, tenantID, store.Collection{Table: "records", Resource: "projects"}, id,
				map[string]any{"name": fmt.Sprintf("Project %d", i)}); err != nil {
				return err
			}
			projectIDs[i] = id
		}
		for i := 0; i < n; i++ {
			id, err := db.NewID(ctx, q, tenantID)
			if err != nil {
				return err
			}
			if i == 0 {
				firstID = id
			}
			status := "NOTAPPROVED"
			if i%3 == 0 {
				status = "APPROVED"
			}
			doc := map[string]any{
				"project":          projectIDs[i%projects],
				"day":              first.AddDate(0, 0, i/projects).Format(time.DateOnly),
				"validationStatus": status,
			}
			if _, err := db.InsertRecord(ctx, q, tenantID, store.Collection{Table: "records", Resource: "project-days"}, id, doc); err != nil {
				return err
			}
		}
		return nil
	})
	return first, firstID, err
}

// login signs in the bench tenant's admin.
func login(client *http.Client, base string) (string, error) {
	return signIn(client, base, "bench", "admin@bench.test", "bench-password")
}

// signIn runs the password grant for a user of tenant slug and returns the
// access token.
func signIn(client *http.Client, base, slug, email, password string) (string, error) {
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {password},
		"client_id": {"bench"}, "client_secret": {"bench"}}
	req, _ := http.NewRequest(http.MethodPost, base+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", slug)
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	const key = `"access_token":"`
	i := strings.Index(string(b), key)
	if resp.StatusCode != 200 || i < 0 {
		return "", fmt.Errorf("login to %s: %d %s", slug, resp.StatusCode, b)
	}
	rest := string(b)[i+len(key):]
	return rest[:strings.IndexByte(rest, '"')], nil
}
