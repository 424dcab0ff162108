// Package noisy plays a noisy tenant against a running Planwerk server:
// slow readers of a big list, expanded references of big records,
// expensive where filters and a stream of writes, while it measures a
// quiet tenant's requests. The noisy-neighbour test and
// `planwerk-bench noisy` share it.
package noisy

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/tally"
)

// Tenant is a tenant's slug and an access token of its admin.
type Tenant struct {
	Slug  string
	Token string
}

// Seed stores the data of the noisy tenant (a list of 1000 projects of
// 10 KiB, 9 projects of 1 MiB and 120 time entries referring to them, and
// a year of 40 people's time, 10,000 entries, with its totals) and of the
// quiet one (50 small projects).
func Seed(ctx context.Context, db *store.DB, noisy, quiet int64, noisyUser int64) error {
	projects := store.Collection{Table: "records", Resource: "projects"}
	entries := store.Collection{Table: "records", Resource: "time-entries"}
	insert := func(q store.Querier, tenant int64, c store.Collection, doc map[string]any) (int64, error) {
		id, err := db.NewID(ctx, q, tenant)
		if err != nil {
			return 0, err
		}
		_, err = db.InsertRecord(ctx, q, tenant, c, id, doc)
		return id, err
	}
	pad := strings.Repeat("n", 10<<10)
	for start := 0; start < 1000; start += 500 {
		if err := db.Tx(ctx, func(q store.Querier) error {
			for i := start; i < start+500; i++ {
				doc := map[string]any{"name": fmt.Sprint("big ", i), "pad": pad}
				for a := 0; a < 32; a++ {
					doc[fmt.Sprint("a", a)] = fmt.Sprint("value ", (i+a)%97)
				}
				if _, err := insert(q, noisy, projects, doc); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("seed the noisy list: %w", err)
		}
	}
	err := db.Tx(ctx, func(q store.Querier) error {
		huge := strings.Repeat("h", 1<<20)
		var refs []int64
		for i := 0; i < 9; i++ {
			id, err := insert(q, noisy, projects, map[string]any{"name": fmt.Sprint("huge ", i), "pad": huge})
			if err != nil {
				return err
			}
			refs = append(refs, id)
		}
		for i := 0; i < 120; i++ {
			doc := map[string]any{"trackingType": "WORK", "project": refs[i%len(refs)], "day": "2026-01-05", "duration": 60, "user": noisyUser}
			if _, err := insert(q, noisy, entries, doc); err != nil {
				return err
			}
		}
		for i := 0; i < 50; i++ {
			if _, err := insert(q, quiet, projects, map[string]any{"name": fmt.Sprint("quiet ", i)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return seedYear(ctx, db, noisy, insert)
}

// seedYear stores 40 people's WORK entries over the workdays of 2025
// (ids after the other records, so that the lists of the noise read the
// same entries as before) and builds their totals.
func seedYear(ctx context.Context, db *store.DB, tenant int64, insert func(store.Querier, int64, store.Collection, map[string]any) (int64, error)) error {
	entries := store.Collection{Table: "records", Resource: "time-entries"}
	var days []string
	for d := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC); d.Year() == 2025 && len(days) < 250; d = d.AddDate(0, 0, 1) {
		if d.Weekday() != time.Saturday && d.Weekday() != time.Sunday {
			days = append(days, d.Format(time.DateOnly))
		}
	}
	for start := 0; start < len(days); start += 50 {
		if err := db.Tx(ctx, func(q store.Querier) error {
			for _, day := range days[start:min(start+50, len(days))] {
				for u := range 40 {
					doc := map[string]any{"trackingType": "WORK", "user": 1000 + u, "project": 2000 + u%8, "day": day, "duration": 3600 + 60*u}
					if _, err := insert(q, tenant, entries, doc); err != nil {
						return err
					}
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("seed a year of time: %w", err)
		}
	}
	run := func(fn func(q tally.Querier) error) error {
		return db.Tx(ctx, func(q store.Querier) error { return fn(q) })
	}
	return tally.Rebuild(ctx, run, tenant, db.StoredDoc())
}

// Options say how many of each kind of noise run at once.
type Options struct {
	SlowReaders int // clients that ask for the big list and never read it
	Populate    int // loops expanding references to 1 MiB records
	Filters     int // loops of the most expensive where allowed
	Writers     int // loops of writes
	Reports     int // loops of the year's time totals by user, and as many of its report over the entries
}

// Attack is noise in progress.
type Attack struct {
	stop  chan struct{}
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	// Requests counts the noisy requests answered.
	requests int64
}

// Start begins the noise of tenant t against the server at base.
func Start(base string, t Tenant, o Options) (*Attack, error) {
	a := &Attack{stop: make(chan struct{})}
	u, err := url.Parse(base)
	if err != nil {
		return nil, err
	}
	for range o.SlowReaders {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			a.Stop()
			return nil, err
		}
		fmt.Fprintf(c, "GET /v1/projects?limit=50000 HTTP/1.1\r\nHost: %s\r\ncompanyurl: %s\r\nAuthorization: Bearer %s\r\n\r\n", u.Host, t.Slug, t.Token)
		a.conns = append(a.conns, c)
	}
	// The readers stall once their answers started: the lists were read.
	for _, c := range a.conns {
		_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		if _, err := c.Read(make([]byte, 1)); err != nil {
			a.Stop()
			return nil, fmt.Errorf("slow reader: no answer: %w", err)
		}
	}
	client := &http.Client{Timeout: 5 * time.Minute}
	loop := func(n int, method, path string, body func() io.Reader) {
		for range n {
			a.wg.Add(1)
			go func() {
				defer a.wg.Done()
				for {
					select {
					case <-a.stop:
						return
					default:
					}
					var r io.Reader
					if body != nil {
						r = body()
					}
					req, _ := http.NewRequest(method, base+path, r)
					req.Header.Set("companyurl", t.Slug)
					req.Header.Set("Authorization", "Bearer "+t.Token)
					if resp, err := client.Do(req); err == nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					a.mu.Lock()
					a.requests++
					a.mu.Unlock()
				}
			}()
		}
	}
	loop(o.Populate, http.MethodGet, "/v1/time-entries?populate=project&limit=1000", nil)
	loop(o.Filters, http.MethodGet, "/v1/projects?limit=50000&where="+url.QueryEscape(ExpensiveWhere()), nil)
	loop(o.Writers, http.MethodPost, "/v1/projects", func() io.Reader { return strings.NewReader(`{"name":"noise"}`) })
	loop(o.Reports, http.MethodGet, "/v1/analytics/time-totals?from=2025-01-01&to=2025-12-31&groupBy=user", nil)
	loop(o.Reports, http.MethodGet, "/v1/reports/time?from=2025-01-01&to=2025-12-31&groupBy=project,user&rounding=up:15", nil)
	return a, nil
}

// Requests is the number of noisy requests answered so far.
func (a *Attack) Requests() int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.requests
}

// Stop ends the noise and closes the slow readers' connections.
func (a *Attack) Stop() {
	close(a.stop)
	for _, c := range a.conns {
		c.Close()
	}
	a.wg.Wait()
}

// ExpensiveWhere is a where filter at the limits of the language: 128
// conditions (text searches, which do not merge) over 32 undeclared
// attributes.
func ExpensiveWhere() string {
	var terms []map[string]any
	for i := 0; i < 128; i++ {
		terms = append(terms, map[string]any{fmt.Sprint("a", i%32): map[string]any{"contains": fmt.Sprint("value ", i)}})
	}
	b, _ := json.Marshal(map[string]any{"or": terms})
	return string(b)
}

// Sample is what the quiet tenant saw.
type Sample struct {
	Latencies []time.Duration // sorted
	Ready     []time.Duration // of /readyz, sorted
	Failures  []string
}

// Percentile returns the q-quantile (0 < q ≤ 1) of the latencies.
func (s Sample) Percentile(q float64) time.Duration {
	if len(s.Latencies) == 0 {
		return 0
	}
	i := int(float64(len(s.Latencies))*q+0.5) - 1
	return s.Latencies[max(0, min(i, len(s.Latencies)-1))]
}

// Measure sends n requests of tenant t one after another: lists, single
// reads, writes and readiness checks in turn; each must succeed within
// limit.
func Measure(ctx context.Context, base string, t Tenant, n int, limit time.Duration) Sample {
	client := &http.Client{Timeout: limit}
	var s Sample
	do := func(method, path string, body io.Reader, want int) (time.Duration, []byte) {
		req, _ := http.NewRequestWithContext(ctx, method, base+path, body)
		req.Header.Set("companyurl", t.Slug)
		req.Header.Set("Authorization", "Bearer "+t.Token)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			s.Failures = append(s.Failures, fmt.Sprintf("%s %s: %v", method, path, err))
			return time.Since(start), nil
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		took := time.Since(start)
		if resp.StatusCode != want {
			s.Failures = append(s.Failures, fmt.Sprintf("%s %s: %d %.200s", method, path, resp.StatusCode, raw))
		}
		return took, raw
	}
	_, raw := do(http.MethodGet, "/v1/projects?limit=1", nil, http.StatusOK)
	var first []struct{ ID int64 }
	_ = json.Unmarshal(raw, &first)
	one := "/v1/users/me"
	if len(first) == 1 {
		one = fmt.Sprint("/v1/projects/", first[0].ID)
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		var took time.Duration
		switch i % 4 {
		case 0:
			took, _ = do(http.MethodGet, "/v1/projects?limit=20&sort=id%20DESC", nil, http.StatusOK)
		case 1:
			took, _ = do(http.MethodGet, one, nil, http.StatusOK)
		case 2:
			took, _ = do(http.MethodPost, "/v1/projects", strings.NewReader(`{"name":"quiet"}`), http.StatusCreated)
		default:
			took, _ = do(http.MethodGet, "/readyz", nil, http.StatusOK)
			s.Ready = append(s.Ready, took)
		}
		s.Latencies = append(s.Latencies, took)
	}
	slices.Sort(s.Latencies)
	slices.Sort(s.Ready)
	return s
}
