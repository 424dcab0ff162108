package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Redis is a Limiter whose counters live in Redis, shared by every
// instance of the service (GCRA, as redis_rate implements it).
type Redis struct {
	limiter *redis_rate.Limiter
	limit   redis_rate.Limit
	prefix  string
}

// NewRedis returns a Limiter for rule on the Redis client; prefix keeps
// the keys of different rules apart.
func NewRedis(client *redis.Client, prefix string, rule Rule) *Redis {
	return &Redis{
		limiter: redis_rate.NewLimiter(client),
		limit:   redis_rate.Limit{Rate: 1, Burst: rule.Burst, Period: rule.Every},
		prefix:  "planwerk:rate:" + prefix + ":",
	}
}

// Take implements Limiter.
func (l *Redis) Take(ctx context.Context, key string) (time.Duration, error) {
	res, err := l.limiter.AllowN(ctx, l.prefix+key, l.limit, 1)
	if err != nil {
		return 0, fmt.Errorf("rate limit: %w", err)
	}
	if res.Allowed > 0 {
		return 0, nil
	}
	if res.RetryAfter <= 0 {
		return time.Second, nil
	}
	return res.RetryAfter, nil
}

// Reset implements Limiter.
func (l *Redis) Reset(ctx context.Context, key string) error {
	if err := l.limiter.Reset(ctx, l.prefix+key); err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	return nil
}
