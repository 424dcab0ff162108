package ratelimit_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http/httptest"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"
	"weak"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/metrics"
	"planwerk/internal/ratelimit"
	"planwerk/internal/testenv"
)

// clock is a clock that moves only when told.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func take(t *testing.T, l ratelimit.Limiter, key string) time.Duration {
	t.Helper()
	return decide(t, l, key).Wait
}

func decide(t *testing.T, l ratelimit.Limiter, key string) ratelimit.Decision {
	t.Helper()
	d, err := l.Take(context.Background(), key)
	if err != nil {
		t.Fatalf("take %.20q: %v", key, err)
	}
	return d
}

// TestMemoryRule: Burst events pass at once, then one per Every; Reset
// forgets a key; keys do not share buckets.
func TestMemoryRule(t *testing.T) {
	t.Parallel()
	c := newClock()
	m := ratelimit.NewMemory(ratelimit.Rule{Burst: 3, Every: time.Minute})
	m.SetClock(c.Now)
	for i := range 3 {
		if wait := take(t, m, "a"); wait != 0 {
			t.Fatalf("event %d: wait %s, want 0", i+1, wait)
		}
	}
	if wait := take(t, m, "a"); wait != time.Minute {
		t.Fatalf("fourth event: wait %s, want 1m", wait)
	}
	if wait := take(t, m, "b"); wait != 0 {
		t.Fatalf("another key: wait %s, want 0", wait)
	}
	c.Add(30 * time.Second)
	if wait := take(t, m, "a"); wait != 30*time.Second {
		t.Fatalf("half refilled: wait %s, want 30s", wait)
	}
	c.Add(30 * time.Second)
	if wait := take(t, m, "a"); wait != 0 {
		t.Fatalf("refilled: wait %s, want 0", wait)
	}
	if wait := take(t, m, "a"); wait == 0 {
		t.Fatal("one event refilled, two passed")
	}
	if _, err := m.Reset(context.Background(), "a"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if wait := take(t, m, "a"); wait != 0 {
			t.Fatalf("after reset, event %d: wait %s", i+1, wait)
		}
	}
}

// TestMemoryLongKeys: a key of 1 MB costs the Memory what a short key
// costs; it is not kept, yet counted like any other.
func TestMemoryLongKeys(t *testing.T) {
	t.Parallel()
	m := ratelimit.NewMemory(ratelimit.Rule{Burst: 2, Every: time.Hour})
	base := bytes.Repeat([]byte("x"), 1<<20)
	const n = 200
	for i := range n {
		copy(base, strconv.Itoa(i)+"@")
		key := string(base)
		take(t, m, key)
		take(t, m, key)
		if wait := take(t, m, key); wait == 0 {
			t.Fatalf("1 MB key %d: third event passed a burst of 2", i)
		}
	}
	if got := m.Len(); got != n {
		t.Fatalf("%d distinct 1 MB keys: %d entries", n, got)
	}
	// The key's bytes are collectable once Take returned: the Memory kept
	// a fixed-size digest, not the key.
	key := strings.Repeat("y", 1<<20)
	take(t, m, key)
	ref := weak.Make(unsafe.StringData(key))
	key = ""
	runtime.GC()
	if ref.Value() != nil {
		t.Fatal("the Memory still references a 1 MB key after Take")
	}
}

// TestMemoryBound: however many keys arrive, a Memory remembers at most
// its maximum; full buckets are forgotten before busy ones.
func TestMemoryBound(t *testing.T) {
	t.Parallel()
	const maxKeys = 1000
	c := newClock()
	m := ratelimit.NewMemoryWithMax(ratelimit.Rule{Burst: 1, Every: time.Minute}, maxKeys)
	m.SetClock(c.Now)
	for i := range 600 {
		take(t, m, fmt.Sprintf("old-%d", i))
	}
	c.Add(time.Hour) // the 600 old buckets are full again
	take(t, m, "busy")
	for i := range 399 {
		take(t, m, fmt.Sprintf("new-%d", i))
	}
	if got := m.Len(); got != maxKeys {
		t.Fatalf("%d entries, want %d", got, maxKeys)
	}
	take(t, m, "one-more") // the Memory is full: the full buckets go
	if got := m.Len(); got != 401 {
		t.Fatalf("after forgetting the full buckets: %d entries, want 401", got)
	}
	if wait := take(t, m, "busy"); wait == 0 {
		t.Fatal("a busy bucket was forgotten while full ones were there")
	}
	// A flood of busy keys: arbitrary ones are forgotten, the count stays.
	for i := range 100_000 {
		take(t, m, "flood-"+strconv.Itoa(i))
		if got := m.Len(); got > maxKeys {
			t.Fatalf("a flood of keys grew the Memory to %d entries, max %d", got, maxKeys)
		}
	}
}

// TestMemoryDefaultBound: NewMemory's bound under millions of keys.
func TestMemoryDefaultBound(t *testing.T) {
	t.Parallel()
	n := 2_000_000
	if raceEnabled || testing.Short() {
		n = 500_000
	}
	m := ratelimit.NewMemory(ratelimit.Rule{Burst: 5, Every: time.Minute})
	start := time.Now()
	for i := range n {
		take(t, m, "k"+strconv.Itoa(i))
		if i%1000 == 0 && m.Len() > ratelimit.MaxKeys {
			t.Fatalf("after %d keys: %d entries, max %d", i+1, m.Len(), ratelimit.MaxKeys)
		}
	}
	if got := m.Len(); got > ratelimit.MaxKeys || got < ratelimit.MaxKeys/2 {
		t.Fatalf("%d distinct keys: %d entries, want at most %d (and most of them)", n, got, ratelimit.MaxKeys)
	}
	t.Logf("%d keys in %s, %d entries kept", n, time.Since(start), m.Len())
}

// redisAddr is the Redis of the tests; each test uses limit names of its
// own in redisDB.
const (
	redisAddr = "127.0.0.1:6379"
	redisDB   = 12
)

// instance is one service instance's view of Redis: a client through the
// fault proxy, a Breaker on it, its log and its metrics.
type instance struct {
	breaker *ratelimit.Breaker
	clock   *clock
	log     *testenv.SyncBuffer
	metrics *metrics.Metrics
}

func requireRedis(t *testing.T) {
	t.Helper()
	c, err := net.DialTimeout("tcp", redisAddr, time.Second)
	if err != nil {
		testenv.SkipOrFail(t, "redis at "+redisAddr+" does not answer: "+err.Error())
	}
	c.Close()
}

func newInstance(t *testing.T, addr string) *instance {
	t.Helper()
	client, err := ratelimit.NewClient(fmt.Sprintf("redis://%s/%d", addr, redisDB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	in := &instance{clock: newClock(), log: &testenv.SyncBuffer{}, metrics: metrics.New(nil)}
	in.breaker = ratelimit.NewBreaker(client, ratelimit.BreakerConfig{
		Log:     slog.New(slog.NewJSONHandler(in.log, nil)),
		Metrics: in.metrics,
	})
	in.breaker.SetClock(in.clock.Now)
	return in
}

// limitName returns a limit name that no other test or run uses, and
// removes its keys from Redis when the test ends.
func limitName(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano())
	t.Cleanup(func() {
		rdb := redis.NewClient(&redis.Options{Addr: redisAddr, DB: redisDB})
		defer rdb.Close()
		ctx := context.Background()
		iter := rdb.Scan(ctx, 0, "*planwerk:rate:"+name+":*", 100).Iterator()
		for iter.Next(ctx) {
			rdb.Del(ctx, iter.Val())
		}
	})
	return name
}

// scrape returns the value of a metric sample ("" when absent).
func (in *instance) scrape(t *testing.T, sample string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	in.metrics.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`)
	if m := re.FindStringSubmatch(rec.Body.String()); m != nil {
		return m[1]
	}
	return ""
}

// logged counts the log lines that contain s.
func (in *instance) logged(s string) int {
	return strings.Count(in.log.String(), s)
}

// timedTake takes key and fails the test if that does not answer, without
// error, within a bound far above the 100 ms Redis timeout.
func timedTake(t *testing.T, l ratelimit.Limiter, key string) (time.Duration, time.Duration) {
	t.Helper()
	start := time.Now()
	wait := take(t, l, key)
	took := time.Since(start)
	if took > 2*time.Second {
		t.Fatalf("take took %s", took)
	}
	return wait, took
}

// waitUp moves the instance's clock past the cool-down and takes until the
// background probe found Redis again.
func (in *instance) waitUp(t *testing.T, l ratelimit.Limiter) time.Duration {
	t.Helper()
	in.clock.Add(ratelimit.Cooldown + time.Second)
	start := time.Now()
	take(t, l, "probe-trigger") // starts the probe; counted in the process
	for !in.breaker.Up() {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("redis not used again 10 s after the cool-down; log:\n%s", in.log.String())
		}
		time.Sleep(5 * time.Millisecond)
	}
	return time.Since(start)
}

const (
	lostLine = "redis unavailable"
	backLine = "redis answers again"
)

// TestFallbackDown: with Redis down, Take answers at once and counts in
// the process; when Redis is back, counting is shared again.
func TestFallbackDown(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	a, b := newInstance(t, p.Addr), newInstance(t, p.Addr)
	name := limitName(t)
	rule := ratelimit.Rule{Burst: 3, Every: time.Hour}
	la, lb := a.breaker.Limiter(name, rule), b.breaker.Limiter(name, rule)
	if !a.breaker.Probe(context.Background()) || !b.breaker.Probe(context.Background()) {
		t.Fatal("probe through a healthy proxy failed")
	}
	if wait := take(t, la, "k"); wait != 0 {
		t.Fatalf("first event: wait %s", wait)
	}

	p.Down()
	for i := range 3 { // in the process: a burst of its own
		if wait, took := timedTake(t, la, "k"); wait != 0 {
			t.Fatalf("event %d while down: wait %s", i+1, wait)
		} else {
			t.Logf("take %d while redis is down: %s", i+1, took)
		}
	}
	if wait, _ := timedTake(t, la, "k"); wait == 0 {
		t.Fatal("the in-process count did not refuse the fourth event")
	}
	if a.breaker.Up() {
		t.Fatal("breaker still up with redis down")
	}
	if got := a.scrape(t, "planwerk_redis_up"); got != "0" {
		t.Errorf("planwerk_redis_up = %q, want 0", got)
	}
	if got := a.scrape(t, `planwerk_ratelimit_fallback_total{limit="`+name+`"}`); got != "4" {
		t.Errorf("fallback_total = %q, want 4", got)
	}

	p.Up(t)
	took := a.waitUp(t, la)
	t.Logf("shared counting again %s after the cool-down", took)
	b.waitUp(t, lb)
	if a.logged(lostLine) != 1 || a.logged(backLine) != 1 {
		t.Errorf("log should say once that redis was lost and once that it is back:\n%s", a.log.String())
	}
	if got := a.scrape(t, "planwerk_redis_up"); got != "1" {
		t.Errorf("planwerk_redis_up = %q after recovery, want 1", got)
	}
	// Shared again: "k" still holds its first event in Redis, and the two
	// instances see each other's counts.
	if wait := take(t, la, "k"); wait != 0 {
		t.Fatalf("second shared event: wait %s", wait)
	}
	if wait := take(t, lb, "k"); wait != 0 {
		t.Fatalf("third shared event (other instance): wait %s", wait)
	}
	for _, l := range []ratelimit.Limiter{la, lb} {
		if wait := take(t, l, "k"); wait == 0 {
			t.Fatal("fourth shared event passed a burst of 3")
		}
	}
}

// TestFallbackFrozen: a Redis that accepts connections and never answers
// costs one timeout, then nothing until the cool-down is over.
func TestFallbackFrozen(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	a := newInstance(t, p.Addr)
	name := limitName(t)
	l := a.breaker.Limiter(name, ratelimit.Rule{Burst: 1000, Every: time.Second})
	if !a.breaker.Probe(context.Background()) {
		t.Fatal("probe through a healthy proxy failed")
	}
	take(t, l, "k")

	p.Freeze(t)
	_, first := timedTake(t, l, "k")
	t.Logf("first take on a frozen redis: %s", first)
	// The clock stands still: the cool-down holds, and Redis is not asked.
	const n = 200
	start := time.Now()
	for range n {
		timedTake(t, l, "k")
	}
	rest := time.Since(start)
	t.Logf("%d more takes during the cool-down: %s", n, rest)
	if rest > 2*time.Second {
		t.Fatalf("%d takes during the cool-down took %s: Redis was asked", n, rest)
	}
	if got := a.scrape(t, `planwerk_ratelimit_fallback_total{limit="`+name+`"}`); got != strconv.Itoa(n+1) {
		t.Errorf("fallback_total = %q, want %d", got, n+1)
	}
	// A probe on the frozen Redis fails within its bound.
	start = time.Now()
	if a.breaker.Probe(context.Background()) {
		t.Fatal("a frozen redis passed the probe")
	}
	t.Logf("probe of a frozen redis: %s", time.Since(start))

	p.Heal(t)
	t.Logf("shared counting again %s after the cool-down", a.waitUp(t, l))
	if a.logged(lostLine) != 1 || a.logged(backLine) != 1 {
		t.Errorf("log should say once that redis was lost and once that it is back:\n%s", a.log.String())
	}
	if got := a.scrape(t, "planwerk_redis_up"); got != "1" {
		t.Errorf("planwerk_redis_up = %q after recovery, want 1", got)
	}
}

// TestFallbackSlow: a Redis that answers, but later than the timeout, is
// treated as unavailable, and a probe does not bring it back while it is
// slow.
func TestFallbackSlow(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	a := newInstance(t, p.Addr)
	name := limitName(t)
	l := a.breaker.Limiter(name, ratelimit.Rule{Burst: 2, Every: time.Hour})
	if !a.breaker.Probe(context.Background()) {
		t.Fatal("probe through a healthy proxy failed")
	}

	p.Slow(t, 150*time.Millisecond) // a round trip takes at least 300 ms
	for i := range 2 {
		if wait, took := timedTake(t, l, "k"); wait != 0 {
			t.Fatalf("event %d on a slow redis: wait %s", i+1, wait)
		} else {
			t.Logf("take %d on a slow redis: %s", i+1, took)
		}
	}
	if wait, _ := timedTake(t, l, "k"); wait == 0 {
		t.Fatal("the in-process count did not refuse the third event")
	}
	if a.breaker.Probe(context.Background()) {
		t.Fatal("a redis answering in 300 ms passed the probe")
	}
	if a.breaker.Up() || a.logged(backLine) != 0 {
		t.Fatalf("a slow redis was taken back; log:\n%s", a.log.String())
	}

	p.Heal(t)
	a.waitUp(t, l)
	if wait := take(t, l, "k"); wait != 0 {
		t.Fatalf("shared count after recovery: wait %s (redis never saw an event)", wait)
	}
}

// TestFallbackStartDown: a Breaker whose Redis is down from the start
// counts in the process, says so once, and shares when Redis comes.
func TestFallbackStartDown(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	p.Down()
	a := newInstance(t, p.Addr)
	name := limitName(t)
	l := a.breaker.Limiter(name, ratelimit.Rule{Burst: 1, Every: time.Hour})
	start := time.Now()
	if a.breaker.Probe(context.Background()) {
		t.Fatal("probe passed with redis down")
	}
	t.Logf("start-up probe with redis down: %s", time.Since(start))
	if wait, _ := timedTake(t, l, "k"); wait != 0 {
		t.Fatalf("first event: wait %s", wait)
	}
	if wait, _ := timedTake(t, l, "k"); wait == 0 {
		t.Fatal("second event passed a burst of 1 in the process")
	}
	if a.logged(lostLine) != 1 {
		t.Errorf("log should say once that redis is unavailable:\n%s", a.log.String())
	}
	p.Up(t)
	a.waitUp(t, l)
	if wait := take(t, l, "k"); wait != 0 {
		t.Fatalf("first shared event: wait %s", wait)
	}
	if wait := take(t, l, "k"); wait == 0 {
		t.Fatal("second shared event passed a burst of 1")
	}
}

// TestFallbackReset: Reset reaches Redis while it answers, never fails
// while it does not, and forgets the in-process count too.
func TestFallbackReset(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	a := newInstance(t, p.Addr)
	l := a.breaker.Limiter(limitName(t), ratelimit.Rule{Burst: 1, Every: time.Hour})
	ctx := context.Background()
	take(t, l, "k")
	if _, err := l.Reset(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if wait := take(t, l, "k"); wait != 0 {
		t.Fatalf("after a shared reset: wait %s", wait)
	}
	p.Down()
	take(t, l, "k")
	if _, err := l.Reset(ctx, "k"); err != nil {
		t.Fatalf("reset with redis down: %v", err)
	}
	if wait := take(t, l, "k"); wait != 0 {
		t.Fatalf("after an in-process reset: wait %s", wait)
	}
}

// TestRedisLongKeys: a key of 1 MB is stored in Redis under a key of
// bounded length.
func TestRedisLongKeys(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	client, err := ratelimit.NewClient(fmt.Sprintf("redis://%s/%d", redisAddr, redisDB))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	name := limitName(t)
	l := ratelimit.NewRedis(client, name, ratelimit.Rule{Burst: 1, Every: time.Hour})
	long := strings.Repeat("z", 1<<20)
	take(t, l, long)
	if wait := take(t, l, long); wait == 0 {
		t.Fatal("second event on a 1 MB key passed a burst of 1")
	}
	if wait := take(t, l, long[:len(long)-1]+"y"); wait != 0 {
		t.Fatal("two long keys share a count")
	}
	keys, err := client.Keys(context.Background(), "*planwerk:rate:"+name+":*").Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 {
		t.Fatalf("redis keys %v, want 2", keys)
	}
	for _, k := range keys {
		if len(k) > 200 {
			t.Errorf("redis key of %d bytes", len(k))
		}
	}
}
