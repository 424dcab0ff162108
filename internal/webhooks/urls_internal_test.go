package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/errs"
)

// Neighbour expectations in guardTable: an address just outside a block
// is public (must be allowed), in another refused block (must be refused),
// or neither (reserved space outside the registries: not checked).
const (
	skip = iota
	pub
	ref
)

// guardTable is every block the guard refuses, as the IANA IPv4 and IPv6
// Special-Purpose Address Registries (and the address-space registries for
// multicast and site-local) list them, with what lies just below and just
// above each.
var guardTable = []struct {
	prefix       string
	below, above int
}{
	{"0.0.0.0/8", skip, pub},
	{"10.0.0.0/8", pub, pub},
	{"100.64.0.0/10", pub, pub},
	{"127.0.0.0/8", pub, pub},
	{"169.254.0.0/16", pub, pub},
	{"172.16.0.0/12", pub, pub},
	{"192.0.0.0/29", pub, ref},
	{"192.0.0.8/32", ref, ref},
	{"192.0.0.170/31", ref, ref},
	{"192.0.0.0/24", pub, pub},
	{"192.0.2.0/24", pub, pub},
	{"192.88.99.0/24", pub, pub},
	{"192.168.0.0/16", pub, pub},
	{"198.18.0.0/15", pub, pub},
	{"198.51.100.0/24", pub, pub},
	{"203.0.113.0/24", pub, pub},
	{"255.255.255.255/32", ref, skip},
	{"240.0.0.0/4", ref, skip},
	{"224.0.0.0/4", pub, ref},

	{"::/128", skip, ref},
	{"::1/128", ref, ref},
	{"::ffff:0:0/96", skip, skip},
	{"64:ff9b::/96", skip, skip},
	{"64:ff9b:1::/48", skip, skip},
	{"100::/64", skip, ref},
	{"100:0:0:1::/64", ref, skip},
	{"2001::/32", pub, ref},
	{"2001:2::/48", ref, ref},
	{"2001:10::/28", ref, pub},
	{"2001::/23", pub, pub},
	{"2001:db8::/32", pub, pub},
	{"2002::/16", pub, pub},
	{"3fff::/20", pub, pub},
	{"5f00::/16", skip, skip},
	{"fc00::/7", skip, skip},
	{"fe80::/10", skip, ref},
	{"::/96", skip, skip},
	{"::ffff:0:0:0/96", skip, skip},
	{"fec0::/10", ref, ref},
	{"ff00::/8", ref, skip},
}

// guardReachable are blocks the registries mark globally reachable, next
// to or inside refused ones: webhooks may reach them.
var guardReachable = []struct {
	prefix       string
	below, above int
}{
	{"192.31.196.0/24", pub, pub},   // AS112-v4
	{"192.52.193.0/24", pub, pub},   // AMT
	{"192.175.48.0/24", pub, pub},   // direct delegation AS112 service
	{"2001:3::/32", ref, ref},       // AMT
	{"2001:4:112::/48", ref, ref},   // AS112-v6
	{"2001:20::/28", ref, pub},      // ORCHIDv2
	{"2001:30::/28", pub, ref},      // drone remote ID entity tags
	{"2620:4f:8000::/48", pub, pub}, // direct delegation AS112 service
}

// lastAddr is the last address of p.
func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// dialAddr is a as dialControl gets it, with a port.
func dialAddr(a netip.Addr) string { return netip.AddrPortFrom(a, 443).String() }

// TestBlockedTable: blocked refuses the first and the last address of
// every block of guardTable, and dialControl refuses to connect to them;
// the public addresses just outside are allowed. guardTable and the
// guard's own table name the same blocks.
func TestBlockedTable(t *testing.T) {
	t.Parallel()
	inCode := map[netip.Prefix]bool{}
	for _, r := range notReachable {
		inCode[r.prefix] = true
	}
	check := func(p netip.Prefix, what string, a netip.Addr, want int) {
		t.Helper()
		if want == skip || !a.IsValid() {
			return
		}
		if got := blocked(a); got != (want == ref) {
			t.Errorf("%s %s of %s: blocked = %v, want %v", what, a, p, got, want == ref)
		}
	}
	for _, e := range guardTable {
		p := netip.MustParsePrefix(e.prefix)
		if !inCode[p] {
			t.Errorf("%s is not in the guard's table", p)
		}
		delete(inCode, p)
		first, last := p.Addr(), lastAddr(p)
		for _, a := range []netip.Addr{first, last} {
			if !blocked(a) {
				t.Errorf("blocked(%s) = false, in %s", a, p)
			}
			if err := dialControl("tcp", dialAddr(a), nil); !errors.Is(err, errNotAllowed) {
				t.Errorf("dialControl(%s) = %v, in %s", dialAddr(a), err, p)
			}
		}
		check(p, "below", first.Prev(), e.below)
		check(p, "above", last.Next(), e.above)
	}
	for p := range inCode {
		t.Errorf("the guard refuses %s, which the test's table does not have", p)
	}
	for _, e := range guardReachable {
		p := netip.MustParsePrefix(e.prefix)
		first, last := p.Addr(), lastAddr(p)
		for _, a := range []netip.Addr{first, last} {
			if blocked(a) {
				t.Errorf("blocked(%s) = true, in globally reachable %s", a, p)
			}
			if err := dialControl("tcp", dialAddr(a), nil); err != nil {
				t.Errorf("dialControl(%s) = %v, in globally reachable %s", dialAddr(a), err, p)
			}
		}
		check(p, "below", first.Prev(), e.below)
		check(p, "above", last.Next(), e.above)
	}
}

// guardForms are addresses of the forms the guard must refuse, named one
// by one: IPv6 forms embedding an IPv4 address (whichever address they
// embed), the IPv4 blocks the rule names, and the usual suspects.
var guardForms = []string{
	"::127.0.0.1", "::7f00:1", "::8.8.8.8", "::ffff:0:127.0.0.1", "::ffff:0:8.8.8.8",
	"::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:8.8.8.8", "64:ff9b::7f00:1", "64:ff9b::8.8.8.8",
	"64:ff9b:1::a00:1", "64:ff9b:1:ffff::808:808", "2002:7f00:1::", "2002:808:808::1",
	"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001::1",
	"192.0.0.0", "192.0.0.1", "192.0.0.9", "192.0.0.10", "192.0.0.255", "192.0.2.1", "192.0.2.255",
	"198.18.0.0", "198.18.0.1", "198.19.255.255", "240.0.0.0", "240.0.0.1", "250.1.2.3", "255.255.255.254",
	"100.64.0.0", "100.64.0.1", "100.127.255.255", "192.88.99.2",
	"2001:1::1", "2001:1::2", "2001:1::3",
	"127.0.0.1", "127.255.0.9", "::1", "10.0.0.1", "172.31.255.255", "192.168.0.1", "169.254.169.254",
	"fe80::1", "fe80::1%eth0", "fc00::1", "fd12:3456::1", "0.0.0.0", "0.1.2.3", "::", "224.0.0.251",
	"ff02::1", "255.255.255.255", "fec0::1", "5f00::1", "3fff::1", "100::1", "100:0:0:1::1",
}

// guardPublic are public addresses the guard lets through.
var guardPublic = []string{
	"93.184.216.34", "8.8.8.8", "172.32.0.1", "100.128.0.1", "192.169.0.1", "1.1.1.1", "223.255.255.255",
	"2606:4700::1111", "2001:4860:4860::8888", "2a00:1450:4001::1", "2001:200::1",
}

// TestBlockedForms: blocked refuses each of guardForms and dialControl
// refuses to connect to it; each of guardPublic passes both.
func TestBlockedForms(t *testing.T) {
	t.Parallel()
	for _, s := range guardForms {
		a := netip.MustParseAddr(s)
		if !blocked(a) {
			t.Errorf("blocked(%s) = false", s)
		}
		if err := dialControl("tcp", dialAddr(a), nil); !errors.Is(err, errNotAllowed) {
			t.Errorf("dialControl(%s) = %v", dialAddr(a), err)
		}
	}
	for _, s := range guardPublic {
		a := netip.MustParseAddr(s)
		if blocked(a) {
			t.Errorf("blocked(%s) = true", s)
		}
		if err := dialControl("tcp", dialAddr(a), nil); err != nil {
			t.Errorf("dialControl(%s) = %v", dialAddr(a), err)
		}
	}
	if !blocked(netip.Addr{}) {
		t.Error("blocked(no address) = false")
	}
	for _, bad := range []string{"nonsense", "example.com:443", "127.0.0.1"} {
		if err := dialControl("tcp", bad, nil); !errors.Is(err, errNotAllowed) {
			t.Errorf("dialControl(%q) = %v", bad, err)
		}
	}
}

// TestDialRefusedBeforeConnect: the sender of a service without
// AllowPrivate does not connect to a listener on 127.0.0.1: the dialer's
// control refuses the address before connecting, and the listener sees
// no connection.
func TestDialRefusedBeforeConnect(t *testing.T) {
	t.Parallel()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	var accepted atomic.Int32
	srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			accepted.Add(1)
		}
	}
	s := New(nil, Config{Timeout: 2 * time.Second}, nil, nil)
	resp, err := s.sender.client.Post(srv.URL+"/hook", "application/json", nil)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("the sender reached %s", srv.URL)
	}
	if !errors.Is(err, errNotAllowed) {
		t.Errorf("the sender's error %v is not the guard's", err)
	}
	if hits.Load() != 0 || accepted.Load() != 0 {
		t.Errorf("the listener got %d connections, %d requests", accepted.Load(), hits.Load())
	}
	d := &net.Dialer{Timeout: 2 * time.Second, Control: dialControl}
	if c, err := d.Dial("tcp", srv.Listener.Addr().String()); err == nil {
		c.Close()
		t.Error("a dialer with dialControl connected to 127.0.0.1")
	}
}

// TestCheckHost: checkHost refuses an IP literal of any refused block,
// an IPv4-mapped literal whatever it maps, and a name any of whose
// addresses is refused, with url_not_allowed naming the block; a name
// whose resolver spells a public IPv4 address IPv4-mapped passes.
func TestCheckHost(t *testing.T) {
	t.Parallel()
	lookup := map[string][]netip.Addr{
		"public.test":     {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("2606:4700::1111")},
		"mapped.test":     {netip.MustParseAddr("::ffff:93.184.216.34")},
		"mappedlo.test":   {netip.MustParseAddr("::ffff:127.0.0.1")},
		"mixed.test":      {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("198.18.0.1")},
		"translated.test": {netip.MustParseAddr("64:ff9b::5db8:d822")},
	}
	s := New(nil, Config{Lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		if a, ok := lookup[host]; ok {
			return append([]netip.Addr(nil), a...), nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}}, nil, nil)
	for raw, want := range map[string]string{
		"https://public.test/":            "",
		"https://mapped.test/":            "",
		"https://93.184.216.34/":          "",
		"https://[2606:4700::1111]/":      "",
		"https://mappedlo.test/":          "127.0.0.0/8",
		"https://mixed.test/":             "198.18.0.0/15",
		"https://translated.test/":        "64:ff9b::/96",
		"https://[::ffff:93.184.216.34]/": "::ffff:0.0.0.0/96", // netip spells ::ffff:0:0/96 so
		"https://[::127.0.0.1]/":          "::/96",
		"https://[::ffff:0:127.0.0.1]/":   "::ffff:0:0:0/96",
		"https://[64:ff9b::7f00:1]/":      "64:ff9b::/96",
		"https://[2002:7f00:1::]/":        "2002::/16",
		"https://[2001:0:4136:e378::1]/":  "2001::/32",
		"https://192.0.0.9/":              "192.0.0.0/24",
		"https://192.0.2.1/":              "192.0.2.0/24",
		"https://198.18.0.1/":             "198.18.0.0/15",
		"https://240.0.0.1/":              "240.0.0.0/4",
		"https://100.64.0.1/":             "100.64.0.0/10",
		"https://[fe80::1%25eth0]:8443/x": "fe80::/10",
	} {
		err := s.checkHost(context.Background(), raw)
		var e *errs.Error
		switch {
		case want == "" && err != nil:
			t.Errorf("checkHost(%s) = %v, want nil", raw, err)
		case want == "":
		case !errors.As(err, &e) || e.Code != "url_not_allowed" || len(e.Problems) != 1 || e.Problems[0].Field != "url":
			t.Errorf("checkHost(%s) = %#v, want url_not_allowed naming url", raw, err)
		case !strings.Contains(e.Message, " "+want+",") || !strings.Contains(e.Message, "globally reachable"):
			t.Errorf("checkHost(%s): message %q does not name %s", raw, e.Message, want)
		}
	}
	if err := s.checkHost(context.Background(), "https://nowhere.test/"); err == nil {
		t.Error("a host that does not resolve passed")
	}
	open := New(nil, Config{AllowPrivate: true}, nil, nil)
	if err := open.checkHost(context.Background(), "https://[::127.0.0.1]/"); err != nil {
		t.Errorf("with AllowPrivate: %v", err)
	}
}

func TestCheckURL(t *testing.T) {
	t.Parallel()
	for raw, ok := range map[string]bool{
		"https://example.com/hook": true, "http://example.com:8080/a?b=c": true,
		"": false, "ftp://example.com/": false, "https://": false, "example.com/x": false,
		"https://u:p@example.com/": false, "https://example.com/#x": false, "javascript:alert(1)": false,
	} {
		if got := checkURL(raw) == ""; got != ok {
			t.Errorf("checkURL(%q) accepted = %v, want %v", raw, got, ok)
		}
	}
}

// TestBackoff: the first retry comes within 10 s, each next one later,
// none after more than RetryMax, jitter never more than a fifth.
func TestBackoff(t *testing.T) {
	t.Parallel()
	s := &Service{cfg: Config{}}
	s.cfg.defaults()
	prevMax := time.Duration(0)
	for n := 1; n <= 40; n++ {
		for range 50 {
			d := s.backoff(n)
			full := min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
			if d > full || d < full-full/5 {
				t.Fatalf("backoff(%d) = %v, want within a fifth below %v", n, d, full)
			}
			if n == 1 && d > 10*time.Second {
				t.Fatalf("first retry after %v", d)
			}
		}
		full := min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
		if full < prevMax {
			t.Fatalf("backoff shrinks at attempt %d", n)
		}
		prevMax = full
	}
	// 24 hours of retries take some 30 attempts, not thousands.
	var total time.Duration
	n := 0
	for total < s.cfg.RetryFor {
		n++
		total += min(s.cfg.RetryBase<<min(n-1, 20), s.cfg.RetryMax)
	}
	if n < 20 || n > 40 {
		t.Errorf("%d attempts in %v", n, s.cfg.RetryFor)
	}
}
