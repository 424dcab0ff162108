package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/users"
)

// hookResult is one engine's webhook delivery throughput: deliveries per
// second of a backlog to a local receiver, with one webhook (strictly one
// at a time) and with eight (delivered in parallel).
type hookResult struct {
	engine    string
	one, many float64
}

// runWebhooks measures webhook deliveries: n changes are made while the
// dispatcher is stopped, then it is started and the time until the
// receiver has them all is taken.
func runWebhooks(ctx context.Context, pgURL string, n int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []hookResult
	for _, dsn := range dsns {
		r, err := benchWebhooks(ctx, dsn, n)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk webhook delivery benchmark: a backlog of %d changes to a local receiver (204 at once), %s, %d cores\n\n",
		n, runtime.Version(), runtime.NumCPU())
	fmt.Println("| engine | 1 webhook: deliveries/s | 8 webhooks: deliveries/s |")
	fmt.Println("|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.0f |\n", r.engine, r.one, r.many)
	}
	return nil
}

func benchWebhooks(ctx context.Context, dsn string, n int) (hookResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, func(c *config.Config) { c.WebhookAllowPrivate = true })
	if err != nil {
		return hookResult{}, err
	}
	defer stop()
	db := svc.DB
	var got atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	r := hookResult{engine: db.Engine()}
	for _, k := range []int{1, 8} {
		slug := fmt.Sprintf("hooks%d", k)
		if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slug, AdminEmail: "admin@" + slug + ".test", AdminPassword: "bench-password"}); err != nil {
			return r, err
		}
		rate, err := deliveries(ctx, svc, srv.URL, receiver.URL, slug, k, n, &got)
		if err != nil {
			return r, err
		}
		if k == 1 {
			r.one = rate
		} else {
			r.many = rate
		}
	}
	return r, nil
}

// deliveries makes k webhooks and n changes of tenant slug with the
// dispatcher stopped, then runs it until the receiver has every delivery.
func deliveries(ctx context.Context, svc *app.Service, base, receiver, slug string, k, n int, got *atomic.Int64) (float64, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token, err := signIn(client, base, slug, "admin@"+slug+".test", "bench-password")
	if err != nil {
		return 0, err
	}
	post := func(path, body string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("companyurl", slug)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return nil
	}
	for i := range k {
		if err := post("/v1/webhooks", fmt.Sprintf(`{"url": "%s/%d", "resources": ["projects"]}`, receiver, i)); err != nil {
			return 0, err
		}
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := post("/v1/projects", fmt.Sprintf(`{"name": "p%d"}`, i)); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	want := got.Load() + int64(k*n)
	start := time.Now()
	svc.Start()
	defer svc.Webhooks.Close()
	for got.Load() < want {
		if time.Since(start) > 10*time.Minute {
			return 0, fmt.Errorf("%d of %d deliveries after 10 minutes", got.Load()-want+int64(k*n), k*n)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return float64(k*n) / time.Since(start).Seconds(), nil
}
