package httpapi_test

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestShareRefusal: a tenant that has its whole share of requests in
// progress (64) and waiting (256) is refused at once with 429 and
// Retry-After, counted in the metrics, while another tenant's requests go
// through; the slots come back when the requests end. The requests hold
// their slots by sending half a body and then nothing (the body deadline
// is long), so the state is held, not timed.
func TestShareRefusal(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.RequestTimeout = 10 * time.Minute
			c.WriteIdleTimeout = 10 * time.Minute
		})
		acme, beta := srv.CreateTenant(t, "acme"), srv.CreateTenant(t, "beta")
		acmeToken, betaToken := login(t, srv, acme).AccessToken, login(t, srv, beta).AccessToken
		stalled := stallRequests(t, srv.URL, "acme", acmeToken, 64+256)
		share := func(name string) string { return requestsShare(t, srv.URL, name) }
		eventually(t, time.Minute, "the stalled requests do not fill the tenant's share", func() bool {
			return share("planwerk_share_in_use") == "64" && share("planwerk_share_waiting") == "256"
		})

		acmeHdr := map[string]string{"companyurl": "acme", "Authorization": "Bearer " + acmeToken}
		for i := 0; i < 20; i++ {
			status, h, body := call(t, http.MethodPost, srv.URL+"/v1/projects", acmeHdr, strings.NewReader(`{"name":"x"}`))
			if status != http.StatusTooManyRequests || body["code"] != "too_many_requests" || h.Get("Retry-After") == "" {
				t.Fatalf("request beyond the tenant's share: %d %v Retry-After %q", status, body, h.Get("Retry-After"))
			}
		}
		betaHdr := map[string]string{"companyurl": "beta", "Authorization": "Bearer " + betaToken}
		if status, _, body := call(t, http.MethodPost, srv.URL+"/v1/projects", betaHdr, strings.NewReader(`{"name":"y"}`)); status != http.StatusCreated {
			t.Errorf("another tenant's write beside the full share: %d %v", status, body)
		}
		_, _, raw := callRaw(t, http.MethodGet, srv.URL+"/metrics", nil, nil)
		if !strings.Contains(string(raw), `planwerk_overloaded_total{gate="requests",reason="queue_full"} 20`) {
			t.Errorf("the refusals are not in the metrics:\n%s", grepLines(string(raw), "planwerk_overloaded_total"))
		}

		for _, c := range stalled {
			c.Close()
		}
		eventually(t, time.Minute, "the slots do not come back", func() bool {
			return share("planwerk_share_in_use") == "0" && share("planwerk_share_waiting") == "0"
		})
		if status, _, body := call(t, http.MethodPost, srv.URL+"/v1/projects", acmeHdr, strings.NewReader(`{"name":"z"}`)); status != http.StatusCreated {
			t.Errorf("write after the share emptied: %d %v", status, body)
		}
	})
}

// TestShareWaitEnds: a request that waits for a slot of its tenant's
// share until its deadline answers 503 overloaded with Retry-After.
func TestShareWaitEnds(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.RequestTimeout = time.Second
			c.WriteIdleTimeout = 10 * time.Minute
		})
		acme := srv.CreateTenant(t, "acme")
		token := login(t, srv, acme).AccessToken
		stallRequests(t, srv.URL, "acme", token, 64)
		eventually(t, time.Minute, "the stalled requests do not fill the tenant's share", func() bool {
			return requestsShare(t, srv.URL, "planwerk_share_in_use") == "64"
		})
		status, h, body := call(t, http.MethodGet, srv.URL+"/v1/projects", map[string]string{"companyurl": "acme", "Authorization": "Bearer " + token}, nil)
		if status != http.StatusServiceUnavailable || body["code"] != "overloaded" || h.Get("Retry-After") == "" {
			t.Errorf("a request waiting past its deadline: %d %v Retry-After %q, want 503 overloaded", status, body, h.Get("Retry-After"))
		}
	})
}

// stallRequests opens n connections that each send a tenant's POST with
// half its body and then nothing: each holds a request slot for as long
// as the body deadline allows. The connections close when the test ends.
func stallRequests(t *testing.T, base, slug, token string, n int) []net.Conn {
	t.Helper()
	u, _ := url.Parse(base)
	var conns []net.Conn
	for range n {
		c, err := net.Dial("tcp", u.Host)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns = append(conns, c)
		fmt.Fprintf(c, "POST /v1/projects HTTP/1.1\r\nHost: %s\r\ncompanyurl: %s\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": ", u.Host, slug, token)
	}
	return conns
}

// requestsShare reads a gauge of the requests share from /metrics.
func requestsShare(t *testing.T, base, name string) string {
	t.Helper()
	_, _, raw := callRaw(t, http.MethodGet, base+"/metrics", nil, nil)
	for _, l := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(l, name+`{gate="requests"} `); ok {
			return v
		}
	}
	return ""
}

func grepLines(text, prefix string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
