//go:build system

package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
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
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.RequestTimeout = 10 * time.Minute
			c.WriteIdleTimeout = 10 * time.Minute
		})
		acme, beta := srv.SignIn(t, srv.CreateTenant(t, "acme")), srv.SignIn(t, srv.CreateTenant(t, "beta"))
		stalled := stallRequests(t, acme, 64+256)
		share := func(name string) float64 { return requestsShare(t, srv, name) }
		eventually(t, time.Minute, "the stalled requests do not fill the tenant's share", func() bool {
			return share("planwerk_share_in_use") == 64 && share("planwerk_share_waiting") == 256
		})

		for i := 0; i < 20; i++ {
			status, h, body := acme.Call(t, http.MethodPost, "/v1/projects", testenv.M{"name": "x"})
			if status != http.StatusTooManyRequests || body["code"] != "too_many_requests" || h.Get("Retry-After") == "" {
				t.Fatalf("request beyond the tenant's share: %d %v Retry-After %q", status, body, h.Get("Retry-After"))
			}
		}
		if status, _, body := beta.Call(t, http.MethodPost, "/v1/projects", testenv.M{"name": "y"}); status != http.StatusCreated {
			t.Errorf("another tenant's write beside the full share: %d %v", status, body)
		}
		m := scrape(t, srv)
		if !strings.Contains(m, `planwerk_overloaded_total{gate="requests",reason="queue_full"} 20`+"\n") {
			t.Errorf("the refusals are not in the metrics:\n%s", grepLines(m, "planwerk_overloaded_total"))
		}

		for _, c := range stalled {
			c.Close()
		}
		eventually(t, time.Minute, "the slots do not come back", func() bool {
			return share("planwerk_share_in_use") == 0 && share("planwerk_share_waiting") == 0
		})
		if status, _, body := acme.Call(t, http.MethodPost, "/v1/projects", testenv.M{"name": "z"}); status != http.StatusCreated {
			t.Errorf("write after the share emptied: %d %v", status, body)
		}
	})
}

// TestShareWaitEnds: a request that waits for a slot of its tenant's
// share until its deadline answers 503 overloaded with Retry-After.
func TestShareWaitEnds(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.RequestTimeout = time.Second
			c.WriteIdleTimeout = 10 * time.Minute
		})
		acme := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		inUse := func() int { return int(requestsShare(t, srv, "planwerk_share_in_use")) }
		// The stalled requests hold their slots only once they read their
		// bodies; before that each checks its token, and on a busy machine
		// a check that reads the database may outlast the one-second
		// deadline and give its slot back while the request below waits.
		// The share is then topped up and the request asked again: the
		// state asserted is the one held, not one hoped for. A request
		// that got a slot (200) had one come back, whatever the gauge says
		// after it: its own slot is given back only after its answer is
		// sent, so the gauge may still count it.
		for attempt := 1; ; attempt++ {
			stallRequests(t, acme, 64-inUse())
			eventually(t, time.Minute, "the stalled requests do not fill the tenant's share", func() bool { return inUse() == 64 })
			status, h, raw := acme.Send(t, http.MethodGet, "/v1/projects", nil)
			if status == http.StatusOK || inUse() != 64 {
				if attempt == 5 {
					t.Fatalf("stalled requests kept giving their slots back (last answer %d %s)", status, raw)
				}
				continue
			}
			var body testenv.M
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("a request waiting past its deadline: %d %q, want a JSON error", status, raw)
			}
			if status != http.StatusServiceUnavailable || body["code"] != "overloaded" || h.Get("Retry-After") == "" {
				t.Errorf("a request waiting past its deadline: %d %v Retry-After %q, want 503 overloaded", status, body, h.Get("Retry-After"))
			}
			return
		}
	})
}

// stallRequests opens n connections that each send c's POST with half
// its body and then nothing: each holds a request slot for as long as the
// body deadline allows. The connections close when the test ends.
func stallRequests(t *testing.T, c *testenv.Client, n int) []net.Conn {
	t.Helper()
	var conns []net.Conn
	for range n {
		conn := dial(t, c.Srv)
		conns = append(conns, conn)
		fmt.Fprintf(conn, "POST /v1/projects HTTP/1.1\r\nHost: %s\r\ncompanyurl: %s\r\nAuthorization: Bearer %s\r\n"+
			"Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"name\": ", conn.RemoteAddr(), c.Slug, c.Token)
	}
	return conns
}

// requestsShare reads a gauge of the requests share from /metrics (-1:
// not there).
func requestsShare(t *testing.T, srv *testenv.Server, name string) float64 {
	t.Helper()
	return metricValue(t, scrape(t, srv), name+`{gate="requests"} `)
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
