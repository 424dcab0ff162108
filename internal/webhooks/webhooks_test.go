package webhooks_test

// Webhooks (docs/api.md "Webhooks"): the API that manages
// them and the deliveries, received by a test receiver that checks every
// signature by the Standard Webhooks rules with a verifier of its own.

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/feed"
	"planwerk/internal/testenv"
)

type M = testenv.M

// quick makes deliveries fast to watch: private addresses allowed (the
// receivers listen on 127.0.0.1), short retries, frequent looks for work.
func quick(c *config.Config) {
	c.WebhookAllowPrivate = true
	c.WebhookRetryBase = 50 * time.Millisecond
	c.WebhookPoll = 100 * time.Millisecond
}

// message is a delivery as the receiver got it.
type message struct {
	ID     string // webhook-id
	Status int    // what the receiver answered
	Type   string
	Data   struct {
		Cursor   string
		Resource string
		ID       int64
		Op       string
		Record   M
	}
}

// receiver is a webhook's URL for tests: it verifies each delivery's
// signature, records it, and answers what answer says for the n-th
// request (1, 2, …) with that message id.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	mu     sync.Mutex
	secret string
	got    []message
	tries  map[string]int
	answer func(id string, n int) int
}

func newReceiver(t *testing.T) *receiver {
	r := &receiver{t: t, tries: map[string]int{}, answer: func(string, int) int { return http.StatusNoContent }}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *receiver) URL() string { return r.srv.URL + "/hook" }

func (r *receiver) setSecret(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secret = s
}

func (r *receiver) setAnswer(f func(id string, n int) int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answer = f
}

func (r *receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := verify(r.secret, req.Header, body, time.Now()); err != nil {
		r.t.Errorf("delivery %s: %v", req.Header.Get("webhook-id"), err)
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	if req.Method != http.MethodPost || req.Header.Get("Content-Type") != "application/json" {
		r.t.Errorf("delivery: %s with Content-Type %q", req.Method, req.Header.Get("Content-Type"))
	}
	var m message
	if err := json.Unmarshal(body, &m); err != nil {
		r.t.Errorf("delivery body %s: %v", body, err)
	}
	m.ID = req.Header.Get("webhook-id")
	r.tries[m.ID]++
	m.Status = r.answer(m.ID, r.tries[m.ID])
	r.got = append(r.got, m)
	w.WriteHeader(m.Status)
}

// messages returns what the receiver got so far.
func (r *receiver) messages() []message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]message(nil), r.got...)
}

// delivered returns the messages answered 2xx, in the order they came.
func (r *receiver) delivered() []message {
	var out []message
	for _, m := range r.messages() {
		if m.Status/100 == 2 {
			out = append(out, m)
		}
	}
	return out
}

// verify checks a delivery as the Standard Webhooks specification says,
// written here from the specification rather than taken from the library
// the service signs with: the signed content is id.timestamp.body, the
// key the base64-decoded secret after "whsec_", the signature header a
// space-separated list of "v1,<base64 HMAC-SHA256>", and the timestamp
// within five minutes of now.
func verify(secret string, h http.Header, body []byte, now time.Time) error {
	id, ts, sigs := h.Get("webhook-id"), h.Get("webhook-timestamp"), h.Get("webhook-signature")
	if id == "" || ts == "" || sigs == "" {
		return fmt.Errorf("missing headers: id %q, timestamp %q, signature %q", id, ts, sigs)
	}
	secs, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(secs, 0)).Abs() > 5*time.Minute {
		return fmt.Errorf("timestamp %q is not within 5 minutes of now", ts)
	}
	b64, ok := strings.CutPrefix(secret, "whsec_")
	key, err := base64.StdEncoding.DecodeString(b64)
	if !ok || err != nil || len(key) < 24 {
		return fmt.Errorf("secret %q is not whsec_ and base64 of at least 24 bytes", secret)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, _ := strings.Cut(s, ",")
		got, err := base64.StdEncoding.DecodeString(sig)
		if version == "v1" && err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("no signature of %q matches", sigs)
}

// TestVerifier: the test's verifier refuses what it must, so that the
// deliveries it accepts are signed right.
func TestVerifier(t *testing.T) {
	t.Parallel()
	key := []byte("0123456789abcdef0123456789abcdef")
	secret := "whsec_" + base64.StdEncoding.EncodeToString(key)
	now := time.Now()
	sign := func(id, ts, body string) string {
		mac := hmac.New(sha256.New, key)
		mac.Write([]byte(id + "." + ts + "." + body))
		return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
	}
	ts := strconv.FormatInt(now.Unix(), 10)
	header := func(id, ts, sig string) http.Header {
		return http.Header{"Webhook-Id": {id}, "Webhook-Timestamp": {ts}, "Webhook-Signature": {sig}}
	}
	if err := verify(secret, header("msg_1", ts, "v0,xx "+sign("msg_1", ts, "{}")), []byte("{}"), now); err != nil {
		t.Errorf("a right signature: %v", err)
	}
	old := strconv.FormatInt(now.Add(-10*time.Minute).Unix(), 10)
	for what, h := range map[string]http.Header{
		"another body":    header("msg_1", ts, sign("msg_1", ts, "{ }")),
		"another id":      header("msg_2", ts, sign("msg_1", ts, "{}")),
		"an old stamp":    header("msg_1", old, sign("msg_1", old, "{}")),
		"another version": header("msg_1", ts, "v2,"+strings.TrimPrefix(sign("msg_1", ts, "{}"), "v1,")),
		"no id":           header("", ts, sign("", ts, "{}")),
	} {
		if verify(secret, h, []byte("{}"), now) == nil {
			t.Errorf("%s: accepted", what)
		}
	}
}

// waitFor polls cond until it holds, failing the test after a generous
// deadline (CI machines are slow).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// create creates a webhook for rc and tells rc its secret.
func create(t *testing.T, c *testenv.Client, rc *receiver, resources any) M {
	t.Helper()
	body := M{"url": rc.URL()}
	if resources != nil {
		body["resources"] = resources
	}
	w := c.Object(t, http.MethodPost, "/v1/webhooks", body, http.StatusCreated)
	secret, _ := w["secret"].(string)
	rc.setSecret(secret)
	return w
}

func deliveries(t *testing.T, c *testenv.Client, id int64) []M {
	t.Helper()
	return c.Array(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d/deliveries", id), nil, http.StatusOK)
}

// settled waits until the webhook's deliveries log has n entries, none
// pending: the receiver answers before the service records the answer.
func settled(t *testing.T, c *testenv.Client, id int64, n int) []M {
	t.Helper()
	var ds []M
	waitFor(t, fmt.Sprintf("%d settled deliveries", n), func() bool {
		ds = deliveries(t, c, id)
		for _, d := range ds {
			if d["status"] == "pending" {
				return false
			}
		}
		return len(ds) == n
	})
	return ds
}

func project(t *testing.T, c *testenv.Client, name string) int64 {
	t.Helper()
	return testenv.ID(t, c.Create(t, "projects", M{"name": name}))
}

func TestWebhookAPI(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		other := srv.SignIn(t, srv.CreateTenant(t, "other"))
		member := admin.Member(t, "member@acme.test")

		status, h, raw := admin.Send(t, http.MethodPost, "/v1/webhooks", M{"url": "http://127.0.0.1:9/hook", "resources": []string{"projects", "uploads"}})
		if status != http.StatusCreated {
			t.Fatalf("create: %d %s", status, raw)
		}
		w := testenv.Decode(t, raw)
		id := testenv.ID(t, w)
		secret, _ := w["secret"].(string)
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
		if !strings.HasPrefix(secret, "whsec_") || err != nil || len(key) < 24 || len(key) > 64 {
			t.Errorf("secret %q: want whsec_ and base64 of 24 to 64 bytes", secret)
		}
		if h.Get("Cache-Control") != "no-store" || h.Get("Location") != fmt.Sprintf("/v1/webhooks/%d", id) || h.Get("ETag") == "" {
			t.Errorf("create headers: %v", h)
		}
		if w["url"] != "http://127.0.0.1:9/hook" || fmt.Sprint(w["resources"]) != "[projects uploads]" || w["enabled"] != true ||
			w["createdAt"] == nil || w["failingSince"] != nil {
			t.Errorf("created webhook: %v", w)
		}

		// The secret is shown once.
		status, h, raw = admin.Send(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d", id), nil)
		got := testenv.Decode(t, raw)
		if status != http.StatusOK || got["secret"] != nil || got["url"] != w["url"] {
			t.Errorf("read: %d %v", status, got)
		}
		tag := h.Get("ETag")
		if tag == "" {
			t.Error("read: no ETag")
		}
		list := admin.Array(t, http.MethodGet, "/v1/webhooks", nil, http.StatusOK)
		if len(list) != 1 || list[0]["secret"] != nil {
			t.Errorf("list: %v", list)
		}

		// Changes: with If-Match of the current tag; a stale tag → 412.
		patch := admin.Request(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id), M{"resources": nil, "enabled": false})
		patch.Header.Set("If-Match", tag)
		status, _, raw = testenv.Do(t, patch)
		got = testenv.Decode(t, raw)
		if status != http.StatusOK || got["resources"] != nil || got["enabled"] != false {
			t.Errorf("patch: %d %v", status, got)
		}
		patch = admin.Request(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id), M{"enabled": true})
		patch.Header.Set("If-Match", tag)
		status, _, raw = testenv.Do(t, patch)
		testenv.WantError(t, "patch with a stale tag", status, raw, http.StatusPreconditionFailed, "precondition_failed")
		got = admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id), M{"enabled": true, "url": "https://127.0.0.1:8443/x"}, http.StatusOK)
		if got["enabled"] != true || got["url"] != "https://127.0.0.1:8443/x" {
			t.Errorf("re-enabled: %v", got)
		}
		if ds := deliveries(t, admin, id); len(ds) != 0 {
			t.Errorf("deliveries of a new webhook: %v", ds)
		}

		// Bad bodies name their fields.
		for _, c := range []struct {
			body   M
			fields []string
		}{
			{M{}, []string{"url"}},
			{M{"url": "ftp://example.com/x"}, []string{"url"}},
			{M{"url": "https://user:pw@example.com/x"}, []string{"url"}},
			{M{"url": "/relative"}, []string{"url"}},
			{M{"url": 5, "resources": []string{"projects", "nope"}}, []string{"url", "resources"}},
			{M{"url": "https://example.com/", "resources": []string{}}, []string{"resources"}},
			{M{"url": "https://example.com/", "resources": "projects"}, []string{"resources"}},
			{M{"url": "https://example.com/", "enabled": false, "secret": "x"}, []string{"enabled", "secret"}},
		} {
			admin.Fail(t, http.MethodPost, "/v1/webhooks", c.body, http.StatusBadRequest, "invalid", c.fields...)
		}
		admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id), M{"enabled": "yes", "id": 3},
			http.StatusBadRequest, "invalid", "enabled", "id")

		// Members may not; other tenants do not see it.
		for _, rq := range []struct{ method, path string }{
			{http.MethodGet, "/v1/webhooks"}, {http.MethodPost, "/v1/webhooks"},
			{http.MethodGet, fmt.Sprintf("/v1/webhooks/%d", id)}, {http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", id)},
			{http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", id)}, {http.MethodGet, fmt.Sprintf("/v1/webhooks/%d/deliveries", id)},
		} {
			member.Fail(t, rq.method, rq.path, M{"url": "https://example.com/"}, http.StatusForbidden, "forbidden")
			if rq.path != "/v1/webhooks" {
				other.Fail(t, rq.method, rq.path, M{"enabled": true}, http.StatusNotFound, "not_found")
			}
		}
		if list := other.Array(t, http.MethodGet, "/v1/webhooks", nil, http.StatusOK); len(list) != 0 {
			t.Errorf("another tenant lists %v", list)
		}

		// At most 20 per tenant.
		for i := 1; i < 20; i++ {
			admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": fmt.Sprintf("http://127.0.0.1:9/%d", i)}, http.StatusCreated)
		}
		admin.Fail(t, http.MethodPost, "/v1/webhooks", M{"url": "http://127.0.0.1:9/21"}, http.StatusConflict, "too_many_webhooks")

		deleted := admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", id), nil, http.StatusOK)
		if testenv.ID(t, deleted) != id {
			t.Errorf("deleted %v", deleted)
		}
		admin.Fail(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d", id), nil, http.StatusNotFound, "not_found")
		admin.Fail(t, http.MethodGet, fmt.Sprintf("/v1/webhooks/%d/deliveries", id), nil, http.StatusNotFound, "not_found")
		admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": "http://127.0.0.1:9/again"}, http.StatusCreated)
	})
}

// TestWebhookDeliversInOrder: the changes of the subscribed resources
// made after the webhook was created arrive, signed, in order, once.
func TestWebhookDeliversInOrder(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		before := project(t, admin, "before")
		rc := newReceiver(t)
		w := create(t, admin, rc, []string{"projects"})

		p1 := project(t, admin, "one")
		admin.Member(t, "member@acme.test") // a user: not subscribed
		p2 := project(t, admin, "two")
		admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", p1), M{"name": "one again"}, http.StatusOK)
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", before), nil, http.StatusOK)
		want := []string{
			fmt.Sprintf("projects.create %d", p1), fmt.Sprintf("projects.create %d", p2),
			fmt.Sprintf("projects.update %d", p1), fmt.Sprintf("projects.delete %d", before),
		}
		waitFor(t, "four deliveries", func() bool { return len(rc.delivered()) >= len(want) })
		got := rc.delivered()
		var summary []string
		ids := map[string]bool{}
		for _, m := range got {
			summary = append(summary, fmt.Sprintf("%s %d", m.Type, m.Data.ID))
			if m.Type != m.Data.Resource+"."+m.Data.Op || ids[m.ID] || !strings.HasPrefix(m.ID, "msg_") {
				t.Errorf("message %+v: type, or id not unique", m)
			}
			ids[m.ID] = true
		}
		if fmt.Sprint(summary) != fmt.Sprint(want) {
			t.Errorf("delivered %v, want %v", summary, want)
		}
		if got[0].Data.Record["name"] != "one" || got[3].Data.Record != nil {
			t.Errorf("records: %v, %v", got[0].Data.Record, got[3].Data.Record)
		}

		// The log: newest first, each delivered at the first attempt.
		ds := settled(t, admin, testenv.ID(t, w), 4)
		if len(ds) != 4 {
			t.Fatalf("deliveries: %v", ds)
		}
		for i, d := range ds {
			m := got[len(got)-1-i]
			if d["id"] != m.ID || d["change"] != m.Data.Cursor || d["status"] != "delivered" || testenv.Num(d["attempts"]) != 1 ||
				testenv.Num(d["lastStatusCode"]) != http.StatusNoContent || d["nextAttemptAt"] != nil {
				t.Errorf("delivery %d: %v (message %+v)", i, d, m)
			}
		}
		// Nothing is delivered twice.
		time.Sleep(300 * time.Millisecond)
		if n := len(rc.messages()); n != 4 {
			t.Errorf("the receiver got %d requests, want 4", n)
		}
	})
}

// TestWebhookRetries: a failing receiver gets the same message again
// until it takes it, and the next change waits for it.
func TestWebhookRetries(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		rc := newReceiver(t)
		rc.setAnswer(func(_ string, n int) int {
			if n <= 3 {
				return http.StatusInternalServerError
			}
			return http.StatusOK
		})
		w := create(t, admin, rc, nil)
		p1 := project(t, admin, "one")
		p2 := project(t, admin, "two")
		waitFor(t, "two deliveries", func() bool { return len(rc.delivered()) == 2 })

		var got []string
		for _, m := range rc.messages() {
			got = append(got, fmt.Sprintf("%d %d", m.Data.ID, m.Status))
		}
		want := []string{}
		for _, id := range []int64{p1, p2} {
			for n := 1; n <= 4; n++ {
				want = append(want, fmt.Sprintf("%d %d", id, map[bool]int{true: 500, false: 200}[n <= 3]))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("requests (record status): %v, want %v", got, want)
		}
		ds := settled(t, admin, testenv.ID(t, w), 2)
		for _, d := range ds {
			if d["status"] != "delivered" || testenv.Num(d["attempts"]) != 4 || testenv.Num(d["lastStatusCode"]) != 200 {
				t.Errorf("delivery %v", d)
			}
		}
		if hook := admin.Object(t, http.MethodGet, "/v1/webhooks/"+fmt.Sprint(testenv.ID(t, w)), nil, http.StatusOK); hook["failingSince"] != nil {
			t.Errorf("after a success: %v", hook)
		}
	})
}

// TestWebhookGivesUp: a delivery failing for the retry period is failed
// and the next change follows.
func TestWebhookGivesUp(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick, func(c *config.Config) {
			c.WebhookRetryFor = 500 * time.Millisecond
			c.WebhookDisableAfter = time.Hour
		})
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		rc := newReceiver(t)
		var first string
		rc.setAnswer(func(id string, _ int) int {
			if first == "" || first == id {
				first = id
				return http.StatusServiceUnavailable
			}
			return http.StatusOK
		})
		w := create(t, admin, rc, nil)
		project(t, admin, "one")
		p2 := project(t, admin, "two")
		waitFor(t, "the second change", func() bool { return len(rc.delivered()) == 1 })
		if got := rc.delivered()[0]; got.Data.ID != p2 {
			t.Errorf("delivered %+v, want project %d", got, p2)
		}
		ds := settled(t, admin, testenv.ID(t, w), 2)
		if len(ds) != 2 || ds[1]["status"] != "failed" || testenv.Num(ds[1]["attempts"]) < 2 ||
			testenv.Num(ds[1]["lastStatusCode"]) != 503 || ds[0]["status"] != "delivered" {
			t.Errorf("deliveries: %v", ds)
		}
	})
}

// TestWebhookDisabled: a webhook failing for the disable period is
// disabled, and enabling it delivers on, starting with the pending
// delivery.
func TestWebhookDisabled(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick, func(c *config.Config) { c.WebhookDisableAfter = 500 * time.Millisecond })
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		rc := newReceiver(t)
		rc.setAnswer(func(string, int) int { return http.StatusBadGateway })
		w := create(t, admin, rc, nil)
		path := fmt.Sprintf("/v1/webhooks/%d", testenv.ID(t, w))
		p1 := project(t, admin, "one")
		waitFor(t, "the webhook disabled", func() bool {
			return admin.Object(t, http.MethodGet, path, nil, http.StatusOK)["enabled"] == false
		})
		hook := admin.Object(t, http.MethodGet, path, nil, http.StatusOK)
		if hook["failingSince"] == nil {
			t.Errorf("disabled webhook: %v", hook)
		}
		n := len(rc.messages())
		time.Sleep(300 * time.Millisecond)
		if len(rc.messages()) != n {
			t.Errorf("a disabled webhook is still delivering")
		}
		ds := deliveries(t, admin, testenv.ID(t, w))
		if len(ds) != 1 || ds[0]["status"] != "pending" || testenv.Num(ds[0]["lastStatusCode"]) != 502 {
			t.Errorf("deliveries of the disabled webhook: %v", ds)
		}

		rc.setAnswer(func(string, int) int { return http.StatusOK })
		hook = admin.Object(t, http.MethodPatch, path, M{"enabled": true}, http.StatusOK)
		if hook["enabled"] != true || hook["failingSince"] != nil {
			t.Errorf("re-enabled: %v", hook)
		}
		waitFor(t, "the delivery after enabling", func() bool { return len(rc.delivered()) == 1 })
		if got := rc.delivered()[0]; got.Data.ID != p1 || got.ID != ds[0]["id"] {
			t.Errorf("delivered %+v, want the pending %v", got, ds[0])
		}
	})
}

// TestWebhookRedirect: a redirect is not followed and is no delivery.
func TestWebhookRedirect(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, quick)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		var mu sync.Mutex
		hit, attempts := false, 0
		target := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			mu.Lock()
			defer mu.Unlock()
			hit = true
		}))
		defer target.Close()
		redirect := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			attempts++
			mu.Unlock()
			http.Redirect(w, r, target.URL, http.StatusFound)
		}))
		defer redirect.Close()
		w := admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": redirect.URL}, http.StatusCreated)
		project(t, admin, "one")
		waitFor(t, "two attempts", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return attempts >= 2
		})
		mu.Lock()
		if hit {
			t.Error("the redirect was followed")
		}
		mu.Unlock()
		ds := deliveries(t, admin, testenv.ID(t, w))
		if len(ds) != 1 || ds[0]["status"] != "pending" || testenv.Num(ds[0]["lastStatusCode"]) != http.StatusFound {
			t.Errorf("deliveries: %v", ds)
		}
	})
}

// TestWebhookAfterRestart: a delivery pending when the service stops is
// made by the next one on the same database, with the same message id.
func TestWebhookAfterRestart(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b, quick)
		tn := one.CreateTenant(t, "acme")
		admin := one.SignIn(t, tn)
		rc := newReceiver(t)
		rc.setAnswer(func(string, int) int { return http.StatusInternalServerError })
		w := create(t, admin, rc, nil)
		p := project(t, admin, "one")
		waitFor(t, "a failed attempt", func() bool { return len(rc.messages()) >= 1 })
		one.Stop()
		first := rc.messages()[0].ID

		rc.setAnswer(func(string, int) int { return http.StatusOK })
		two := testenv.Start(t, b, quick, func(c *config.Config) { c.Database = one.Config.Database })
		waitFor(t, "the delivery after the restart", func() bool { return len(rc.delivered()) == 1 })
		if got := rc.delivered()[0]; got.ID != first || got.Data.ID != p {
			t.Errorf("delivered %+v, want message %s of project %d", got, first, p)
		}
		ds := settled(t, two.SignIn(t, tn), testenv.ID(t, w), 1)
		if len(ds) != 1 || ds[0]["status"] != "delivered" || ds[0]["id"] != first {
			t.Errorf("deliveries: %v", ds)
		}
	})
}

// TestWebhookTwoInstances: two instances on one database deliver each
// change once, in order, however the writes are spread over them.
func TestWebhookTwoInstances(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b, quick)
		two := testenv.Start(t, b, quick, func(c *config.Config) { c.Database = one.Config.Database })
		tn := one.CreateTenant(t, "acme")
		writers := []*testenv.Client{one.SignIn(t, tn), two.SignIn(t, tn)}
		var rcs []*receiver
		var hooks []int64
		for range 3 {
			rc := newReceiver(t)
			rcs = append(rcs, rc)
			hooks = append(hooks, testenv.ID(t, create(t, writers[0], rc, []string{"projects"})))
		}
		const n = 30
		var wg sync.WaitGroup
		for g := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range n / 2 {
					project(t, writers[g], fmt.Sprintf("p%d-%d", g, i))
				}
			}()
		}
		wg.Wait()
		for i, rc := range rcs {
			waitFor(t, "every delivery", func() bool { return len(rc.messages()) >= n })
			time.Sleep(200 * time.Millisecond)
			msgs := rc.messages()
			if len(msgs) != n {
				t.Errorf("webhook %d: the receiver got %d requests, want %d", hooks[i], len(msgs), n)
			}
			var last int64
			for _, m := range msgs {
				seq, err := feed.ParseCursor(m.Data.Cursor)
				if err != nil || seq <= last {
					t.Errorf("webhook %d: change %s after %d", hooks[i], m.Data.Cursor, last)
				}
				last = seq
			}
			ds := settled(t, writers[i%2], hooks[i], n)
			if len(ds) != n {
				t.Errorf("webhook %d: %d deliveries, want %d", hooks[i], len(ds), n)
			}
			for _, d := range ds {
				if d["status"] != "delivered" || testenv.Num(d["attempts"]) != 1 {
					t.Errorf("webhook %d: delivery %v", hooks[i], d)
				}
			}
		}
	})
}

// TestWebhookPrivateAddresses: without --webhook-allow-private, URLs of
// loopback, private and link-local addresses are refused at create, and
// a name that resolved to a public address then but to loopback now is
// refused when the delivery connects.
func TestWebhookPrivateAddresses(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		public := netip.MustParseAddr("93.184.216.34")
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.WebhookRetryBase = 50 * time.Millisecond
			c.WebhookPoll = 100 * time.Millisecond
			c.WebhookLookup = func(_ context.Context, host string) ([]netip.Addr, error) {
				if host == "rebound.localhost" || host == "localhost" {
					return []netip.Addr{public}, nil // as a rebinding DNS first answers
				}
				return nil, fmt.Errorf("no such host %s", host)
			}
		})
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		for _, u := range []string{"http://127.0.0.1:8080/", "http://127.1.2.3/", "http://[::1]/", "http://10.1.2.3/",
			"http://172.16.0.1/", "http://192.168.1.1/", "http://169.254.169.254/latest", "http://[fe80::1]/",
			"http://[fd00::1]/", "http://100.64.0.1/", "http://0.0.0.0/", "http://224.0.0.1/", "http://[::ffff:127.0.0.1]/"} {
			admin.Fail(t, http.MethodPost, "/v1/webhooks", M{"url": u}, http.StatusBadRequest, "url_not_allowed", "url")
		}
		admin.Fail(t, http.MethodPost, "/v1/webhooks", M{"url": "http://nowhere.invalid/"}, http.StatusBadRequest, "invalid", "url")
		ok := admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": "https://93.184.216.34/hook"}, http.StatusCreated)
		admin.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", testenv.ID(t, ok)), M{"url": "http://10.0.0.1/"},
			http.StatusBadRequest, "url_not_allowed", "url")
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", testenv.ID(t, ok)), nil, http.StatusOK)

		// localhost resolved public at create; the dial finds 127.0.0.1.
		rc := newReceiver(t)
		_, port, _ := strings.Cut(strings.TrimPrefix(rc.srv.URL, "http://"), ":")
		w := admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": "http://localhost:" + port + "/hook"}, http.StatusCreated)
		project(t, admin, "one")
		waitFor(t, "two refused attempts", func() bool {
			ds := deliveries(t, admin, testenv.ID(t, w))
			return len(ds) == 1 && testenv.Num(ds[0]["attempts"]) >= 2
		})
		ds := deliveries(t, admin, testenv.ID(t, w))
		if ds[0]["status"] != "pending" || ds[0]["lastStatusCode"] != nil {
			t.Errorf("refused delivery: %v", ds[0])
		}
		if n := len(rc.messages()); n != 0 {
			t.Errorf("the loopback receiver got %d requests", n)
		}
	})
}
