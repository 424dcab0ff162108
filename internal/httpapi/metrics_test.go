package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// metricValue returns the value of the sample whose line starts with
// prefix (name and labels), or -1.
func metricValue(t *testing.T, body, prefix string) float64 {
	t.Helper()
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			f, err := strconv.ParseFloat(strings.TrimSpace(line[len(prefix):]), 64)
			if err != nil {
				t.Fatalf("metric line %q: %v", line, err)
			}
			return f
		}
	}
	return -1
}

// scrape returns the text of GET /metrics.
func scrape(t *testing.T, srv *testenv.Server) string {
	t.Helper()
	status, hdr, raw := testenv.Do(t, srv.Public().Request(t, http.MethodGet, "/metrics", nil))
	if status != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", status, hdr.Get("Content-Type"))
	}
	return string(raw)
}

// TestMetrics drives requests, a failed login, a refused upload and an
// upload, and finds each in GET /metrics.
func TestMetrics(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.FileRate = 2
			c.LoginFailuresPerAccount = 1
		})
		tn := srv.CreateTenant(t, "acme")
		c := srv.SignIn(t, tn)
		for i := 0; i < 3; i++ {
			c.Call(t, http.MethodGet, "/v1/users/me", nil)
		}
		c.Call(t, http.MethodGet, "/v1/no-such-thing/at/all", nil)
		srv.Public().Call(t, "ZZZ123", "/healthz", nil)
		bad := testenv.PasswordForm(tn.AdminEmail, tn.Password)
		bad.Set("password", "wrong-password")
		srv.Grant(t, tn.Slug, bad)
		srv.Grant(t, tn.Slug, bad) // the brake holds the second
		c.ClientSignIn(t, c.APIClient(t, "sync", c.UserID, "read"))

		project := c.Create(t, "projects", testenv.M{"name": "P"})
		doc := c.Create(t, "documents", testenv.M{"model": "project", "record": testenv.ID(t, project), "category": 7})
		upload := func() int {
			ct, body := uploadBody(t, bytes.Repeat([]byte("m"), 1000))
			status, _, _ := c.With("Content-Type", ct).Call(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/document/%d?delete_others=1", testenv.ID(t, doc)), body)
			return status
		}
		for i, want := range []int{201, 201, 429} {
			if got := upload(); got != want {
				t.Fatalf("upload %d: %d, want %d", i, got, want)
			}
		}

		m := scrape(t, srv)
		checks := []struct {
			prefix string
			min    float64
		}{
			{`planwerk_http_requests_total{method="GET",route="GET /v1/users/me",status="200"}`, 3},
			{`planwerk_http_requests_total{method="GET",route="unmatched",status="404"}`, 1},
			{`planwerk_http_requests_total{method="POST",route="POST /oauth2/token",status="400"}`, 1},
			{`planwerk_http_request_duration_seconds_count{method="GET",route="GET /v1/users/me"}`, 3},
			{`planwerk_login_failures_total`, 1},
			{`planwerk_oauth_grants_total{grant_type="password",outcome="ok"}`, 1},
			{`planwerk_oauth_grants_total{grant_type="password",outcome="invalid_grant"}`, 1},
			{`planwerk_oauth_grants_total{grant_type="password",outcome="throttled"}`, 1},
			{`planwerk_oauth_grants_total{grant_type="client_credentials",outcome="ok"}`, 1},
			{`planwerk_login_brake_refusals_total{reason="account_address"}`, 1},
			{`planwerk_changes_total`, 3},
			{`planwerk_rate_limited_total{limit="files"}`, 1},
			{`planwerk_upload_bytes_total`, 2000},
		}
		for _, c := range checks {
			if v := metricValue(t, m, c.prefix+" "); v < c.min {
				t.Errorf("%s = %v, want at least %v", c.prefix, v, c.min)
			}
		}
		if !regexp.MustCompile(`go_sql_open_connections\{db_name="planwerk_db[a-z_]*"\} \d+`).MatchString(m) {
			t.Error("no database pool metrics")
		}
		// Client-chosen paths never become label values.
		if strings.Contains(m, "no-such-thing") || strings.Contains(m, "ZZZ123") {
			t.Error("a client-chosen path or method became a label")
		}
	})
}
