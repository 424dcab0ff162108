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
	engine, mode string
}

// runWrites measures POST /v1/projects: on SQLite each write committed on
// its own and in batches (group commit), on PostgreSQL as it is.
func runWrites(ctx context.Context, pgURL string, d time.Duration, clients int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []writeResult
	for i, dsn := range dsns {
		type mode struct {
			name string
			opts store.Options
		}
		modes := []mode{{"as served", store.DefaultOptions()}}
		if strings.HasPrefix(dsn, "sqlite:") {
			alone := store.DefaultOptions()
			alone.GroupCommit = false
			modes = []mode{{"commit per request", alone}, {"group commit", store.DefaultOptions()}}
		}
		for j, m := range modes {
			// Each mode on a database of its own, so that neither
			// inherits the other's rows.
			at := dsn
			if strings.HasPrefix(dsn, "sqlite:") {
				at = fmt.Sprintf("%s-%d-%d", dsn, i, j)
			}
			r, err := benchWrites(ctx, at, m.opts, d, clients)
			if err != nil {
				return err
			}
			r.mode = m.name
			results = append(results, r)
		}
	}
	fmt.Printf("\nPlanwerk write benchmark: POST /v1/projects, %d clients and 1 client, %s each, %s, %d cores, %s\n\n",
		clients, d, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Printf("| engine | path | creates/s (%d clients) | p50 | p99 | creates/s (1 client) | p50 | p99 | errors |\n", clients)
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %.0f | %s | %s | %.0f | %s | %s | %d |\n", r.engine, r.mode, r.rate, ms(r.p50), ms(r.p99),
			r.single, ms(r.singleP50), ms(r.singleP99), r.errors)
	}
	if len(results) >= 2 && results[0].engine == "sqlite" && results[1].engine == "sqlite" {
		a, b := results[0], results[1]
		fmt.Printf("\nsqlite group commit / commit per request: %.2f× creates/s with %d clients, %.2f× the lone client's p50 latency\n",
			b.rate/a.rate, clients, a2b(b.singleP50, a.singleP50))
	}
	return nil
}

func benchWrites(ctx context.Context, dsn string, opts store.Options, d time.Duration, clients int) (writeResult, error) {
	svc, srv, stop, err := startServiceWith(ctx, dsn, opts, nil)
	if err != nil {
		return writeResult{}, err
	}
	defer stop()
	if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"}); err != nil {
		return writeResult{}, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients + 8}}
	token, err := login(client, srv.URL)
	if err != nil {
		return writeResult{}, err
	}
	var errs atomic.Int64
	post := func(i int) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/projects", strings.NewReader(fmt.Sprintf(`{"name":"Project %d"}`, i)))
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			errs.Add(1)
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			errs.Add(1)
		}
	}
	drive := func(n int) (float64, time.Duration, time.Duration) {
		var wg sync.WaitGroup
		var mu sync.Mutex
		var lat []time.Duration
		deadline := time.Now().Add(d)
		for w := 0; w < n; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				var local []time.Duration
				for i := w; time.Now().Before(deadline); i += n {
					start := time.Now()
					post(i)
					local = append(local, time.Since(start))
				}
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			}(w)
		}
		wg.Wait()
		slices.Sort(lat)
		if len(lat) == 0 {
			return 0, 0, 0
		}
		return float64(len(lat)) / d.Seconds(), lat[len(lat)/2], lat[len(lat)*99/100]
	}
	r := writeResult{engine: svc.DB.Engine(), clients: clients}
	r.single, r.singleP50, r.singleP99 = drive(1)
	r.rate, r.p50, r.p99 = drive(clients)
	r.errors = errs.Load()
	return r, nil
}
