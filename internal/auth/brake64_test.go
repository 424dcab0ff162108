package auth_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestBrakeAddress: the brake counts an IPv4 address alone (written as
// IPv4 whatever the notation) and an IPv6 address by its /64.
func TestBrakeAddress(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, a, b string
		want       string // BrakeAddress(a)
		same       bool   // a and b share a bucket
	}{
		{"IPv4", "198.51.100.7", "198.51.100.7", "198.51.100.7", true},
		{"IPv4 neighbours", "198.51.100.7", "198.51.100.8", "198.51.100.7", false},
		{"IPv4-mapped IPv6 is the IPv4", "::ffff:198.51.100.7", "198.51.100.7", "198.51.100.7", true},
		{"IPv4-mapped neighbours", "::ffff:198.51.100.7", "::ffff:198.51.100.8", "198.51.100.7", false},
		{"two IPv6 of one /64", "2001:db8:1:2::1", "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::/64", true},
		{"IPv6 in full and short form", "2001:0db8:0001:0002:0000:0000:0000:0009", "2001:db8:1:2::9", "2001:db8:1:2::/64", true},
		{"neighbouring /64s", "2001:db8:1:2::1", "2001:db8:1:3::1", "2001:db8:1:2::/64", false},
		{"other /48", "2001:db8:1:2::1", "2001:db8:2:2::1", "2001:db8:1:2::/64", false},
		{"zone dropped", "fe80::1%eth0", "fe80::2", "fe80::/64", true},
		{"IPv6 loopback", "::1", "::2", "::/64", true},
		{"IPv4 and an IPv6 of ::/64 differ", "0.0.0.1", "::1", "0.0.0.1", false},
		{"not an IP address", "@", "@", "@", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := auth.BrakeAddress(c.a); got != c.want {
				t.Errorf("BrakeAddress(%q) = %q, want %q", c.a, got, c.want)
			}
			if same := auth.BrakeAddress(c.a) == auth.BrakeAddress(c.b); same != c.same {
				t.Errorf("%q and %q share a bucket: %v, want %v (%q, %q)",
					c.a, c.b, same, c.same, auth.BrakeAddress(c.a), auth.BrakeAddress(c.b))
			}
		})
	}
}

// forwarded posts a grant that the trusted proxy (the loopback peer)
// says comes from addr.
func forwarded(t *testing.T, srv *testenv.Server, slug, addr string, form url.Values) (int, http.Header, testenv.M) {
	t.Helper()
	req := srv.TokenRequest(t, slug, form)
	req.Header.Set("X-Forwarded-For", addr)
	return testenv.Answer(t, req)
}

// behindProxy starts a server behind a trusted proxy on loopback, with an
// account brake of 3 and an address brake of 6.
func behindProxy(t *testing.T, b testenv.Backend) *testenv.Server {
	t.Helper()
	return testenv.Start(t, b, func(c *config.Config) {
		c.LoginFailuresPerAccount = 3
		c.LoginFailuresPerAddress = 6
		c.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}
	})
}

// spray sends one wrong password for each of n accounts, the i-th from
// addr(i), and counts the answers; every 429 must carry Retry-After.
func spray(t *testing.T, srv *testenv.Server, slug, series string, n int, addr func(i int) string) map[int]int {
	t.Helper()
	counts := map[int]int{}
	for i := range n {
		status, hdr, body := forwarded(t, srv, slug, addr(i), testenv.PasswordForm(fmt.Sprintf("%s-%d@acme.test", series, i), "wrong"))
		if status == http.StatusTooManyRequests && (hdr.Get("Retry-After") == "" || body["error"] != "too_many_requests") {
			t.Errorf("%s %d: 429 without Retry-After or error: %v %v", series, i, hdr, body)
		}
		counts[status]++
	}
	return counts
}

// TestLoginBrakeIPv6SprayOneSlash64: wrong passwords for many accounts
// from many addresses of one /64 are refused once the address bucket is
// spent, exactly as from one address; another /64 is counted apart, and
// IPv4 addresses are still counted one by one.
func TestLoginBrakeIPv6SprayOneSlash64(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := behindProxy(t, b)
		tn := srv.CreateTenant(t, "acme")
		oneAddress := spray(t, srv, tn.Slug, "single", 12, func(int) string { return "2001:db8:c:1::1" })
		oneSlash64 := spray(t, srv, tn.Slug, "subnet", 12, func(i int) string { return fmt.Sprintf("2001:db8:b:1:%x::%x", i, i+1) })
		want := map[int]int{400: 6, 429: 6}
		if fmt.Sprint(oneAddress) != fmt.Sprint(want) {
			t.Errorf("12 accounts from one IPv6 address with an address brake of 6: %v, want %v", oneAddress, want)
		}
		if fmt.Sprint(oneSlash64) != fmt.Sprint(oneAddress) {
			t.Errorf("12 accounts from 12 addresses of one /64: %v, want as from one address %v", oneSlash64, oneAddress)
		}
		// The neighbouring /64 has a bucket of its own.
		if status, _, body := forwarded(t, srv, tn.Slug, "2001:db8:b:2::1", testenv.PasswordForm("next@acme.test", "wrong")); status != 400 {
			t.Errorf("a guess from the neighbouring /64: %d %v, want 400 (checked)", status, body)
		}

		// IPv4: one address spent, its neighbour is not; the IPv4-mapped
		// form of the spent one is the same client.
		v4 := spray(t, srv, tn.Slug, "v4", 7, func(int) string { return "198.51.100.1" })
		if fmt.Sprint(v4) != fmt.Sprint(map[int]int{400: 6, 429: 1}) {
			t.Errorf("7 accounts from one IPv4 address: %v", v4)
		}
		if status, _, body := forwarded(t, srv, tn.Slug, "198.51.100.2", testenv.PasswordForm("v4-next@acme.test", "wrong")); status != 400 {
			t.Errorf("a guess from the neighbouring IPv4 address: %d %v, want 400", status, body)
		}
		if status, _, _ := forwarded(t, srv, tn.Slug, "::ffff:198.51.100.1", testenv.PasswordForm("v4-mapped@acme.test", "wrong")); status != 429 {
			t.Errorf("a guess from the spent IPv4 address in IPv4-mapped form: %d, want 429", status)
		}
	})
}

// TestLoginBrakeIPv6OneAccount: one account's wrong passwords from many
// addresses of one /64 are braked as from one address; the right
// password from another address of that /64 is refused, from an
// address of another /64 without failures it gets in.
func TestLoginBrakeIPv6OneAccount(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := behindProxy(t, b)
		tn := srv.CreateTenant(t, "acme")
		bad := testenv.PasswordForm(tn.AdminEmail, "wrong-password")
		counts := map[int]int{}
		for i := range 12 {
			status, hdr, _ := forwarded(t, srv, tn.Slug, fmt.Sprintf("2001:db8:a:1:%x::1", i), bad)
			if status == http.StatusTooManyRequests && hdr.Get("Retry-After") == "" {
				t.Errorf("guess %d: 429 without Retry-After", i)
			}
			counts[status]++
		}
		if counts[400] != 3 || counts[429] != 9 {
			t.Errorf("12 wrong passwords from 12 addresses of one /64 with a brake of 3: %v, want 3×400 and 9×429", counts)
		}
		if status, _, body := forwarded(t, srv, tn.Slug, "2001:db8:a:1:ffff::1", adminForm(tn)); status != 429 {
			t.Errorf("the right password from another address of the failing /64: %d %v, want 429", status, body)
		}
		for i := range 3 {
			if status, _, body := forwarded(t, srv, tn.Slug, "2001:db8:a:2::1", adminForm(tn)); status != 200 {
				t.Fatalf("right password %d from another /64 without failures: %d %v", i, status, body)
			}
		}
	})
}

// TestClientSecretBrakeIPv6: wrong client secrets from many addresses of
// one /64 are braked as from one address; the right secret from another
// /64 gets its token.
func TestClientSecretBrakeIPv6(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := behindProxy(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		client := admin.APIClient(t, "sync", admin.UserID, "read")
		id, secret := client["clientId"].(string), client["clientSecret"].(string)
		counts := map[int]int{}
		for i := range 6 {
			status, _, _ := forwarded(t, srv, tn.Slug, fmt.Sprintf("2001:db8:d:1::%x", i+1), testenv.ClientForm(id, "pws_guess"))
			counts[status]++
		}
		if counts[401] != 3 || counts[429] != 3 {
			t.Errorf("6 wrong secrets from one /64 with a brake of 3: %v", counts)
		}
		if status, _, body := forwarded(t, srv, tn.Slug, "2001:db8:d:2::1", testenv.ClientForm(id, secret)); status != 200 {
			t.Errorf("the right secret from another /64: %d %v", status, body)
		}
	})
}
