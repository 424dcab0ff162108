package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/netip"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/ratelimit"
)

// The login brake counts failed sign-ins (wrong passwords, wrong client
// secrets) in three buckets:
//   - pair: one account from one address;
//   - address: one address, whatever the account;
//   - account: one account, whatever the address, but held only against
//     addresses that have failed recently.
//
// So failures from one address never refuse the right password from an
// address without recent failures, while an attacker spread over many
// addresses gets one guess per fresh address once the account's bucket is
// empty. Every attempt takes its events before the slow check, so that
// parallel guesses cannot all pass before the first failure is recorded;
// an attempt that succeeds (or fails for another reason) gives them back.
//
// "Address" is the client address as BrakeAddress counts it: an IPv6
// client by its /64, so that hopping through the addresses of one subnet
// buys no fresh buckets.

// brakeKeys names the three buckets of one attempt.
type brakeKeys struct {
	account, address, pair string
}

// newBrakeKeys returns the keys of an account (already a bounded string)
// and a client address, which counts as its BrakeAddress.
func newBrakeKeys(account, addr string) brakeKeys {
	a := brakeDigest(BrakeAddress(addr))
	return brakeKeys{account: account, address: "addr:" + a, pair: account + ":" + a}
}

// ipv6BrakePrefix is the prefix length an IPv6 client address is braked
// by: a /64 is one subnet, and one host or one customer commonly holds a
// whole one (SLAAC, privacy addresses, RFC 6177 assignments of /64 and
// shorter), so its 2^64 addresses are one client to the brake.
const ipv6BrakePrefix = 64

// BrakeAddress is what the login brake counts a client address as: an
// IPv4 address (an IPv4-mapped IPv6 one too) alone, written as IPv4; an
// IPv6 address by its /64 prefix ("2001:db8:1:2::/64"). Ports are not
// part of addr; a zone is dropped. Anything that is not an IP address
// (a peer that is not on TCP) is kept as it is.
func BrakeAddress(addr string) string {
	a, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	a = a.WithZone("").Unmap()
	if a.Is4() {
		return a.String()
	}
	p, _ := a.Prefix(ipv6BrakePrefix) // never fails for IPv6 and 64
	return p.String()
}

// brakeDigest is the fixed-size stand-in for a client-chosen part of a
// brake key: a megabyte-long username costs the brake's memory, in the
// process and in Redis, what a short one costs.
func brakeDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// throttled refuses a sign-in because too many failed.
func throttled(wait time.Duration) error {
	e := errs.New(errs.Throttled, "too_many_requests", "too many failed logins; try again later")
	e.RetryAfter = wait
	return e
}

// failed reports whether an attempt's error is a failed sign-in, the
// kind the brake counts.
func failed(err error) bool {
	return errors.Is(err, ErrInvalidGrant) || errors.Is(err, ErrInvalidClient)
}

// The policies of the brake's buckets in the RateLimit fields of the
// token endpoint's answers (docs/api.md "Rate-limit headers").
const (
	PolicyPair    = "login-pair"
	PolicyAddress = "login-address"
	PolicyAccount = "login-account"
)

type bucket struct {
	limiter ratelimit.Limiter
	key     string
	reason  string // for metrics
	policy  string // in the RateLimit fields
	// shown: the bucket's state is shown on every answer. The account's
	// bucket counts failures from every address, so its state would tell
	// a client of other clients' attempts: it shows only when it refuses,
	// which the refusal tells anyway.
	shown bool
}

// braked runs attempt under the brake: refused (errs.Throttled) when a
// bucket that applies is empty, counted when the attempt fails. It notes
// the states the attempt left the buckets in (ratelimit.Note), for the
// answer's RateLimit fields.
func (s *Service) braked(ctx context.Context, k brakeKeys, attempt func() error) error {
	fresh, err := s.cfg.AddressBrake.Fresh(ctx, k.address)
	if err != nil {
		return fmt.Errorf("login brake: %w", err)
	}
	buckets := []bucket{
		{s.cfg.PairBrake, k.pair, "account_address", PolicyPair, true},
		{s.cfg.AddressBrake, k.address, "address", PolicyAddress, true},
	}
	account := bucket{s.cfg.AccountBrake, k.account, "account", PolicyAccount, false}
	if !fresh {
		buckets = append(buckets, account)
	}
	taken := make([]bucket, 0, len(buckets))
	for _, b := range buckets {
		d, err := b.limiter.Take(ctx, b.key)
		if err == nil && d.Wait > 0 {
			s.cfg.Metrics.BrakeRefused(b.reason)
			s.cfg.Metrics.RateLimited("login")
			ratelimit.Note(ctx, b.policy, d.State)
			err = throttled(d.Wait)
		}
		if err != nil {
			s.giveBack(ctx, taken)
			return err
		}
		if b.shown {
			ratelimit.Note(ctx, b.policy, d.State)
		}
		taken = append(taken, b)
	}
	err = attempt()
	if !failed(err) {
		s.giveBack(ctx, taken)
		if err == nil {
			// The address knows the secret: its earlier failures on this
			// account were typing errors.
			if st, rerr := s.cfg.PairBrake.Reset(context.WithoutCancel(ctx), k.pair); rerr != nil {
				s.log.Warn("reset login brake", "err", rerr)
			} else {
				ratelimit.Note(ctx, PolicyPair, st)
			}
		}
		return err
	}
	if fresh {
		// The account counts every failure, a fresh address's first too.
		if _, terr := account.limiter.Take(context.WithoutCancel(ctx), account.key); terr != nil {
			s.log.Warn("login brake", "err", terr)
		}
	}
	return err
}

// giveBack returns the events an attempt took: it did not fail.
func (s *Service) giveBack(ctx context.Context, taken []bucket) {
	ctx = context.WithoutCancel(ctx)
	for _, b := range taken {
		st, err := b.limiter.Refund(ctx, b.key)
		if err != nil {
			s.log.Warn("login brake: refund", "err", err)
			continue
		}
		if b.shown {
			ratelimit.Note(ctx, b.policy, st)
		}
	}
}
