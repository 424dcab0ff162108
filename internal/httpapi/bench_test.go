package httpapi_test

// Benchmarks of the HTTP edge on both database engines.
//
//	go test -run '^$' -bench . -benchtime 3s -benchmem ./internal/httpapi/
//
// The HTTP benchmarks run client and server in this one process, so their
// allocation figures count both sides of every request. Each sub-benchmark
// that uses b.RunParallel starts a fresh server per timing run (testing.B
// runs cleanups after every run); the set-up is excluded from the timing.
//
// The timed loops send with a raw keep-alive *http.Client instead of the
// tests' client: that one reports through a testing.TB, which the
// RunParallel goroutines must not fail through, builds every request
// through its general path, and sends with http.DefaultClient, whose pool
// keeps two idle connections per host, so 16 goroutines would open
// connections throughout the run and measure that instead.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// benchParallelism multiplies GOMAXPROCS into the number of client
// goroutines of the HTTP benchmarks: 8 × 2 cores = 16 requests in flight.
const benchParallelism = 8

var benchBackends = []testenv.Backend{{Name: "sqlite"}, {Name: "postgres"}}

// eachBackend runs fn as the sub-benchmarks "sqlite" and "postgres".
func eachBackend(b *testing.B, fn func(b *testing.B, be testenv.Backend)) {
	for _, be := range benchBackends {
		b.Run(be.Name, func(b *testing.B) { fn(b, be) })
	}
}

// benchClient returns a keep-alive client whose pool holds enough idle
// connections for every client goroutine; they are closed when tb ends.
func benchClient(tb testing.TB) *http.Client {
	tr := &http.Transport{
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
	tb.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 60 * time.Second}
}

// benchSetup starts a server on the backend with one tenant.
func benchSetup(tb testing.TB, be testenv.Backend) (*testenv.Server, testenv.Tenant) {
	tb.Helper()
	srv := testenv.Start(tb, be)
	return srv, srv.CreateTenant(tb, "bench")
}

// benchTokenRequest posts a password grant and returns the status and body.
func benchTokenRequest(c *http.Client, srv *testenv.Server, slug, body string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/oauth2/token", strings.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", slug)
	return benchDo(c, req)
}

// benchGetMe sends an authenticated GET /v1/users/me.
func benchGetMe(c *http.Client, url, slug, bearer string) (int, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("companyurl", slug)
	req.Header.Set("Authorization", bearer)
	return benchDo(c, req)
}

// benchDo sends req and reads the whole body, so the connection goes back
// to the pool.
func benchDo(c *http.Client, req *http.Request) (int, []byte, error) {
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// reportRate adds the throughput of the timed part.
func reportRate(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "req/s")
	}
}

// parallelRequests runs do from benchParallelism × GOMAXPROCS goroutines
// until b.N requests are done; the first failure stops the run.
func parallelRequests(b *testing.B, do func() (int, []byte, error), check func(status int, body []byte) bool) {
	b.Helper()
	var failed atomic.Bool
	b.ReportAllocs()
	b.SetParallelism(benchParallelism)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if failed.Load() {
				continue // drain the remaining iterations quickly
			}
			status, body, err := do()
			if err != nil || !check(status, body) {
				if failed.CompareAndSwap(false, true) {
					b.Errorf("request failed: status %d, err %v, body %.200s", status, err, body)
				}
			}
		}
	})
	b.StopTimer()
	reportRate(b)
}

// BenchmarkTokenEndpoint measures successful password grants over HTTP.
// Argon2id (19 MiB, t=2) dominates; the hasher runs at most NumCPU hashes at
// once, so the rest of the requests queue for a slot.
func BenchmarkTokenEndpoint(b *testing.B) {
	eachBackend(b, func(b *testing.B, be testenv.Backend) {
		srv, tn := benchSetup(b, be)
		c := benchClient(b)
		body := testenv.PasswordForm(tn.AdminEmail, tn.Password).Encode()
		parallelRequests(b,
			func() (int, []byte, error) { return benchTokenRequest(c, srv, tn.Slug, body) },
			func(status int, raw []byte) bool {
				return status == http.StatusOK && bytes.Contains(raw, []byte(`"access_token":"pwa_`))
			})
	})
}

// BenchmarkUsersMe measures authenticated GET /v1/users/me over keep-alive
// connections: tenant resolution (cached), token check (cached after the
// first request) and one user lookup in the database per request.
func BenchmarkUsersMe(b *testing.B) {
	eachBackend(b, func(b *testing.B, be testenv.Backend) {
		srv, tn := benchSetup(b, be)
		c := benchClient(b)
		bearer := "Bearer " + srv.SignIn(b, tn).Token
		url := srv.URL + "/v1/users/me"
		parallelRequests(b,
			func() (int, []byte, error) { return benchGetMe(c, url, tn.Slug, bearer) },
			func(status int, raw []byte) bool {
				// PostgreSQL renders the document with spaces: compare values.
				var me struct{ ID int64 }
				return status == http.StatusOK && json.Unmarshal(raw, &me) == nil && me.ID == tn.AdminID
			})
	})
}

// BenchmarkBareHandler is the ceiling of this machine for the HTTP
// benchmarks above: the same client and request shape against a handler
// that only writes a fixed small JSON body. It has no database, so it runs
// once, not per backend.
func BenchmarkBareHandler(b *testing.B) {
	payload := []byte(`{"id":1,"email":"admin@bench.test","isAdmin":true}` + "\n")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "application/json; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(payload)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(payload)
	}))
	defer hs.Close()
	c := benchClient(b)
	url := hs.URL + "/v1/users/me"
	parallelRequests(b,
		func() (int, []byte, error) { return benchGetMe(c, url, "bench", "Bearer pwa_x") },
		func(status int, raw []byte) bool { return status == http.StatusOK && len(raw) == len(payload) })
}

// BenchmarkAuthenticate measures the bearer check of every data request,
// called directly: "cached" with the token cache warm, "uncached" with the
// cache emptied before each call (so each call asks the database), and
// "forget" the cost of emptying the cache alone, to subtract from uncached.
func BenchmarkAuthenticate(b *testing.B) {
	eachBackend(b, func(b *testing.B, be testenv.Backend) {
		srv, tn := benchSetup(b, be)
		token := srv.SignIn(b, tn).Token
		authn := srv.Service.Auth
		ctx := context.Background()
		p, err := authn.Authenticate(ctx, tn.ID, token)
		if err != nil || p.UserID != tn.AdminID || p.TenantID != tn.ID || !p.IsAdmin {
			b.Fatalf("Authenticate = %+v, %v", p, err)
		}

		b.Run("cached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := authn.Authenticate(ctx, tn.ID, token); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("uncached", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				authn.ForgetCachedTokens()
				if _, err := authn.Authenticate(ctx, tn.ID, token); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("forget", func(b *testing.B) {
			b.ReportAllocs()
			if _, err := authn.Authenticate(ctx, tn.ID, token); err != nil { // one entry to drop
				b.Fatal(err)
			}
			for b.Loop() {
				authn.ForgetCachedTokens()
			}
		})
	})
}

// BenchmarkEdge measures the HTTP edge alone, in process and without a
// network: the middleware, the routing and the JSON 404 and 405
// answers, on a route that needs no database (GET /healthz).
func BenchmarkEdge(b *testing.B) {
	srv := testenv.Start(b, testenv.Backend{Name: "sqlite"})
	h := srv.Service.Handler
	for _, c := range []struct {
		name, method, path string
		want               int
	}{
		{"matched", http.MethodGet, "/healthz", http.StatusOK},
		{"not_found", http.MethodGet, "/nowhere", http.StatusNotFound},
		{"method_not_allowed", http.MethodPost, "/healthz", http.StatusMethodNotAllowed},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest(c.method, c.path, nil))
				if rec.Code != c.want {
					b.Fatalf("%s %s: %d, want %d", c.method, c.path, rec.Code, c.want)
				}
			}
		})
	}
}

// BenchmarkGetRecord measures one authenticated GET /v1/projects/{id}
// through the service's handler, called directly (no connection, no
// client): the time and allocations of the service's own path for a
// single read, the database read included.
func BenchmarkGetRecord(b *testing.B) {
	eachBackend(b, func(b *testing.B, be testenv.Backend) {
		srv, tn := benchSetup(b, be)
		c := srv.SignIn(b, tn)
		id := testenv.ID(b, c.Create(b, "projects", testenv.M{"name": "Bench"}))
		serveRepeatedly(b, srv, c.Request(b, http.MethodGet, "/v1/projects/"+strconv.FormatInt(id, 10), nil))
	})
}

// BenchmarkList1000 measures one authenticated GET /v1/projects?limit=1000
// of 1000 records through the service's handler, called directly, as
// BenchmarkGetRecord does for a single read.
func BenchmarkList1000(b *testing.B) {
	eachBackend(b, func(b *testing.B, be testenv.Backend) {
		srv, tn := benchSetup(b, be)
		c := srv.SignIn(b, tn)
		for i := range 1000 {
			c.Create(b, "projects", testenv.M{"name": "Bench " + strconv.Itoa(i)})
		}
		serveRepeatedly(b, srv, c.Request(b, http.MethodGet, "/v1/projects?limit=1000", nil))
	})
}

// serveRepeatedly times req through the service's handler, called
// directly (without the tests' check of documented errors), and expects
// 200 each time.
func serveRepeatedly(b *testing.B, srv *testenv.Server, req *http.Request) {
	h := srv.Service.Handler
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			b.Fatalf("status %d: %s", w.Code, w.Body)
		}
	}
}
