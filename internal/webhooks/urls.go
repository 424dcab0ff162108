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
		Message:  "webhooks may not reach loopback, private, link-local, multicast or unspecified addresses: " + detail,
		Problems: []errs.Problem{{Field: "url", Message: "must reach a public address: " + detail}}}
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
		if blocked(a) {
			return notAllowed(host + " is " + a.String())
		}
	}
	return nil
}

func (s *Service) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if s.cfg.Lookup != nil {
		return s.cfg.Lookup(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// cgnat is the shared address space of carrier-grade NAT (RFC 6598).
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// thisNetwork is 0.0.0.0/8, "this host on this network" (RFC 1122).
var thisNetwork = netip.MustParsePrefix("0.0.0.0/8")

// blocked reports whether webhooks may not reach a: loopback, private
// (RFC 1918, ULA fc00::/7), link-local, unspecified, multicast, CGNAT or
// broadcast. IPv4-mapped IPv6 addresses count as their IPv4 address.
func blocked(a netip.Addr) bool {
	a = a.Unmap()
	return !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsInterfaceLocalMulticast() || a.IsMulticast() || a.IsUnspecified() || cgnat.Contains(a) ||
		thisNetwork.Contains(a) || a == netip.AddrFrom4([4]byte{255, 255, 255, 255})
}

// dialControl refuses a connection to an address webhooks may not reach:
// it sees the address actually dialled, after resolution, so a name that
// resolves elsewhere than it did at creation (DNS rebinding) is caught.
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
