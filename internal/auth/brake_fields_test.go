package auth_test

// The login brake's RateLimit fields (docs/api.md "Rate-limit headers").

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// answerFrom sends req from the client address ip and returns the answer.
func answerFrom(t *testing.T, ip string, req *http.Request) (int, http.Header, testenv.M) {
	t.Helper()
	resp, err := from(ip).Do(req)
	if err != nil {
		t.Fatalf("%s from %s: %v", req.URL.Path, ip, err)
	}
	defer resp.Body.Close()
	var body testenv.M
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, resp.Header, body
}

// brakeRule is the test's brake: 3 failures per account (and per account
// and address), refilled one a minute; 50 per address, one per 10 s.
var brakeRule = map[string]struct{ q, w int64 }{
	"login-pair":    {3, 180},
	"login-address": {50, 500},
	"login-account": {3, 180},
}

// shown is what an answer's fields should show of the brake: the pair's
// remaining count exactly (-1: no pair), the address's at least (it
// refills every 10 s), and whether the account's shows (then with r=0).
type shown struct {
	pair, address int64
	account       bool
}

// wantBrake checks the brake's RateLimit fields of an answer.
func wantBrake(t *testing.T, what string, status int, hdr http.Header, want shown) {
	t.Helper()
	got := testenv.RateLimits(t, what, hdr)
	for name, p := range got {
		rule, ok := brakeRule[name]
		if !ok {
			t.Errorf("%s: unknown policy %q", what, name)
			continue
		}
		if p.Quota != rule.q || p.Window != rule.w {
			t.Errorf("%s: %s q=%d w=%d, want q=%d w=%d", what, name, p.Quota, p.Window, rule.q, rule.w)
		}
		if p.Remaining < p.Quota && (p.Reset < 1 || p.Reset > rule.w/rule.q) {
			t.Errorf("%s: %s r=%d t=%d, want t in 1..%d", what, name, p.Remaining, p.Reset, rule.w/rule.q)
		}
		if p.Remaining == p.Quota && p.Reset != -1 {
			t.Errorf("%s: %s full, with t=%d", what, name, p.Reset)
		}
	}
	pair, ok := got["login-pair"]
	switch {
	case want.pair < 0 && ok:
		t.Errorf("%s: login-pair shown: %+v", what, pair)
	case want.pair >= 0 && (!ok || pair.Remaining != want.pair):
		t.Errorf("%s: login-pair %+v (shown %v), want r=%d", what, pair, ok, want.pair)
	}
	if address, ok := got["login-address"]; want.address < 0 && ok {
		t.Errorf("%s: login-address shown: %+v", what, address)
	} else if want.address >= 0 && (!ok || address.Remaining < want.address) {
		t.Errorf("%s: login-address %+v (shown %v), want r>=%d", what, address, ok, want.address)
	}
	account, ok := got["login-account"]
	if ok != want.account || (ok && account.Remaining != 0) {
		t.Errorf("%s: login-account %+v (shown %v), want shown %v with r=0", what, account, ok, want.account)
	}
	if status == http.StatusTooManyRequests {
		// The bucket that refused shows r=0, its t being Retry-After.
		refusing := "login-pair"
		if want.account {
			refusing = "login-account"
		}
		if p := got[refusing]; p.Remaining != 0 || strconv.FormatInt(p.Reset, 10) != hdr.Get("Retry-After") {
			t.Errorf("%s: 429 with %s %+v, Retry-After %q: want r=0 and t equal to Retry-After", what, refusing, p, hdr.Get("Retry-After"))
		}
	}
}

// TestLoginBrakeFields: the token endpoint's answers show the login
// brake's buckets: the account's from this address and the address's on
// every braked answer, the account's across addresses only when it
// refuses; revocation with an API client's credentials shows them too.
func TestLoginBrakeFields(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 50
		})
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		client := admin.APIClient(t, "sync", admin.UserID, "read")
		id, secret := client["clientId"].(string), client["clientSecret"].(string)

		grant := func(ip string, form url.Values) (int, http.Header) {
			status, hdr, _ := answerFrom(t, ip, srv.TokenRequest(t, tn.Slug, form))
			return status, hdr
		}
		bad := testenv.PasswordForm(tn.AdminEmail, "wrong-password")
		steps := []struct {
			what   string
			ip     string
			form   url.Values
			status int
			want   shown
		}{
			{"wrong password", "127.0.0.1", bad, 400, shown{2, 49, false}},
			{"right password: the pair is full again", "127.0.0.1", adminForm(tn), 200, shown{3, 49, false}},
			{"wrong password again", "127.0.0.1", bad, 400, shown{2, 48, false}},
			{"and again", "127.0.0.1", bad, 400, shown{1, 47, false}},
			// The account has 3 failures: refused by its bucket, which
			// shows; the pair and the address got their events back.
			{"the account's bucket refuses", "127.0.0.1", bad, 429, shown{1, 47, true}},
			{"the owner from a fresh address", "127.0.0.2", adminForm(tn), 200, shown{3, 50, false}},
			// Another account from the failing address: its pair empties
			// and refuses first.
			{"unknown account 1", "127.0.0.1", testenv.PasswordForm("ghost@acme.test", "x"), 400, shown{2, 46, false}},
			{"unknown account 2", "127.0.0.1", testenv.PasswordForm("ghost@acme.test", "x"), 400, shown{1, 45, false}},
			{"unknown account 3", "127.0.0.1", testenv.PasswordForm("ghost@acme.test", "x"), 400, shown{0, 44, false}},
			{"the pair refuses", "127.0.0.1", testenv.PasswordForm("ghost@acme.test", "x"), 429, shown{0, -1, false}},
			// API clients' secrets are braked alike.
			{"wrong client secret", "127.0.0.3", testenv.ClientForm(id, "pws_guess"), 401, shown{2, 49, false}},
			{"right client secret", "127.0.0.3", testenv.ClientForm(id, secret), 200, shown{3, 49, false}},
		}
		for _, s := range steps {
			status, hdr := grant(s.ip, s.form)
			if status != s.status {
				t.Fatalf("%s: %d, want %d", s.what, status, s.status)
			}
			wantBrake(t, s.what, status, hdr, s.want)
		}

		// Revocation checks an API client's secret under the brake.
		revokeFrom := func(secret string) (int, http.Header) {
			req := srv.TokenRequest(t, tn.Slug, url.Values{"token": {"unknown"}, "client_id": {id}, "client_secret": {secret}})
			req.URL.Path = "/oauth2/revoke"
			status, hdr, _ := answerFrom(t, "127.0.0.4", req)
			return status, hdr
		}
		if status, hdr := revokeFrom("pws_guess"); status != 401 {
			t.Fatalf("revoke with a wrong client secret: %d", status)
		} else {
			wantBrake(t, "revoke with a wrong client secret", status, hdr, shown{2, 49, false})
		}
		if status, hdr := revokeFrom(secret); status != 200 {
			t.Fatalf("revoke: %d", status)
		} else {
			wantBrake(t, "revoke", status, hdr, shown{3, 49, false})
		}

		// What the brake does not hold shows nothing: a refresh, a
		// request refused before any check.
		// (From a fresh address: the account's bucket is empty.)
		_, _, body := answerFrom(t, "127.0.0.5", srv.TokenRequest(t, tn.Slug, adminForm(tn)))
		if body["refresh_token"] == nil {
			t.Fatalf("sign-in: %v", body)
		}
		for what, form := range map[string]url.Values{
			"refresh grant":     testenv.RefreshForm(body["refresh_token"].(string)),
			"missing password":  {"grant_type": {"password"}, "username": {tn.AdminEmail}, "client_id": {"app"}, "client_secret": {"s"}},
			"unsupported grant": {"grant_type": {"authorization_code"}, "client_id": {"app"}, "client_secret": {"s"}},
		} {
			status, hdr, _ := srv.Grant(t, tn.Slug, form)
			if status >= 500 {
				t.Fatalf("%s: %d", what, status)
			}
			if got := testenv.RateLimits(t, what, hdr); len(got) != 0 {
				t.Errorf("%s: %d with RateLimit fields %v", what, status, got)
			}
		}
	})
}
