package webhooks_test

// The webhook address guard seen from outside: without
// --webhook-allow-private, a URL naming an address that is not globally
// reachable, or an IPv6 form that embeds an IPv4 address, is refused with
// 400 url_not_allowed at create and at PATCH.
//
// No request of these tests leaves 127.0.0.1: every URL is an IP literal
// (nothing is resolved), every webhook listens only to expenses, and the
// tenant never writes an expense (nor anything else once a webhook
// exists), so nothing is ever delivered; the deliveries log is checked to
// stay empty.

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"reflect"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// guardRefused are webhook URLs the guard must refuse: each names an
// address that is not globally reachable, or an IPv6 form that embeds an
// IPv4 address (refused whichever IPv4 address it embeds).
var guardRefused = []string{
	// IPv6 forms that embed an IPv4 address.
	"https://[::127.0.0.1]/hook",         // IPv4-compatible ::/96
	"https://[::8.8.8.8]/hook",           // IPv4-compatible, of a public address
	"https://[::ffff:127.0.0.1]/hook",    // IPv4-mapped ::ffff:0:0/96
	"https://[::ffff:8.8.8.8]/hook",      // IPv4-mapped, of a public address
	"https://[::ffff:0:127.0.0.1]/hook",  // IPv4-translated ::ffff:0:0:0/96
	"https://[::ffff:0:8.8.8.8]/hook",    // IPv4-translated, of a public address
	"https://[64:ff9b::7f00:1]/hook",     // NAT64 64:ff9b::/96
	"https://[64:ff9b::8.8.8.8]/hook",    // NAT64, of a public address
	"https://[64:ff9b:1::a00:1]/hook",    // local-use NAT64 64:ff9b:1::/48
	"https://[2002:7f00:1::]/hook",       // 6to4 2002::/16
	"https://[2002:808:808::1]/hook",     // 6to4, of a public address
	"https://[2001:0:4136:e378::1]/hook", // Teredo 2001::/32
	"http://[::127.0.0.1]:8080/hook",
	// IPv4.
	"https://0.0.0.0/x", "https://0.1.2.3/x", "https://10.0.0.1/x", "https://100.64.0.1/x",
	"https://100.127.255.255/x", "https://127.0.0.1/x", "https://127.255.255.254/x",
	"https://169.254.169.254/latest", "https://172.16.0.1/x", "https://172.31.255.255/x",
	"https://192.0.0.0/x", "https://192.0.0.1/x", "https://192.0.0.8/x", "https://192.0.0.9/x",
	"https://192.0.0.170/x", "https://192.0.0.255/x",
	"https://192.0.2.0/x", "https://192.0.2.1/x", "https://192.0.2.255/x",
	"https://192.88.99.1/x", "https://192.168.1.1/x",
	"https://198.18.0.0/x", "https://198.18.0.1/x", "https://198.19.255.255/x",
	"https://198.51.100.7/x", "https://203.0.113.9/x",
	"https://224.0.0.1/x", "https://239.255.255.255/x",
	"https://240.0.0.0/x", "https://240.0.0.1/x", "https://250.1.2.3/x", "https://255.255.255.254/x",
	"https://255.255.255.255/x", "http://198.18.0.1:8443/x",
	// IPv6.
	"https://[::]/x", "https://[::1]/x", "https://[100::1]/x", "https://[100:0:0:1::1]/x",
	"https://[2001:2::1]/x", "https://[2001:10::1]/x", "https://[2001:1ff:ffff::1]/x",
	"https://[2001:db8::1]/x", "https://[3fff::1]/x", "https://[5f00::1]/x",
	"https://[fc00::1]/x", "https://[fdff:ffff::1]/x", "https://[fe80::1]/x", "https://[fe80::1%25eth0]/x",
	"https://[fec0::1]/x", "https://[ff02::1]/x", "https://[ff0e::1]/x",
}

// guardAllowed are public addresses just outside refused ranges: the
// guard lets them through (they are created and deleted at once, with no
// change between, so nothing is sent to them).
var guardAllowed = []string{
	"https://1.1.1.1/x", "https://100.128.0.0/x", "https://192.0.1.0/x", "https://192.0.3.0/x",
	"https://198.17.255.255/x", "https://198.20.0.0/x", "https://223.255.255.255/x",
	"https://[2001:200::1]/x", "https://[2001:3::1]/x", "https://[2003::1]/x", "https://[2606:4700::1111]/x",
}

// guardServer starts the service without --webhook-allow-private and
// with a resolver that knows no name: only IP literals are ever checked.
func guardServer(t *testing.T, b testenv.Backend) *testenv.Client {
	srv := testenv.Start(t, b, func(c *config.Config) {
		c.WebhookAllowPrivate = false
		c.WebhookLookup = func(_ context.Context, host string) ([]netip.Addr, error) {
			return nil, fmt.Errorf("no such host %s", host)
		}
	})
	return srv.SignIn(t, srv.CreateTenant(t, "acme"))
}

// wantNotAllowed checks an answer is 400 url_not_allowed naming the url.
func wantNotAllowed(t *testing.T, what string, status int, raw []byte) {
	t.Helper()
	m := testenv.WantError(t, what, status, raw, http.StatusBadRequest, "url_not_allowed")
	testenv.WantProblem(t, m, "url")
}

// TestWebhookGuardCreate: POST /v1/webhooks refuses every URL of
// guardRefused with 400 url_not_allowed and creates nothing; the public
// neighbours of guardAllowed are created.
func TestWebhookGuardCreate(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		admin := guardServer(t, b)
		for _, u := range guardRefused {
			status, _, raw := admin.Send(t, http.MethodPost, "/v1/webhooks", M{"url": u, "resources": []string{"expenses"}})
			if status == http.StatusCreated {
				t.Errorf("POST %s: created", u)
				admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", testenv.ID(t, testenv.Decode(t, raw))), nil, http.StatusOK)
				continue
			}
			if status != http.StatusBadRequest {
				t.Errorf("POST %s: %d %s, want 400 url_not_allowed", u, status, raw)
				continue
			}
			wantNotAllowed(t, "POST "+u, status, raw)
		}
		if list := admin.Array(t, http.MethodGet, "/v1/webhooks", nil, http.StatusOK); len(list) != 0 {
			t.Errorf("webhooks after refused creates: %v", list)
		}
		for _, u := range guardAllowed {
			status, _, raw := admin.Send(t, http.MethodPost, "/v1/webhooks", M{"url": u, "resources": []string{"expenses"}})
			if status != http.StatusCreated {
				t.Errorf("POST %s: %d %s, want 201", u, status, raw)
				continue
			}
			id := testenv.ID(t, testenv.Decode(t, raw))
			if ds := deliveries(t, admin, id); len(ds) != 0 {
				t.Errorf("%s: deliveries %v", u, ds)
			}
			admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/webhooks/%d", id), nil, http.StatusOK)
		}
	})
}

// TestWebhookGuardPatch: PATCH of an allowed webhook's url to any URL of
// guardRefused answers 400 url_not_allowed and leaves the webhook as it
// was, the other fields of the same PATCH included; nothing is delivered.
func TestWebhookGuardPatch(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		admin := guardServer(t, b)
		const public = "https://93.184.215.14/hook"
		w := admin.Object(t, http.MethodPost, "/v1/webhooks", M{"url": public, "resources": []string{"expenses"}}, http.StatusCreated)
		id := testenv.ID(t, w)
		path := fmt.Sprintf("/v1/webhooks/%d", id)
		defer admin.Object(t, http.MethodDelete, path, nil, http.StatusOK)
		before := admin.Object(t, http.MethodGet, path, nil, http.StatusOK)
		if before["url"] != public || before["enabled"] != true {
			t.Fatalf("created webhook: %v", before)
		}
		for _, u := range guardRefused {
			status, _, raw := admin.Send(t, http.MethodPatch, path, M{"url": u, "enabled": false})
			if status == http.StatusOK {
				t.Errorf("PATCH url %s: changed", u)
				admin.Object(t, http.MethodPatch, path, M{"url": public, "enabled": true}, http.StatusOK)
				continue
			}
			if status != http.StatusBadRequest {
				t.Errorf("PATCH url %s: %d %s, want 400 url_not_allowed", u, status, raw)
				continue
			}
			wantNotAllowed(t, "PATCH "+u, status, raw)
			if after := admin.Object(t, http.MethodGet, path, nil, http.StatusOK); !reflect.DeepEqual(after, before) {
				t.Errorf("PATCH url %s refused, but the webhook changed: %v, was %v", u, after, before)
			}
		}
		if ds := deliveries(t, admin, id); len(ds) != 0 {
			t.Errorf("deliveries: %v", ds)
		}
	})
}
