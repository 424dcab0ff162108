package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"unicode"
)

// proxyServer is a Server that trusts the proxies of the tests.
func proxyServer() *Server {
	return &Server{cfg: Config{TrustedProxies: []netip.Prefix{
		netip.MustParsePrefix("10.0.0.0/8"),
		netip.MustParsePrefix("172.16.0.0/12"),
		netip.MustParsePrefix("fd00::/8"),
	}}}
}

// forwardedRequest is a request from remote with the given header lines.
func forwardedRequest(remote string, forwarded, xff []string) *http.Request {
	r := &http.Request{RemoteAddr: remote, Header: http.Header{}}
	for _, v := range forwarded {
		r.Header.Add("Forwarded", v)
	}
	for _, v := range xff {
		r.Header.Add("X-Forwarded-For", v)
	}
	return r
}

func TestClientAddress(t *testing.T) {
	t.Parallel()
	const (
		proxy  = "10.0.0.1:443"
		client = "198.51.100.7"
	)
	long := strings.Repeat("10.0.0.2, ", 500) + client
	var chain []string // a client behind 40 trusted proxies
	for i := range 40 {
		chain = append(chain, fmt.Sprintf("10.0.1.%d", i+1))
	}
	cases := []struct {
		name      string
		remote    string
		forwarded []string
		xff       []string
		want      string
	}{
		{name: "untrusted peer", remote: "203.0.113.5:1234", want: "203.0.113.5"},
		{name: "untrusted peer's X-Forwarded-For", remote: "203.0.113.5:1234", xff: []string{client}, want: "203.0.113.5"},
		{name: "untrusted peer's Forwarded", remote: "203.0.113.5:1234", forwarded: []string{"for=" + client}, want: "203.0.113.5"},
		{name: "untrusted IPv6 peer", remote: "[2001:db8::5]:1234", xff: []string{client}, want: "2001:db8::5"},
		{name: "trusted peer without a header", remote: proxy, want: "10.0.0.1"},
		{name: "one hop", remote: proxy, xff: []string{client}, want: client},
		{name: "spoofed left-most entry", remote: proxy, xff: []string{"6.6.6.6, " + client}, want: client},
		{name: "several proxies", remote: proxy, xff: []string{"6.6.6.6, " + client + ", 10.0.0.2,172.16.0.3"}, want: client},
		{name: "header lines joined", remote: proxy, xff: []string{"6.6.6.6", client + ", 10.0.0.2"}, want: client},
		{name: "blank entries skipped", remote: proxy, xff: []string{"6.6.6.6, " + client + ", ,10.0.0.2,"}, want: client},
		{name: "every hop trusted: the left-most", remote: proxy, xff: []string{"10.0.0.3, 10.0.0.2"}, want: "10.0.0.3"},
		{name: "garbage ends the walk", remote: proxy, xff: []string{client + ", garbage, 10.0.0.2"}, want: "10.0.0.2"},
		{name: "garbage right-most", remote: proxy, xff: []string{client + ", garbage"}, want: "10.0.0.1"},
		{name: "unknown", remote: proxy, xff: []string{client + ", unknown"}, want: "10.0.0.1"},
		{name: "IPv4 with a port", remote: proxy, xff: []string{client + ":4711"}, want: client},
		{name: "IPv4 with an empty port", remote: proxy, xff: []string{client + ":"}, want: "10.0.0.1"},
		{name: "IPv6", remote: proxy, xff: []string{"2001:db8::7"}, want: "2001:db8::7"},
		{name: "IPv6 in brackets with a port", remote: proxy, xff: []string{"[2001:db8::7]:4711"}, want: "2001:db8::7"},
		{name: "IPv6 in brackets", remote: proxy, xff: []string{"[2001:db8::7]"}, want: "2001:db8::7"},
		{name: "IPv6 with a port but no brackets", remote: proxy, xff: []string{"2001:db8::7:4711x"}, want: "10.0.0.1"},
		{name: "IPv4-mapped IPv6 entry", remote: proxy, xff: []string{"::ffff:" + client}, want: client},
		{name: "IPv4-mapped IPv6 peer", remote: "[::ffff:10.0.0.1]:443", xff: []string{client}, want: client},
		{name: "IPv6 proxy", remote: "[fd00::1]:443", xff: []string{client + ", fd00::2"}, want: client},
		{name: "zone dropped", remote: proxy, xff: []string{"fe80::1%eth0"}, want: "fe80::1"},
		{name: "Forwarded", remote: proxy, forwarded: []string{"for=" + client}, want: client},
		{name: "Forwarded, IPv6 quoted with a port", remote: proxy, forwarded: []string{`for="[2001:db8:cafe::17]:4711"`}, want: "2001:db8:cafe::17"},
		{name: "Forwarded, several proxies and parameters", remote: proxy,
			forwarded: []string{`for=6.6.6.6;proto=http, By=10.0.0.9;For="` + client + `:80";proto=https`, "for=10.0.0.2"}, want: client},
		{name: "Forwarded before X-Forwarded-For", remote: proxy, forwarded: []string{"for=" + client}, xff: []string{"6.6.6.6"}, want: client},
		{name: "blank Forwarded", remote: proxy, forwarded: []string{" "}, xff: []string{client}, want: client},
		{name: "Forwarded, quoted pair", remote: proxy, forwarded: []string{`for="198.51.100.\7"`}, want: client},
		{name: "Forwarded, obfuscated right-most", remote: proxy, forwarded: []string{"for=" + client + ", for=_hidden"}, want: "10.0.0.1"},
		{name: "Forwarded, obfuscated between", remote: proxy, forwarded: []string{"for=" + client + ", for=_hidden, for=10.0.0.2"}, want: "10.0.0.2"},
		{name: "Forwarded, obfuscated port", remote: proxy, forwarded: []string{`for="` + client + `:_p1"`}, want: client},
		{name: "Forwarded, unknown", remote: proxy, forwarded: []string{"for=unknown"}, want: "10.0.0.1"},
		{name: "Forwarded, comma in quotes", remote: proxy, forwarded: []string{`for="6.6.6.6, ` + client + `"`}, want: "10.0.0.1"},
		{name: "Forwarded, unterminated quote", remote: proxy, forwarded: []string{"for=" + client + `, for="10.0.0.2`}, want: "10.0.0.1"},
		{name: "Forwarded, element without for", remote: proxy, forwarded: []string{"for=" + client + ", by=10.0.0.2"}, want: "10.0.0.1"},
		{name: "Forwarded, for twice", remote: proxy, forwarded: []string{"for=6.6.6.6;for=" + client}, want: "10.0.0.1"},
		{name: "Forwarded, IPv6 without quotes", remote: proxy, forwarded: []string{"for=2001:db8::7"}, want: "2001:db8::7"},
		{name: "too long: ignored", remote: proxy, xff: []string{long}, want: "10.0.0.1"},
		{name: "too long Forwarded: X-Forwarded-For not read", remote: proxy,
			forwarded: []string{strings.ReplaceAll(long, "10.", "for=10.")}, xff: []string{client}, want: "10.0.0.1"},
		{name: "32 hops at most", remote: proxy, xff: []string{client + ", " + strings.Join(chain, ", ")}, want: "10.0.1.9"},
		{name: "peer without a port", remote: "203.0.113.5", want: "203.0.113.5"},
		{name: "peer that is not an IP", remote: "garbage", xff: []string{client}, want: "garbage"},
	}
	s := proxyServer()
	for _, c := range cases {
		if got := s.clientAddress(forwardedRequest(c.remote, c.forwarded, c.xff)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}

	// Without trusted proxies, the headers are never read.
	none := &Server{}
	if got := none.clientAddress(forwardedRequest(proxy, []string{"for=" + client}, []string{client})); got != "10.0.0.1" {
		t.Errorf("no trusted proxies: %q, want the peer", got)
	}
}

// FuzzClientAddress: whatever the peer and the headers, clientAddress
// answers the peer, or a normalised IP address that the headers contain,
// and the headers of an untrusted peer are never read. Header lines are
// separated by newlines.
func FuzzClientAddress(f *testing.F) {
	for _, seed := range [][3]string{
		{"10.0.0.1:443", "", "6.6.6.6, 198.51.100.7, 10.0.0.2"},
		{"10.0.0.1:443", `for=6.6.6.6;proto=http, for="[2001:db8::7]:4711"`, ""},
		{"10.0.0.1:443", "for=198.51.100.7, for=_hidden, for=10.0.0.2", "6.6.6.6"},
		{"10.0.0.1:443", `for="198.51.100.\7", for="10.0.0.2`, ""},
		{"10.0.0.1:443", "", "::ffff:198.51.100.7\n[2001:db8::7]:80, fe80::1%eth0"},
		{"[::ffff:10.0.0.1]:443", "for=unknown", "198.51.100.7"},
		{"[fd00::1]:443", "", "198.51.100.7:4711, fd00::2"},
		{"203.0.113.5:1234", "for=198.51.100.7", "198.51.100.7"},
		{"garbage", "for=1.2.3.4", "1.2.3.4"},
		{"10.0.0.1:443", `for=""`, ",,,"},
		{"10.0.0.1:443", `for="\`, `[`},
		{"10.0.0.0", "", "1::% 00000000000"}, // a zone with a space
		{"[fd00::]:", "", "::\f"},            // trimmed as space
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	s := proxyServer()
	f.Fuzz(func(t *testing.T, remote, forwarded, xff string) {
		var fwd, x []string
		if forwarded != "" {
			fwd = strings.Split(forwarded, "\n")
		}
		if xff != "" {
			x = strings.Split(xff, "\n")
		}
		got := s.clientAddress(forwardedRequest(remote, fwd, x))

		peer := remote
		if h, _, err := net.SplitHostPort(remote); err == nil {
			peer = h
		}
		peerAddr, err := netip.ParseAddr(peer)
		if err == nil {
			peer = peerAddr.WithZone("").Unmap().String()
		}
		if got == peer {
			return
		}
		if err != nil || !s.trustedProxy(peerAddr.WithZone("").Unmap()) {
			t.Fatalf("the headers of an untrusted peer %q were read: %q", remote, got)
		}
		a, err := netip.ParseAddr(got)
		if err != nil || a.Is4In6() || a.Zone() != "" || a.String() != got {
			t.Fatalf("%q is not a normalised IP address", got)
		}
		if !headerAddrs(forwarded + "\n" + xff)[got] {
			t.Fatalf("%q is neither the peer %q nor in the headers %q, %q", got, remote, forwarded, xff)
		}
	})
}

// headerAddrs is every IP address that text contains, normalised, found
// leniently and independently of the parser under test.
func headerAddrs(text string) map[string]bool {
	addrs := map[string]bool{}
	add := func(s string) {
		if a, err := netip.ParseAddr(s); err == nil {
			addrs[a.WithZone("").Unmap().String()] = true
		}
	}
	text = strings.ReplaceAll(text, `\`, "")
	for _, field := range strings.FieldsFunc(text, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`,;="`, r) }) {
		add(field)
		if addr, _, ok := strings.Cut(field, "%"); ok { // a zone may hold separators
			add(addr)
		}
		add(strings.TrimSuffix(strings.TrimPrefix(field, "["), "]"))
		if host, _, err := net.SplitHostPort(field); err == nil {
			add(host)
		}
	}
	return addrs
}
