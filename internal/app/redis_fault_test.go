package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
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

// do sends a request for the tenant and fails the test if the answer takes
// longer than a bound far above the 100 ms Redis timeout.
func (s *rfService) do(t *testing.T, method, path, token string, body io.Reader, ct string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", s.tenant.Slug)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if ct != "" {
		req.Header.Set("Content-Type", ct)
	}
	client := &http.Client{Timeout: 10 * time.Second}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("%s %s took %s", method, path, took)
	}
	return resp.StatusCode, resp.Header, b
}

// grant sends a password grant and returns the status and access token.
func (s *rfService) grant(t *testing.T, password string) (int, string) {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {s.tenant.AdminEmail}, "password": {password},
		"client_id": {"faults"}, "client_secret": {"x"}}
	status, _, b := s.do(t, http.MethodPost, "/oauth2/token", "", strings.NewReader(form.Encode()), "application/x-www-form-urlencoded")
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	_ = json.Unmarshal(b, &tok)
	return status, tok.AccessToken
}

// checkLogin: the right password passes; wrong ones are braked after the
// third attempt.
func (s *rfService) checkLogin(t *testing.T) string {
	t.Helper()
	status, token := s.grant(t, s.tenant.Password)
	if status != http.StatusOK || token == "" {
		t.Fatalf("password grant: %d", status)
	}
	for i := range 3 {
		if status, _ := s.grant(t, "wrong"); status != http.StatusBadRequest {
			t.Fatalf("wrong password %d: %d, want 400", i+1, status)
		}
	}
	if status, _ := s.grant(t, "wrong"); status != http.StatusTooManyRequests {
		t.Fatalf("fourth wrong password: %d, want 429 (brake counted in the process)", status)
	}
	return token
}

// checkFileLimit: an upload and a download-URL request pass (2 per
// minute), the third file request is refused with Retry-After. It returns
// the upload's id.
func (s *rfService) checkFileLimit(t *testing.T, token string) int64 {
	t.Helper()
	_, _, p := s.do(t, http.MethodPost, "/v1/projects", token, strings.NewReader(`{"name":"P"}`), "application/json")
	var project struct{ ID int64 }
	_ = json.Unmarshal(p, &project)
	status, _, d := s.do(t, http.MethodPost, "/v1/documents", token,
		strings.NewReader(fmt.Sprintf(`{"model":"project","record":%d,"category":7}`, project.ID)), "application/json")
	var doc struct{ ID int64 }
	if err := json.Unmarshal(d, &doc); err != nil || doc.ID == 0 {
		t.Fatalf("create document: %d %s", status, d)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "faults.txt")
	_, _ = part.Write([]byte("redis is an accelerator"))
	_ = mw.Close()
	status, _, up := s.do(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/document/%d", doc.ID), token, &body, mw.FormDataContentType())
	if status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, up)
	}
	var upload struct{ ID int64 }
	_ = json.Unmarshal(up, &upload)
	link := fmt.Sprintf("/v1/files/download/%d", upload.ID)
	if status, _, b := s.do(t, http.MethodGet, link, token, nil, ""); status != http.StatusOK {
		t.Fatalf("download URL: %d %s", status, b)
	}
	status, hdr, _ := s.do(t, http.MethodGet, link, token, nil, "")
	if status != http.StatusTooManyRequests || hdr.Get("Retry-After") == "" {
		t.Fatalf("third file request: %d, Retry-After %q; want 429 counted in the process", status, hdr.Get("Retry-After"))
	}
	return upload.ID
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
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		const db = 13
		rfOwnDB(t, db)
		p := testenv.NewProxy(t, rfRedis)
		p.Down()
		s := rfStart(t, b, p, db)
		token := s.checkLogin(t)
		upload := s.checkFileLimit(t, token)
		s.checkFallbackMetrics(t)

		p.Up(t)
		// After the cool-down, a limited request starts a probe; poll with
		// such requests until it found Redis.
		deadline := time.Now().Add(20 * time.Second)
		for s.metric(t, "planwerk_redis_up") != "1" {
			if time.Now().After(deadline) {
				t.Fatalf("redis not used again 20 s after it came; log:\n%s", s.log.String())
			}
			s.do(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload), token, nil, "")
			time.Sleep(100 * time.Millisecond)
		}
		if !strings.Contains(s.log.String(), "redis answers again") {
			t.Errorf("no log line says redis is back; log:\n%s", s.log.String())
		}
		// Redis never saw this user's file requests: a fresh shared count.
		if status, _, b := s.do(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload), token, nil, ""); status != http.StatusOK {
			t.Fatalf("download URL with redis back: %d %s", status, b)
		}
	})
}

// TestRedisFrozen: a Redis that stops answering (connections open, no
// data) makes no request fail or hang.
func TestRedisFrozen(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
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
		token := s.checkLogin(t)
		s.checkFileLimit(t, token)
		t.Logf("5 grants and 5 file requests on a frozen redis: %s", time.Since(start))
		s.checkFallbackMetrics(t)
	})
}
