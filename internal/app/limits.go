package app

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/config"
	"planwerk/internal/ratelimit"
)

// newLimiters returns the factory of rate counters: in this process, or
// in Redis, shared by all instances.
func (svc *Service) newLimiters(ctx context.Context, cfg config.Config, _ *slog.Logger) (func(name string, rule ratelimit.Rule) ratelimit.Limiter, error) {
	limiter := func(name string, rule ratelimit.Rule) ratelimit.Limiter { return ratelimit.NewMemory(rule) }
	if cfg.Redis != "" {
		opts, err := redis.ParseURL(cfg.Redis)
		if err != nil {
			return nil, fmt.Errorf("--redis: %w", err)
		}
		svc.redis = redis.NewClient(opts)
		if err := svc.redis.Ping(ctx).Err(); err != nil {
			svc.redis.Close()
			return nil, fmt.Errorf("redis: %w", err)
		}
		limiter = func(name string, rule ratelimit.Rule) ratelimit.Limiter {
			return ratelimit.NewRedis(svc.redis, name, rule)
		}
	}
	return limiter, nil
}
