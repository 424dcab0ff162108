package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// writeResult is one path's record creation: rate with many clients and
// latency of a lone client.
type writeResult struct {
	rate         float64 // creates/s with the many clients
	p50, p99     time.Duration
	single       float64 // creates/s of one client
	singleP50    time.Duration
	singleP99    time.Duration
	errors       int64
	clients      int
	tenants      int
	engine, mode string
}

// writeRounds is how many turns each path of a pair takes: the two
// paths alternate, so that the machine's drift during the run falls on
// both alike.
const writeRounds = 4

// runWrites measures POST /v1/projects from many clients of one tenant
// and of eight, each without the audit log and with it. The two services
// of a pair run side by side, each on a database of its own, and are
// driven in turns (writeRounds each, d in all). On SQLite writes share
// their commits (group commit); on PostgreSQL they are served as they are.
func runWrites(ctx context.Context, pgURL string, d time.Duration, clients int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []writeResult
	for i, dsn := range dsns {
		for j, tenants := range []int{1, 8} {
			pair, err := writePair(ctx, pgURL, fmt.Sprintf("%s-%d-%d", dsn, i, j), d, clients, tenants)
			if err != nil {
				return err
			}
			results = append(results, pair[:]...)
		}
	}
	var ceiling float64
	if path, ok := strings.CutPrefix(dsns[0], "sqlite:"); ok {
		if ceiling, err = durableCeiling(ctx, path+"-ceiling", d); err != nil {
			return err
		}
	}
	fmt.Printf("\nPlanwerk write benchmark: POST /v1/projects, %d clients and 1 client, %s each (in %d turns, the two paths of a row pair alternating), %s, %d cores, %s\n\n",
		clients, d, writeRounds, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Printf("| engine | tenants | path | creates/s (%d clients) | p50 | p99 | creates/s (1 client) | p50 | p99 | errors |\n", clients)
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %d | %s | %.0f | %s | %s | %.0f | %s | %s | %d |\n", r.engine, r.tenants, r.mode, r.rate, ms(r.p50), ms(r.p99),
			r.single, ms(r.singleP50), ms(r.singleP99), r.errors)
	}
	fmt.Println()
	for i := 0; i+1 < len(results); i += 2 {
		off, on := results[i], results[i+1]
		fmt.Printf("%s, %d tenant(s): with / without the audit log: %.2f× creates/s with %d clients, %.2f× with 1 client\n",
			off.engine, off.tenants, on.rate/off.rate, clients, on.single/off.single)
	}
	if ceiling > 0 {
		fmt.Printf("\nSQLite, one goroutine, a durable commit per row (WAL, synchronous FULL), the service's disk: %.0f commits/s\n", ceiling)
		for _, r := range results {
			if r.engine == "sqlite" {
				fmt.Printf("sqlite, %d tenant(s), %s: creates/s (%d clients) / that ceiling: %.2f\n", r.tenants, r.mode, clients, r.rate/ceiling)
			}
		}
	}
	return nil
}

// writePair measures the two paths of one row pair, each a service on
// a database of its own (named after at on SQLite), and stops both before
// it returns: the next pair's connections do not add to theirs.
func writePair(ctx context.Context, pgURL, at string, d time.Duration, clients, tenants int) ([2]writeResult, error) {
	var pair [2]*writePath
	var results [2]writeResult
	for k, audited := range []bool{false, true} {
		dsn := fmt.Sprintf("%s-%d", at, k)
		if !strings.HasPrefix(at, "sqlite:") {
			fresh, drop, err := freshSchema(ctx, pgURL)
			if err != nil {
				return results, err
			}
			defer drop()
			dsn = fresh
		}
		opts := store.DefaultOptions()
		opts.NoAudit = !audited
		w, err := startWrites(ctx, dsn, opts, clients, tenants)
		if err != nil {
			return results, err
		}
		defer w.stop()
		w.result.mode = map[bool]string{false: "without audit log", true: "with audit log"}[audited]
		pair[k] = w
	}
	for _, n := range []int{1, clients} {
		for range writeRounds {
			for _, w := range pair {
				w.drive(ctx, n, d/writeRounds)
			}
		}
	}
	for k, w := range pair {
		results[k] = w.finish()
	}
	return results, nil
}

// writePath is one service under the write load, with what its turns
// measured so far.
type writePath struct {
	post   func(ctx context.Context, i int)
	errs   atomic.Int64
	stop   func()
	result writeResult
	lat    map[int][]time.Duration // by clients
	took   map[int]time.Duration
}

// startWrites starts a service on dsn with tenants, each with an admin
// signed in.
func startWrites(ctx context.Context, dsn string, opts store.Options, clients, tenants int) (*writePath, error) {
	svc, srv, stop, err := startServiceWith(ctx, dsn, opts, nil)
	if err != nil {
		return nil, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 8}}
	slugs, tokens := make([]string, tenants), make([]string, tenants)
	for i := range tenants {
		slugs[i] = "bench"
		if i > 0 {
			slugs[i] = fmt.Sprintf("bench-%d", i)
		}
		email := fmt.Sprintf("admin@%s.test", slugs[i])
		if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slugs[i], AdminEmail: email, AdminPassword: "bench-password"}); err != nil {
			stop()
			return nil, err
		}
		if tokens[i], err = signIn(client, srv.URL, slugs[i], email, "bench-password"); err != nil {
			stop()
			return nil, err
		}
	}
	w := &writePath{stop: stop, lat: map[int][]time.Duration{}, took: map[int]time.Duration{},
		result: writeResult{engine: svc.DB.Engine(), clients: clients, tenants: tenants}}
	w.post = func(ctx context.Context, i int) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/projects", strings.NewReader(fmt.Sprintf(`{"name":"Project %d"}`, i)))
		req.Header.Set("companyurl", slugs[i%tenants])
		req.Header.Set("Authorization", "Bearer "+tokens[i%tenants])
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			w.errs.Add(1)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			w.errs.Add(1)
		}
	}
	return w, nil
}

// drive runs n clients for d (client i writes to tenant i mod tenants)
// and keeps their latencies.
func (w *writePath) drive(ctx context.Context, n int, d time.Duration) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	deadline := time.Now().Add(d)
	for c := 0; c < n; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			var local []time.Duration
			for i := c; time.Now().Before(deadline); i += n {
				start := time.Now()
				w.post(ctx, i)
				local = append(local, time.Since(start))
			}
			mu.Lock()
			w.lat[n] = append(w.lat[n], local...)
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	w.took[n] += d
}

// finish returns what the turns measured.
func (w *writePath) finish() writeResult {
	r := w.result
	rate := func(n int) (float64, time.Duration, time.Duration) {
		lat := w.lat[n]
		slices.Sort(lat)
		if len(lat) == 0 {
			return 0, 0, 0
		}
		return float64(len(lat)) / w.took[n].Seconds(), lat[len(lat)/2], lat[len(lat)*99/100]
	}
	r.single, r.singleP50, r.singleP99 = rate(1)
	r.rate, r.p50, r.p99 = rate(r.clients)
	r.errors = w.errs.Load()
	return r
}
