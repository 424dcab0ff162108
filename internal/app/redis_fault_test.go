//go:build system

package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// rfRedis is the Redis behind the fault proxy; each test owns one of its
// databases.
const rfRedis = "127.0.0.1:6379"

// rfService is the real service with --redis pointed at a fault proxy.
type rfService struct {
	srv    *testenv.Server
	log    *testenv.SyncBuffer
	tenant testenv.Tenant
}

// rfStart starts the service on backend b with Redis database db behind the
// proxy, 2 file requests per minute and a brake of 3 logins per account.
func rfStart(t *testing.T, b testenv.Backend, p *testenv.Proxy, db int) *rfService {
	t.Helper()
	log := &testenv.SyncBuffer{}
	srv := testenv.StartLogged(t, b, log, func(c *config.Config) {
		c.Redis = fmt.Sprintf("redis://%s/%d", p.Addr, db)
		c.FileRate = 2
		c.LoginFailuresPerAccount = 3
	})
	return &rfService{srv: srv, log: log, tenant: srv.CreateTenant(t, "faults")}
}

// rfOwnDB skips without Redis and empties the test's database.
func rfOwnDB(t *testing.T, db int) {
	t.Helper()
	if c, err := net.DialTimeout("tcp", rfRedis, time.Second); err != nil {
		testenv.SkipOrFail(t, "redis at "+rfRedis+" does not answer: "+err.Error())
	} else {
		c.Close()
	}
	rdb := redis.NewClient(&redis.Options{Addr: rfRedis, DB: db})
	defer rdb.Close()
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
}

// send sends a request and fails the test if the answer takes longer than
// a bound far above the 100 ms Redis timeout. It keeps an http.Client of
// its own: with Redis frozen a hanging request must fail the test within
// seconds, not at the test's timeout.
func (s *rfService) send(t *testing.T, req *http.Request) (int, http.Header, []byte) {
	t.Helper()
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("%s %s took %s", req.Method, req.URL.Path, took)
	}
	return resp.StatusCode, resp.Header, b
}

// create posts a record with send; it must answer 201.
func (s *rfService) create(t *testing.T, c *testenv.Client, res string, body testenv.M) int64 {
	t.Helper()
	status, _, raw := s.send(t, c.Request(t, http.MethodPost, "/v1/"+res, body))
	var m testenv.M
	if err := json.Unmarshal(raw, &m); err != nil || status != http.StatusCreated {
		t.Fatalf("create %s: %d %s", res, status, raw)
	}
	return testenv.ID(t, m)
}

// grant sends a password grant and returns the status and a client of the
// tenant's admin with the access token.
func (s *rfService) grant(t *testing.T, password string) (int, *testenv.Client) {
	t.Helper()
	status, _, c := s.grantH(t, password)
	return status, c
}

// grantH is grant with the answer's headers.
func (s *rfService) grantH(t *testing.T, password string) (int, http.Header, *testenv.Client) {
	t.Helper()
	status, hdr, b := s.send(t, s.srv.TokenRequest(t, s.tenant.Slug, testenv.PasswordForm(s.tenant.AdminEmail, password)))
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(b, &tok)
	return status, hdr, &testenv.Client{Srv: s.srv, Slug: s.tenant.Slug, Token: tok.AccessToken}
}

// wantPolicy checks that an answer's RateLimit fields show policy with
// quota q over w seconds and r left; on a 429 t must equal Retry-After.
func wantPolicy(t *testing.T, what string, status int, hdr http.Header, policy string, q, w, r int64) {
	t.Helper()
	p, ok := testenv.RateLimits(t, what, hdr)[policy]
	if !ok || p.Quota != q || p.Window != w || p.Remaining != r {
		t.Errorf("%s: %s %+v (shown %v), want q=%d w=%d r=%d", what, policy, p, ok, q, w, r)
	}
	if status == http.StatusTooManyRequests && strconv.FormatInt(p.Reset, 10) != hdr.Get("Retry-After") {
		t.Errorf("%s: 429 with %s t=%d, Retry-After %q", what, policy, p.Reset, hdr.Get("Retry-After"))
	}
}

// checkLogin: the right password passes; wrong ones are braked after the
// third attempt.
func (s *rfService) checkLogin(t *testing.T) *testenv.Client {
	t.Helper()
	status, c := s.grant(t, s.tenant.Password)
	if status != http.StatusOK || c.Token == "" {
		t.Fatalf("password grant: %d", status)
	}
	for i := range 3 {
		status, hdr, _ := s.grantH(t, "wrong")
		if status != http.StatusBadRequest {
			t.Fatalf("wrong password %d: %d, want 400", i+1, status)
		}
		wantPolicy(t, fmt.Sprintf("wrong password %d", i+1), status, hdr, "login-pair", 3, 180, int64(2-i))
	}
	status, hdr, _ := s.grantH(t, "wrong")
	if status != http.StatusTooManyRequests {
		t.Fatalf("fourth wrong password: %d, want 429 (brake counted in the process)", status)
	}
	wantPolicy(t, "fourth wrong password", status, hdr, "login-pair", 3, 180, 0)
	return c
}

// checkFileLimit: an upload and a download-URL request pass (2 per
// minute), the third file request is refused with Retry-After. It returns
// the path of the upload's download URL.
func (s *rfService) checkFileLimit(t *testing.T, c *testenv.Client) string {
	t.Helper()
	project := s.create(t, c, "projects", testenv.M{"name": "P"})
	doc := s.create(t, c, "documents", testenv.M{"model": "project", "record": project, "category": 7})
	ct, body := testenv.Multipart(t, testenv.Part{Filename: "faults.txt", Data: []byte("redis is an accelerator")})
	req := c.Request(t, http.MethodPost, testenv.UploadPath("document", doc, false), body)
	req.Header.Set("Content-Type", ct)
	status, hdr, up := s.send(t, req)
	var upload testenv.M
	if err := json.Unmarshal(up, &upload); err != nil || status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, up)
	}
	wantPolicy(t, "upload", status, hdr, "files", 2, 60, 1)
	link := fmt.Sprintf("/v1/files/download/%d", testenv.ID(t, upload))
	status, hdr, b := s.send(t, c.Request(t, http.MethodGet, link, nil))
	if status != http.StatusOK {
		t.Fatalf("download URL: %d %s", status, b)
	}
	wantPolicy(t, "download URL", status, hdr, "files", 2, 60, 0)
	status, hdr, _ = s.send(t, c.Request(t, http.MethodGet, link, nil))
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("third file request: %d, Retry-After %q; want 429 counted in the process", status, hdr.Get("Retry-After"))
	}
	wantPolicy(t, "third file request", status, hdr, "files", 2, 60, 0)
	return link
}

// metric returns a sample's value from the service's /metrics ("" when
// absent).
func (s *rfService) metric(t *testing.T, sample string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	s.srv.Service.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(sample) + ` (\S+)$`).FindStringSubmatch(rec.Body.String())
	if m == nil {
		return ""
	}
	return m[1]
}

func (s *rfService) checkFallbackMetrics(t *testing.T) {
	t.Helper()
	if got := s.metric(t, "planwerk_redis_up"); got != "0" {
		t.Errorf("planwerk_redis_up = %q, want 0", got)
	}
	for _, limit := range []string{"files", "login-account"} {
		if got := s.metric(t, `planwerk_ratelimit_fallback_total{limit="`+limit+`"}`); got == "" || got == "0" {
			t.Errorf("planwerk_ratelimit_fallback_total{limit=%q} = %q, want > 0", limit, got)
		}
	}
	if n := strings.Count(s.log.String(), "redis unavailable"); n != 1 {
		t.Errorf("%d log lines say redis is unavailable, want 1; log:\n%s", n, s.log.String())
	}
}

// TestRedisDownAtStartup: the service starts with Redis down, logins and
// file limits work with counts in the process, and counts are shared
// again once Redis comes.
func TestRedisDownAtStartup(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		const db = 13
		rfOwnDB(t, db)
		p := testenv.NewProxy(t, rfRedis)
		p.Down()
		s := rfStart(t, b, p, db)
		c := s.checkLogin(t)
		link := s.checkFileLimit(t, c)
		s.checkFallbackMetrics(t)

		p.Up(t)
		// After the cool-down, a limited request starts a probe; poll with
		// such requests until it found Redis.
		deadline := time.Now().Add(20 * time.Second)
		for s.metric(t, "planwerk_redis_up") != "1" {
			if time.Now().After(deadline) {
				t.Fatalf("redis not used again 20 s after it came; log:\n%s", s.log.String())
			}
			s.send(t, c.Request(t, http.MethodGet, link, nil))
			time.Sleep(100 * time.Millisecond)
		}
		if !strings.Contains(s.log.String(), "redis answers again") {
			t.Errorf("no log line says redis is back; log:\n%s", s.log.String())
		}
		// Redis never saw this user's file requests: a fresh shared count,
		// which the fields show (less what polls counted there).
		status, hdr, raw := s.send(t, c.Request(t, http.MethodGet, link, nil))
		if status != http.StatusOK {
			t.Fatalf("download URL with redis back: %d %s", status, raw)
		}
		if p := testenv.RateLimits(t, "download URL with redis back", hdr)["files"]; p.Quota != 2 || p.Remaining > 1 {
			t.Errorf("download URL with redis back: files %+v, want q=2 r<=1", p)
		}
	})
}

// TestRedisFrozen: a Redis that stops answering (connections open, no
// data) makes no request fail or hang.
func TestRedisFrozen(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		const db = 14
		rfOwnDB(t, db)
		p := testenv.NewProxy(t, rfRedis)
		s := rfStart(t, b, p, db)
		if status, _ := s.grant(t, s.tenant.Password); status != http.StatusOK {
			t.Fatalf("password grant with redis up: %d", status)
		}
		if got := s.metric(t, "planwerk_redis_up"); got != "1" {
			t.Errorf("planwerk_redis_up = %q with redis up, want 1", got)
		}

		p.Freeze(t)
		start := time.Now()
		s.checkFileLimit(t, s.checkLogin(t))
		t.Logf("5 grants and 5 file requests on a frozen redis: %s", time.Since(start))
		s.checkFallbackMetrics(t)
	})
}
