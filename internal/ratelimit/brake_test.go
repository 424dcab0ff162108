package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"planwerk/internal/ratelimit"
	"planwerk/internal/testenv"
)

func refund(t *testing.T, l ratelimit.Limiter, key string) ratelimit.State {
	t.Helper()
	s, err := l.Refund(context.Background(), key)
	if err != nil {
		t.Fatalf("refund %q: %v", key, err)
	}
	return s
}

func fresh(t *testing.T, l ratelimit.Limiter, key string) bool {
	t.Helper()
	ok, err := l.Fresh(context.Background(), key)
	if err != nil {
		t.Fatalf("fresh %q: %v", key, err)
	}
	return ok
}

// takeBurst takes key n times and fails unless all pass.
func takeBurst(t *testing.T, l ratelimit.Limiter, key string, n int) {
	t.Helper()
	for i := range n {
		if wait := take(t, l, key); wait != 0 {
			t.Fatalf("%s: event %d of %d: wait %s", key, i+1, n, wait)
		}
	}
}

func refused(t *testing.T, l ratelimit.Limiter, key, what string) {
	t.Helper()
	if wait := take(t, l, key); wait == 0 {
		t.Fatalf("%s: %s passed", key, what)
	}
}

// checkRefund runs the clock-free part of Refund's and Fresh's contract on
// l, whose rule has the given burst and a refill far longer than the test.
func checkRefund(t *testing.T, l ratelimit.Limiter, burst int) {
	t.Helper()
	// A refund gives back exactly one event.
	if !fresh(t, l, "spent") {
		t.Fatal("a key never taken is not fresh")
	}
	takeBurst(t, l, "spent", burst)
	refused(t, l, "spent", "the event after the burst")
	if fresh(t, l, "spent") {
		t.Fatal("a spent key is fresh")
	}
	refund(t, l, "spent")
	if wait := take(t, l, "spent"); wait != 0 {
		t.Fatalf("after a refund: wait %s, want 0", wait)
	}
	refused(t, l, "spent", "a second event after one refund")

	// Refunds on an unknown or full key give nothing beyond the burst.
	refund(t, l, "unknown")
	refund(t, l, "unknown")
	if !fresh(t, l, "unknown") {
		t.Fatal("a refunded unknown key is not fresh")
	}
	takeBurst(t, l, "unknown", burst)
	refused(t, l, "unknown", "the event after the burst of a refunded unknown key")

	takeBurst(t, l, "over", 1)
	refund(t, l, "over")
	refund(t, l, "over") // the bucket is full already
	takeBurst(t, l, "over", burst)
	refused(t, l, "over", "the event after the burst of a twice-refunded key")

	// A key whose only event was given back is fresh again.
	takeBurst(t, l, "once", 1)
	if fresh(t, l, "once") {
		t.Fatal("a key with one event counted is fresh")
	}
	refund(t, l, "once")
	if !fresh(t, l, "once") {
		t.Fatal("a key whose only event was refunded is not fresh")
	}
}

// TestMemoryRefund: Refund and Fresh on the in-process count.
func TestMemoryRefund(t *testing.T) {
	t.Parallel()
	c := newClock()
	m := ratelimit.NewMemory(ratelimit.Rule{Burst: 3, Every: time.Minute})
	m.SetClock(c.Now)
	checkRefund(t, m, 3)
	checkMemoryRefill(t, m, c)
}

// checkMemoryRefill runs the part of the contract that needs time to pass
// on a Memory (or a Fallback counting in the process) with a burst of 3
// refilled once a minute, timed by c.
func checkMemoryRefill(t *testing.T, l ratelimit.Limiter, c *clock) {
	t.Helper()
	takeBurst(t, l, "refill", 1)
	c.Add(30 * time.Second)
	if fresh(t, l, "refill") {
		t.Fatal("fresh while half an event is still to refill")
	}
	c.Add(30 * time.Second)
	if !fresh(t, l, "refill") {
		t.Fatal("not fresh after its event refilled")
	}

	// A refund with part of an event refilled: 1.5 tokens missing before,
	// half a token after.
	takeBurst(t, l, "part", 2)
	c.Add(30 * time.Second)
	refund(t, l, "part")
	if fresh(t, l, "part") {
		t.Fatal("fresh with half an event still to refill after a refund")
	}
	c.Add(30 * time.Second)
	if !fresh(t, l, "part") {
		t.Fatal("not fresh after the rest refilled")
	}

	// A refund worth more than what is missing fills the bucket, no more.
	takeBurst(t, l, "cap", 1)
	c.Add(30 * time.Second)
	refund(t, l, "cap")
	if !fresh(t, l, "cap") {
		t.Fatal("a refund of more than the missing half event left the key not fresh")
	}
	takeBurst(t, l, "cap", 3)
	refused(t, l, "cap", "the event after the burst of an over-refunded key")
}

// TestMemoryRefundNoRule: a rule that counts nothing has nothing to give
// back, and every key is fresh.
func TestMemoryRefundNoRule(t *testing.T) {
	t.Parallel()
	for _, rule := range []ratelimit.Rule{{Burst: 3}, {Every: time.Minute}} {
		m := ratelimit.NewMemory(rule)
		take(t, m, "k")
		refund(t, m, "k")
		if !fresh(t, m, "k") {
			t.Errorf("rule %+v: key not fresh", rule)
		}
	}
}

// TestRedisRefund: Refund and Fresh on the shared count, with the key's
// expiry kept in step with what is left to refill.
func TestRedisRefund(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	client, err := ratelimit.NewClient(fmt.Sprintf("redis://%s/%d", redisAddr, redisDB))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	name := limitName(t)
	l := ratelimit.NewRedis(client, name, ratelimit.Rule{Burst: 3, Every: time.Hour})
	checkRefund(t, l, 3)

	ctx := context.Background()
	redisKey := "rate:planwerk:rate:" + name + ":" // redis_rate's prefix, then ours
	refund(t, l, "never")
	if n := client.Exists(ctx, redisKey+"once", redisKey+"never").Val(); n != 0 {
		t.Errorf("%d keys left after refunds that emptied a key or found none", n)
	}
	// Three events counted, one given back: two hours left to refill.
	takeBurst(t, l, "ttl", 3)
	refund(t, l, "ttl")
	ttl := client.TTL(ctx, redisKey+"ttl").Val()
	if ttl <= time.Hour || ttl > 2*time.Hour {
		t.Errorf("after 3 events and a refund the key expires in %s, want in (1h, 2h]", ttl)
	}
	// Another instance sees the refund.
	other := ratelimit.NewRedis(client, name, ratelimit.Rule{Burst: 3, Every: time.Hour})
	takeBurst(t, other, "ttl", 1)
	refused(t, other, "ttl", "the event after the refunded one")
}

// TestRedisFreshRefill: a key counted in Redis turns fresh once its
// events refilled. The rule refills quickly and the test waits for the
// condition; it never asserts that the key is still spent.
func TestRedisFreshRefill(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	client, err := ratelimit.NewClient(fmt.Sprintf("redis://%s/%d", redisAddr, redisDB))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	l := ratelimit.NewRedis(client, limitName(t), ratelimit.Rule{Burst: 2, Every: 50 * time.Millisecond})
	take(t, l, "k")
	deadline := time.Now().Add(10 * time.Second)
	for !fresh(t, l, "k") {
		if time.Now().After(deadline) {
			t.Fatal("not fresh 10 s after one event of a 50 ms rule")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestFallbackRefund: Refund and Fresh reach Redis while it answers, and
// count in the process, without errors, while it is down.
func TestFallbackRefund(t *testing.T) {
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
	// Shared: one instance's refund is the other's event.
	takeBurst(t, la, "k", 3)
	if fresh(t, lb, "k") {
		t.Fatal("a key spent on one instance is fresh on the other")
	}
	refund(t, la, "k")
	takeBurst(t, lb, "k", 1)
	refused(t, lb, "k", "the event after the shared refund")
}

// TestFallbackRefundDown: with Redis down, Refund and Fresh answer from
// the process and never fail.
func TestFallbackRefundDown(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	p := testenv.NewProxy(t, redisAddr)
	a := newInstance(t, p.Addr)
	l := a.breaker.Limiter(limitName(t), ratelimit.Rule{Burst: 3, Every: time.Minute})
	// A clock of its own: moving the breaker's would start probes.
	c := newClock()
	l.SetLocalClock(c.Now)
	p.Down()
	checkRefund(t, l, 3)
	checkMemoryRefill(t, l, c)
	if a.breaker.Up() {
		t.Fatal("breaker up with redis down: the test did not count in the process")
	}
}
