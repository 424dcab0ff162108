package httpapi_test

import (
	"context"
	"database/sql"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestShareRefusal: a tenant with more requests waiting than its share
// allows is refused at once with 429 and Retry-After, counted in the
// metrics, while the requests it may have wait (and answer 503 when their
// deadline passes); none of them is a 500. Another process holds
// SQLite's write lock meanwhile, so the writes stay waiting until their
// deadline.
func TestShareRefusal(t *testing.T) {
	srv := testenv.Start(t, testenv.Backend{Name: "sqlite"}, func(c *config.Config) { c.RequestTimeout = 5 * time.Second })
	acme := srv.CreateTenant(t, "acme")
	hdr := map[string]string{"companyurl": "acme", "Authorization": "Bearer " + login(t, srv, acme).AccessToken}

	other, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(srv.Config.Database, "sqlite:")+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.BeginTx(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(`UPDATE tenants SET name = name`); err != nil {
		t.Fatal(err)
	}

	// A tenant has 64 requests in progress and 256 waiting at most.
	const writes = 64 + 256 + 20
	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range writes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status, h, body := call(t, http.MethodPost, srv.URL+"/v1/projects", hdr, strings.NewReader(`{"name":"x"}`))
			mu.Lock()
			defer mu.Unlock()
			counts[status]++
			switch status {
			case http.StatusTooManyRequests:
				if body["code"] != "too_many_requests" || h.Get("Retry-After") == "" {
					t.Errorf("429 without code or Retry-After: %v %v", body, h)
				}
			case http.StatusServiceUnavailable:
				if (body["code"] != "database_unavailable" && body["code"] != "overloaded") || h.Get("Retry-After") == "" {
					t.Errorf("503: %v", body)
				}
			default:
				t.Errorf("write beside a held lock: %d %v", status, body)
			}
		}()
	}
	wg.Wait()
	_ = lock.Rollback()
	t.Logf("answers: %v", counts)
	// Usually 20; fewer when the machine is so slow that some writes
	// arrive after the first ones gave up.
	if counts[http.StatusTooManyRequests] == 0 {
		t.Errorf("answers %v: want the writes beyond 64 in progress and 256 waiting refused", counts)
	}
	_, _, raw := callRaw(t, http.MethodGet, srv.URL+"/metrics", nil, nil)
	metrics := string(raw)
	t.Log(grepLines(metrics, "planwerk_overloaded_total"))
	if !strings.Contains(metrics, `planwerk_overloaded_total{gate="requests",reason="queue_full"}`) {
		t.Error("the refusals are not in the metrics")
	}
	// With the lock gone, writes work again.
	if status, _, body := call(t, http.MethodPost, srv.URL+"/v1/projects", hdr, strings.NewReader(`{"name":"y"}`)); status != http.StatusCreated {
		t.Errorf("write after the lock: %d %v", status, body)
	}
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
