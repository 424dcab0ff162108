package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"
	"time"

	"planwerk/internal/errs"
)

// checkURL says what is wrong with a webhook URL's form ("" when nothing).
func checkURL(raw string) string {
	const want = "must be an absolute http or https URL"
	if raw == "" || len(raw) > maxURL {
		return fmt.Sprintf("%s of at most %d characters", want, maxURL)
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
		return want
	case u.User != nil:
		return "must not carry a user name or password: the signature authenticates deliveries"
	case u.Fragment != "":
		return "must not have a fragment"
	}
	return ""
}

// errNotAllowed refuses an address webhooks may not reach.
var errNotAllowed = errors.New("address not allowed for webhooks")

// notAllowed refuses a URL whose host is, or resolves to, an address
// webhooks may not reach.
func notAllowed(detail string) error {
	return &errs.Error{Kind: errs.Invalid, Code: "url_not_allowed",
		Message: "webhooks may only reach globally reachable addresses (not loopback, private, link-local, shared, " +
			"documentation, benchmarking, reserved, multicast or other special-purpose ones, nor IPv6 forms that " +
			"embed an IPv4 address): " + detail,
		Problems: []errs.Problem{{Field: "url", Message: "must reach a globally reachable address: " + detail}}}
}

// checkHost refuses a URL whose host resolves to an address webhooks may
// not reach, unless private addresses are allowed. The dialer checks
// again at every connection: DNS may answer differently later.
func (s *Service) checkHost(ctx context.Context, raw string) error {
	if s.cfg.AllowPrivate {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return errs.Field("url", "must be an absolute http or https URL")
	}
	host := u.Hostname()
	addrs, err := s.resolve(ctx, host)
	if err != nil || len(addrs) == 0 {
		return errs.Field("url", "its host "+host+" does not resolve")
	}
	for _, a := range addrs {
		if r, no := refusedBy(a); no {
			what := host + " is "
			if _, err := netip.ParseAddr(host); err != nil {
				what = host + " resolves to " + a.String() + ", "
			}
			return notAllowed(what + "in " + r.String())
		}
	}
	return nil
}

// resolve returns the addresses of a URL's host: the address itself when
// the host is an IP literal (as written: an IPv4-mapped literal stays
// IPv6, and is refused as such), else what the resolver answers, IPv4
// addresses as IPv4 however the resolver spells them.
func (s *Service) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	lookup := net.DefaultResolver.LookupNetIP
	if s.cfg.Lookup != nil {
		lookup = func(ctx context.Context, _, host string) ([]netip.Addr, error) { return s.cfg.Lookup(ctx, host) }
	}
	found, err := lookup(ctx, "ip", host)
	addrs := make([]netip.Addr, len(found))
	for i, a := range found {
		// The dialer connects to an IPv4-mapped answer over IPv4, and its
		// Control sees (and checks) the IPv4 address.
		addrs[i] = a.Unmap()
	}
	return addrs, err
}

// addrRange is a block of addresses webhooks may not reach, and its name.
type addrRange struct {
	prefix netip.Prefix
	name   string
}

func (r addrRange) String() string { return r.prefix.String() + ", " + r.name }

// notReachable are the address blocks webhooks may not reach: every
// entry of the IANA IPv4 and IPv6 Special-Purpose Address Registries
// whose "Globally Reachable" is False or N/A, multicast, the deprecated
// IPv6 site-local block, and every IPv6 form that embeds an IPv4 address
// (refused whichever IPv4 address it embeds: the service cannot tell
// where a translator or relay would take it). A more specific entry comes
// before the block holding it, so that a refusal names it. Parsed once,
// when the package starts.
var notReachable = ranges(
	// IPv4 Special-Purpose Address Registry.
	"0.0.0.0/8", `"this network" (RFC 791), with 0.0.0.0/32 "this host on this network"`,
	"10.0.0.0/8", "private-use (RFC 1918)",
	"100.64.0.0/10", "shared address space, carrier-grade NAT (RFC 6598)",
	"127.0.0.0/8", "loopback (RFC 1122)",
	"169.254.0.0/16", "link-local (RFC 3927)",
	"172.16.0.0/12", "private-use (RFC 1918)",
	"192.0.0.0/29", "IPv4 service continuity prefix, DS-Lite (RFC 7335)",
	"192.0.0.8/32", "IPv4 dummy address (RFC 7600)",
	"192.0.0.170/31", "NAT64/DNS64 discovery (RFC 8880)",
	// The whole /24, though the registry marks 192.0.0.9/32 (Port Control
	// Protocol anycast) and 192.0.0.10/32 (TURN anycast) globally
	// reachable: an anycast address of the nearest such server leads to
	// one near the service, typically its own network's NAT gateway.
	"192.0.0.0/24", "IETF protocol assignments (RFC 6890)",
	"192.0.2.0/24", "documentation, TEST-NET-1 (RFC 5737)",
	"192.88.99.0/24", "deprecated 6to4 relay anycast, with 192.88.99.2/32 6a44-relay anycast (RFC 7526, RFC 6751)",
	"192.168.0.0/16", "private-use (RFC 1918)",
	"198.18.0.0/15", "benchmarking (RFC 2544)",
	"198.51.100.0/24", "documentation, TEST-NET-2 (RFC 5737)",
	"203.0.113.0/24", "documentation, TEST-NET-3 (RFC 5737)",
	"255.255.255.255/32", "limited broadcast (RFC 919)",
	"240.0.0.0/4", "reserved (RFC 1112)",
	// IPv4 Multicast Address Space Registry.
	"224.0.0.0/4", "multicast (RFC 5771)",

	// IPv6 Special-Purpose Address Registry.
	"::/128", "unspecified address (RFC 4291)",
	"::1/128", "loopback address (RFC 4291)",
	"::ffff:0:0/96", "IPv4-mapped address (RFC 4291)",
	"64:ff9b::/96", "IPv4/IPv6 translation, NAT64 well-known prefix, embeds an IPv4 address (RFC 6052)",
	"64:ff9b:1::/48", "local-use IPv4/IPv6 translation, embeds an IPv4 address (RFC 8215)",
	"100::/64", "discard-only address block (RFC 6666)",
	"100:0:0:1::/64", "dummy IPv6 prefix (RFC 9780)",
	"2001::/32", "Teredo, embeds an IPv4 address (RFC 4380)",
	"2001:2::/48", "benchmarking (RFC 5180)",
	"2001:10::/28", "deprecated ORCHID (RFC 4843)",
	// All of it but the blocks of reachableInside. The anycast addresses
	// 2001:1::1/128 (Port Control Protocol), 2001:1::2/128 (TURN) and
	// 2001:1::3/128 (DNS-SD service registration), globally reachable in
	// the registry, are refused as 192.0.0.9 and 192.0.0.10 are.
	"2001::/23", "IETF protocol assignments (RFC 2928)",
	"2001:db8::/32", "documentation (RFC 3849)",
	"2002::/16", "6to4, embeds an IPv4 address (RFC 3056)",
	"3fff::/20", "documentation (RFC 9637)",
	"5f00::/16", "segment routing (SRv6) SIDs (RFC 9602)",
	"fc00::/7", "unique-local (RFC 4193)",
	"fe80::/10", "link-local unicast (RFC 4291)",
	// IPv4-embedding forms outside the registry.
	"::/96", "IPv4-compatible address, deprecated, embeds an IPv4 address (RFC 4291)",
	"::ffff:0:0:0/96", "IPv4-translated address, embeds an IPv4 address (RFC 2765)",
	// IPv6 Address Space Registry.
	"fec0::/10", "deprecated site-local (RFC 3879)",
	"ff00::/8", "multicast (RFC 4291)",
)

// reachableInside are the blocks inside 2001::/23 that the IPv6
// Special-Purpose Address Registry marks globally reachable and webhooks
// may reach.
var reachableInside = ranges(
	"2001:3::/32", "AMT (RFC 7450)",
	"2001:4:112::/48", "AS112-v6 (RFC 7535)",
	"2001:20::/28", "ORCHIDv2 (RFC 7343)",
	"2001:30::/28", "drone remote ID entity tags (RFC 9374)",
)

// ranges parses pairs of prefix and name.
func ranges(pairs ...string) []addrRange {
	out := make([]addrRange, 0, len(pairs)/2)
	for i := 0; i+1 < len(pairs); i += 2 {
		p := netip.MustParsePrefix(pairs[i])
		if p != p.Masked() {
			panic("webhooks: address range " + pairs[i] + " has host bits set")
		}
		out = append(out, addrRange{prefix: p, name: pairs[i+1]})
	}
	return out
}

// refusedBy returns the block of notReachable that holds a (its zone
// left aside), unless a block of reachableInside holds it; an invalid
// address is refused too.
func refusedBy(a netip.Addr) (addrRange, bool) {
	if !a.IsValid() {
		return addrRange{name: "no address"}, true
	}
	a = a.WithZone("") // a prefix holds no address with a zone
	for _, r := range reachableInside {
		if r.prefix.Contains(a) {
			return addrRange{}, false
		}
	}
	for _, r := range notReachable {
		if r.prefix.Contains(a) {
			return r, true
		}
	}
	return addrRange{}, false
}

// blocked reports whether webhooks may not reach a: an address of a block
// of notReachable. An IPv4-mapped address is refused whatever IPv4
// address it maps (::ffff:0:0/96 is not globally reachable); names that
// resolve to one are checked as IPv4 (see resolve), and the dialer hands
// dialControl every IPv4 address in dotted form.
func blocked(a netip.Addr) bool {
	_, no := refusedBy(a)
	return no
}

// dialControl refuses a connection to an address webhooks may not reach:
// it sees the address actually dialled, after resolution, so a name that
// resolves elsewhere than it did at creation (DNS rebinding) is caught.
// It runs before the connection is attempted: nothing is sent to a
// refused address.
func dialControl(_, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return errNotAllowed
	}
	a, err := netip.ParseAddr(host)
	if err != nil || blocked(a) {
		return fmt.Errorf("%w: %s", errNotAllowed, host)
	}
	return nil
}
