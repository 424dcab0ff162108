//go:build system

package httpapi_test

import (
	"context"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/noisy"
	"planwerk/internal/testenv"
)

// TestNoisyNeighbour: while one tenant's member runs slow readers of a
// big list, expands references of big records, runs the most expensive
// filters allowed, sums its year's time by user and writes, another
// tenant's lists, reads, writes and
// /readyz answer as usual: every one succeeds, and their 99th percentile
// stays within a small multiple of the same run's quiet one.
func TestNoisyNeighbour(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b, func(c *config.Config) { c.WriteIdleTimeout = 10 * time.Minute })
		loud, calm := srv.CreateTenant(t, "loud"), srv.CreateTenant(t, "calm")
		if err := noisy.Seed(ctx, srv.Service.DB, loud.ID, calm.ID, loud.AdminID); err != nil {
			t.Fatal(err)
		}
		attacker := noisy.Tenant{Slug: "loud", Token: srv.SignIn(t, loud).Token}
		victim := noisy.Tenant{Slug: "calm", Token: srv.SignIn(t, calm).Token}

		const n, limit = 100, 30 * time.Second
		noisy.Measure(ctx, srv.URL, victim, 20, limit) // warm caches and connections
		quiet := noisy.Measure(ctx, srv.URL, victim, n, limit)
		attack, err := noisy.Start(srv.URL, attacker, noisy.Options{SlowReaders: 10, Populate: 2, Filters: 2, Writers: 2, Reports: 4})
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "the noise does not get going", func() bool { return attack.Requests() >= 6 })
		loudRun := noisy.Measure(ctx, srv.URL, victim, n, limit)
		noise := attack.Requests()
		attack.Stop()

		t.Logf("quiet tenant: p50 %s p99 %s quiet; p50 %s p99 %s beside %d noisy requests; /readyz at most %s",
			quiet.Percentile(0.5), quiet.Percentile(0.99), loudRun.Percentile(0.5), loudRun.Percentile(0.99), noise,
			loudRun.Ready[len(loudRun.Ready)-1])
		for _, f := range append(quiet.Failures, loudRun.Failures...) {
			t.Errorf("quiet tenant: %s", f)
		}
		// Generous: the machine is shared with the noise (two cores), so the
		// quiet tenant's requests wait for the processor; what must not
		// happen is waiting for the noisy tenant's connections or locks.
		bound := max(20*quiet.Percentile(0.99), quiet.Percentile(0.99)+2*time.Second)
		if p99 := loudRun.Percentile(0.99); p99 > bound {
			t.Errorf("quiet tenant's p99 beside the noise is %s, more than %s (quiet p99 %s)", p99, bound, quiet.Percentile(0.99))
		}
		if worst := loudRun.Ready[len(loudRun.Ready)-1]; worst > 3*time.Second {
			t.Errorf("/readyz took %s beside the noise", worst)
		}
	})
}
