package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"sync"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/holidays"
	"planwerk/internal/idempotency"
	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/users"
	"planwerk/internal/webhooks"
)

// The measured tenant and its admin (see login).
const benchSlug = "bench"

// tenantsPerTx is how many tenants, with all their records, one
// transaction of the bulk load creates.
const tenantsPerTx = 4

// crowdResult is one engine's numbers: the measured tenant in a database
// of its own and among many.
type crowdResult struct {
	engine            string
	seedAlone, seed   time.Duration
	startAlone, start []time.Duration // start-up, each try
	purgeAlone, purge time.Duration   // one housekeeping run
	alone, crowd      latencies
}

// latencies are one tenant's request times.
type latencies struct {
	list, where, get []time.Duration
	gets             int64
	getTime          time.Duration
	errors           int64
}

// runTenants measures what thousands of tenants cost one of them: start-up
// with 1 tenant and with n, and the tenant's list, where-list and single
// GET in a database holding it alone and among n tenants of perTenant
// records each; d is each database's time of single GETs.
// With keep the databases stay, for a look at them, and are named.
func runTenants(ctx context.Context, pgURL string, n, perTenant int, d time.Duration, keep bool) error {
	alone, cleanAlone, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	crowd, cleanCrowd, err := databases(ctx, pgURL)
	if err != nil {
		cleanAlone()
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "databases kept: alone %q, crowd %q\n", alone, crowd)
	} else {
		defer cleanAlone()
		defer cleanCrowd()
	}
	var results []crowdResult
	for i := range min(len(alone), len(crowd)) {
		r, err := crowdEngine(ctx, alone[i], crowd[i], n, perTenant, d)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	printCrowd(results, n, perTenant)
	return nil
}

func crowdEngine(ctx context.Context, aloneDSN, crowdDSN string, n, perTenant int, d time.Duration) (crowdResult, error) {
	var r crowdResult
	var err error
	if r.seedAlone, err = seedCrowd(ctx, aloneDSN, 1, perTenant); err != nil {
		return r, err
	}
	if r.seed, err = seedCrowd(ctx, crowdDSN, n, perTenant); err != nil {
		return r, err
	}
	// Start-ups alternate between the two databases, so that both meet
	// the same neighbours on a shared machine.
	for i := range 5 {
		for _, which := range []int{i % 2, 1 - i%2} {
			dsn, into := aloneDSN, &r.startAlone
			if which == 1 {
				dsn, into = crowdDSN, &r.start
			}
			took, engine, err := timeStartUp(ctx, dsn)
			if err != nil {
				return r, err
			}
			r.engine = engine
			*into = append(*into, took)
		}
	}
	if r.purgeAlone, err = timePurge(ctx, aloneDSN); err != nil {
		return r, err
	}
	if r.purge, err = timePurge(ctx, crowdDSN); err != nil {
		return r, err
	}
	r.alone, r.crowd, err = compareTenant(ctx, aloneDSN, crowdDSN, perTenant, d)
	return r, err
}

// seedCrowd loads n tenants of perTenant records each into the fresh
// database dsn, through the store as the service writes them: each
// tenant with its admin and what every new tenant gets, a twentieth of
// its records projects and the rest project days referring to them, each
// record with its change. Tenant "bench", measured later, is the middle
// one. On PostgreSQL the statistics are then gathered (ANALYZE), as an
// operator should after a bulk load: autovacuum would only get to it
// later.
func seedCrowd(ctx context.Context, dsn string, n, perTenant int) (time.Duration, error) {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return 0, err
	}
	// One hash for every admin: hashing is slow on purpose.
	hash, err := auth.NewHasher(runtime.NumCPU()).Hash(ctx, benchSlug+"-password")
	if err != nil {
		return 0, err
	}
	setup := holidays.New(db, resource.New()).Ensure
	// PostgreSQL writes on connections of its own: two loaders keep its
	// processes and this one busy at once. SQLite has one writer.
	loaders := 1
	if db.Engine() == "postgres" {
		loaders = 2
	}
	batches := make(chan int)
	go func() {
		defer close(batches)
		for first := 0; first < n; first += tenantsPerTx {
			select {
			case batches <- first:
			case <-ctx.Done():
				return
			}
		}
	}()
	start := time.Now()
	errc := make(chan error, loaders)
	for range loaders {
		go func() {
			for first := range batches {
				err := db.Tx(ctx, func(q store.Querier) error {
					for i := first; i < min(first+tenantsPerTx, n); i++ {
						slug := fmt.Sprintf("t%05d", i)
						if i == n/2 {
							slug = benchSlug
						}
						if err := seedTenant(ctx, db, q, slug, hash, perTenant, setup); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					errc <- fmt.Errorf("seed tenants from %d: %w", first, err)
					for range batches {
					}
					return
				}
			}
			errc <- nil
		}()
	}
	for range loaders {
		err = errors.Join(err, <-errc)
	}
	if err != nil {
		return 0, err
	}
	if db.Engine() == "postgres" {
		if _, err := db.ExecContext(ctx, "ANALYZE"); err != nil {
			return 0, fmt.Errorf("analyze: %w", err)
		}
	}
	return time.Since(start), nil
}

// seedTenant creates one tenant and its records in q.
func seedTenant(ctx context.Context, db *store.DB, q store.Querier, slug, hash string, perTenant int, setup store.TenantSetup) error {
	tn, _, err := users.NewTables(db, auth.NewTables(db)).AddTenant(ctx, q, slug, "Tenant "+slug, users.NewAdmin{Email: "admin@" + slug + ".test", PasswordHash: hash}, setup)
	if err != nil {
		return err
	}
	projects := make([]map[string]any, max(1, perTenant/20))
	for i := range projects {
		projects[i] = map[string]any{"name": fmt.Sprintf("Project %d", i)}
	}
	projectIDs, err := db.InsertRecords(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "projects"}, projects)
	if err != nil {
		return err
	}
	days := make([]map[string]any, max(0, perTenant-len(projects)))
	for i := range days {
		status := "NOTAPPROVED"
		if i%3 == 0 {
			status = "APPROVED"
		}
		days[i] = map[string]any{"project": projectIDs[i%len(projectIDs)], "day": crowdDay(i / len(projectIDs)), "validationStatus": status}
	}
	_, err = db.InsertRecords(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "project-days"}, days)
	return err
}

// crowdDay is the nth day of the seeded project days.
func crowdDay(n int) string {
	return time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, n).Format(time.DateOnly)
}

// benchService is a started service on its own folder of files.
type benchService struct {
	svc  *app.Service
	db   *store.DB
	base string
	stop func()
}

// startBench starts the service on dsn as planwerk serve does: open,
// migrate (nothing is pending: the check), build the service, start its
// background work and listen.
func startBench(ctx context.Context, dsn string) (*benchService, error) {
	cfg := config.Default()
	cfg.Database = dsn
	files, err := os.MkdirTemp("", "planwerk-bench-files-")
	if err != nil {
		return nil, err
	}
	cfg.Files = files
	opts := store.DefaultOptions()
	opts.StatementTimeout = cfg.RequestTimeout
	db, err := store.OpenWith(ctx, dsn, opts)
	if err == nil {
		_, err = db.Migrate(ctx)
	}
	var svc *app.Service
	if err == nil {
		svc, err = app.NewService(ctx, cfg, db, slog.New(slog.DiscardHandler))
	}
	if err != nil {
		if db != nil {
			db.Close()
		}
		os.RemoveAll(files)
		return nil, err
	}
	svc.Start()
	srv := serve(svc)
	return &benchService{svc: svc, db: db, base: srv.URL, stop: func() {
		srv.Close()
		svc.Close()
		db.Close()
		os.RemoveAll(files)
	}}, nil
}

// timeStartUp starts the service on dsn and returns how long it took until
// /readyz answered 200, and the engine.
func timeStartUp(ctx context.Context, dsn string) (time.Duration, string, error) {
	runtime.GC()
	start := time.Now()
	b, err := startBench(ctx, dsn)
	if err != nil {
		return 0, "", err
	}
	defer b.stop()
	for {
		resp, err := http.Get(b.base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return time.Since(start), b.db.Engine(), nil
			}
		}
		if time.Since(start) > time.Minute {
			return 0, "", fmt.Errorf("/readyz: not ready after a minute (%v)", err)
		}
		time.Sleep(time.Millisecond)
	}
}

// timePurge runs the hourly housekeeping once, on a database where
// nothing has expired, and returns how long it took.
func timePurge(ctx context.Context, dsn string) (time.Duration, error) {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	now := time.Now()
	start := time.Now()
	_, err = idempotency.NewKeys(db).PurgeExpired(ctx, now)
	err = errors.Join(err, auth.NewTables(db).PurgeExpiredTokens(ctx, now.Add(-24*time.Hour)),
		db.PurgeChanges(ctx, now.Add(-30*24*time.Hour)), webhooks.NewTables(db).PurgeDeliveries(ctx, 100))
	return time.Since(start), err
}

// compareTenant measures tenant bench on both databases, in rounds that
// alternate between them.
func compareTenant(ctx context.Context, aloneDSN, crowdDSN string, perTenant int, d time.Duration) (alone, crowd latencies, err error) {
	var clients [2]*tenantClient
	for i, dsn := range []string{aloneDSN, crowdDSN} {
		b, err := startBench(ctx, dsn)
		if err != nil {
			return alone, crowd, err
		}
		defer b.stop()
		if clients[i], err = newTenantClient(ctx, b.base); err != nil {
			return alone, crowd, err
		}
	}
	// Warm both up: caches, connections, the engines' pages.
	for _, c := range clients {
		c.round(ctx, perTenant, 100*time.Millisecond, &latencies{})
	}
	const rounds = 10
	for i := range rounds {
		for _, which := range []int{i % 2, 1 - i%2} {
			into := &alone
			if which == 1 {
				into = &crowd
			}
			clients[which].round(ctx, perTenant, d/rounds, into)
		}
	}
	return alone, crowd, ctx.Err()
}

// tenantClient is the bench tenant's admin, signed in.
type tenantClient struct {
	http  *http.Client
	base  string
	token string
	ids   []int64 // of its project days
	where string  // a where-list: five days of project days
}

func newTenantClient(ctx context.Context, base string) (*tenantClient, error) {
	c := &tenantClient{http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}, base: base}
	var err error
	if c.token, err = login(c.http, base); err != nil {
		return nil, err
	}
	where := fmt.Sprintf(`{"day":{">=":"%s","<":"%s"}}`, crowdDay(3), crowdDay(8))
	c.where = "/v1/project-days?where=" + url.QueryEscape(where)
	var page []struct{ ID int64 }
	if err := c.getJSON(ctx, "/v1/project-days?limit=10000", &page); err != nil {
		return nil, err
	}
	for _, p := range page {
		c.ids = append(c.ids, p.ID)
	}
	if len(c.ids) == 0 {
		return nil, errors.New("the bench tenant has no project days")
	}
	return c, nil
}

// round measures 20 lists, 20 where-lists and single GETs from eight
// clients for getFor.
func (c *tenantClient) round(ctx context.Context, perTenant int, getFor time.Duration, into *latencies) {
	for range 20 {
		into.list = append(into.list, c.timed(ctx, "/v1/project-days", into))
		into.where = append(into.where, c.timed(ctx, c.where, into))
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	deadline := start.Add(getFor)
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			var errs int64
			for i := 0; time.Now().Before(deadline) && ctx.Err() == nil; i++ {
				id := c.ids[(w*7919+i*104729)%len(c.ids)]
				var e latencies
				local = append(local, c.timed(ctx, fmt.Sprintf("/v1/project-days/%d", id), &e))
				errs += e.errors
			}
			mu.Lock()
			into.get = append(into.get, local...)
			into.gets += int64(len(local))
			into.errors += errs
			mu.Unlock()
		}()
	}
	wg.Wait()
	into.getTime += time.Since(start)
}

// timed GETs path, reads the answer, and returns how long that took; a
// failure counts in into.errors.
func (c *tenantClient) timed(ctx context.Context, path string, into *latencies) time.Duration {
	start := time.Now()
	resp, err := c.do(ctx, path)
	if err == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("GET %s: %d", path, resp.StatusCode)
		}
	}
	took := time.Since(start)
	if err != nil {
		into.errors++
		if into.errors == 1 {
			fmt.Fprintln(os.Stderr, "planwerk-bench tenants:", err)
		}
	}
	return took
}

func (c *tenantClient) do(ctx context.Context, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("companyurl", benchSlug)
	req.Header.Set("Authorization", "Bearer "+c.token)
	return c.http.Do(req)
}

func (c *tenantClient) getJSON(ctx context.Context, path string, v any) error {
	resp, err := c.do(ctx, path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %d", path, resp.StatusCode)
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// percentile is the q-quantile of ds (0 when empty).
func percentile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(float64(len(s))*q))]
}

func (l latencies) rate() float64 { return float64(l.gets) / l.getTime.Seconds() }

func printCrowd(results []crowdResult, n, perTenant int) {
	fmt.Printf("\nPlanwerk tenants benchmark: 1 tenant vs %d tenants of %d records each, %s, %d cores, %s\n",
		n, perTenant, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("(the machine may be shared: alone and crowd were measured in alternating rounds of the same run)")
	fmt.Println()
	fmt.Println("| engine | seed 1 tenant | seed all | start-up 1 tenant (median, min) | start-up all (median, min) | ratio | housekeeping run 1 | all |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %.1f s | %s, %s | %s, %s | %.2f | %s | %s |\n", r.engine, ms(r.seedAlone), r.seed.Seconds(),
			ms(median(r.startAlone)), ms(slices.Min(r.startAlone)), ms(median(r.start)), ms(slices.Min(r.start)),
			a2b(median(r.start), median(r.startAlone)), ms(r.purgeAlone), ms(r.purge))
	}
	fmt.Println()
	fmt.Println("| engine | request | alone p50 | p99 | among all p50 | p99 | p50 ratio | p99 ratio |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		for _, k := range []struct {
			name string
			a, c []time.Duration
		}{
			{"list (GET /v1/project-days)", r.alone.list, r.crowd.list},
			{"where-list (five days)", r.alone.where, r.crowd.where},
			{"single GET (8 clients)", r.alone.get, r.crowd.get},
		} {
			a50, a99, c50, c99 := percentile(k.a, .5), percentile(k.a, .99), percentile(k.c, .5), percentile(k.c, .99)
			fmt.Printf("| %s | %s | %s | %s | %s | %s | %.2f | %.2f |\n", r.engine, k.name, ms(a50), ms(a99), ms(c50), ms(c99), a2b(c50, a50), a2b(c99, a99))
		}
		fmt.Printf("| %s | single GET req/s | %.0f | | %.0f | | %.2f | |\n", r.engine, r.alone.rate(), r.crowd.rate(), r.crowd.rate()/r.alone.rate())
		if e := r.alone.errors + r.crowd.errors; e > 0 {
			fmt.Printf("| %s | errors | %d | | %d | | | |\n", r.engine, r.alone.errors, r.crowd.errors)
		}
	}
}
