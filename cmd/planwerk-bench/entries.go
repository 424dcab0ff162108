package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// runEntries measures time entry creation: WORK entries, which lock and
// look up their project day's approval, and WORKTIME entries, which do not.
func runEntries(ctx context.Context, pgURL string, d time.Duration) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	fmt.Printf("\nPlanwerk time entry benchmark: 8 concurrent clients, %s each, %s, %d cores\n\n", d, runtime.Version(), runtime.NumCPU())
	fmt.Println("| engine | WORK entries/s (approved-day check) | WORKTIME entries/s (no check) | ratio | errors |")
	fmt.Println("|---|---|---|---|---|")
	for _, dsn := range dsns {
		engine, work, worktime, errs, err := benchEntries(ctx, dsn, d)
		if err != nil {
			return err
		}
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %d |\n", engine, work, worktime, work/worktime, errs)
	}
	return nil
}

func benchEntries(ctx context.Context, dsn string, d time.Duration) (string, float64, float64, int64, error) {
	cfg := config.Default()
	cfg.Database = dsn
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return "", 0, 0, 0, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return "", 0, 0, 0, err
	}
	cfg.Files = filepath.Join(os.TempDir(), "planwerk-bench-files-"+db.Engine())
	defer os.RemoveAll(cfg.Files)
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return "", 0, 0, 0, err
	}
	defer svc.Close()
	if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"}); err != nil {
		return "", 0, 0, 0, err
	}
	srv := serve(svc)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token, err := login(client, srv.URL)
	if err != nil {
		return "", 0, 0, 0, err
	}
	post := func(path, body string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	_, p := post("/v1/projects", `{"name":"P"}`)
	_, t := post("/v1/tasks", `{"name":"T"}`)
	projectID, taskID := idOf(p), idOf(t)
	var errs atomic.Int64
	drive := func(body func(i int) string) float64 {
		var n atomic.Int64
		var wg sync.WaitGroup
		deadline := time.Now().Add(d)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := w; time.Now().Before(deadline); i += 8 {
					if code, _ := post("/v1/time-entries", body(i)); code != 201 {
						errs.Add(1)
					}
					n.Add(1)
				}
			}(w)
		}
		wg.Wait()
		return float64(n.Load()) / d.Seconds()
	}
	day := func(i int) string {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i%365).Format(time.DateOnly)
	}
	work := drive(func(i int) string {
		return fmt.Sprintf(`{"trackingType":"WORK","project":%s,"task":%s,"day":"%s","duration":3600,"sorting":1}`, projectID, taskID, day(i))
	})
	worktime := drive(func(i int) string {
		dd := day(i)
		return fmt.Sprintf(`{"trackingType":"WORKTIME","day":"%s","startTime":"%sT08:00:00.000Z","endTime":"%sT16:00:00.000Z"}`, dd, dd, dd)
	})
	return db.Engine(), work, worktime, errs.Load(), nil
}

func idOf(body string) string {
	const key = `"id":`
	i := strings.Index(body, key)
	if i < 0 {
		return "0"
	}
	rest := body[i+len(key):]
	end := strings.IndexAny(rest, ",}")
	return strings.TrimSpace(rest[:end])
}
