package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defaults of BreakerConfig.
const (
	// CallTimeout is how long a limiter waits for Redis before it counts
	// in the process instead: Redis is an accelerator, and a request must
	// not wait on it for longer than that.
	CallTimeout = 100 * time.Millisecond
	// Cooldown is how long limiters skip Redis after it failed or answered
	// late, so that a frozen Redis costs one timeout per cool-down rather
	// than one per request.
	Cooldown = 2 * time.Second
	// WarmUpTimeout bounds the first call of a probe, which may have to
	// dial and greet Redis before the probe measures it.
	WarmUpTimeout = time.Second
)

// Metrics receives a Breaker's observations; *metrics.Metrics implements
// it (and may be nil).
type Metrics interface {
	// RedisUp says whether Redis answers in time.
	RedisUp(up bool)
	// RateLimitFallback counts one event of the named limit counted in
	// the process because Redis was unavailable.
	RateLimitFallback(limit string)
}

type noMetrics struct{}

func (noMetrics) RedisUp(bool)             {}
func (noMetrics) RateLimitFallback(string) {}

// BreakerConfig tunes a Breaker; zero fields take the defaults above.
type BreakerConfig struct {
	Timeout  time.Duration
	Cooldown time.Duration
	Log      *slog.Logger // nil: nothing is logged
	Metrics  Metrics      // nil: nothing is measured
}

// Breaker watches one Redis for every limiter that uses it. While Redis
// answers within the timeout, the limiters count there, shared by all
// instances. After a failure or a late answer they count in the process:
// for a cool-down Redis is not asked at all, then a probe in the
// background checks it, and shared counting resumes once it answers in
// time again. Callers never see Redis's errors.
type Breaker struct {
	client   *redis.Client
	timeout  time.Duration
	cooldown time.Duration
	log      *slog.Logger
	metrics  Metrics
	now      func() time.Time

	mu      sync.Mutex
	up      bool
	probing bool
	retryAt time.Time // while down: the earliest moment of the next probe
}

// NewBreaker returns a Breaker for client, which starts out trusting
// Redis; call Probe to check it first.
func NewBreaker(client *redis.Client, cfg BreakerConfig) *Breaker {
	b := &Breaker{client: client, timeout: cfg.Timeout, cooldown: cfg.Cooldown,
		log: cfg.Log, metrics: cfg.Metrics, now: time.Now, up: true}
	if b.timeout <= 0 {
		b.timeout = CallTimeout
	}
	if b.cooldown <= 0 {
		b.cooldown = Cooldown
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.metrics == nil {
		b.metrics = noMetrics{}
	}
	return b
}

// Limiter returns a Limiter for rule named name (which keeps its Redis
// keys apart from other rules' and labels its metrics). It never returns
// an error.
func (b *Breaker) Limiter(name string, rule Rule) *Fallback {
	return &Fallback{name: name, breaker: b,
		shared: NewRedis(b.client, name, rule), local: NewMemory(rule)}
}

// Up reports whether limiters count in Redis at the moment.
func (b *Breaker) Up() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.up
}

// Probe checks now whether Redis answers in time, as at start-up, and
// returns what it found. It waits at most WarmUpTimeout plus the timeout.
func (b *Breaker) Probe(ctx context.Context) bool {
	b.mu.Lock()
	b.probing = true
	b.mu.Unlock()
	err := b.ping(ctx)
	b.finish(true, err)
	return err == nil
}

// ping greets Redis once without a tight deadline, so that a connection
// that has to be dialled first does not count as slow, then checks that it
// answers within the timeout.
func (b *Breaker) ping(ctx context.Context) error {
	warm, cancel := context.WithTimeout(ctx, WarmUpTimeout)
	defer cancel()
	if err := b.client.Ping(warm).Err(); err != nil {
		return fmt.Errorf("redis ping: %w", err)
	}
	timed, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	if err := b.client.Ping(timed).Err(); err != nil {
		return fmt.Errorf("redis ping within %s: %w", b.timeout, err)
	}
	return nil
}

// call runs fn against Redis within the timeout and reports whether it
// succeeded; false means that the caller counts in the process. While
// Redis is down it does not run fn, and starts a probe when the cool-down
// is over.
func (b *Breaker) call(ctx context.Context, fn func(context.Context) error) bool {
	if !b.admit() {
		b.metrics.RedisUp(false)
		return false
	}
	// Detached from the caller's cancellation: a client that gave up must
	// not make Redis look unavailable.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.timeout)
	defer cancel()
	err := fn(ctx)
	b.finish(false, err)
	return err == nil
}

// admit reports whether a call may ask Redis: always while it is up;
// while it is down never, but the first call after the cool-down starts a
// probe in the background (one at a time), so that no request waits on a
// Redis known to be unavailable.
func (b *Breaker) admit() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.up {
		return true
	}
	if !b.probing && !b.now().Before(b.retryAt) {
		b.probing = true
		go b.backgroundProbe()
	}
	return false
}

func (b *Breaker) backgroundProbe() {
	b.finish(true, b.ping(context.Background()))
}

// finish records the outcome of a call or probe. Only a probe brings
// Redis back: a call that was admitted before Redis failed and answers
// afterwards proves nothing about Redis now.
func (b *Breaker) finish(probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.metrics.RedisUp(err == nil && (b.up || probe))
	if probe {
		b.probing = false
	}
	switch {
	case err != nil:
		b.retryAt = b.now().Add(b.cooldown)
		if b.up {
			b.up = false
			b.log.Warn("redis unavailable: rate limits count per instance", "err", err, "retry_in", b.cooldown.String())
		}
	case probe && !b.up:
		b.up = true
		b.log.Info("redis answers again: rate limits are shared across instances")
	}
}

// Fallback is a Limiter that counts in Redis while its Breaker lets it
// and in the process otherwise. It never returns an error: Redis is an
// accelerator, not a dependency.
type Fallback struct {
	name    string
	breaker *Breaker
	shared  *Redis
	local   *Memory
}

// Take implements Limiter.
func (f *Fallback) Take(ctx context.Context, key string) (Decision, error) {
	var d Decision
	if f.breaker.call(ctx, func(ctx context.Context) (err error) {
		d, err = f.shared.Take(ctx, key)
		return err
	}) {
		return d, nil
	}
	f.breaker.metrics.RateLimitFallback(f.name)
	return f.local.Take(ctx, key)
}

// Reset implements Limiter. The key is forgotten in the process too: a
// count left there from an outage would otherwise still apply during the
// next one. When Redis is unavailable its count stays until it expires;
// the state reported is then the process's.
func (f *Fallback) Reset(ctx context.Context, key string) (State, error) {
	s, _ := f.local.Reset(ctx, key) // never fails
	f.breaker.call(ctx, func(ctx context.Context) (err error) {
		_, err = f.shared.Reset(ctx, key)
		return err
	})
	return s, nil
}

// Refund implements Limiter. Like Reset, it gives back in the process too,
// since the event may have been counted there during an outage; when
// Redis is unavailable its count stays until it refills. The state is
// Redis's while it answers, the process's otherwise, as for Take.
func (f *Fallback) Refund(ctx context.Context, key string) (State, error) {
	local, _ := f.local.Refund(ctx, key) // never fails
	var shared State
	if f.breaker.call(ctx, func(ctx context.Context) (err error) {
		shared, err = f.shared.Refund(ctx, key)
		return err
	}) {
		return shared, nil
	}
	return local, nil
}

// Fresh implements Limiter: Redis's answer while it is available, the
// process's otherwise.
func (f *Fallback) Fresh(ctx context.Context, key string) (bool, error) {
	var fresh bool
	if f.breaker.call(ctx, func(ctx context.Context) (err error) {
		fresh, err = f.shared.Fresh(ctx, key)
		return err
	}) {
		return fresh, nil
	}
	return f.local.Fresh(ctx, key)
}
