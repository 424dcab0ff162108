package httpapi_test

import (
	"bytes"
	"io"
	"mime/multipart"
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

func scrape(t *testing.T, srv *testenv.Server) string {
	t.Helper()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	return string(b)
}

// TestMetrics drives requests, a failed login, a refused upload and an
// upload, and finds each in GET /metrics.
func TestMetrics(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.FileRate = 2 })
		tn := srv.CreateTenant(t, "acme")
		tok := login(t, srv, tn)
		auth := map[string]string{"companyurl": tn.Slug, "Authorization": "Bearer " + tok.AccessToken}
		for i := 0; i < 3; i++ {
			call(t, http.MethodGet, srv.URL+"/v1/users/me", auth, nil)
		}
		call(t, http.MethodGet, srv.URL+"/v1/no-such-thing/at/all", auth, nil)
		call(t, "ZZZ123", srv.URL+"/healthz", nil, nil)
		bad := passwordForm(tn)
		bad.Set("password", "wrong-password")
		tokenRequest(t, srv, map[string]string{"companyurl": tn.Slug}, bad)

		_, _, project := call(t, http.MethodPost, srv.URL+"/v1/projects", auth, strings.NewReader(`{"name":"P"}`))
		_, _, doc := call(t, http.MethodPost, srv.URL+"/v1/documents", auth,
			strings.NewReader(`{"model":"project","record":`+strconv.Itoa(int(project["id"].(float64)))+`,"category":7}`))
		upload := func() int {
			var body bytes.Buffer
			mw := multipart.NewWriter(&body)
			part, _ := mw.CreateFormFile("file", "m.txt")
			_, _ = part.Write(bytes.Repeat([]byte("m"), 1000))
			_ = mw.Close()
			h := map[string]string{"Content-Type": mw.FormDataContentType()}
			for k, v := range auth {
				h[k] = v
			}
			status, _, _ := call(t, http.MethodPost, srv.URL+"/v1/files/upload/document/"+strconv.Itoa(int(doc["id"].(float64)))+"?delete_others=1", h, &body)
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
