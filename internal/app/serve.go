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
	"planwerk/internal/store"
)

func runServe(ctx context.Context, args []string, stdio IO) error {
	cfg := config.Default()
	fs := newFlags("serve", &cfg, stdio)
	demo := fs.Bool("demo", false, "create tenant demo with admin admin@demo.test / demo-password if missing")
	if err := parse(fs, args, stdio); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	log := slog.New(slog.NewJSONHandler(stdio.Stderr, nil))
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	svc, err := NewService(ctx, cfg, db, log)
	if err != nil {
		return err
	}
	defer svc.Close()
	if *demo {
		if err := seedDemo(ctx, svc, stdio, cfg.Addr); err != nil {
			return err
		}
	}
	go purgeTokens(ctx, db, log)
	go sweepFiles(ctx, svc, log)

	srv := &http.Server{
		Addr:              cfg.Addr,
		Handler:           svc.Handler,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	log.Info("planwerk listening", "addr", ln.Addr().String(), "database", db.Engine(), "version", versionString())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Stop accepting, let in-flight requests finish.
	log.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("stopped")
	return nil
}

// sweepFiles removes files left behind by crashes, hourly; files younger
// than an hour are never touched.
func sweepFiles(ctx context.Context, svc *Service, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		n, err := svc.Uploads.Sweep(ctx, time.Hour)
		if err != nil && ctx.Err() == nil {
			log.Warn("sweep files", "err", err)
		} else if n > 0 {
			log.Info("swept files", "removed", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// purgeTokens deletes long-expired tokens once an hour.
func purgeTokens(ctx context.Context, db *store.DB, log *slog.Logger) {
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := db.PurgeExpiredTokens(ctx, time.Now().Add(-24*time.Hour)); err != nil {
				log.Warn("purge expired tokens", "err", err)
			}
		}
	}
}
