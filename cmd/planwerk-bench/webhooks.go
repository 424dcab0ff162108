package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/users"
)

// hookResult is one engine's webhook delivery throughput: deliveries per
// second of a backlog to a local receiver, with one webhook (strictly one
// at a time) and with eight (delivered in parallel); and a fast tenant's
// one webhook alone and beside a slow tenant that holds every worker.
type hookResult struct {
	engine    string
	one, many float64
	// alone and beside are the fast tenant's backlog delivered.
	alone, beside backlogRun
	// slowBeside is how many of the slow tenant's deliveries ended while
	// the fast tenant's backlog was delivered beside it.
	slowBeside int64
}

const (
	// slowAnswer is how long the slow tenant's receiver takes to answer.
	slowAnswer = 2 * time.Second
	// slowChanges are the slow tenant's changes: each of its 8 webhooks
	// has work for slowChanges × slowAnswer, longer than the run.
	slowChanges = 100
	// besideLimit bounds the fast tenant's run beside the slow one.
	besideLimit = time.Minute
)

// runWebhooks measures webhook deliveries: n changes are made while the
// dispatcher is stopped, then it is started and the time until the
// receiver has them all is taken. Then a fast tenant's backlog of n
// changes, alone and beside a slow tenant whose 8 webhooks' receiver
// answers after 2s, with the dispatcher's own defaults.
func runWebhooks(ctx context.Context, pgURL string, n int) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []hookResult
	for _, dsn := range dsns {
		r, err := benchWebhooks(ctx, dsn, n)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk webhook delivery benchmark: a backlog of %d changes to a local receiver (204 at once), %s, %d cores\n\n",
		n, runtime.Version(), runtime.NumCPU())
	fmt.Println("| engine | 1 webhook: deliveries/s | 8 webhooks: deliveries/s | fast tenant's 1 webhook alone: deliveries/s | beside a slow tenant's 8 webhooks | ratio |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.0f | %.0f | %s | %.2f |\n", r.engine, r.one, r.many, r.alone.rate(), r.beside.describe(n), r.beside.rate()/r.alone.rate())
	}
	fmt.Printf("\nThe fast tenant's backlog (%d changes) from the moment it is due until the last delivery. Beside: the slow tenant's 8 webhooks\n", n)
	fmt.Printf("(receiver answers after %s, made first: the lower tenant id) hold all 8 workers when it becomes due; the dispatcher\n", slowAnswer)
	fmt.Println("runs with the service's defaults. The same run split: the wait for the first delivery, then deliveries/s from the first to the last.")
	fmt.Println()
	fmt.Println("| engine | first delivery after: alone | beside | deliveries/s after the first: alone | beside | ratio | slow tenant's deliveries meanwhile |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, r := range results {
		first, served, ratio := ms(r.beside.first), "-", "-"
		if r.beside.got == 0 {
			first = "none in " + besideLimit.String()
		}
		if r.beside.got > 1 {
			served, ratio = fmt.Sprintf("%.0f", r.beside.served()), fmt.Sprintf("%.2f", r.beside.served()/r.alone.served())
		}
		fmt.Printf("| %s | %s | %s | %.0f | %s | %s | %d in %.1f s |\n", r.engine, ms(r.alone.first), first, r.alone.served(), served, ratio,
			r.slowBeside, r.beside.elapsed.Seconds())
	}
	return nil
}

func benchWebhooks(ctx context.Context, dsn string, n int) (hookResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, func(c *config.Config) { c.WebhookAllowPrivate = true })
	if err != nil {
		return hookResult{}, err
	}
	defer stop()
	db := svc.DB
	var got atomic.Int64
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()
	r := hookResult{engine: db.Engine()}
	for _, k := range []int{1, 8} {
		slug := fmt.Sprintf("hooks%d", k)
		if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slug, AdminEmail: "admin@" + slug + ".test", AdminPassword: "bench-password"}); err != nil {
			return r, err
		}
		rate, err := deliveries(ctx, svc, srv.URL, receiver.URL, slug, k, n, &got)
		if err != nil {
			return r, err
		}
		if k == 1 {
			r.one = rate
		} else {
			r.many = rate
		}
	}
	return r, fairDeliveries(ctx, svc, srv.URL, n, &r)
}

// deliveries makes k webhooks and n changes of tenant slug with the
// dispatcher stopped, then runs it until the receiver has every delivery.
func deliveries(ctx context.Context, svc *app.Service, base, receiver, slug string, k, n int, got *atomic.Int64) (float64, error) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	token, err := signIn(client, base, slug, "admin@"+slug+".test", "bench-password")
	if err != nil {
		return 0, err
	}
	post := func(path, body string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+path, strings.NewReader(body))
		req.Header.Set("companyurl", slug)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return nil
	}
	for i := range k {
		if err := post("/v1/webhooks", fmt.Sprintf(`{"url": "%s/%d", "resources": ["projects"]}`, receiver, i)); err != nil {
			return 0, err
		}
	}
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if err := post("/v1/projects", fmt.Sprintf(`{"name": "p%d"}`, i)); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return 0, err
	}
	want := got.Load() + int64(k*n)
	start := time.Now()
	svc.Start()
	defer svc.Jobs.Close(context.Background())
	for got.Load() < want {
		if time.Since(start) > 10*time.Minute {
			return 0, fmt.Errorf("%d of %d deliveries after 10 minutes", got.Load()-want+int64(k*n), k*n)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	return float64(k*n) / time.Since(start).Seconds(), nil
}

// fairDeliveries measures a fast tenant's one webhook, its backlog of n
// changes, alone and then beside a slow tenant whose 8 webhooks hold all
// of the dispatcher's workers at a receiver that answers after
// slowAnswer.
func fairDeliveries(ctx context.Context, svc *app.Service, base string, n int, r *hookResult) error {
	var fast fastReceiver
	fast.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		now := time.Now().UnixNano()
		fast.first.CompareAndSwap(0, now)
		fast.last.Store(now)
		fast.got.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer fast.srv.Close()
	var slowIn, slowDone atomic.Int64
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		slowIn.Add(1)
		defer slowIn.Add(-1)
		t := time.NewTimer(slowAnswer)
		defer t.Stop()
		select {
		case <-t.C:
			slowDone.Add(1)
		case <-r.Context().Done():
		case <-release:
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer slow.Close()
	defer close(release) // before the receiver closes: Close waits for requests in flight
	defer svc.Jobs.Close(context.Background())

	// Alone.
	svc.Start()
	fastAlone, err := newHookTenant(ctx, svc, base, "fastalone")
	if err != nil {
		return err
	}
	r.alone, err = fastAlone.backlog(&fast, n, func() {})
	svc.Jobs.Close(context.Background())
	if err != nil {
		return err
	}

	// The slow tenant: 8 webhooks and their backlog, made while the
	// dispatcher is stopped; then it runs until every worker holds one.
	slowHooks, err := newHookTenant(ctx, svc, base, "slowhooks")
	if err != nil {
		return err
	}
	for i := range 8 {
		if _, err := slowHooks.createHook(fmt.Sprintf("%s/%d", slow.URL, i)); err != nil {
			return err
		}
	}
	if err := slowHooks.postProjects(slowChanges); err != nil {
		return err
	}
	// The fast tenant is made after the slow one: its id is the higher.
	fastHooks, err := newHookTenant(ctx, svc, base, "fastbeside")
	if err != nil {
		return err
	}
	svc.Start()
	for start := time.Now(); slowIn.Load() < 8; {
		if time.Since(start) > time.Minute {
			return fmt.Errorf("the slow tenant's webhooks hold %d workers after a minute, want 8", slowIn.Load())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	var slowBefore int64
	if r.beside, err = fastHooks.backlog(&fast, n, func() { slowBefore = slowDone.Load() }); err != nil {
		return err
	}
	r.slowBeside = slowDone.Load() - slowBefore
	return nil
}

// fastReceiver answers at once and notes when the first and the last
// delivery since reset arrived (UnixNano).
type fastReceiver struct {
	srv              *httptest.Server
	got, first, last atomic.Int64
}

// backlogRun is a fast tenant's backlog delivered: how many arrived, and
// when the first and the last did after the backlog became due; elapsed
// is last (or, when not all arrived, the run's limit).
type backlogRun struct {
	got                  int64
	first, last, elapsed time.Duration
}

// rate is deliveries/s from due to the last.
func (b backlogRun) rate() float64 { return float64(b.got) / b.elapsed.Seconds() }

// served is deliveries/s from the first delivery to the last.
func (b backlogRun) served() float64 { return float64(b.got-1) / (b.last - b.first).Seconds() }

// describe is rate, and how many arrived when not all n did.
func (b backlogRun) describe(n int) string {
	s := fmt.Sprintf("%.0f", b.rate())
	if b.got < int64(n) {
		s += fmt.Sprintf(" (%d of %d in %s)", b.got, n, besideLimit)
	}
	return s
}

// hookTenant is a tenant's admin talking to the service.
type hookTenant struct {
	ctx        context.Context
	base, slug string
	token      string
	client     *http.Client
}

// newHookTenant makes tenant slug and signs its admin in.
func newHookTenant(ctx context.Context, svc *app.Service, base, slug string) (*hookTenant, error) {
	t := &hookTenant{ctx: ctx, base: base, slug: slug, client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slug, AdminEmail: "admin@" + slug + ".test", AdminPassword: "bench-password"}); err != nil {
		return nil, err
	}
	token, err := signIn(t.client, base, slug, "admin@"+slug+".test", "bench-password")
	if err != nil {
		return nil, err
	}
	t.token = token
	return t, nil
}

// send makes a request of the admin and wants status.
func (t *hookTenant) send(method, path, body string, status int) ([]byte, error) {
	req, _ := http.NewRequestWithContext(t.ctx, method, t.base+path, strings.NewReader(body))
	req.Header.Set("companyurl", t.slug)
	req.Header.Set("Authorization", "Bearer "+t.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := t.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		return b, fmt.Errorf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return b, nil
}

// createHook subscribes url to the tenant's projects and returns its id.
func (t *hookTenant) createHook(url string) (int64, error) {
	b, err := t.send(http.MethodPost, "/v1/webhooks", fmt.Sprintf(`{"url": %q, "resources": ["projects"]}`, url), http.StatusCreated)
	if err != nil {
		return 0, err
	}
	var h struct{ ID int64 }
	if err := json.Unmarshal(b, &h); err != nil || h.ID == 0 {
		return 0, fmt.Errorf("POST /v1/webhooks: no id in %s", b)
	}
	return h.ID, nil
}

// postProjects creates n projects from 8 concurrent clients.
func (t *hookTenant) postProjects(n int) error {
	var wg sync.WaitGroup
	var failed atomic.Value
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 8 {
				if _, err := t.send(http.MethodPost, "/v1/projects", fmt.Sprintf(`{"name": "%s %d"}`, t.slug, i), http.StatusCreated); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := failed.Load().(error); ok {
		return err
	}
	return nil
}

// backlog makes one webhook at receiver, disabled, and n-1 changes; then
// it enables the webhook and makes the nth change (whose commit wakes
// the dispatcher, which then finds the whole backlog due), and takes the
// time from there until the receiver has all n, at most besideLimit;
// due is called when the clock starts. The dispatcher must be running.
func (t *hookTenant) backlog(receiver *fastReceiver, n int, due func()) (backlogRun, error) {
	id, err := t.createHook(receiver.srv.URL + "/" + t.slug)
	if err != nil {
		return backlogRun{}, err
	}
	hook := fmt.Sprintf("/v1/webhooks/%d", id)
	if _, err := t.send(http.MethodPatch, hook, `{"enabled": false}`, http.StatusOK); err != nil {
		return backlogRun{}, err
	}
	if err := t.postProjects(n - 1); err != nil {
		return backlogRun{}, err
	}
	got := &receiver.got
	want := got.Load() + int64(n)
	receiver.first.Store(0)
	due()
	start := time.Now()
	if _, err := t.send(http.MethodPatch, hook, `{"enabled": true}`, http.StatusOK); err != nil {
		return backlogRun{}, err
	}
	if _, err := t.send(http.MethodPost, "/v1/projects", fmt.Sprintf(`{"name": "%s last"}`, t.slug), http.StatusCreated); err != nil {
		return backlogRun{}, err
	}
	var run backlogRun
	for got.Load() < want && time.Since(start) < besideLimit {
		select {
		case <-t.ctx.Done():
			return run, t.ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	run.elapsed = time.Since(start)
	if run.got = got.Load() - want + int64(n); run.got > 0 {
		run.first = time.Unix(0, receiver.first.Load()).Sub(start)
		run.last = time.Unix(0, receiver.last.Load()).Sub(start)
	}
	if run.got == int64(n) {
		run.elapsed = run.last
	}
	return run, nil
}
