package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// Timeouts of the Redis client. Limiter calls carry a tighter deadline of
// their own (CallTimeout); these bound whatever has none, so that no call
// can hang on a Redis that stopped answering.
const (
	dialTimeout = time.Second
	ioTimeout   = time.Second
	poolTimeout = time.Second
)

// NewClient returns a Redis client for a redis:// or rediss:// URL whose
// calls all end: dial, read, write and waits for a pooled connection have
// timeouts (the URL may set its own), and context deadlines cut calls
// short. A failed dial is not retried in the client: the caller decides
// (Breaker counts in the process meanwhile).
func NewClient(rawURL string) (*redis.Client, error) {
	opts, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("redis URL: %w", err)
	}
	opts.DialTimeout = orDefault(opts.DialTimeout, dialTimeout)
	opts.ReadTimeout = orDefault(opts.ReadTimeout, ioTimeout)
	opts.WriteTimeout = orDefault(opts.WriteTimeout, ioTimeout)
	opts.PoolTimeout = orDefault(opts.PoolTimeout, poolTimeout)
	opts.ContextTimeoutEnabled = true
	opts.DialerRetries = 1
	if opts.MaxRetries == 0 {
		// One retry: a pooled connection may be stale after Redis restarted.
		opts.MaxRetries = 1
	}
	return redis.NewClient(opts), nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// Redis is a Limiter whose counters live in Redis, shared by every
// instance of the service (GCRA, as redis_rate implements it). It waits
// as long as ctx allows; Fallback bounds that wait.
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
	res, err := l.limiter.AllowN(ctx, l.key(key), l.limit, 1)
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
	if err := l.limiter.Reset(ctx, l.key(key)); err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	return nil
}

// maxKeyLen is the longest key stored as it is; longer ones are stored as
// a digest, so that a key's size in Redis is bounded whatever the client
// sent.
const maxKeyLen = 64

// key is the Redis key of a limiter key.
func (l *Redis) key(key string) string {
	if len(key) <= maxKeyLen {
		return l.prefix + key
	}
	sum := sha256.Sum256([]byte(key))
	return l.prefix + "sha256:" + base64.RawURLEncoding.EncodeToString(sum[:])
}
