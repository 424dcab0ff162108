package auth_test

// The caps of API clients and webhooks per tenant hold however many
// creates race.

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// racedAnswer is the answer of one of the racing requests.
type racedAnswer struct {
	status int
	code   string
	err    error
}

// raceAll sends the requests all at once, each from a goroutine of its own
// released together, and returns their answers in order.
func raceAll(reqs []*http.Request) []racedAnswer {
	out := make([]racedAnswer, len(reqs))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				out[i].err = err
				return
			}
			defer resp.Body.Close()
			raw, err := io.ReadAll(resp.Body)
			out[i].status, out[i].err = resp.StatusCode, err
			var body struct {
				Code string `json:"code"`
			}
			if resp.StatusCode != http.StatusCreated && json.Unmarshal(raw, &body) == nil {
				out[i].code = body.Code
			}
		}()
	}
	close(start)
	wg.Wait()
	return out
}

// tallyRaced checks the racing answers: created of them 201, the rest 409 code.
func tallyRaced(t *testing.T, answers []racedAnswer, created int, code string) {
	t.Helper()
	var ok, refused int
	for i, a := range answers {
		switch {
		case a.err != nil:
			t.Fatalf("request %d: %v", i, a.err)
		case a.status == http.StatusCreated:
			ok++
		case a.status == http.StatusConflict && a.code == code:
			refused++
		default:
			t.Errorf("request %d: %d %q, want 201 or 409 %s", i, a.status, a.code, code)
		}
	}
	if ok != created || refused != len(answers)-created {
		t.Errorf("%d created and %d refused with %s, want %d and %d", ok, refused, code, created, len(answers)-created)
	}
}

// capTenants is how many tenants race at once, each on its own: the
// race of one tenant is lost now and then on an engine that lets creates
// pass the cap, that of all of them hardly ever.
const capTenants = 3

// capRace gives each tenant before items at path (created all at once,
// well below the cap), then sends racers creates per tenant, every
// tenant's at the same moment, and checks that each tenant ends with
// exactly max, the others refused with 409 code. callers[k] are admins
// of tenant k, who take turns; body(k, i) is the i-th item of tenant k.
func capRace(t *testing.T, callers [][]*testenv.Client, path string, body func(k, i int) testenv.M, before, racers, max int, code string) {
	t.Helper()
	request := func(k, i int) *http.Request {
		by := callers[k][i%len(callers[k])]
		return by.Request(t, http.MethodPost, path, body(k, i))
	}
	var fill, racing []*http.Request
	for k := range callers {
		for i := range before {
			fill = append(fill, request(k, i))
		}
		for i := range racers {
			racing = append(racing, request(k, before+i))
		}
	}
	tallyRaced(t, raceAll(fill), len(fill), code)
	answers := raceAll(racing)
	for k, admins := range callers {
		if n := len(admins[0].Array(t, http.MethodGet, path, nil, http.StatusOK)); n != max {
			t.Errorf("tenant %s has %d at %s, want %d", admins[0].Slug, n, path, max)
		}
		tallyRaced(t, answers[k*racers:(k+1)*racers], max-before, code)
	}
}

// capAdmins creates the tenants of a cap race and signs in two admins of
// each, so that nothing of one caller serialises the creates.
func capAdmins(t *testing.T, srv *testenv.Server) [][]*testenv.Client {
	t.Helper()
	var out [][]*testenv.Client
	for k := range capTenants {
		slug := fmt.Sprintf("tenant%d", k)
		admin := srv.SignIn(t, srv.CreateTenant(t, slug))
		out = append(out, []*testenv.Client{admin, creatorAdmin(t, admin, "second@"+slug+".test")})
	}
	return out
}

// TestAPIClientCapUnderRace: 40 creates racing on top of 90 API clients
// leave exactly 100; the others are refused with 409 too_many_clients.
func TestAPIClientCapUnderRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		callers := capAdmins(t, srv)
		capRace(t, callers, "/v1/api-clients", func(k, i int) testenv.M {
			return testenv.M{"name": fmt.Sprintf("client %d", i), "user": callers[k][0].UserID, "scope": "read"}
		}, 90, 40, 100, "too_many_clients")
	})
}

// TestWebhookCapUnderRace: 30 creates racing on top of 15 webhooks leave
// exactly 20; the others are refused with 409 too_many_webhooks.
func TestWebhookCapUnderRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		// The receiver listens on 127.0.0.1; its webhooks subscribe to
		// projects, which the test never writes: nothing is delivered.
		var got atomic.Int64
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			got.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(receiver.Close)
		srv := testenv.Start(t, b, func(c *config.Config) { c.WebhookAllowPrivate = true })
		capRace(t, capAdmins(t, srv), "/v1/webhooks", func(k, i int) testenv.M {
			return testenv.M{"url": fmt.Sprintf("%s/hook/%d/%d", receiver.URL, k, i), "resources": []string{"projects"}}
		}, 15, 30, 20, "too_many_webhooks")
		if n := got.Load(); n != 0 {
			t.Errorf("the receiver got %d requests, want none", n)
		}
	})
}
