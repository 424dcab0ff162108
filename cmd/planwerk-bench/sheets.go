package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"runtime"
	"strings"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// sheetsResult is one walk through a tenant's time entries in one format.
type sheetsResult struct {
	engine, format string
	rows, pages    int
	bytes          int64
	took           time.Duration
	peakHeap       uint64
}

// The formats a sheets walk reads the list in: name, Accept,
// Accept-Encoding.
var sheetsFormats = []struct{ name, accept, encoding string }{
	{"JSON", "application/json", "identity"},
	{"CSV", "text/csv", "identity"},
	{"CSV, gzip", "text/csv", "gzip"},
	{"XLSX", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "identity"},
}

// runSheets seeds n time entries (WORK, each with a notes attribute)
// into one tenant of each engine and reads all of them, 50,000 to a
// page following Link, as JSON, CSV (plain and gzip) and XLSX: rows per
// second, bytes and the peak heap growth of the whole walk.
func runSheets(ctx context.Context, pgURL string, n int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []sheetsResult
	for _, dsn := range dsns {
		rs, err := sheetsEngine(ctx, dsn, n)
		if err != nil {
			return err
		}
		results = append(results, rs...)
	}
	fmt.Printf("\nPlanwerk lists as sheets: %d time entries, pages of 50000 by Link, %s, %d cores, %s\n\n", n, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| engine | format | rows | pages | time | rows/s | MB sent | peak heap growth |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %s | %d | %d | %.2f s | %.0f | %.1f | %.1f MiB |\n", r.engine, r.format, r.rows, r.pages,
			r.took.Seconds(), float64(r.rows)/r.took.Seconds(), float64(r.bytes)/1e6, float64(r.peakHeap)/(1<<20))
	}
	return nil
}

func sheetsEngine(ctx context.Context, dsn string, n int) ([]sheetsResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, nil)
	if err != nil {
		return nil, err
	}
	defer stop()
	tn, admin, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	if err := seedSheetEntries(ctx, svc.DB, tn.ID, admin.ID, n); err != nil {
		return nil, err
	}
	engine := svc.DB.Engine()
	fmt.Printf("%s: %d time entries seeded in %.1f s\n", engine, n, time.Since(start).Seconds())
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}}
	token, err := login(client, srv.URL)
	if err != nil {
		return nil, err
	}
	var out []sheetsResult
	for _, f := range sheetsFormats {
		r := sheetsResult{engine: engine, format: f.name}
		stopSampling := sampleHeap()
		start := time.Now()
		path := "/v1/time-entries?limit=50000"
		for path != "" {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
			req.Header.Set("companyurl", "bench")
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Accept", f.accept)
			req.Header.Set("Accept-Encoding", f.encoding)
			resp, err := client.Do(req)
			if err != nil {
				stopSampling()
				return nil, err
			}
			lines := &lineCounter{}
			nb, err := io.Copy(lines, resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				stopSampling()
				return nil, fmt.Errorf("GET %s as %s: %d after %d bytes: %v", path, f.name, resp.StatusCode, nb, err)
			}
			r.bytes += nb
			r.pages++
			if f.name == "CSV" {
				r.rows += lines.n - 1 // the header
			}
			path = ""
			if link := resp.Header.Get("Link"); link != "" {
				u, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`))
				if err != nil {
					stopSampling()
					return nil, err
				}
				path = u.RequestURI()
			}
		}
		r.took = time.Since(start)
		r.peakHeap = stopSampling()
		if f.name != "CSV" {
			r.rows = n // counted in the plain CSV's lines
		} else if r.rows != n {
			return nil, fmt.Errorf("the CSV has %d rows for %d entries", r.rows, n)
		}
		fmt.Printf("%s: %s: %d rows in %.2f s\n", engine, f.name, r.rows, r.took.Seconds())
		out = append(out, r)
	}
	return out, nil
}

// lineCounter counts the line ends written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// seedSheetEntries inserts n WORK time entries of one user over 40
// projects and the days from 2020 on, each with notes, in transactions
// of 10,000.
func seedSheetEntries(ctx context.Context, db *store.DB, tenantID, userID int64, n int) error {
	var projects []int64
	err := db.Tx(ctx, func(q store.Querier) error {
		docs := make([]map[string]any, 40)
		for i := range docs {
			docs[i] = map[string]any{"name": fmt.Sprintf("Project %d", i)}
		}
		var err error
		projects, err = db.InsertRecords(ctx, q, tenantID, store.Collection{Table: "records", Resource: "projects"}, docs)
		return err
	})
	if err != nil {
		return err
	}
	first := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	for done := 0; done < n; {
		batch := min(10000, n-done)
		docs := make([]map[string]any, batch)
		for i := range docs {
			k := done + i
			docs[i] = map[string]any{"user": userID, "trackingType": "WORK", "project": projects[k%len(projects)],
				"day": first.AddDate(0, 0, k/200).Format(time.DateOnly), "duration": 900 * (1 + k%16), "sorting": k%8 + 1,
				"notes": fmt.Sprintf("entry %d: review, fixes and a call", k)}
		}
		err := db.Tx(ctx, func(q store.Querier) error {
			_, err := db.InsertRecords(ctx, q, tenantID, store.Collection{Table: "records", Resource: "time-entries"}, docs)
			return err
		})
		if err != nil {
			return err
		}
		done += batch
	}
	return nil
}
