//go:build system

package httpapi_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// stallTimeout is the request timeout of the stall tests: short, so that
// a stall of a few timeouts is quick.
const stallTimeout = 2 * time.Second

// stallClients is how many clients create time entries during a stall.
const stallClients = 16

// stallWrite is what one create of the stall test was told.
type stallWrite struct {
	tag        string
	status     int
	code       string
	retryAfter string
	start      time.Time
	took       time.Duration
	err        error
}

// stallLoad is the clients of a stall test: each creates WORK entries
// of a few projects (so that the project days' locks are taken), each
// entry tagged with an attribute of its own, half of them with an
// Idempotency-Key, and notes what it was told.
type stallLoad struct {
	t        *testing.T
	c        *testenv.Client
	projects []stallProject
	client   *http.Client
	stop     chan struct{}
	done     sync.WaitGroup
	mu       sync.Mutex
	writes   []stallWrite
}

// stallProject is a project and a task of it.
type stallProject struct{ project, task int64 }

func startStallLoad(t *testing.T, c *testenv.Client, projects []stallProject) *stallLoad {
	// A client waits well past the bound the service promises, so that
	// an answer that comes late is measured rather than cut off.
	l := &stallLoad{t: t, c: c, projects: projects, stop: make(chan struct{}),
		client: &http.Client{Timeout: stallTimeout + 30*time.Second}}
	for w := range stallClients {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for n := 0; ; n++ {
				select {
				case <-l.stop:
					return
				default:
				}
				sw := l.create(fmt.Sprintf("w%d-%d", w, n), l.projects[(w+n)%len(l.projects)], w%2 == 0)
				l.mu.Lock()
				l.writes = append(l.writes, sw)
				l.mu.Unlock()
			}
		}()
	}
	return l
}

// create sends one create, keyed (Idempotency-Key) or not, and notes its
// answer.
func (l *stallLoad) create(tag string, p stallProject, keyed bool) stallWrite {
	req := l.c.Request(l.t, http.MethodPost, "/v1/time-entries", testenv.M{"trackingType": "WORK", "project": p.project, "task": p.task,
		"day": "2026-03-02", "duration": 600, "sorting": 1, "stallTag": tag})
	if keyed {
		req.Header.Set("Idempotency-Key", tag)
	}
	sw := stallWrite{tag: tag, start: time.Now()}
	resp, err := l.client.Do(req)
	if err != nil {
		sw.took, sw.err = time.Since(sw.start), err
		return sw
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	sw.took = time.Since(sw.start)
	sw.status, sw.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	var e struct{ Code string }
	_ = json.Unmarshal(raw, &e)
	sw.code = e.Code
	return sw
}

// answered counts the answers of the kind (2xx or not) so far.
func (l *stallLoad) answered(ok bool) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, w := range l.writes {
		if (w.status >= 200 && w.status < 300) == ok && w.err == nil {
			n++
		}
	}
	return n
}

// waitFor waits until the load has n more answers of the kind.
func (l *stallLoad) waitFor(t *testing.T, ok bool, n int, what string) {
	t.Helper()
	target := l.answered(ok) + n
	eventually(t, 2*time.Minute, what, func() bool { return l.answered(ok) >= target })
}

func (l *stallLoad) finish() []stallWrite {
	close(l.stop)
	l.done.Wait()
	return l.writes
}

// stallFault is a way for the database to stop answering.
type stallFault struct {
	// inject starts the fault; tenant is the tenant of the load.
	inject func(t *testing.T, tenant int64)
	heal   func(t *testing.T)
	// settled reports whether the database has ended every transaction
	// it had begun before healed: then nothing sent before it can still
	// commit.
	settled func(t *testing.T, healed time.Time) bool
	// committed says when the rows of the tags were committed, where the
	// database can tell (else nil).
	committed func(t *testing.T, tags []string) map[string]time.Time
}

// stallProjects is how many projects the entries of a stall test are
// spread over: a few, so that writers wait for each other's day locks.
const stallProjects = 3

// stallHold is how long a fault lasts: several request timeouts.
const stallHold = 3 * stallTimeout

// stallSlack bounds how much later than its client's send a request's
// deadline starts in the service: the time the request takes to reach
// it on a loaded machine.
const stallSlack = 250 * time.Millisecond

// stallRefusals are the codes of a 503 a write may get while the
// database stalls: database_unavailable when a statement of its own ran
// out of time, overloaded when it ran out of time waiting for a turn at
// the database, every slot being held by statements the stalled
// database had not answered.
var stallRefusals = map[string]bool{"database_unavailable": true, "overloaded": true}

// runStall drives the clients while the database stalls and heals, and
// checks every answer: each within the request timeout and a second,
// 2xx or 503 (stallRefusals) with Retry-After; afterwards, every
// write answered 2xx exists and none answered otherwise does.
func runStall(t *testing.T, srv *testenv.Server, f stallFault) {
	t.Helper()
	tenant := srv.CreateTenant(t, "acme")
	admin := srv.SignIn(t, tenant)
	var projects []stallProject
	for i := range stallProjects {
		p := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": fmt.Sprintf("p%d", i)}))
		task := testenv.ID(t, admin.Create(t, "tasks", testenv.M{"name": fmt.Sprintf("t%d", i), "project": p}))
		projects = append(projects, stallProject{p, task})
	}
	l := startStallLoad(t, admin, projects)
	if w := l.create("first", projects[0], true); w.status != http.StatusCreated {
		l.finish()
		t.Fatalf("a create before the stall: %d %s %v", w.status, w.code, w.err)
	}
	l.waitFor(t, true, 3*stallClients, "no successes before the stall")
	f.inject(t, tenant.ID)
	injected := time.Now()
	time.Sleep(stallHold)
	f.heal(t)
	healed := time.Now()
	l.waitFor(t, true, 2*stallClients, "no recovery after the stall")
	writes := l.finish()
	eventually(t, 2*time.Minute, "transactions begun before the heal still open", func() bool { return f.settled(t, healed) })

	exist := map[string]bool{}
	for _, m := range admin.List(t, "/v1/time-entries?limit=100000") {
		if tag, ok := m["stallTag"].(string); ok {
			exist[tag] = true
		}
	}
	var during []time.Duration
	statuses := map[string]int{}
	var lost, ghosts []string
	told := map[string]stallWrite{}
	for _, w := range writes {
		key := fmt.Sprint(w.status, " ", w.code)
		if w.err != nil {
			key = "no answer"
		}
		statuses[key]++
		if w.start.Before(healed) && w.start.Add(w.took).After(injected) {
			during = append(during, w.took)
		}
		told[w.tag] = w
		ok := w.err == nil && w.status >= 200 && w.status < 300
		switch {
		case w.err != nil:
			t.Errorf("%s: no answer after %s: %v", w.tag, w.took, w.err)
		case w.took > stallTimeout+time.Second:
			t.Errorf("%s: answered %d %s after %s, more than the request timeout (%s) and a second", w.tag, w.status, w.code, w.took, stallTimeout)
		case ok:
		case w.status == http.StatusServiceUnavailable && stallRefusals[w.code] && w.retryAfter != "":
		default:
			t.Errorf("%s: %d %q (Retry-After %q), want 2xx or 503 database_unavailable or overloaded with Retry-After", w.tag, w.status, w.code, w.retryAfter)
		}
		switch {
		case ok && !exist[w.tag]:
			lost = append(lost, w.tag)
		case !ok && exist[w.tag]:
			ghosts = append(ghosts, w.tag)
		}
	}
	slices.Sort(during)
	p50, p100 := time.Duration(0), time.Duration(0)
	if len(during) > 0 {
		p50, p100 = during[len(during)/2], during[len(during)-1]
	}
	t.Logf("%d creates, %d during the stall: p50 %s, p100 %s; answers %v", len(writes), len(during), p50, p100, statuses)
	if len(lost) > 0 {
		t.Errorf("%d writes answered 2xx are missing: %v", len(lost), lost)
	}
	if len(ghosts) == 0 {
		return
	}
	var when map[string]time.Time
	if f.committed != nil {
		when = f.committed(t, ghosts)
	}
	// A commit the database had begun by its request's deadline (its
	// answer lost with the network, or its server stopped or its disk
	// stalled midway) cannot be recalled: such a write is allowed, and
	// counted. One it began later is a write the client was told had
	// failed. (The service's deadline is a little after the client's
	// send: stallSlack.)
	allowed := 0
	for _, tag := range ghosts {
		w := told[tag]
		at, known := when[tag]
		if known && at.Before(w.start.Add(stallTimeout+stallSlack)) {
			allowed++
			t.Logf("%s: answered %d %s after %s, committed at %s: its commit was under way when the database stopped answering",
				tag, w.status, w.code, w.took, at.Format("15:04:05.000"))
			continue
		}
		committed := "at an unknown time"
		if known {
			committed = "at " + at.Format("15:04:05.000")
		}
		t.Errorf("%s: sent at %s, answered %d %s after %s, but committed %s (stall from %s to %s)", tag,
			w.start.Format("15:04:05.000"), w.status, w.code, w.took, committed, injected.Format("15:04:05.000"), healed.Format("15:04:05.000"))
	}
	t.Logf("%d writes not answered 2xx were committed, %d of them under way when the database stopped answering", len(ghosts), allowed)
}

// TestStalledDatabase: PostgreSQL (a server of the test's own) stops
// answering for several request timeouts while clients create time
// entries: behind a network that drops everything (a fault proxy), with
// its disk stalled (its writes throttled to a byte a second), and with
// its processes stopped, to go on later with what was sent to them
// meanwhile (COMMITs among it, held behind the tenant's position lock).
// Every request answers within the request timeout and a second, 2xx or
// 503 database_unavailable or overloaded, never 500; every write
// answered 2xx is there afterwards and none that was not.
func TestStalledDatabase(t *testing.T) {
	t.Parallel()
	t.Run("frozen network", func(t *testing.T) {
		pg := testenv.NewCluster(t)
		proxy := testenv.NewProxy(t, pg.Addr())
		srv := startStalled(t, viaProxy(t, pg.URL, proxy.Addr))
		runStall(t, srv, stallFault{
			inject:    func(t *testing.T, _ int64) { proxy.Freeze(t) },
			heal:      func(t *testing.T) { proxy.Heal(t) },
			settled:   clusterSettled(t, pg),
			committed: clusterCommitted(t, pg),
		})
	})
	t.Run("stalled disk", func(t *testing.T) {
		pg := testenv.NewCluster(t, "fsync=on")
		pg.PrepareDiskStall(t)
		srv := startStalled(t, pg.URL)
		runStall(t, srv, stallFault{
			inject:    func(t *testing.T, _ int64) { pg.StallDisk(t) },
			heal:      func(t *testing.T) { pg.UnstallDisk(t) },
			settled:   clusterSettled(t, pg),
			committed: clusterCommitted(t, pg),
		})
	})
	t.Run("stopped server", func(t *testing.T) {
		pg := testenv.NewCluster(t)
		srv := startStalled(t, pg.URL)
		runStall(t, srv, stallFault{
			inject: func(t *testing.T, tenant int64) {
				// Commits are made to wait in the server, behind the
				// tenant's position lock, when it stops: a session of
				// the test's holds it, and the server ends that session
				// for idling in its transaction once it goes on.
				holdPositions(t, pg, tenant, 3*time.Second, stallProjects-1)
				pg.Freeze(t)
			},
			heal:      func(t *testing.T) { pg.Thaw(t) },
			settled:   clusterSettled(t, pg),
			committed: clusterCommitted(t, pg),
		})
	})
}

// TestLockedSQLite: another connection holds SQLite's write lock for
// several request timeouts while clients create time entries: every
// request answers within the request timeout and a second, 503
// database_unavailable or overloaded while the lock is held, and every write answered
// 2xx is there afterwards and none that was not.
func TestLockedSQLite(t *testing.T) {
	t.Parallel()
	srv := startStalledOn(t, testenv.Backend{Name: "sqlite"}, "")
	other, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(srv.Config.Database, "sqlite:")+"?_txlock=immediate&_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Close() })
	var held *sql.Tx
	runStall(t, srv, stallFault{
		inject: func(t *testing.T, _ int64) {
			if held, err = other.Begin(); err != nil {
				t.Fatalf("take the write lock: %v", err)
			}
			if _, err := held.Exec(`UPDATE tenants SET name = name`); err != nil {
				t.Fatalf("take the write lock: %v", err)
			}
		},
		heal: func(t *testing.T) {
			if err := held.Rollback(); err != nil {
				t.Fatalf("release the write lock: %v", err)
			}
		},
		// The writes the load had answered after the heal, before it
		// stopped, came in batches after every batch that held an
		// earlier write: nothing is left to commit.
		settled: func(t *testing.T, _ time.Time) bool { return true },
	})
}

// startStalled starts a service on the database at dsn with the stall
// tests' request timeout, its error lines logged when the test fails.
func startStalled(t *testing.T, dsn string) *testenv.Server {
	t.Helper()
	return startStalledOn(t, testenv.Backend{Name: "postgres"}, dsn)
}

// startStalledOn starts a service on the backend (at dsn, unless empty)
// with the stall tests' request timeout.
func startStalledOn(t *testing.T, b testenv.Backend, dsn string) *testenv.Server {
	t.Helper()
	log := &testenv.SyncBuffer{}
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		n := 0
		for _, line := range strings.Split(log.String(), "\n") {
			if strings.Contains(line, `"level":"ERROR"`) && n < 20 {
				t.Log(line)
				n++
			}
		}
	})
	return testenv.StartLogged(t, b, log, func(c *config.Config) {
		if dsn != "" {
			c.Database = dsn
		}
		c.RequestTimeout = stallTimeout
	})
}

// holdPositions holds the tenant's change position lock, which every
// write takes with its last statements, in a session that the server
// ends after idle in its transaction, and waits until n writes wait in
// the server behind it: one for the lock itself, the others for the
// rows of the user's time totals which that one has moved. (The rest
// wait before, for the day locks those hold: one writer a project day
// gets this far.)
func holdPositions(t *testing.T, pg *testenv.Cluster, tenant int64, idle time.Duration, n int) {
	t.Helper()
	db := clusterDB(t, pg)
	ctx := context.Background()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	for _, q := range []string{fmt.Sprintf(`SET idle_in_transaction_session_timeout = %d`, idle.Milliseconds()), `BEGIN`} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO change_positions (tenant_id, last) VALUES ($1, 0)
		ON CONFLICT (tenant_id) DO UPDATE SET last = change_positions.last`, tenant); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "no writes waiting behind the position lock", func() bool {
		var waiting int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'
			AND (query LIKE '%change_positions%' OR query LIKE '%time_totals%')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		return waiting >= n
	})
}

// clusterSettled reports whether every transaction of the cluster's
// other sessions begun before healed has ended.
func clusterSettled(t *testing.T, pg *testenv.Cluster) func(t *testing.T, healed time.Time) bool {
	db := clusterDB(t, pg)
	return func(t *testing.T, healed time.Time) bool {
		var open int
		if err := db.QueryRow(`SELECT count(*) FROM pg_stat_activity WHERE pid <> pg_backend_pid()
			AND backend_type = 'client backend' AND xact_start < $1`, healed).Scan(&open); err != nil {
			t.Fatalf("open transactions: %v", err)
		}
		return open == 0
	}
}

// clusterCommitted reads when each tagged entry was committed.
func clusterCommitted(t *testing.T, pg *testenv.Cluster) func(t *testing.T, tags []string) map[string]time.Time {
	db := clusterDB(t, pg)
	return func(t *testing.T, tags []string) map[string]time.Time {
		rows, err := db.Query(`SELECT doc->>'stallTag', pg_xact_commit_timestamp(xmin) FROM records
			WHERE resource = 'time-entries' AND doc->>'stallTag' = ANY($1)`, tags)
		if err != nil {
			t.Fatalf("commit timestamps: %v", err)
		}
		defer rows.Close()
		when := map[string]time.Time{}
		for rows.Next() {
			var tag string
			var at time.Time
			if err := rows.Scan(&tag, &at); err != nil {
				t.Fatal(err)
			}
			when[tag] = at
		}
		return when
	}
}

// clusterDB is a pool on the cluster of the test's own, beside the
// service's and without a proxy between.
func clusterDB(t *testing.T, pg *testenv.Cluster) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", pg.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := db.PingContext(ctx); err != nil {
		t.Fatal(err)
	}
	return db
}
