package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
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
	client  *redis.Client
	limiter *redis_rate.Limiter
	rule    Rule
	limit   redis_rate.Limit
	prefix  string
}

// NewRedis returns a Limiter for rule on the Redis client; prefix keeps
// the keys of different rules apart.
func NewRedis(client *redis.Client, prefix string, rule Rule) *Redis {
	return &Redis{
		client:  client,
		limiter: redis_rate.NewLimiter(client),
		rule:    rule,
		limit:   redis_rate.Limit{Rate: 1, Burst: rule.Burst, Period: rule.Every},
		prefix:  "planwerk:rate:" + prefix + ":",
	}
}

// Take implements Limiter. redis_rate reports how long the key takes to
// refill completely (ResetAfter); the State follows from it as from the
// in-process count's tokens.
func (l *Redis) Take(ctx context.Context, key string) (Decision, error) {
	if l.rule.Every <= 0 {
		return Decision{State: l.rule.state(0)}, nil // no refill interval: nothing to limit
	}
	res, err := l.limiter.AllowN(ctx, l.key(key), l.limit, 1)
	if err != nil {
		return Decision{}, fmt.Errorf("rate limit: %w", err)
	}
	s := l.rule.state(res.ResetAfter)
	if res.Allowed > 0 {
		return Decision{State: s}, nil
	}
	wait := res.RetryAfter
	if wait <= 0 {
		wait = time.Second
	}
	s.Remaining, s.Reset = 0, wait
	return Decision{State: s, Wait: wait}, nil
}

// Reset implements Limiter.
func (l *Redis) Reset(ctx context.Context, key string) (State, error) {
	if err := l.limiter.Reset(ctx, l.key(key)); err != nil {
		return State{}, fmt.Errorf("rate limit: %w", err)
	}
	return l.rule.state(0), nil
}

// refundScript gives back one event on a key that redis_rate's GCRA
// script keeps, in its representation: the theoretical arrival time (TAT)
// in seconds since 2017-01-01 by Redis's clock, as a number. redis_rate
// cannot do this with a cost of -1: its script only writes when the key
// stays in use, so a refund that empties the bucket would leave the old
// TAT in place. A TAT at or before now is a full bucket, so the key goes.
//
// It answers, as redis_rate's ResetAfter, the seconds until the key is
// full again ("0" when it is).
//
// KEYS[1]: the key; ARGV[1]: the emission interval in seconds.
var refundScript = redis.NewScript(`
redis.replicate_commands()
local tat = redis.call("GET", KEYS[1])
if not tat then
  return "0"
end
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + (t[2] / 1000000)
local new_tat = math.max(tonumber(tat), now) - tonumber(ARGV[1])
if new_tat <= now then
  redis.call("DEL", KEYS[1])
  return "0"
end
redis.call("SET", KEYS[1], new_tat, "EX", math.ceil(new_tat - now))
return tostring(new_tat - now)
`)

// freshScript answers 1 when a key of redis_rate's script is a full
// bucket: absent, or with a TAT that is not after now. It reads Redis's
// clock, as the writer does, so that the instances' clocks do not matter.
var freshScript = redis.NewScript(`
local tat = redis.call("GET", KEYS[1])
if not tat then
  return 1
end
local t = redis.call("TIME")
local now = (t[1] - 1483228800) + (t[2] / 1000000)
if tonumber(tat) <= now then
  return 1
end
return 0
`)

// Refund implements Limiter.
func (l *Redis) Refund(ctx context.Context, key string) (State, error) {
	if l.limit.Period <= 0 {
		return l.rule.state(0), nil // no refill interval: Take counted nothing
	}
	interval := strconv.FormatFloat(l.limit.Period.Seconds()/float64(l.limit.Rate), 'f', -1, 64)
	left, err := refundScript.Run(ctx, l.client, []string{l.storedKey(key)}, interval).Text()
	if err != nil {
		return State{}, fmt.Errorf("rate limit refund: %w", err)
	}
	secs, err := strconv.ParseFloat(left, 64)
	if err != nil {
		return State{}, fmt.Errorf("rate limit refund: %q: %w", left, err)
	}
	return l.rule.state(time.Duration(secs * float64(time.Second))), nil
}

// Fresh implements Limiter.
func (l *Redis) Fresh(ctx context.Context, key string) (bool, error) {
	n, err := freshScript.Run(ctx, l.client, []string{l.storedKey(key)}).Int()
	if err != nil {
		return false, fmt.Errorf("rate limit fresh: %w", err)
	}
	return n == 1, nil
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

// storedKey is the key under which redis_rate keeps key's count: it puts
// a prefix of its own before the key it is given.
func (l *Redis) storedKey(key string) string {
	return "rate:" + l.key(key)
}
