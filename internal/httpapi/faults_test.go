//go:build system

package httpapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// outcome is one answer the load got.
type outcome struct {
	what       string
	status     int
	code       string
	retryAfter string
	took       time.Duration
	err        error
}

// load sends requests of one tenant in a loop while a test injects
// faults, and remembers every answer and every acknowledged write. Its
// workers run beside the test, so they send with a client of their own
// and note a failure to answer instead of failing the test.
type load struct {
	t       *testing.T
	client  *http.Client
	stop    chan struct{}
	done    sync.WaitGroup
	mu      sync.Mutex
	answers []outcome
	written []string // paths of acknowledged records
	ok, bad atomic.Int64
}

func startLoad(t *testing.T, workers int, step func(l *load) outcome) *load {
	l := &load{t: t, stop: make(chan struct{}),
		client: &http.Client{Timeout: 2 * time.Minute}}
	for range workers {
		l.done.Add(1)
		go func() {
			defer l.done.Done()
			for {
				select {
				case <-l.stop:
					return
				default:
				}
				o := step(l)
				l.mu.Lock()
				l.answers = append(l.answers, o)
				l.mu.Unlock()
				if o.status >= 200 && o.status < 300 {
					l.ok.Add(1)
				} else {
					l.bad.Add(1)
				}
			}
		}()
	}
	return l
}

// send does one request of the load, as c.
func (l *load) send(what string, c *testenv.Client, method, path string, body any) (outcome, []byte) {
	req := c.Request(l.t, method, path, body)
	start := time.Now()
	resp, err := l.client.Do(req)
	o := outcome{what: what, took: time.Since(start), err: err}
	if err != nil {
		return o, nil
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	o.took = time.Since(start)
	o.status, o.retryAfter = resp.StatusCode, resp.Header.Get("Retry-After")
	var e struct{ Code string }
	_ = json.Unmarshal(raw, &e)
	o.code = e.Code
	return o, raw
}

// waitFor waits until the load has n more answers of the kind (ok or not).
func (l *load) waitFor(t *testing.T, ok bool, n int64, what string) {
	t.Helper()
	counter := &l.bad
	if ok {
		counter = &l.ok
	}
	target := counter.Load() + n
	eventually(t, 90*time.Second, what, func() bool { return counter.Load() >= target })
}

// finish stops the load and checks every answer: a success, or a 503
// naming the part that failed, with Retry-After, in bounded time. Never
// a 500, never a hang.
func (l *load) finish(t *testing.T, code string, longest time.Duration) {
	t.Helper()
	close(l.stop)
	l.done.Wait()
	counts := map[string]int{}
	for _, o := range l.answers {
		counts[fmt.Sprintf("%s %d %s", o.what, o.status, o.code)]++
		switch {
		case o.err != nil:
			t.Errorf("%s: no answer after %s: %v", o.what, o.took, o.err)
		case o.took > longest:
			t.Errorf("%s: answered %d after %s, longer than %s", o.what, o.status, o.took, longest)
		case o.status >= 200 && o.status < 300:
		case o.status == http.StatusServiceUnavailable && o.code == code && o.retryAfter != "":
		default:
			t.Errorf("%s: %d %q (Retry-After %q), want success or 503 %s with Retry-After", o.what, o.status, o.code, o.retryAfter, code)
		}
	}
	t.Logf("answers: %v", counts)
}

// probe is how a load balancer asks /readyz: an answer that does not
// come within a second is a failed probe.
var probe = &http.Client{Timeout: time.Second}

// readyz asks /readyz as a load balancer does and says how long it took.
// An answer that does not come within the probe's second fails the test:
// /readyz's own checks give up well before that.
func readyz(t *testing.T, srv *testenv.Server) (int, testenv.M, time.Duration) {
	t.Helper()
	start := time.Now()
	resp, err := probe.Do(srv.Public().Request(t, http.MethodGet, "/readyz", nil))
	if err != nil {
		t.Errorf("readyz: no answer within the probe's second: %v", err)
		return 0, nil, time.Since(start)
	}
	defer resp.Body.Close()
	var body testenv.M
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Errorf("readyz: %d, body: %v", resp.StatusCode, err)
	}
	return resp.StatusCode, body, time.Since(start)
}

// viaProxy returns a PostgreSQL URL whose host is addr.
func viaProxy(t *testing.T, dsn, addr string) string {
	t.Helper()
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = addr
	return u.String()
}

// TestDatabaseFaults: PostgreSQL frozen, stopped and restarted under
// load (writes, lists, reads of the audit log), behind a real TCP fault
// proxy. Requests answer 503
// database_unavailable with Retry-After within the request deadline,
// /readyz says so within a second, the service recovers without a
// restart, and every acknowledged write is there afterwards.
func TestDatabaseFaults(t *testing.T) {
	t.Parallel()
	pg := testenv.NewProxy(t, testenv.PostgresAddr(t))
	dsn := viaProxy(t, testenv.DSN(t, testenv.Backend{Name: "postgres"}), pg.Addr)
	log := &testenv.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			for _, line := range strings.Split(log.String(), "\n") {
				if strings.Contains(line, `"level":"ERROR"`) {
					t.Log(line)
				}
			}
		}
	})
	srv := testenv.StartLogged(t, testenv.Backend{Name: "postgres"}, log, func(c *config.Config) {
		c.Database = dsn
		c.RequestTimeout = 2 * time.Second
	})
	c := srv.SignIn(t, srv.CreateTenant(t, "acme"))
	project := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "Timed"}))
	task := testenv.ID(t, c.Create(t, "tasks", testenv.M{"name": "Timed", "project": project}))
	n := atomic.Int64{}
	l := startLoad(t, 3, func(l *load) outcome {
		switch i := n.Add(1); i % 7 {
		case 5: // a time entry moves the time totals in its transaction
			o, _ := l.send("time entry", c, http.MethodPost, "/v1/time-entries",
				testenv.M{"project": project, "task": task, "day": "2026-03-02", "duration": 60, "sorting": i})
			return o
		case 6:
			o, _ := l.send("time totals", c, http.MethodGet, "/v1/analytics/time-totals?from=2026-01-01&to=2026-12-31&groupBy=user", nil)
			return o
		case 0:
			o, raw := l.send("create", c, http.MethodPost, "/v1/projects", testenv.M{"name": fmt.Sprintf("p%d", i)})
			if o.status == http.StatusCreated {
				var rec struct{ ID int64 }
				_ = json.Unmarshal(raw, &rec)
				l.mu.Lock()
				l.written = append(l.written, fmt.Sprintf("/v1/projects/%d", rec.ID))
				l.mu.Unlock()
			}
			return o
		case 1:
			o, _ := l.send("list", c, http.MethodGet, "/v1/projects?limit=20&sort=id%20DESC", nil)
			return o
		case 2:
			o, _ := l.send("audit log", c, http.MethodGet, "/v1/audit-log?limit=20", nil)
			return o
		case 3:
			o, _ := l.send("history", c, http.MethodGet, fmt.Sprintf("/v1/users/%d/history", c.UserID), nil)
			return o
		default:
			o, _ := l.send("me", c, http.MethodGet, "/v1/users/me", nil)
			return o
		}
	})
	l.waitFor(t, true, 20, "no successes before the faults")

	faults := []struct {
		name         string
		inject, heal func()
	}{
		{"frozen", func() { pg.Freeze(t) }, func() { pg.Heal(t) }},
		{"down", pg.Down, func() { pg.Up(t) }},
		{"restarted", func() { pg.Down(); pg.Up(t) }, func() {}},
	}
	for _, f := range faults {
		f.inject()
		if f.name != "restarted" {
			l.waitFor(t, false, 6, "no failures while the database is "+f.name)
			status, body, took := readyz(t, srv)
			if status != http.StatusServiceUnavailable || body["code"] != "database_unavailable" || took > 5*time.Second {
				t.Errorf("readyz while the database is %s: %d %v after %s", f.name, status, body, took)
			}
		}
		f.heal()
		l.waitFor(t, true, 20, "no recovery after the database was "+f.name)
		if status, body, _ := readyz(t, srv); status != http.StatusOK {
			t.Errorf("readyz after the database was %s: %d %v", f.name, status, body)
		}
	}
	l.finish(t, "database_unavailable", 2*time.Second+10*time.Second)
	if len(l.written) == 0 {
		t.Fatal("no write was acknowledged")
	}
	for _, path := range l.written {
		if status, _, body := c.Call(t, http.MethodGet, path, nil); status != http.StatusOK {
			t.Errorf("acknowledged %s: %d %v", path, status, body)
		}
	}
}

// TestFileStoreFaults: the S3 store frozen, stopped and restarted under
// a load of uploads: 503 file_store_unavailable with Retry-After, never a
// hang or a 500; /readyz names the file store, and so does a download
// through the service's link; recovery without restart; every
// acknowledged upload downloads afterwards.
func TestFileStoreFaults(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		spec, addr := testenv.S3Endpoint(t)
		s3 := testenv.NewProxy(t, addr)
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.Files = testenv.S3Via(t, spec, s3.Addr)
			c.RequestTimeout = 2 * time.Second
			c.FileRate = 100000
		})
		c := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		exp := testenv.ID(t, c.Create(t, "expenses", testenv.M{}))
		// A file the load leaves alone, downloaded during the faults.
		kept := testenv.ID(t, c.Create(t, "expenses", testenv.M{}))
		keptData := []byte("kept through the faults")
		ct, body := uploadBody(t, keptData)
		if status, _, raw := c.With("Content-Type", ct).Send(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/expense/%d", kept), body); status != http.StatusCreated {
			t.Fatalf("upload: %d %s", status, raw)
		}
		keptID := getUploadID(t, c, kept)
		// acked: each acknowledged upload, when it was sent and when its
		// answer came.
		type ack struct {
			id         int64
			sent, came time.Time
		}
		var mu sync.Mutex
		var acked []ack
		data := bytes.Repeat([]byte("planwerk"), 4096)
		l := startLoad(t, 2, func(l *load) outcome {
			ct, body := uploadBody(t, data)
			sent := time.Now()
			o, raw := l.send("upload", c.With("Content-Type", ct), http.MethodPost, fmt.Sprintf("/v1/files/upload/expense/%d?delete_others=1", exp), body)
			if o.status == http.StatusCreated {
				var up struct{ ID int64 }
				_ = json.Unmarshal(raw, &up)
				mu.Lock()
				acked = append(acked, ack{up.ID, sent, time.Now()})
				mu.Unlock()
			}
			return o
		})
		l.waitFor(t, true, 5, "no uploads before the faults")
		for _, f := range []struct {
			name         string
			inject, heal func()
		}{
			{"frozen", func() { s3.Freeze(t) }, func() { s3.Heal(t) }},
			{"down", s3.Down, func() { s3.Up(t) }},
		} {
			f.inject()
			l.waitFor(t, false, 3, "no failures while the file store is "+f.name)
			status, body, took := readyz(t, srv)
			checks, _ := body["checks"].(map[string]any)
			if status != http.StatusServiceUnavailable || body["code"] != "file_store_unavailable" || checks["database"] != "ok" || took > 5*time.Second {
				t.Errorf("readyz while the file store is %s: %d %v after %s", f.name, status, body, took)
			}
			// The link is signed without the store; its download needs it.
			start := time.Now()
			status, hdr, raw := testenv.Fetch(t, http.MethodGet, c.DownloadURL(t, keptID))
			if took := time.Since(start); status != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" ||
				!strings.Contains(string(raw), `"file_store_unavailable"`) || took > 5*time.Second {
				t.Errorf("download while the file store is %s: %d %q %s after %s", f.name, status, hdr.Get("Retry-After"), raw, took)
			}
			f.heal()
			l.waitFor(t, true, 5, "no recovery after the file store was "+f.name)
		}
		l.finish(t, "file_store_unavailable", 2*time.Second+30*time.Second)
		// The record's file is an acknowledged upload that no acknowledged
		// upload sent after its answer replaced: the last one, of the two
		// writers' last two when they overlapped (both may commit in one
		// batch, and their answers come in either order).
		mu.Lock()
		defer mu.Unlock()
		got := getUploadID(t, c, exp)
		var won *ack
		for i := range acked {
			if acked[i].id == got {
				won = &acked[i]
			}
		}
		if won == nil {
			t.Errorf("the expense's upload is %d, not an acknowledged one", got)
		} else {
			for _, a := range acked {
				if a.sent.After(won.came) {
					t.Errorf("the expense's upload is %d, answered before upload %d was sent, which was acknowledged too", got, a.id)
				}
			}
		}
		if raw := c.Download(t, keptID); !bytes.Equal(raw, keptData) {
			t.Errorf("the kept file after the faults: %q", raw)
		}
	})
}

// getUploadID returns the id of the one upload of an expense.
func getUploadID(t *testing.T, c *testenv.Client, expense int64) int64 {
	t.Helper()
	ups := c.List(t, fmt.Sprintf("/v1/files/expense/%d", expense))
	if len(ups) != 1 {
		t.Fatalf("uploads of expense %d: %v", expense, ups)
	}
	return testenv.ID(t, ups[0])
}

// TestFullDisk: a full disk answers 507 insufficient_storage, leaves no
// temporary file, loses nothing acknowledged, and /readyz names it. The
// folder store and a SQLite database each live on a small file system.
func TestFullDisk(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		disk := testenv.SmallDisk(t, "96m")
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.Files = disk
			c.FileRate = 100000
		})
		c := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		data := bytes.Repeat([]byte{1}, 20<<20)
		var acked []int64
		full := false
		for i := 0; i < 10 && !full; i++ {
			exp := testenv.ID(t, c.Create(t, "expenses", testenv.M{}))
			ct, body := uploadBody(t, data)
			status, _, ans := c.With("Content-Type", ct).Call(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/expense/%d", exp), body)
			switch {
			case status == http.StatusCreated:
				acked = append(acked, exp)
			case status == http.StatusInsufficientStorage && ans["code"] == "insufficient_storage":
				full = true
			default:
				t.Fatalf("upload %d on a filling disk: %d %v", i, status, ans)
			}
		}
		if !full {
			t.Fatal("the disk never filled up")
		}
		leftovers, _ := filepath.Glob(filepath.Join(disk, "*", ".upload-*"))
		if len(leftovers) > 0 {
			t.Errorf("temporary files left on the full disk: %v", leftovers)
		}
		if status, body, _ := readyz(t, srv); status != http.StatusServiceUnavailable || body["code"] != "insufficient_storage" {
			t.Errorf("readyz with the file store's disk full: %d %v", status, body)
		}
		for _, id := range acked {
			if got := getUploadID(t, c, id); got == 0 {
				t.Errorf("acknowledged upload of expense %d is gone", id)
			}
		}
	})
	t.Run("database", func(t *testing.T) {
		disk := testenv.SmallDisk(t, "16m")
		srv := testenv.Start(t, testenv.Backend{Name: "sqlite"}, func(c *config.Config) {
			c.Database = "sqlite:" + filepath.Join(disk, "planwerk.db")
		})
		c := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		pad := strings.Repeat("z", 512<<10)
		var acked []string
		full := false
		for i := 0; i < 100 && !full; i++ {
			status, _, ans := c.Call(t, http.MethodPost, "/v1/projects", testenv.M{"pad": pad})
			switch {
			case status == http.StatusCreated:
				acked = append(acked, fmt.Sprint(ans["id"]))
			case status == http.StatusInsufficientStorage && ans["code"] == "insufficient_storage":
				full = true
			default:
				t.Fatalf("write %d on a filling disk: %d %v", i, status, ans)
			}
		}
		if !full {
			out, _ := exec.Command("df", "-h", disk).CombinedOutput()
			t.Fatalf("the disk never filled up:\n%s", out)
		}
		if status, body, _ := readyz(t, srv); status != http.StatusServiceUnavailable || body["code"] != "insufficient_storage" {
			t.Errorf("readyz with the database's disk full: %d %v", status, body)
		}
		for _, id := range acked {
			if status, _, body := c.Call(t, http.MethodGet, "/v1/projects/"+id, nil); status != http.StatusOK {
				t.Errorf("acknowledged project %s: %d %v", id, status, body)
			}
		}
	})
}
