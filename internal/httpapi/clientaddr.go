package httpapi

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Bounds of the forwarding headers that clientAddress reads. A client can
// send headers as long as the server's header limit allows; these keep the
// work per request small whatever it sends.
const (
	// maxForwardedBytes: a header whose lines together are longer is not
	// read at all, and the peer is the client.
	maxForwardedBytes = 4 << 10
	// maxHops is how many hops, from the right, the walk looks at.
	maxHops = 32
)

// clientAddress is the IP address of r's client, the key of limits by
// address: the peer's, unless the peer is a trusted proxy; then the one
// that the proxies' forwarding headers name (see forwardedClient).
func (s *Server) clientAddress(r *http.Request) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	peer, err := netip.ParseAddr(host)
	if err != nil {
		return host // not an IP peer (never over TCP): nothing to trust
	}
	peer = normalAddr(peer)
	if !s.trustedProxy(peer) {
		return peer.String()
	}
	return s.forwardedClient(r.Header, peer).String()
}

// forwardedClient walks the hops that the proxies recorded, from the
// right. Each proxy appends the address it received the request from, so
// the hops up to the first untrusted one were written by trusted proxies,
// and everything left of it by the client, which can write anything. It
// returns the right-most hop that is not a trusted proxy; when every hop
// is one, the left-most. A hop that cannot be read (an obfuscated
// identifier, "unknown", garbage) or the bound of maxHops ends the walk at
// the last address read.
func (s *Server) forwardedClient(h http.Header, peer netip.Addr) netip.Addr {
	hops := forwardedHops(h)
	client := peer
	for i := len(hops) - 1; i >= 0 && len(hops)-i <= maxHops; i-- {
		a, ok := parseNode(hops[i])
		if !ok {
			break
		}
		client = a
		if !s.trustedProxy(a) {
			break
		}
	}
	return client
}

// trustedProxy reports whether a is in a network of --trusted-proxies.
func (s *Server) trustedProxy(a netip.Addr) bool {
	for _, p := range s.cfg.TrustedProxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// forwardedHops returns the hops of the request's forwarding header, left
// to right: the for= nodes of Forwarded (RFC 7239) when it is there, which
// says exactly what each proxy saw; otherwise the entries of
// X-Forwarded-For. Only one header is read, so that a client cannot mix
// entries of its own into the other. A header longer than
// maxForwardedBytes gives no hops.
func forwardedHops(h http.Header) []string {
	if v, ok := joinedHeader(h, "Forwarded"); ok {
		return forwardedFor(v)
	}
	if v, ok := joinedHeader(h, "X-Forwarded-For"); ok {
		return nonEmpty(strings.Split(v, ","))
	}
	return nil
}

// joinedHeader returns the lines of header name joined by commas, and
// whether it has any content. A header over the bound has a content that
// yields no hops.
func joinedHeader(h http.Header, name string) (string, bool) {
	lines := h.Values(name)
	n := 0
	present := false
	for _, l := range lines {
		n += len(l) + 1
		present = present || strings.TrimSpace(l) != ""
	}
	if !present {
		return "", false
	}
	if n > maxForwardedBytes {
		return "", true
	}
	return strings.Join(lines, ","), true
}

// forwardedFor returns the for= node of each element of a Forwarded value,
// left to right; "" for an element without one or with a malformed one,
// which ends the walk there.
func forwardedFor(v string) []string {
	var nodes []string
	for _, elem := range nonEmpty(splitOutsideQuotes(v, ',')) {
		node, seen := "", false
		for _, pair := range splitOutsideQuotes(elem, ';') {
			name, value, _ := strings.Cut(pair, "=")
			if !strings.EqualFold(strings.TrimSpace(name), "for") {
				continue
			}
			if seen { // a parameter appears at most once per element
				node = ""
				break
			}
			seen = true
			node, _ = unquote(strings.TrimSpace(value))
		}
		nodes = append(nodes, node)
	}
	return nodes
}

// splitOutsideQuotes splits s at each sep that is not inside a quoted
// string. An unterminated quote keeps the rest of s in the last part,
// which then does not unquote.
func splitOutsideQuotes(s string, sep byte) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++ // a quoted pair: the next byte is literal
		case c == '"':
			quoted = !quoted
		case !quoted && c == sep:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// unquote returns the content of an RFC 7230 quoted string, or a token as
// it is; false when a quoted string is malformed.
func unquote(v string) (string, bool) {
	if !strings.HasPrefix(v, `"`) {
		return v, true
	}
	if len(v) < 2 || !strings.HasSuffix(v, `"`) {
		return "", false
	}
	var b strings.Builder
	for i := 1; i < len(v)-1; i++ {
		switch c := v[i]; c {
		case '\\':
			if i++; i == len(v)-1 {
				return "", false // the escape took the closing quote
			}
			b.WriteByte(v[i])
		case '"':
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}

// nonEmpty drops blank entries: they name no hop.
func nonEmpty(ss []string) []string {
	out := ss[:0]
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			out = append(out, s)
		}
	}
	return out
}

// parseNode reads one hop: an IP address, optionally with a port, IPv6 in
// brackets when it has one ("192.0.2.1", "192.0.2.1:4711", "2001:db8::1",
// "[2001:db8::1]:4711"). Obfuscated identifiers and "unknown" are not
// addresses.
func parseNode(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	host, port, hasPort := s, "", false
	if rest, ok := strings.CutPrefix(s, "["); ok {
		var after string
		if host, after, ok = strings.Cut(rest, "]"); !ok {
			return netip.Addr{}, false
		}
		if port, hasPort = strings.CutPrefix(after, ":"); !hasPort && after != "" {
			return netip.Addr{}, false
		}
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 && !strings.Contains(s[:i], ":") {
		// One colon: IPv4 with a port. More: IPv6, whose port needs brackets.
		host, port, hasPort = s[:i], s[i+1:], true
	}
	a, err := netip.ParseAddr(host)
	if err != nil || hasPort && !validPort(port) {
		return netip.Addr{}, false
	}
	return normalAddr(a), true
}

// validPort accepts a number or an obfuscated port ("_abc").
func validPort(p string) bool {
	if p == "" || len(p) > 32 {
		return false
	}
	obfuscated := p[0] == '_'
	for i := range len(p) {
		c := p[i]
		digit := '0' <= c && c <= '9'
		other := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '.' || c == '_' || c == '-'
		if !digit && !(obfuscated && other) {
			return false
		}
	}
	return obfuscated || len(p) <= 5
}

// normalAddr is a in the form limits key on: IPv4-mapped IPv6 addresses
// as IPv4, no zone.
func normalAddr(a netip.Addr) netip.Addr {
	return a.WithZone("").Unmap()
}
