package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/noisy"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// serve runs the service as `planwerk serve` does: its timeouts and its
// idle-write listener, on loopback.
// startService opens and migrates dsn, builds the service on it (mod may
// change the configuration) and serves it; stop undoes all of it.
func startService(ctx context.Context, dsn string, mod func(*config.Config)) (svc *app.Service, srv *httptest.Server, stop func(), err error) {
	return startServiceWith(ctx, dsn, store.DefaultOptions(), mod)
}

// startServiceWith is startService on a database opened with opts.
func startServiceWith(ctx context.Context, dsn string, opts store.Options, mod func(*config.Config)) (svc *app.Service, srv *httptest.Server, stop func(), err error) {
	cfg := config.Default()
	cfg.Database = dsn
	if mod != nil {
		mod(&cfg)
	}
	db, err := store.OpenWith(ctx, dsn, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.Close()
		return nil, nil, nil, err
	}
	cfg.Files = filepath.Join(os.TempDir(), "planwerk-bench-files-"+db.Engine())
	svc, err = app.NewService(ctx, cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		db.Close()
		os.RemoveAll(cfg.Files)
		return nil, nil, nil, err
	}
	srv = serve(svc)
	return svc, srv, func() {
		srv.Close()
		svc.Close()
		db.Close()
		os.RemoveAll(cfg.Files)
	}, nil
}

func serve(svc *app.Service) *httptest.Server {
	srv := httptest.NewUnstartedServer(svc.Handler)
	srv.Config = svc.Handler.HTTPServer(context.Background())
	srv.Listener = svc.Handler.Listener(srv.Listener)
	srv.Start()
	return srv
}

// noisyResult is a quiet tenant's latencies without and beside a noisy one.
type noisyResult struct {
	engine      string
	quiet, loud noisy.Sample
	noise       int64
	seconds     float64
	failures    int
	readyzWorst time.Duration
}

// runNoisy measures tenant "calm" alone and beside tenant "loud", whose
// member runs slow readers of a 19 MB list, expands references to 1 MiB
// records, runs the most expensive filters allowed and writes.
func runNoisy(ctx context.Context, pgURL string, n int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []noisyResult
	for _, dsn := range dsns {
		r, err := noisyEngine(ctx, dsn, n)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk noisy-neighbour benchmark: %d requests of the quiet tenant each way, %s, %d cores, %s\n\n",
		n, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| engine | quiet p50 | quiet p99 | beside the noise p50 | p99 | p99 ratio | /readyz worst | noisy requests | failures |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		qp99, lp99 := r.quiet.Percentile(0.99), r.loud.Percentile(0.99)
		fmt.Printf("| %s | %s | %s | %s | %s | %.1f | %s | %d in %.1f s | %d |\n", r.engine,
			ms(r.quiet.Percentile(0.5)), ms(qp99), ms(r.loud.Percentile(0.5)), ms(lp99), a2b(lp99, qp99),
			ms(r.readyzWorst), r.noise, r.seconds, r.failures)
	}
	fmt.Printf("\npeak resident memory of this process (server and all clients): %s\n", peakRSS())
	return nil
}

func noisyEngine(ctx context.Context, dsn string, n int) (noisyResult, error) {
	cfg := config.Default()
	cfg.Database = dsn
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return noisyResult{}, err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return noisyResult{}, err
	}
	cfg.Files = filepath.Join(os.TempDir(), "planwerk-bench-files-"+db.Engine())
	defer os.RemoveAll(cfg.Files)
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.DiscardHandler))
	if err != nil {
		return noisyResult{}, err
	}
	defer svc.Close()
	loud, loudAdmin, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "loud", AdminEmail: "admin@loud.test", AdminPassword: "loud-password"})
	if err != nil {
		return noisyResult{}, err
	}
	calm, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "calm", AdminEmail: "admin@calm.test", AdminPassword: "calm-password"})
	if err != nil {
		return noisyResult{}, err
	}
	if err := noisy.Seed(ctx, db, loud.ID, calm.ID, loudAdmin.ID); err != nil {
		return noisyResult{}, err
	}
	srv := serve(svc)
	defer srv.Close()
	attacker, err := token(srv.URL, "loud")
	if err != nil {
		return noisyResult{}, err
	}
	victim, err := token(srv.URL, "calm")
	if err != nil {
		return noisyResult{}, err
	}
	const limit = time.Minute
	noisy.Measure(ctx, srv.URL, victim, 50, limit)
	r := noisyResult{engine: db.Engine()}
	r.quiet = noisy.Measure(ctx, srv.URL, victim, n, limit)
	attack, err := noisy.Start(srv.URL, attacker, noisy.Options{SlowReaders: 12, Populate: 2, Filters: 2, Writers: 2, Reports: 4})
	if err != nil {
		return r, err
	}
	for attack.Requests() < 6 && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	start, before := time.Now(), attack.Requests()
	r.loud = noisy.Measure(ctx, srv.URL, victim, n, limit)
	r.seconds = time.Since(start).Seconds()
	r.noise = attack.Requests() - before
	attack.Stop()
	r.failures = len(r.quiet.Failures) + len(r.loud.Failures)
	for _, f := range append(r.quiet.Failures, r.loud.Failures...) {
		fmt.Fprintln(os.Stderr, "quiet tenant:", f)
	}
	if len(r.loud.Ready) > 0 {
		r.readyzWorst = r.loud.Ready[len(r.loud.Ready)-1]
	}
	return r, nil
}

// token signs in the admin of tenant slug (password SLUG-password).
func token(base, slug string) (noisy.Tenant, error) {
	tok, err := signIn(http.DefaultClient, base, slug, "admin@"+slug+".test", slug+"-password")
	return noisy.Tenant{Slug: slug, Token: tok}, err
}
