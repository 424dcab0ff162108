package webhooks

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"time"

	"planwerk/internal/store"
)

// Bounds of the dispatcher's work.
const (
	// candidates is how many due webhooks a claim chooses among.
	candidates = 64
	// batch is how many changes a worker reads at once (fewer when their
	// records are large: a read of changes has a byte budget).
	batch = 20
	// minGap spaces the dispatcher's looks for work when commits wake it
	// faster: a look is a query.
	minGap = 50 * time.Millisecond
)

// Run is the dispatcher: until ctx ends, it delivers the changes of
// every tenant's webhooks, sharing the work with the other instances.
// Then it waits for the deliveries in flight to end; their webhooks'
// leases are given up, so another instance goes on at once. Calls of
// Run must not overlap (the service runs it as a lifelong background job).
func (s *Service) Run(ctx context.Context) error {
	ctx, stop := context.WithCancel(ctx)
	var workers sync.WaitGroup
	// Also when Run panics: the workers stop before it is called again.
	defer func() {
		stop()
		workers.Wait()
	}()
	done := make(chan struct{}, 1)
	ticker := time.NewTicker(s.cfg.Poll)
	defer ticker.Stop()
	var lastOldest time.Time
	for {
		signal := s.db.ChangeSignal()
		if time.Since(lastOldest) >= s.cfg.Poll {
			s.observeOldest(ctx)
			lastOldest = time.Now()
		}
		if free := s.cfg.Workers - s.pool.inUse(); free > 0 {
			ws, err := s.claim(ctx, free)
			if err != nil && ctx.Err() == nil {
				s.log.Warn("claim webhooks", "err", err)
			}
			for _, w := range ws {
				s.pool.take(w.TenantID)
				workers.Add(1)
				go func() {
					defer workers.Done()
					s.work(ctx, w)
					s.pool.give(w.TenantID)
					select {
					case done <- struct{}{}:
					default:
					}
				}()
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-signal:
		case <-ticker.C:
		case <-done:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(minGap):
		}
	}
}

// claim leases up to n webhooks with work to do, chosen fairly: the
// tenants holding the fewest of this instance's workers first, and among
// those the webhooks that have waited longest. It only writes when a
// read found some.
func (s *Service) claim(ctx context.Context, n int) ([]Webhook, error) {
	now := time.Now()
	due, err := s.db.DueWebhooks(ctx, store.Timestamp(now), candidates)
	if err != nil || len(due) == 0 {
		return nil, err
	}
	var out []Webhook
	for _, k := range s.pool.choose(due, n) {
		w, err := s.db.LeaseWebhook(ctx, k, s.holder, store.Timestamp(now), store.Timestamp(now.Add(s.cfg.Lease)))
		if errors.Is(err, ErrLeaseLost) {
			continue // taken meanwhile by another instance
		}
		if err != nil {
			return out, err
		}
		out = append(out, w)
	}
	return out, nil
}

// othersWaiting reports whether a worker of tenant should let its
// webhook go: every worker is in use, and a webhook with work waits whose
// tenant holds no more workers than this one (another of its own
// included, so that a tenant's webhooks take turns too).
func (s *Service) othersWaiting(ctx context.Context, tenant int64) bool {
	if s.pool.inUse() < s.cfg.Workers {
		return false // a free worker takes what waits
	}
	due, err := s.db.DueWebhooks(ctx, store.Timestamp(time.Now()), candidates)
	if err != nil {
		return false
	}
	return s.pool.anyNoBusier(due, tenant)
}

func (s *Service) observeOldest(ctx context.Context) {
	at, err := s.db.OldestUndelivered(ctx)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("oldest undelivered change", "err", err)
		}
		return
	}
	var age time.Duration
	if t, err := time.Parse(store.TimeFormat, at); err == nil {
		age = max(0, time.Since(t))
	}
	s.cfg.Metrics.OldestPendingDelivery(age)
}

// work delivers a leased webhook's changes in order until it has none,
// waits for a retry, or has had its time budget while others wait for a
// worker; then it gives the lease up.
func (s *Service) work(ctx context.Context, w Webhook) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := s.db.ReleaseLease(rctx, w.TenantID, w.ID, s.holder, store.Timestamp(time.Now())); err != nil {
			s.log.Warn("release webhook lease", "tenant", w.TenantID, "webhook", w.ID, "err", err)
		}
	}()
	renewed, turn := time.Now(), time.Now()
	var queue []store.Change
	for ctx.Err() == nil {
		// A delivery takes at most Timeout: renewing when a third of the
		// lease is gone keeps it from running out while one is in flight.
		if time.Since(renewed) > s.cfg.Lease/3 {
			now := time.Now()
			if err := s.db.RenewLease(ctx, w.TenantID, w.ID, s.holder, store.Timestamp(now.Add(s.cfg.Lease))); err != nil {
				s.stepFailed(ctx, w, err)
				return
			}
			renewed = now
		}
		more, err := s.step(ctx, &w, &queue)
		if err != nil {
			s.stepFailed(ctx, w, err)
			return
		}
		if !more {
			return
		}
		if time.Since(turn) >= s.cfg.Budget {
			if s.othersWaiting(ctx, w.TenantID) {
				return
			}
			turn = time.Now()
		}
	}
}

func (s *Service) stepFailed(ctx context.Context, w Webhook, err error) {
	if ctx.Err() == nil && !errors.Is(err, ErrLeaseLost) {
		s.log.Warn("webhook delivery", "tenant", w.TenantID, "webhook", w.ID, "err", err)
	}
}

// step makes the webhook's next delivery attempt: the pending delivery
// when it is due, else the next change. more says whether to go on.
func (s *Service) step(ctx context.Context, w *Webhook, queue *[]store.Change) (more bool, err error) {
	var d Delivery
	var c store.Change
	if w.RetryAt != "" {
		if w.RetryAt > store.Timestamp(time.Now()) {
			return false, nil
		}
		var ok bool
		if d, c, ok, err = s.pending(ctx, w); err != nil || !ok {
			return ok || err == nil, err
		}
	} else {
		if len(*queue) == 0 {
			if *queue, err = s.next(ctx, w); err != nil || len(*queue) == 0 {
				return false, err
			}
		}
		c, *queue = (*queue)[0], (*queue)[1:]
		// The delivery is first stored with the outcome of its first
		// attempt: one write per delivery. Its message id is derived, so a
		// first attempt made again after a crash carries the same one.
		d = Delivery{ID: messageID(*w, c.Seq), Seq: c.Seq, Status: DeliveryPending, CreatedAt: store.Timestamp(time.Now())}
	}
	code, sendErr := s.sender.send(ctx, *w, d.ID, c)
	if ctx.Err() != nil {
		return false, nil // shutting down: the delivery stays due, for the next instance
	}
	d.Attempts++
	d.LastStatusCode = code
	if sendErr == nil {
		return true, s.delivered(ctx, w, &d, c)
	}
	return s.failed(ctx, w, &d)
}

// pending loads the webhook's pending delivery and its change. A change
// no longer kept fails the delivery, and the webhook moves on (ok false,
// no error: go on).
func (s *Service) pending(ctx context.Context, w *Webhook) (Delivery, store.Change, bool, error) {
	d, err := s.db.PendingDelivery(ctx, w.TenantID, w.ID)
	if errors.Is(err, store.ErrNotFound) {
		w.RetryAt = ""
		return d, store.Change{}, false, s.save(ctx, w, nil, false)
	}
	if err != nil {
		return d, store.Change{}, false, err
	}
	cs, err := s.db.ChangesAfter(ctx, w.TenantID, d.Seq-1, nil, 1)
	if err != nil {
		return d, store.Change{}, false, err
	}
	if len(cs) == 0 || cs[0].Seq != d.Seq {
		d.Status, d.NextAttemptAt = DeliveryFailed, ""
		w.Position, w.RetryAt = d.Seq, ""
		s.cfg.Metrics.Delivery("failed")
		return d, store.Change{}, false, s.save(ctx, w, &d, false)
	}
	return d, cs[0], true, nil
}

// next reads the webhook's next changes. When it has none, its position
// moves past the changes of resources it does not take.
func (s *Service) next(ctx context.Context, w *Webhook) ([]store.Change, error) {
	// The last position is read first: every change up to it has
	// committed, so none the read below misses can be passed over.
	last, _, err := s.db.ChangeWindow(ctx, w.TenantID)
	if err != nil {
		return nil, err
	}
	cs, err := s.db.ChangesAfter(ctx, w.TenantID, w.Position, w.Resources, batch)
	if err != nil || len(cs) > 0 || last <= w.Position {
		return cs, err
	}
	w.Position = last
	return nil, s.save(ctx, w, nil, false)
}

func (s *Service) delivered(ctx context.Context, w *Webhook, d *Delivery, c store.Change) error {
	d.Status, d.NextAttemptAt = DeliveryDelivered, ""
	w.Position, w.RetryAt, w.FailingSince = d.Seq, "", ""
	s.cfg.Metrics.Delivery("delivered")
	if at, err := time.Parse(store.TimeFormat, c.At); err == nil {
		s.cfg.Metrics.FeedLag(time.Since(at))
	}
	return s.save(ctx, w, d, false)
}

// failed records a failed attempt: retried later, or after RetryFor the
// delivery fails and the webhook moves on. A webhook failing for
// DisableAfter is disabled.
func (s *Service) failed(ctx context.Context, w *Webhook, d *Delivery) (bool, error) {
	now := time.Now()
	if w.FailingSince == "" {
		w.FailingSince = store.Timestamp(now)
	}
	created, _ := time.Parse(store.TimeFormat, d.CreatedAt)
	if now.Sub(created) >= s.cfg.RetryFor {
		d.Status, d.NextAttemptAt = DeliveryFailed, ""
		w.Position, w.RetryAt = d.Seq, ""
		s.cfg.Metrics.Delivery("failed")
	} else {
		d.NextAttemptAt = store.Timestamp(now.Add(s.backoff(d.Attempts)))
		w.RetryAt = d.NextAttemptAt
		s.cfg.Metrics.Delivery("retry")
	}
	since, _ := time.Parse(store.TimeFormat, w.FailingSince)
	disable := now.Sub(since) >= s.cfg.DisableAfter
	if disable {
		w.Enabled = false
		s.cfg.Metrics.Delivery("disabled")
		s.log.Warn("webhook disabled: its deliveries failed too long", "tenant", w.TenantID, "webhook", w.ID,
			"failingSince", w.FailingSince)
	}
	err := s.save(ctx, w, d, disable)
	return err == nil && !disable && d.Status == DeliveryFailed, err
}

func (s *Service) save(ctx context.Context, w *Webhook, d *Delivery, disable bool) error {
	return s.db.SaveProgress(ctx, w.TenantID, w.ID, s.holder,
		Progress{Position: w.Position, RetryAt: w.RetryAt, FailingSince: w.FailingSince, Disable: disable}, d)
}

// backoff is the wait before the retry that follows attempt n (1, 2, …):
// RetryBase doubled for each attempt after the first, at most RetryMax,
// less up to a fifth at random so that webhooks failing together spread
// out.
func (s *Service) backoff(n int) time.Duration {
	d := s.cfg.RetryBase
	for i := 1; i < n && d < s.cfg.RetryMax; i++ {
		d *= 2
	}
	d = min(d, s.cfg.RetryMax)
	if j, err := rand.Int(rand.Reader, big.NewInt(int64(d/5)+1)); err == nil {
		d -= time.Duration(j.Int64())
	}
	return d
}

// messageID is the message id (the webhook-id header) of the delivery
// of change seq by webhook w: the same whenever it is sent, unique per
// webhook and change, and telling nothing of the secret it is keyed with.
func messageID(w Webhook, seq int64) string {
	mac := hmac.New(sha256.New, []byte(w.Secret))
	fmt.Fprintf(mac, "planwerk webhook message %d %d %d", w.TenantID, w.ID, seq)
	return "msg_" + hex.EncodeToString(mac.Sum(nil)[:16])
}

// pool counts this instance's workers in use, by tenant.
type pool struct {
	mu       sync.Mutex
	byTenant map[int64]int
	n        int
}

func (p *pool) inUse() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

func (p *pool) take(tenant int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byTenant == nil {
		p.byTenant = map[int64]int{}
	}
	p.byTenant[tenant]++
	p.n++
}

func (p *pool) give(tenant int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.byTenant[tenant]--; p.byTenant[tenant] <= 0 {
		delete(p.byTenant, tenant)
	}
	p.n--
}

// choose picks up to n of the due webhooks (longest waiting first), one
// at a time from the tenant that would then hold the fewest workers.
func (p *pool) choose(due []Key, n int) []Key {
	p.mu.Lock()
	held := make(map[int64]int, len(p.byTenant))
	for t, c := range p.byTenant {
		held[t] = c
	}
	p.mu.Unlock()
	due = slices.Clone(due)
	var out []Key
	for len(out) < n && len(due) > 0 {
		best := 0
		for i, k := range due {
			if held[k.TenantID] < held[due[best].TenantID] {
				best = i
			}
		}
		out = append(out, due[best])
		held[due[best].TenantID]++
		due = slices.Delete(due, best, best+1)
	}
	return out
}

// anyNoBusier reports whether one of due belongs to a tenant holding no
// more workers than tenant.
func (p *pool) anyNoBusier(due []Key, tenant int64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, k := range due {
		if p.byTenant[k.TenantID] <= p.byTenant[tenant] {
			return true
		}
	}
	return false
}
