package httpapi_test

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestRequestLog checks the one structured line per request and that no
// password or token ever reaches the log.
func TestRequestLog(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) { requestLog(t, b) })
}

func requestLog(t *testing.T, b testenv.Backend) {
	var logs testenv.SyncBuffer
	srv := testenv.StartLogged(t, b, &logs)
	tn := srv.CreateTenant(t, "acme")
	status, _, body := srv.Grant(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, tn.Password))
	if status != 200 {
		t.Fatalf("token: %d %v", status, body)
	}
	access, refresh := body["access_token"].(string), body["refresh_token"].(string)
	bad := testenv.PasswordForm(tn.AdminEmail, tn.Password)
	bad.Set("password", "a-wrong-secret")
	srv.Grant(t, tn.Slug, bad)
	srv.Grant(t, tn.Slug, url.Values{
		"grant_type": {"refresh_token"}, "refresh_token": {refresh}, "client_id": {"a"}, "client_secret": {"b"}})
	c := &testenv.Client{Srv: srv, Slug: tn.Slug, Token: access}
	status, hdr, _ := c.Send(t, http.MethodGet, "/v1/users/me", nil)
	if status != 200 {
		t.Fatalf("me: %d", status)
	}
	// The token in the query instead of the header.
	(&testenv.Client{Srv: srv, Slug: tn.Slug}).Send(t, http.MethodGet, "/v1/users/me?access_token="+access, nil)

	out := logs.String()
	for _, secret := range []string{tn.Password, "a-wrong-secret", access, refresh} {
		if strings.Contains(out, secret) {
			t.Errorf("log contains a secret %q", secret)
		}
	}
	var meLine map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var line map[string]any
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatalf("log line is not JSON: %s", sc.Text())
		}
		if line["msg"] == "request" && line["request_id"] == hdr.Get("X-Request-Id") {
			meLine = line
		}
	}
	if meLine == nil {
		t.Fatalf("no request line for request id %s in\n%s", hdr.Get("X-Request-Id"), out)
	}
	want := map[string]any{"method": "GET", "path": "/v1/users/me", "status": float64(200), "tenant": "acme"}
	for k, v := range want {
		if meLine[k] != v {
			t.Errorf("log %s = %v, want %v", k, meLine[k], v)
		}
	}
	if _, ok := meLine["duration_ms"].(float64); !ok {
		t.Errorf("log line without duration_ms: %v", meLine)
	}
}
