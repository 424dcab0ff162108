package auth_test

import (
	"encoding/json"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

func TestLoginBrake(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 6
		})
		tn := srv.CreateTenant(t, "acme")
		bad := testenv.PasswordForm(tn.AdminEmail, "wrong-password")
		for i := 0; i < 3; i++ {
			if status, _, body := srv.Grant(t, tn.Slug, bad); status != 400 {
				t.Fatalf("failure %d: %d %v", i, status, body)
			}
		}
		status, hdr, body := srv.Grant(t, tn.Slug, adminForm(tn))
		if status != 429 || hdr.Get("Retry-After") == "" {
			t.Fatalf("after 3 failures, even the right password: %d %v, Retry-After %q", status, body, hdr.Get("Retry-After"))
		}
		if body["error"] == nil || body["code"] == nil {
			t.Errorf("429 body: %v", body)
		}
		// Other accounts from the same address still get in, until the
		// address's own brake holds.
		for i := 0; i < 3; i++ {
			ghost := "ghost" + string(rune('a'+i)) + "@acme.test"
			if status, _, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm(ghost, tn.Password)); status != 400 {
				t.Fatalf("address failure %d: %d", i, status)
			}
		}
		if status, hdr, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm("someone-else@acme.test", tn.Password)); status != 429 || hdr.Get("Retry-After") == "" {
			t.Errorf("after 6 failures from one address: %d", status)
		}
	})
}

// TestLoginBrakeParallel: guesses sent at once are counted before the
// slow password check, so the brake holds.
func TestLoginBrakeParallel(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.LoginFailuresPerAccount = 3 })
		tn := srv.CreateTenant(t, "acme")
		var (
			mu     sync.Mutex
			counts = map[int]int{}
			wg     sync.WaitGroup
		)
		for i := 0; i < 12; i++ {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				status, _, _ := srv.Grant(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, "guess-"+strconv.Itoa(i)))
				mu.Lock()
				counts[status]++
				mu.Unlock()
			}(i)
		}
		wg.Wait()
		if counts[400] > 3 || counts[429] < 9 {
			t.Errorf("12 parallel guesses with a brake of 3: %v", counts)
		}
	})
}

// from returns an HTTP client whose connections come from the loopback
// address ip (Linux routes all of 127.0.0.0/8 to lo).
func from(ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	return &http.Client{Transport: &http.Transport{DialContext: d.DialContext}, Timeout: 30 * time.Second}
}

// grantFrom posts a grant from the client address ip.
func grantFrom(t *testing.T, srv *testenv.Server, ip, slug string, form url.Values) (int, testenv.M) {
	t.Helper()
	resp, err := from(ip).Do(srv.TokenRequest(t, slug, form))
	if err != nil {
		t.Fatalf("grant from %s: %v", ip, err)
	}
	defer resp.Body.Close()
	var body testenv.M
	_ = json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body
}

// TestLoginBrakeKeepsOwnerIn: wrong passwords from one address, however
// many, never refuse the right password from an address without recent
// failures; an address that has failed is held to the account's brake.
func TestLoginBrakeKeepsOwnerIn(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 50
		})
		tn := srv.CreateTenant(t, "acme")
		srv.SignIn(t, tn).Member(t, "m@acme.test")
		bad := testenv.PasswordForm(tn.AdminEmail, "wrong-password")
		counts := map[int]int{}
		for range 12 {
			status, _ := grantFrom(t, srv, "127.0.0.1", tn.Slug, bad)
			counts[status]++
		}
		if counts[400] != 3 || counts[429] != 9 {
			t.Errorf("12 wrong passwords from one address with a brake of 3: %v", counts)
		}
		if status, body := grantFrom(t, srv, "127.0.0.1", tn.Slug, adminForm(tn)); status != 429 {
			t.Errorf("the right password from the failing address: %d %v, want 429", status, body)
		}
		// The owner, from elsewhere: in, again and again.
		for i := range 5 {
			if status, body := grantFrom(t, srv, "127.0.0.2", tn.Slug, adminForm(tn)); status != 200 {
				t.Fatalf("right password %d from an address without failures: %d %v", i, status, body)
			}
		}
		// A third address gets one guess; having failed, the account's
		// brake (empty) holds it, right password or not.
		if status, _ := grantFrom(t, srv, "127.0.0.3", tn.Slug, bad); status != 400 {
			t.Errorf("first guess from a fresh address: %d, want 400", status)
		}
		if status, _ := grantFrom(t, srv, "127.0.0.3", tn.Slug, adminForm(tn)); status != 429 {
			t.Errorf("after failing on an account whose brake is empty: %d, want 429", status)
		}
		// Other accounts from the failing address are unaffected.
		if status, body := grantFrom(t, srv, "127.0.0.1", tn.Slug, testenv.PasswordForm("m@acme.test", "member-password")); status != 200 {
			t.Errorf("another account from the failing address: %d %v", status, body)
		}
	})
}

// TestLoginBrakeCountsFailuresOnly: correct logins from one address are
// never refused, however many.
func TestLoginBrakeCountsFailuresOnly(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.LoginFailuresPerAccount = 3
			c.LoginFailuresPerAddress = 5
		})
		tn := srv.CreateTenant(t, "acme")
		for i := range 60 {
			if status, body := grantFrom(t, srv, "127.0.0.1", tn.Slug, adminForm(tn)); status != 200 {
				t.Fatalf("correct login %d: %d %v", i+1, status, body)
			}
		}
		// Two typing errors, then the right password: in, and in again.
		bad := testenv.PasswordForm(tn.AdminEmail, "typo")
		for i := range 2 {
			if status, _ := grantFrom(t, srv, "127.0.0.1", tn.Slug, bad); status != 400 {
				t.Errorf("typo %d: %d, want 400", i+1, status)
			}
		}
		for i := range 10 {
			if status, _ := grantFrom(t, srv, "127.0.0.1", tn.Slug, adminForm(tn)); status != 200 {
				t.Fatalf("correct login %d after two typos: %d", i+1, status)
			}
		}
	})
}

// TestClientSecretBrake: wrong client secrets are braked like passwords;
// the right secret from another address still gets its token.
func TestClientSecretBrake(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.LoginFailuresPerAccount = 3 })
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		client := admin.APIClient(t, "sync", admin.UserID, "read")
		id, secret := client["clientId"].(string), client["clientSecret"].(string)
		counts := map[int]int{}
		for range 6 {
			status, _ := grantFrom(t, srv, "127.0.0.1", tn.Slug, testenv.ClientForm(id, "pws_guess"))
			counts[status]++
		}
		if counts[401] != 3 || counts[429] != 3 {
			t.Errorf("6 wrong secrets with a brake of 3: %v", counts)
		}
		if status, body := grantFrom(t, srv, "127.0.0.2", tn.Slug, testenv.ClientForm(id, secret)); status != 200 {
			t.Errorf("the right secret from another address: %d %v", status, body)
		}
	})
}

// TestLoginBrakeBehindProxy: with --trusted-proxies the brake keys on the
// client the proxy names in X-Forwarded-For; without it, on the peer,
// whatever the header says.
func TestLoginBrakeBehindProxy(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		for _, trusted := range []bool{true, false} {
			srv := testenv.Start(t, b, func(c *config.Config) {
				c.LoginFailuresPerAccount = 3
				if trusted {
					c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
				}
			})
			tn := srv.CreateTenant(t, "acme")
			via := func(client string, form url.Values) int {
				req := srv.TokenRequest(t, tn.Slug, form)
				// A client-chosen entry first, then what the proxy saw.
				req.Header.Set("X-Forwarded-For", "203.0.113.99, "+client)
				status, _, _ := testenv.Answer(t, req)
				return status
			}
			for range 4 {
				via("198.51.100.1", testenv.PasswordForm(tn.AdminEmail, "wrong"))
			}
			got := via("198.51.100.2", adminForm(tn))
			if want := map[bool]int{true: 200, false: 429}[trusted]; got != want {
				t.Errorf("trusted proxies %v: the right password from another forwarded client: %d, want %d", trusted, got, want)
			}
		}
	})
}
