package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/tracing"
)

func runServe(ctx context.Context, args []string, stdio IO) error {
	cfg := config.Default()
	fs := newFlags("serve", &cfg, stdio, config.All...)
	demo := fs.Bool("demo", false, "create tenant demo with admin admin@demo.test / demo-password if missing, listen on 127.0.0.1 unless --addr names a host")
	if err := parse(fs, args, stdio); err != nil {
		return err
	}
	if *demo {
		cfg.Addr = demoAddr(cfg.Addr)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	log := slog.New(slog.NewJSONHandler(stdio.Stderr, nil))
	stopTracing, err := tracing.Setup(ctx, versionString())
	if err != nil {
		return err
	}
	defer func() {
		// The spans not yet sent go now, or are given up.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := stopTracing(ctx); err != nil {
			log.Warn("tracing: the last spans were not sent", "err", err)
		}
	}()
	edge, err := prepareEdge(ctx, cfg, log)
	if err != nil {
		return err
	}
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	edge.useDatabase(db)
	svc, err := NewService(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	listening := func(net.Addr) {}
	if *demo {
		if err := seedDemo(ctx, svc); err != nil {
			return err
		}
		listening = func(a net.Addr) { printDemo(stdio, a, cfg.TLS) }
	}
	svc.Start()
	return serveHTTP(ctx, svc, log, listening, edge)
}

// serveHTTP serves until ctx ends (SIGTERM), then shuts down gracefully:
// no new connections, requests in flight get the grace period, and what
// is still running then is cut, waited for while it cleans up, and the
// command ends without an error. listening is told the address once the
// main listener is open. edge says whether it speaks HTTPS (tls.go).
func serveHTTP(ctx context.Context, svc *Service, log *slog.Logger, listening func(net.Addr), edge *edge) error {
	cfg := svc.Config
	// Requests run on a context of their own that SIGTERM does not end:
	// the grace period is theirs. It ends when the grace period does.
	base, cut := context.WithCancel(context.WithoutCancel(ctx))
	defer cut()
	srv := svc.Handler.HTTPServer(base)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	servers := []*http.Server{srv}
	errc := make(chan error, 3)
	go func() { errc <- edge.serve(srv, svc.Handler.Listener(ln)) }()
	psrv, pln, err := edge.plain(ln.Addr())
	if err != nil {
		ln.Close()
		return err
	}
	if psrv != nil {
		servers = append(servers, psrv)
		go func() { errc <- psrv.Serve(pln) }()
		log.Info("plain HTTP listening: ACME's challenge, and redirects to HTTPS", "addr", pln.Addr().String())
	}
	if cfg.MetricsAddr != "" {
		mln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			ln.Close()
			if pln != nil {
				pln.Close()
			}
			return fmt.Errorf("listen for metrics: %w", err)
		}
		msrv := &http.Server{Handler: svc.Metrics.Handler(), ReadHeaderTimeout: 10 * time.Second,
			ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(mln) }()
		log.Info("metrics listening", "addr", mln.Addr().String())
	}
	log.Info("planwerk listening", "addr", ln.Addr().String(), "https", edge.tls != nil, "database", svc.DB.Engine(), "version", versionString())
	listening(ln.Addr())
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	log.Info("shutting down", "grace", cfg.ShutdownGrace.String())
	graceCtx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownGrace)
	defer cancel()
	for _, s := range servers[1:] {
		_ = s.Close()
	}
	if err := srv.Shutdown(graceCtx); err != nil {
		log.Warn("grace period over: cutting the requests still in flight")
		cut()
		_ = srv.Close()
		// Cut handlers still remove their temporary files and abort their
		// incomplete uploads; give them a moment to.
		waitCtx, cancelWait := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancelWait()
		if err := svc.Handler.Wait(waitCtx); err != nil {
			log.Warn("requests still running after the grace period", "err", err)
		}
	}
	log.Info("stopped")
	return nil
}

// purgeBudget bounds each purge of a run; what one leaves goes at the next
// run (the purges delete in short batches, so stopping is harmless).
const purgeBudget = 20 * time.Second

// sweepFiles removes files left behind by crashes; files younger than an
// hour are never touched.
func sweepFiles(ctx context.Context, svc *Service, log *slog.Logger) error {
	// A run that hangs on a frozen store ends, and the next one tries again.
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	n, err := svc.Uploads.Sweep(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		return fmt.Errorf("sweep files: %w", err)
	}
	if n > 0 {
		log.Info("swept files", "removed", n)
	}
	return nil
}

// purgeExpired deletes long-expired tokens, expired idempotency keys,
// changes older than the feed keeps and deliveries beyond each webhook's
// log, within purgeBudget each. One failing does not keep the others
// from running; the error names every one that failed.
func purgeExpired(ctx context.Context, svc *Service, changeRetention time.Duration, log *slog.Logger) error {
	db := svc.DB
	var failed []error
	purge := func(what string, fn func(ctx context.Context) (int64, error)) {
		runCtx, cancel := context.WithTimeout(ctx, purgeBudget)
		defer cancel()
		n, err := fn(runCtx)
		switch {
		case err != nil:
			failed = append(failed, fmt.Errorf("purge %s: %w", what, err))
		case n > 0:
			log.Info("purged "+what, "removed", n)
		}
	}
	t := newTables(db)
	purge("expired tokens", func(ctx context.Context) (int64, error) {
		return 0, t.auth.PurgeExpiredTokens(ctx, time.Now().Add(-24*time.Hour))
	})
	purge("expired idempotency keys", func(ctx context.Context) (int64, error) {
		return t.idempotency.PurgeExpired(ctx, time.Now())
	})
	purge("old changes", func(ctx context.Context) (int64, error) {
		return 0, db.PurgeChanges(ctx, time.Now().Add(-changeRetention))
	})
	purge("webhook deliveries", func(ctx context.Context) (int64, error) {
		return 0, svc.Webhooks.PurgeDeliveries(ctx)
	})
	return errors.Join(failed...)
}
