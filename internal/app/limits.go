package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/extra/redisotel/v9"

	"planwerk/internal/config"
	"planwerk/internal/ratelimit"
	"planwerk/internal/tracing"
)

// newLimiters returns the factory of rate counters: in this process, or
// in Redis, shared by all instances, while Redis answers in time. Redis
// being down at start-up is logged, not fatal: limits count per instance
// until it answers.
func (svc *Service) newLimiters(ctx context.Context, cfg config.Config, log *slog.Logger) (func(name string, rule ratelimit.Rule) ratelimit.Limiter, error) {
	if cfg.Redis == "" {
		return func(_ string, rule ratelimit.Rule) ratelimit.Limiter { return ratelimit.NewMemory(rule) }, nil
	}
	client, err := ratelimit.NewClient(cfg.Redis)
	if err != nil {
		return nil, fmt.Errorf("--redis: %w", err)
	}
	svc.redis = client
	if tracing.Enabled() {
		// Commands are spans without their arguments: the keys name
		// accounts and addresses.
		if err := redisotel.InstrumentTracing(client, redisotel.WithDBStatement(false), redisotel.WithCallerEnabled(false)); err != nil {
			return nil, fmt.Errorf("tracing Redis: %w", err)
		}
	}
	breaker := ratelimit.NewBreaker(client, ratelimit.BreakerConfig{Log: log, Metrics: svc.Metrics})
	breaker.Probe(ctx) // a failure is logged by the breaker
	return func(name string, rule ratelimit.Rule) ratelimit.Limiter { return breaker.Limiter(name, rule) }, nil
}
