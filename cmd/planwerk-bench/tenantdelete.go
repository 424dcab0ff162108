package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
	"planwerk/internal/users"
)

// The phases of the served tenant's load; a request counts in the phase
// it started in.
const (
	phaseWarm   int32 = iota // not counted
	phaseQuiet               // nothing else happens
	phaseMarked              // the big tenant is marked, the command not yet started: not counted
	phaseDelete              // from the command's start to its end
	phases
)

// deleteResult is one engine's deletion beside a served tenant.
type deleteResult struct {
	engine        string
	took          time.Duration
	rows, files   int64
	quiet, during []time.Duration // sorted
	// byKind are the latencies of each kind of request, quiet and during
	// the delete, sorted.
	byKind [calmKinds][2][]time.Duration
	errors [phases]int64
}

// deletedSummary is the delete command's last line.
var deletedSummary = regexp.MustCompile(`: (\d+) rows in \d+ tables, (\d+) files`)

// deleteBeside starts a service on dsn (file store folder), which holds
// the big tenant, and creates a small one beside it; drives the small
// tenant with clients for d alone, then marks the big one as being
// deleted, waits out the tenant caches' time to live and runs planwerk
// tenant delete as a process of its own, the load going on. The command
// finds its wait over and erases at once: the second window is the
// erasure.
func deleteBeside(ctx context.Context, dsn, folder string, d time.Duration, clients int) (deleteResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, func(c *config.Config) { c.Files = folder })
	if err != nil {
		return deleteResult{}, err
	}
	defer stop()
	r := deleteResult{engine: svc.DB.Engine()}
	calm, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "calm", AdminEmail: "admin@calm.test", AdminPassword: "calm-password"})
	if err != nil {
		return r, err
	}
	ids, err := insertDocs(ctx, svc.DB, calm.ID, "projects", 200, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprint("Project ", i)}
	})
	if err != nil {
		return r, err
	}
	client := &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: clients + 4}}
	tok, err := signIn(client, srv.URL, "calm", "admin@calm.test", "calm-password")
	if err != nil {
		return r, err
	}
	load := startCalmLoad(ctx, client, srv.URL, tok, ids, clients)
	defer load.stop()
	wait := func(d time.Duration) error {
		select {
		case <-time.After(d):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := wait(time.Second); err != nil {
		return r, err
	}
	load.phase.Store(phaseQuiet)
	if err := wait(d); err != nil {
		return r, err
	}
	load.phase.Store(phaseMarked)
	big, err := svc.DB.SetTenantState(ctx, benchSlug, store.TenantDeleting, store.TenantActive)
	if err != nil {
		return r, err
	}
	since, err := svc.DB.TenantStateSince(ctx, big.ID)
	if err != nil {
		return r, err
	}
	if err := wait(time.Until(since.Add(tenancy.CacheTTL + 100*time.Millisecond))); err != nil {
		return r, err
	}
	load.phase.Store(phaseDelete)
	step, err := runStep(ctx, "delete "+r.engine, []string{"tenant", "delete", "--database", dsn, "--files", folder, "--slug", benchSlug, "--confirm", benchSlug})
	load.phase.Store(phaseWarm)
	if err != nil {
		return r, err
	}
	r.took = step.took
	if strings.Contains(step.out, "waiting") {
		return r, fmt.Errorf("delete %s waited for the tenant caches within the measured window:\n%s", r.engine, step.out)
	}
	if m := deletedSummary.FindStringSubmatch(step.out); m != nil {
		r.rows, _ = strconv.ParseInt(m[1], 10, 64)
		r.files, _ = strconv.ParseInt(m[2], 10, 64)
	}
	load.stop()
	r.quiet, r.during = load.all(phaseQuiet), load.all(phaseDelete)
	for k := range r.byKind {
		r.byKind[k] = [2][]time.Duration{load.latencies[phaseQuiet][k], load.latencies[phaseDelete][k]}
	}
	r.errors = load.errors()
	return r, nil
}

// calmLoad is the small tenant's steady load: each client in turn lists
// 50 projects, reads one and creates one, one request after another.
type calmLoad struct {
	phase atomic.Int32
	errs  [phases]atomic.Int64
	// latencies of each phase, of each kind of request (list, get,
	// create), sorted once stopped.
	latencies [phases][calmKinds][]time.Duration
	stop      func()
}

// calmKinds are the kinds of the served tenant's requests.
const calmKinds = 3

var calmKindNames = [calmKinds]string{"list", "get", "create"}

func startCalmLoad(ctx context.Context, client *http.Client, base, token string, ids []int64, clients int) *calmLoad {
	l := &calmLoad{}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var reported atomic.Int32
	do := func(i int) error {
		method, path, want := http.MethodGet, "/v1/projects?limit=50", http.StatusOK
		var body io.Reader
		switch i % calmKinds {
		case 1:
			path = fmt.Sprint("/v1/projects/", ids[i%len(ids)])
		case 2:
			method, path, want = http.MethodPost, "/v1/projects", http.StatusCreated
			body = strings.NewReader(fmt.Sprintf(`{"name":"During %d"}`, i))
		}
		req, _ := http.NewRequestWithContext(ctx, method, base+path, body)
		req.Header.Set("companyurl", "calm")
		req.Header.Set("Authorization", "Bearer "+token)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			return fmt.Errorf("%s %s: %d %.200s", method, path, resp.StatusCode, b)
		}
		return nil
	}
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local [phases][calmKinds][]time.Duration
			for i := c; ctx.Err() == nil; i += clients {
				phase := l.phase.Load()
				start := time.Now()
				err := do(i)
				took := time.Since(start)
				if ctx.Err() != nil {
					break
				}
				if err != nil {
					l.errs[phase].Add(1)
					if phase != phaseWarm && reported.Add(1) <= 5 {
						fmt.Fprintln(os.Stderr, "served tenant:", err)
					}
				}
				local[phase][i%calmKinds] = append(local[phase][i%calmKinds], took)
			}
			mu.Lock()
			for p := range local {
				for k := range local[p] {
					l.latencies[p][k] = append(l.latencies[p][k], local[p][k]...)
				}
			}
			mu.Unlock()
		}()
	}
	l.stop = sync.OnceFunc(func() {
		cancel()
		wg.Wait()
		for p := range l.latencies {
			for k := range l.latencies[p] {
				slices.Sort(l.latencies[p][k])
			}
		}
	})
	return l
}

// all returns the latencies of every kind of the phase, sorted.
func (l *calmLoad) all(phase int32) []time.Duration {
	var out []time.Duration
	for _, lat := range l.latencies[phase] {
		out = append(out, lat...)
	}
	slices.Sort(out)
	return out
}

func (l *calmLoad) errors() [phases]int64 {
	var out [phases]int64
	for p := range out {
		out[p] = l.errs[p].Load()
	}
	return out
}

// quantile returns the q-quantile of sorted latencies.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(int(float64(len(sorted))*q), len(sorted)-1)]
}

// printDeletes prints the deletions' table.
func printDeletes(rs []deleteResult, d time.Duration, clients int) {
	fmt.Printf("\nPlanwerk tenant delete beside a served tenant: %d clients of the served tenant (list 50 projects, get one, create one, in turn), quiet for %s, then during the delete\n\n", clients, d)
	fmt.Println("| engine | rows erased | files | delete took | quiet p50 | quiet p99 | during p50 | during p99 | p99 ratio | during max | req/s quiet / during | errors quiet / during |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range rs {
		qp99, dp99 := quantile(r.quiet, 0.99), quantile(r.during, 0.99)
		fmt.Printf("| %s | %d | %d | %.1f s | %s | %s | %s | %s | %.2f | %s | %.0f / %.0f | %d / %d |\n", r.engine, r.rows, r.files, r.took.Seconds(),
			ms(quantile(r.quiet, 0.5)), ms(qp99), ms(quantile(r.during, 0.5)), ms(dp99), a2b(dp99, qp99), ms(quantile(r.during, 1)),
			float64(len(r.quiet))/d.Seconds(), float64(len(r.during))/r.took.Seconds(), r.errors[phaseQuiet], r.errors[phaseDelete])
	}
	fmt.Println("\nBy kind of request:")
	fmt.Println()
	fmt.Println("| engine | request | quiet p99 | quiet max | during p99 | during max |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rs {
		for k, lat := range r.byKind {
			fmt.Printf("| %s | %s | %s | %s | %s | %s |\n", r.engine, calmKindNames[k],
				ms(quantile(lat[0], 0.99)), ms(quantile(lat[0], 1)), ms(quantile(lat[1], 0.99)), ms(quantile(lat[1], 1)))
		}
	}
}
