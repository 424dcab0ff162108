package main

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/users"
)

// Waiting reads (long polls) of the change feed, as runPolls drives them.
const (
	// idlePolls are tenant A's waiting reads beside B's writes and C's
	// reads, spread over pollUsers members.
	idlePolls = 60
	pollUsers = 4
	// bigPolls are the waiting reads that name one resource bigNames
	// times (fewer when the request line would not fit the server's
	// header limit).
	bigPolls = 16
	bigNames = 12500
	bigName  = "time-entries"
	// clientPolls are one member's read-only API client's waiting reads;
	// then the tenant's admin asks for /v1/users/me meRequests times.
	clientPolls = 70
	meRequests  = 20
	// pollLoad is how many clients write for B and read for C.
	pollLoad = 8
)

// pollResult is one engine's numbers of the long-poll benchmark.
type pollResult struct {
	engine string
	pg     bool // the CPU of PostgreSQL's server processes was measured

	// (a) B's writes and C's single GETs, without (a run before and one
	// after) and beside A's idle waiting reads, and the CPU each used.
	quiet, polled loadRun
	idle          pollCounts

	// (b) waiting reads with resources= one name names times.
	names       int
	namesNote   string
	cpuIdle     cpuUse  // nothing runs
	cpuIdleBig  cpuUse  // only the big reads wait
	writesAlone loadRun // B's writes alone, a run before and one after
	writesBig   loadRun // B's writes beside the big reads
	big         pollCounts

	// (c) the admin's GET /v1/users/me, median of meRequests, without and
	// beside the API client's waiting reads.
	meQuiet, mePolled time.Duration
	meTimedOut        int
	meAnswered        int
	client            pollCounts
}

// pollCounts are what became of waiting reads: still waiting when they
// were cut, refused (429), failed otherwise, and answered (then asked
// again from their cursor).
type pollCounts struct {
	waiting, refused, failed, answered int64
}

func (c pollCounts) String() string {
	return fmt.Sprintf("%d / %d / %d / %d", c.waiting, c.refused, c.failed, c.answered)
}

// loadRun is a run of B's writers (and C's readers, when they ran), or
// the mean of two.
type loadRun struct {
	writes   float64 // B's creates/s
	getP50   time.Duration
	getP99   time.Duration
	gets     float64 // C's GETs/s
	errors   int64
	cpu      cpuUse // during the run
	duration time.Duration
	latency  []time.Duration // of C's GETs, sorted
}

// mean is the runs x and y as one: rates over both, CPU seconds and
// duration of one run on average, percentiles of all GETs.
func mean(x, y loadRun) loadRun {
	xs, ys := x.duration.Seconds(), y.duration.Seconds()
	l := loadRun{
		writes:   (x.writes*xs + y.writes*ys) / (xs + ys),
		gets:     (x.gets*xs + y.gets*ys) / (xs + ys),
		errors:   x.errors + y.errors,
		cpu:      cpuUse{(x.cpu.proc + y.cpu.proc) / 2, (x.cpu.pg + y.cpu.pg) / 2},
		duration: (x.duration + y.duration) / 2,
		latency:  append(slices.Clone(x.latency), y.latency...),
	}
	l.percentiles()
	return l
}

func (l *loadRun) percentiles() {
	slices.Sort(l.latency)
	if len(l.latency) > 0 {
		l.getP50 = l.latency[len(l.latency)/2]
		l.getP99 = l.latency[len(l.latency)*99/100]
	}
}

// runPolls measures what waiting reads of the change feed cost others:
// (a) tenant A's 60 idle waiting reads beside tenant B's writes and
// tenant C's single GETs; (b) 16 waiting reads whose resources filter
// names one resource thousands of times, in CPU seconds; (c) one
// read-only API client's 70 waiting reads beside its tenant's admin.
func runPolls(ctx context.Context, pgURL string, d time.Duration) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var results []pollResult
	for _, dsn := range dsns {
		r, err := benchPolls(ctx, dsn, pgURL, d)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk long-poll benchmark: %s each run, %s, %d cores, %s\n", d, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("CPU seconds are the bench process's (the service runs in it, beside the bench's own clients); on PostgreSQL")
	fmt.Println(`"+ N pg" adds those of the server processes that serve this process's connections (found by their client ports).`)
	fmt.Printf("\n(a) Tenant A's %d waiting reads (wait=30 from the feed's end, %d members), beside tenant B's writes (POST /v1/projects, %d clients) and tenant C's GETs of one record (%d clients):\n\n",
		idlePolls, pollUsers, pollLoad, pollLoad)
	fmt.Println("No polls: a run before A's polls and one after, as one (CPU s: of one run on average).")
	fmt.Println()
	fmt.Println("| engine | B writes/s, no polls | beside A's polls | ratio | C GET p99, no polls | beside A's polls | ratio | C GET p50 | beside | A's polls: waiting / 429 / failed / answered | CPU s, no polls | beside |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.0f | %.0f | %.2f | %s | %s | %.2f | %s | %s | %s | %s | %s |\n", r.engine,
			r.quiet.writes, r.polled.writes, r.polled.writes/r.quiet.writes,
			ms(r.quiet.getP99), ms(r.polled.getP99), a2b(r.polled.getP99, r.quiet.getP99),
			ms(r.quiet.getP50), ms(r.polled.getP50), r.idle, r.quiet.cpu.text(r.pg), r.polled.cpu.text(r.pg))
	}
	fmt.Printf("\n(b) %d waiting reads of tenant A (%d members) with resources= one name repeated (%s):\n\n", bigPolls, pollUsers, results[0].namesNote)
	fmt.Println("Idle: nothing but the polls (or nothing at all) for one run. B's writes alone: a run before the polls and one after.")
	fmt.Println()
	fmt.Println("| engine | names | CPU s idle, no polls | idle, beside the polls | B writes/s alone | beside the polls | ratio | CPU s, B's writes alone | beside the polls | CPU ms per write alone | beside | polls waiting / 429 / failed / answered |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		perWrite := func(l loadRun) float64 { return 1000 * (l.cpu.proc + l.cpu.pg) / (l.writes * l.duration.Seconds()) }
		fmt.Printf("| %s | %d | %s | %s | %.0f | %.0f | %.2f | %s | %s | %.2f | %.2f | %s |\n", r.engine, r.names,
			r.cpuIdle.text(r.pg), r.cpuIdleBig.text(r.pg), r.writesAlone.writes, r.writesBig.writes, r.writesBig.writes/r.writesAlone.writes,
			r.writesAlone.cpu.text(r.pg), r.writesBig.cpu.text(r.pg), perWrite(r.writesAlone), perWrite(r.writesBig), r.big)
	}
	fmt.Printf("\n(c) %d waiting reads of one member's read-only API client; its tenant's admin's GET /v1/users/me, median of %d (each given at most %s):\n\n",
		clientPolls, meRequests, d)
	fmt.Println("| engine | median, no polls | beside the client's polls | ratio | answered / timed out | client's polls: waiting / 429 / failed / answered |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range results {
		polled, ratio := ms(r.mePolled), fmt.Sprintf("%.1f", a2b(r.mePolled, r.meQuiet))
		if r.mePolled >= d {
			polled, ratio = "> "+d.String(), "> "+ratio
		}
		fmt.Printf("| %s | %s | %s | %s | %d / %d | %s |\n", r.engine, ms(r.meQuiet), polled, ratio,
			r.meAnswered, r.meTimedOut, r.client)
	}
	for _, r := range results {
		if n := r.quiet.errors + r.polled.errors + r.writesAlone.errors + r.writesBig.errors; n > 0 {
			fmt.Printf("\n%s: %d of B's writes or C's reads failed (no polls %d, beside %d; (b) alone %d, beside %d)\n",
				r.engine, n, r.quiet.errors, r.polled.errors, r.writesAlone.errors, r.writesBig.errors)
		}
	}
	return nil
}

func benchPolls(ctx context.Context, dsn, pgURL string, d time.Duration) (pollResult, error) {
	svc, srv, stop, err := startService(ctx, dsn, nil)
	if err != nil {
		return pollResult{}, err
	}
	defer stop()
	r := pollResult{engine: svc.DB.Engine()}
	meter := &cpuMeter{}
	if r.engine == "postgres" {
		if meter, err = newCPUMeter(ctx, pgURL); err != nil {
			return r, err
		}
		defer meter.close()
		r.pg = meter.pg != nil
	}
	base := srv.URL
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	admin := func(slug string) (*pollUser, error) {
		if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: slug, AdminEmail: "admin@" + slug + ".test", AdminPassword: "bench-password"}); err != nil {
			return nil, err
		}
		token, err := signIn(client, base, slug, "admin@"+slug+".test", "bench-password")
		return &pollUser{ctx: ctx, client: client, base: base, slug: slug, token: token}, err
	}
	a, err := admin("polla")
	if err != nil {
		return r, err
	}
	b, err := admin("pollb")
	if err != nil {
		return r, err
	}
	c, err := admin("pollc")
	if err != nil {
		return r, err
	}
	dAdmin, err := admin("polld")
	if err != nil {
		return r, err
	}
	var members []*pollUser
	for i := range pollUsers {
		m, err := a.member(fmt.Sprintf("m%d@polla.test", i))
		if err != nil {
			return r, err
		}
		members = append(members, m)
	}
	record, err := c.send(http.MethodPost, "/v1/projects", `{"name": "the record"}`, http.StatusCreated)
	if err != nil {
		return r, err
	}
	var rec struct{ ID int64 }
	if err := json.Unmarshal(record, &rec); err != nil || rec.ID == 0 {
		return r, fmt.Errorf("POST /v1/projects: no id in %s", record)
	}
	getPath := fmt.Sprintf("/v1/projects/%d", rec.ID)
	end, err := a.feedEnd()
	if err != nil {
		return r, err
	}
	load := func(readers bool) loadRun { return driveLoad(meter, b, c, getPath, readers, d) }

	// (a)
	driveLoad(meter, b, c, getPath, true, time.Second) // warm-up
	before := load(true)
	idle := startPolls(members, idlePolls, "wait=30&after="+end)
	idle.settle(ctx, time.Second)
	r.polled = load(true)
	r.idle = idle.stop()
	r.quiet = mean(before, load(true))

	// (b)
	r.names, r.namesNote, err = fitNames(members[0], end)
	if err != nil {
		return r, err
	}
	big := "wait=30&after=" + end + "&resources=" + strings.Repeat(bigName+",", r.names-1) + bigName
	before = load(false)
	mark := meter.mark()
	sleep(ctx, d)
	r.cpuIdle = meter.since(mark)
	bp := startPolls(members, bigPolls, big)
	bp.settle(ctx, time.Second)
	mark = meter.mark()
	sleep(ctx, d)
	r.cpuIdleBig = meter.since(mark)
	r.writesBig = load(false)
	r.big = bp.stop()
	r.writesAlone = mean(before, load(false))

	// (c)
	m, err := dAdmin.member("m@polld.test")
	if err != nil {
		return r, err
	}
	apiClient, err := dAdmin.apiClient(m, "read")
	if err != nil {
		return r, err
	}
	r.meQuiet, _, _ = dAdmin.meMedian(d, 0)
	dEnd, err := apiClient.feedEnd()
	if err != nil {
		return r, err
	}
	cp := startPolls([]*pollUser{apiClient}, clientPolls, "wait=30&after="+dEnd)
	cp.settle(ctx, time.Second)
	r.mePolled, r.meAnswered, r.meTimedOut = dAdmin.meMedian(d, 4*d)
	r.client = cp.stop()
	return r, ctx.Err()
}

// pollUser is a principal of a tenant talking to the service.
type pollUser struct {
	ctx        context.Context
	client     *http.Client
	base, slug string
	token      string
	id         int64 // the user's id (members)
}

func (u *pollUser) request(ctx context.Context, method, path, body string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequestWithContext(ctx, method, u.base+path, rd)
	req.Header.Set("companyurl", u.slug)
	req.Header.Set("Authorization", "Bearer "+u.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	return req
}

// send makes a request and wants status.
func (u *pollUser) send(method, path, body string, status int) ([]byte, error) {
	resp, err := u.client.Do(u.request(u.ctx, method, path, body))
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != status {
		return b, fmt.Errorf("%s %s: %d %.300s", method, path, resp.StatusCode, b)
	}
	return b, nil
}

// member makes a member (no admin) of u's tenant and signs them in.
func (u *pollUser) member(email string) (*pollUser, error) {
	b, err := u.send(http.MethodPost, "/v1/users", fmt.Sprintf(`{"email": %q, "password": "member-password", "isAdmin": false}`, email), http.StatusCreated)
	if err != nil {
		return nil, err
	}
	var rec struct{ ID int64 }
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	token, err := signIn(u.client, u.base, u.slug, email, "member-password")
	return &pollUser{ctx: u.ctx, client: u.client, base: u.base, slug: u.slug, token: token, id: rec.ID}, err
}

// apiClient makes an API client acting as m within scope and signs it in
// (client_credentials).
func (u *pollUser) apiClient(m *pollUser, scope string) (*pollUser, error) {
	b, err := u.send(http.MethodPost, "/v1/api-clients", fmt.Sprintf(`{"name": "sync", "user": %d, "scope": %q}`, m.id, scope), http.StatusCreated)
	if err != nil {
		return nil, err
	}
	var c struct{ ClientID, ClientSecret string }
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}, "client_id": {c.ClientID}, "client_secret": {c.ClientSecret}}
	req, _ := http.NewRequestWithContext(u.ctx, http.MethodPost, u.base+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", u.slug)
	resp, err := u.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var t struct {
		AccessToken string `json:"access_token"`
	}
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &t) != nil || t.AccessToken == "" {
		return nil, fmt.Errorf("client_credentials grant: %d %s", resp.StatusCode, raw)
	}
	return &pollUser{ctx: u.ctx, client: u.client, base: u.base, slug: u.slug, token: t.AccessToken, id: m.id}, nil
}

// feedPage is a page of the change feed.
type feedPage struct {
	Changes []json.RawMessage
	Next    string
}

// feedEnd is the cursor after the last change u may read now.
func (u *pollUser) feedEnd() (string, error) {
	path := "/v1/changes?limit=10000"
	for {
		b, err := u.send(http.MethodGet, path, "", http.StatusOK)
		if err != nil {
			return "", err
		}
		var p feedPage
		if err := json.Unmarshal(b, &p); err != nil {
			return "", err
		}
		if len(p.Changes) == 0 {
			return p.Next, nil
		}
		path = "/v1/changes?limit=10000&after=" + p.Next
	}
}

// meMedian asks for /v1/users/me meRequests times, one after another,
// each given at most d, and returns the median, how many were answered
// and how many timed out. With budget > 0 it stops asking once budget
// has passed; the requests not made count as timed out.
func (u *pollUser) meMedian(d, budget time.Duration) (median time.Duration, answered, timedOut int) {
	var times []time.Duration
	start := time.Now()
	for range meRequests {
		if budget > 0 && time.Since(start) > budget {
			times = append(times, d)
			timedOut++
			continue
		}
		ctx, cancel := context.WithTimeout(u.ctx, d)
		t := time.Now()
		resp, err := u.client.Do(u.request(ctx, http.MethodGet, "/v1/users/me", ""))
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode != http.StatusOK {
				err = fmt.Errorf("status %d", resp.StatusCode)
			}
		}
		cancel()
		took := time.Since(t)
		if err != nil {
			took, timedOut = d, timedOut+1
		} else {
			answered++
		}
		times = append(times, took)
	}
	slices.Sort(times)
	return times[len(times)/2], answered, timedOut
}

// fitNames finds how many times bigName fits resources= of a waiting
// read of the feed from end: bigNames, or the most the server takes (it
// answers 431 to a request line and headers over its limit). It asks
// with wait=00, as long as wait=30 but answered at once, each time on a
// new connection: the server reads a request on a connection it kept
// alive with up to 4 KiB more slack.
func fitNames(u *pollUser, end string) (int, string, error) {
	fresh := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	try := func(n int) (int, error) {
		path := "/v1/changes?wait=00&after=" + end + "&resources=" + strings.Repeat(bigName+",", n-1) + bigName
		resp, err := fresh.Do(u.request(u.ctx, http.MethodGet, path, ""))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode, nil
	}
	status, err := try(bigNames)
	if err == nil && status == http.StatusOK {
		return bigNames, fmt.Sprintf("%d times fit", bigNames), nil
	}
	lo, hi := 1, bigNames // lo fits, hi does not
	if s, err := try(lo); err != nil || s != http.StatusOK {
		return 0, "", fmt.Errorf("a read of the feed with resources=%s: %d %v", bigName, s, err)
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if s, err := try(mid); err == nil && s == http.StatusOK {
			lo = mid
		} else {
			hi = mid
		}
	}
	answer := fmt.Sprint(status)
	if err != nil {
		answer = err.Error()
	}
	note := fmt.Sprintf("%d times is answered %s; %d times is the most that fits, a resources value of %d bytes", bigNames, answer, lo, len(bigName)*lo+lo-1)
	return lo, note, nil
}

// polls are waiting reads of the feed in flight.
type polls struct {
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	n       int64
	started atomic.Int64
	// refused were answered 429 (and not asked again); failed ended with
	// another error; answered pages are asked again from their cursor.
	refused, failed, answered atomic.Int64
	firstFailure              sync.Once
}

// fail counts a read that ended with err, and tells the first.
func (p *polls) fail(err error) {
	p.failed.Add(1)
	p.firstFailure.Do(func() { fmt.Fprintln(os.Stderr, "a waiting read failed:", err) })
}

// startPolls starts n waiting reads of the feed, the i-th by
// users[i%len(users)], with query (whose after= is replaced by each
// answer's next cursor when a read is asked again).
func startPolls(users []*pollUser, n int, query string) *polls {
	ctx, cancel := context.WithCancel(context.Background())
	p := &polls{cancel: cancel, n: int64(n)}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: n}}
	for i := range n {
		u := users[i%len(users)]
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			q := query
			for ctx.Err() == nil {
				p.started.Add(1)
				resp, err := client.Do(u.request(ctx, http.MethodGet, "/v1/changes?"+q, ""))
				if err != nil {
					if ctx.Err() == nil {
						p.fail(err)
					}
					return
				}
				var page feedPage
				err = json.NewDecoder(resp.Body).Decode(&page)
				resp.Body.Close()
				switch {
				case resp.StatusCode == http.StatusTooManyRequests:
					p.refused.Add(1)
					return
				case resp.StatusCode != http.StatusOK || err != nil:
					if ctx.Err() == nil {
						p.fail(fmt.Errorf("%d %v", resp.StatusCode, err))
					}
					return
				}
				p.answered.Add(1)
				q = replaceAfter(q, page.Next)
			}
		}()
	}
	return p
}

// replaceAfter sets the after= of a query string.
func replaceAfter(q, after string) string {
	parts := strings.Split(q, "&")
	for i, part := range parts {
		if strings.HasPrefix(part, "after=") {
			parts[i] = "after=" + after
		}
	}
	return strings.Join(parts, "&")
}

// settle waits for every read to be sent, then d more for them to arrive
// and be refused or wait.
func (p *polls) settle(ctx context.Context, d time.Duration) {
	for start := time.Now(); time.Since(start) < time.Minute && ctx.Err() == nil; {
		if p.started.Load() >= p.n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	sleep(ctx, d)
}

// stop cuts the reads still waiting and waits for them; it returns what
// became of them.
func (p *polls) stop() pollCounts {
	c := pollCounts{refused: p.refused.Load(), failed: p.failed.Load(), answered: p.answered.Load()}
	c.waiting = p.started.Load() - c.refused - c.failed - c.answered
	p.cancel()
	p.wg.Wait()
	// The service learns of the cut connections a moment later and then
	// lets their waits go.
	time.Sleep(300 * time.Millisecond)
	return c
}

// driveLoad runs B's pollLoad writers and, when readers, C's pollLoad
// readers of path for d; it takes the process's CPU seconds meanwhile.
func driveLoad(meter *cpuMeter, b, c *pollUser, path string, readers bool, d time.Duration) loadRun {
	var (
		wg       sync.WaitGroup
		writes   atomic.Int64
		gets     atomic.Int64
		errs     atomic.Int64
		mu       sync.Mutex
		latency  []time.Duration
		deadline = time.Now().Add(d)
	)
	mark, start := meter.mark(), time.Now()
	for w := range pollLoad {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; time.Now().Before(deadline); i += pollLoad {
				if _, err := b.send(http.MethodPost, "/v1/projects", fmt.Sprintf(`{"name": "b %d"}`, i), http.StatusCreated); err != nil {
					if errors.Is(err, context.Canceled) {
						return
					}
					errs.Add(1)
					continue
				}
				writes.Add(1)
			}
		}()
		if !readers {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var local []time.Duration
			for time.Now().Before(deadline) {
				t := time.Now()
				_, err := c.send(http.MethodGet, path, "", http.StatusOK)
				if errors.Is(err, context.Canceled) {
					return
				}
				local = append(local, time.Since(t))
				if err != nil {
					errs.Add(1)
				}
				gets.Add(1)
			}
			mu.Lock()
			latency = append(latency, local...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	l := loadRun{writes: float64(writes.Load()) / elapsed.Seconds(), gets: float64(gets.Load()) / elapsed.Seconds(),
		errors: errs.Load(), cpu: meter.since(mark), duration: elapsed, latency: latency}
	l.percentiles()
	return l
}

// cpuUse is CPU seconds used: by this process, and by the PostgreSQL
// server processes that serve its connections.
type cpuUse struct{ proc, pg float64 }

func (c cpuUse) text(pg bool) string {
	if !pg {
		return fmt.Sprintf("%.2f", c.proc)
	}
	return fmt.Sprintf("%.2f + %.2f pg", c.proc, c.pg)
}

// cpuMeter measures cpuUse; pg is nil where PostgreSQL's server
// processes are not measured (SQLite, or a server not on this machine).
type cpuMeter struct {
	pg   *sql.DB
	port string // the server's, in hex as /proc/net/tcp shows it
}

// newCPUMeter measures this process and, when the PostgreSQL server at
// pgURL runs on this machine, its processes serving this process.
func newCPUMeter(ctx context.Context, pgURL string) (*cpuMeter, error) {
	u, err := url.Parse(pgURL)
	if err != nil {
		return nil, err
	}
	port := 5432
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, err
		}
	}
	db, err := sql.Open("pgx", pgURL)
	if err != nil {
		return nil, err
	}
	m := &cpuMeter{pg: db, port: fmt.Sprintf("%04X", port)}
	var pid int
	if err := db.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		db.Close()
		return nil, err
	}
	if _, ok := processCPU(pid); !ok {
		db.Close() // not on this machine, or not ours to read
		return &cpuMeter{}, nil
	}
	return m, nil
}

func (m *cpuMeter) close() {
	if m.pg != nil {
		m.pg.Close()
	}
}

// cpuMark is the CPU seconds used up to a moment: this process's, and
// each server process's by its pid.
type cpuMark struct {
	proc float64
	pg   map[int]float64
}

func (m *cpuMeter) mark() cpuMark {
	return cpuMark{proc: cpuSeconds(), pg: m.backends()}
}

// since is the CPU used from mark to now; a server process that ended
// meanwhile is not counted, one that began is counted whole.
func (m *cpuMeter) since(mark cpuMark) cpuUse {
	u := cpuUse{proc: cpuSeconds() - mark.proc}
	for pid, s := range m.backends() {
		u.pg += s - mark.pg[pid]
	}
	return u
}

// backends maps each server process serving a connection of this
// process (but the meter's own) to its CPU seconds so far.
func (m *cpuMeter) backends() map[int]float64 {
	if m.pg == nil {
		return nil
	}
	ports := m.clientPorts()
	if len(ports) == 0 {
		return nil
	}
	rows, err := m.pg.Query(`SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND client_port IN (` + strings.Join(ports, ", ") + `)`)
	if err != nil {
		return nil
	}
	defer rows.Close()
	out := map[int]float64{}
	for rows.Next() {
		var pid int
		if rows.Scan(&pid) == nil {
			if s, ok := processCPU(pid); ok {
				out[pid] = s
			}
		}
	}
	return out
}

// clientPorts are the local ports (decimal) of this process's TCP
// connections to the server's port: its sockets (/proc/self/fd) matched
// by inode with the connections of /proc/self/net/tcp and tcp6.
func (m *cpuMeter) clientPorts() []string {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil
	}
	mine := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink("/proc/self/fd/" + fd.Name()); err == nil && strings.HasPrefix(l, "socket:[") {
			mine[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	var ports []string
	for _, table := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		b, err := os.ReadFile(table)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || !mine[f[9]] || !strings.HasSuffix(f[2], ":"+m.port) {
				continue
			}
			_, local, _ := strings.Cut(f[1], ":")
			if n, err := strconv.ParseUint(local, 16, 16); err == nil {
				ports = append(ports, strconv.FormatUint(n, 10))
			}
		}
	}
	return ports
}

// processCPU is the CPU seconds (user and system) process pid has used.
func processCPU(pid int) (float64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The fields after the command's closing parenthesis: state is the
	// first, utime the 12th and stime the 13th, in clock ticks (100 a
	// second on Linux).
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b)[i+1:])
	if i < 0 || len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return (ut + st) / 100, true
}

// cpuSeconds is the CPU time this process has used, user and system.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
