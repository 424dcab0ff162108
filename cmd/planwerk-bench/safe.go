package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// safeResult is one engine's numbers of docs/api.md "Safe writes".
type safeResult struct {
	engine string
	// creates and keyed are POST /v1/projects per second, without and
	// with an Idempotency-Key (a fresh one for every request).
	creates, keyed float64
	// gets and notModified are GET /v1/projects/{id} per second, plain and
	// with an If-None-Match that matches (304, no body).
	gets, notModified float64
	// feed is changes/s of GET /v1/changes read from the start, 1000 a
	// page, over the changes the creates above recorded.
	feed        float64
	feedChanges int
	errors      int64
}

// runSafe measures what safe writes cost: record creation without and
// with an Idempotency-Key.
func runSafe(ctx context.Context, pgURL string, d time.Duration) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []safeResult
	for _, dsn := range dsns {
		r, err := benchSafe(ctx, dsn, d)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk safe writes benchmark: 8 concurrent clients, %s each, %s, %d cores\n\n", d, runtime.Version(), runtime.NumCPU())
	fmt.Println("| engine | POST /v1/projects creates/s | with Idempotency-Key (a fresh key each) | ratio | GET one record/s | with If-None-Match hit (304) | ratio | feed changes/s (of N) | errors |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %.0f | %.0f | %.2f | %.0f (%d) | %d |\n", r.engine, r.creates, r.keyed, r.keyed/r.creates,
			r.gets, r.notModified, r.notModified/r.gets, r.feed, r.feedChanges, r.errors)
	}
	return nil
}

func benchSafe(ctx context.Context, dsn string, d time.Duration) (safeResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, nil)
	if err != nil {
		return safeResult{}, err
	}
	defer stop()
	db := svc.DB
	tn, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"})
	if err != nil {
		return safeResult{}, err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token, err := login(client, srv.URL)
	if err != nil {
		return safeResult{}, err
	}
	var errs atomic.Int64
	post := func(path, body, key string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		if key != "" {
			req.Header.Set("Idempotency-Key", key)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode
	}
	// drive posts projects from 8 clients for d; keyed sends a fresh key
	// with each.
	drive := func(keyed bool) float64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(d)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; time.Now().Before(deadline); i += 8 {
					key := ""
					if keyed {
						key = freshKey()
					}
					if code := post("/v1/projects", fmt.Sprintf(`{"name":"Project %d"}`, i), key); code != http.StatusCreated {
						errs.Add(1)
					}
					n.Add(1)
				}
			}(w)
		}
		wg.Wait()
		return float64(n.Load()) / d.Seconds()
	}
	r := safeResult{engine: db.Engine()}
	r.creates = drive(false)
	r.keyed = drive(true)

	// Conditional reads of one record: its tag from a first GET.
	path := "/v1/projects/1"
	if ids, err := db.Records(nil, tn.ID, store.Collection{Table: "records", Resource: "projects"}).Find(ctx, nil, 1); err == nil && len(ids) == 1 {
		path = fmt.Sprintf("/v1/projects/%d", ids[0].ID)
	}
	get := func(inm string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		resp, err := client.Do(req)
		if err != nil {
			return 0, ""
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag")
	}
	_, tag := get("")
	read := func(inm string, want int) float64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(d)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(deadline) {
					if code, _ := get(inm); code != want {
						errs.Add(1)
					}
					n.Add(1)
				}
			}()
		}
		wg.Wait()
		return float64(n.Load()) / d.Seconds()
	}
	r.gets = read("", http.StatusOK)
	r.notModified = read(tag, http.StatusNotModified)
	r.feed, r.feedChanges = readFeed(ctx, client, srv.URL, token, &errs)
	r.errors = errs.Load()
	return r, nil
}

// readFeed reads the whole change feed from its start, 1000 changes a
// page, and returns changes/s and how many.
func readFeed(ctx context.Context, client *http.Client, base, token string, errs *atomic.Int64) (float64, int) {
	start := time.Now()
	after, n := "", 0
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/changes?limit=1000&after="+after, nil)
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			errs.Add(1)
			break
		}
		var page struct {
			Changes []json.RawMessage
			Next    string
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			errs.Add(1)
			break
		}
		n += len(page.Changes)
		if len(page.Changes) == 0 {
			break
		}
		after = page.Next
	}
	return float64(n) / time.Since(start).Seconds(), n
}

// freshKey is a random Idempotency-Key, as a client makes one per request.
func freshKey() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
