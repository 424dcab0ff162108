package ratelimit_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"planwerk/internal/ratelimit"
	"planwerk/internal/testenv"
)

// want is a State with bounds on Reset: exact when lo == hi.
type want struct {
	remaining int
	lo, hi    time.Duration // of Reset
	wait      bool
}

func checkState(t *testing.T, what string, got ratelimit.State, wait time.Duration, rule ratelimit.Rule, w want) {
	t.Helper()
	if got.Quota != rule.Burst || got.Window != time.Duration(rule.Burst)*rule.Every {
		t.Errorf("%s: quota %d over %s, want %d over %s", what, got.Quota, got.Window, rule.Burst, time.Duration(rule.Burst)*rule.Every)
	}
	if got.Remaining != w.remaining {
		t.Errorf("%s: remaining %d, want %d", what, got.Remaining, w.remaining)
	}
	if got.Reset < w.lo || got.Reset > w.hi {
		t.Errorf("%s: reset %s, want in [%s, %s]", what, got.Reset, w.lo, w.hi)
	}
	if (wait > 0) != w.wait {
		t.Errorf("%s: wait %s, want refused %v", what, wait, w.wait)
	}
	if wait > 0 && got.Reset != wait {
		t.Errorf("%s: refused with reset %s and wait %s: they differ", what, got.Reset, wait)
	}
}

// checkStates runs the clock-free part of what Take, Refund and Reset
// report, on l with a burst of 3 refilled once an hour. Real time passes
// on Redis between the calls: what is left to refill is bounded by a
// minute's slack, far more than the test takes.
func checkStates(t *testing.T, l ratelimit.Limiter, rule ratelimit.Rule, slack time.Duration) {
	t.Helper()
	h := rule.Every
	steps := []struct {
		what string
		do   func() (ratelimit.State, time.Duration)
		want want
	}{
		{"first event", nil, want{2, h - slack, h, false}},
		{"second event", nil, want{1, h - slack, h, false}},
		{"third event", nil, want{0, h - slack, h, false}},
		{"fourth event (refused)", nil, want{0, h - slack, h, true}},
		{"refund", func() (ratelimit.State, time.Duration) { return refund(t, l, "k"), 0 }, want{1, h - slack, h, false}},
		{"event after the refund", nil, want{0, h - slack, h, false}},
		{"refund of the unknown", func() (ratelimit.State, time.Duration) { return refund(t, l, "unknown"), 0 }, want{3, 0, 0, false}},
		{"reset", func() (ratelimit.State, time.Duration) {
			s, err := l.Reset(context.Background(), "k")
			if err != nil {
				t.Fatal(err)
			}
			return s, 0
		}, want{3, 0, 0, false}},
		{"event after the reset", nil, want{2, h - slack, h, false}},
	}
	for _, s := range steps {
		do := s.do
		if do == nil {
			do = func() (ratelimit.State, time.Duration) {
				d := decide(t, l, "k")
				return d.State, d.Wait
			}
		}
		st, wait := do()
		checkState(t, s.what, st, wait, rule, s.want)
	}
}

// TestMemoryState: the in-process count reports quota, window, what is
// left and when the next event refills, also as time passes.
func TestMemoryState(t *testing.T) {
	t.Parallel()
	rule := ratelimit.Rule{Burst: 3, Every: time.Hour}
	c := newClock()
	m := ratelimit.NewMemory(rule)
	m.SetClock(c.Now)
	checkStates(t, m, rule, 0)

	// Time passes: the next event refills in what is left of the hour
	// (x/time/rate counts tokens as floats: a millisecond's tolerance).
	near := func(remaining int, d time.Duration, wait bool) want {
		return want{remaining, d - time.Millisecond, d + time.Millisecond, wait}
	}
	takeBurst(t, m, "t", 2)
	c.Add(20 * time.Minute)
	checkState(t, "two events, 20 minutes later", decide(t, m, "t").State, 0, rule, near(0, 40*time.Minute, false))
	d := decide(t, m, "t")
	checkState(t, "empty, 20 minutes in", d.State, d.Wait, rule, near(0, 40*time.Minute, true))
	c.Add(40 * time.Minute)
	checkState(t, "one refilled", decide(t, m, "t").State, 0, rule, near(0, time.Hour, false))
	c.Add(90 * time.Minute) // one and a half refilled
	checkState(t, "half an event on top", refund(t, m, "t"), 0, rule, near(2, 30*time.Minute, false))
}

// TestMemoryStateNoRule: a rule that counts nothing reports a full quota
// without a window; one that allows nothing reports none left.
func TestMemoryStateNoRule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule ratelimit.Rule
		want ratelimit.Decision
	}{
		{ratelimit.Rule{Burst: 3}, ratelimit.Decision{State: ratelimit.State{Quota: 3, Remaining: 3}}},
		{ratelimit.Rule{Every: time.Minute}, ratelimit.Decision{State: ratelimit.State{Reset: time.Minute}, Wait: time.Minute}},
	} {
		if got := decide(t, ratelimit.NewMemory(c.rule), "k"); got != c.want {
			t.Errorf("rule %+v: %+v, want %+v", c.rule, got, c.want)
		}
	}
}

func redisLimiter(t *testing.T, rule ratelimit.Rule) *ratelimit.Redis {
	t.Helper()
	requireRedis(t)
	client, err := ratelimit.NewClient(fmt.Sprintf("redis://%s/%d", redisAddr, redisDB))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return ratelimit.NewRedis(client, limitName(t), rule)
}

// TestRedisState: the shared count reports the same as the in-process
// one.
func TestRedisState(t *testing.T) {
	t.Parallel()
	rule := ratelimit.Rule{Burst: 3, Every: time.Hour}
	checkStates(t, redisLimiter(t, rule), rule, time.Minute)
}

// TestRedisStateInexactInterval: an interval that is no whole number of
// microseconds (a minute / 7) still counts whole events: Redis's float
// seconds do not turn 6 left into 5.
func TestRedisStateInexactInterval(t *testing.T) {
	t.Parallel()
	rule := ratelimit.Rule{Burst: 7, Every: time.Minute / 7}
	l := redisLimiter(t, rule)
	for i := range 7 {
		d := decide(t, l, "k")
		if d.Wait != 0 || d.Remaining != 6-i {
			t.Fatalf("event %d: %+v, want counted with %d left", i+1, d, 6-i)
		}
	}
}

// TestFallbackState: with Redis up the shared count's state, with it down
// the process's.
func TestFallbackState(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	rule := ratelimit.Rule{Burst: 3, Every: time.Hour}
	a := newInstance(t, redisAddr)
	if !a.breaker.Probe(context.Background()) {
		t.Fatal("probe of a healthy redis failed")
	}
	up := a.breaker.Limiter(limitName(t), rule)
	checkStates(t, up, rule, time.Minute)
	if !a.breaker.Up() {
		t.Fatal("redis was not used")
	}
}

// TestFallbackStateDown: with Redis unreachable, the state is the
// in-process count's, as exact as the Memory's.
func TestFallbackStateDown(t *testing.T) {
	t.Parallel()
	requireRedis(t)
	rule := ratelimit.Rule{Burst: 3, Every: time.Hour}
	p := testenv.NewProxy(t, redisAddr)
	a := newInstance(t, p.Addr)
	l := a.breaker.Limiter(limitName(t), rule)
	l.SetLocalClock(newClock().Now)
	p.Down()
	checkStates(t, l, rule, 0)
	if a.breaker.Up() {
		t.Fatal("breaker up with redis down: the test did not count in the process")
	}
}
