package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"planwerk/internal/errs"
	"sync"
	"time"

	"planwerk/internal/metrics"
	"planwerk/internal/ratelimit"
	"planwerk/internal/store"
)

// Errors of the grants and of bearer checks.
var (
	// ErrInvalidGrant: wrong e-mail or password, or an unusable refresh token.
	ErrInvalidGrant = errors.New("invalid grant")
	// ErrUnauthorized: the bearer token is missing, unknown, expired or revoked.
	ErrUnauthorized = errors.New("unauthorized")
)

// throttled refuses a login because too many failed for the account or
// the address.
func throttled(wait time.Duration) error {
	e := errs.New(errs.Throttled, "too_many_requests", "too many failed logins; try again later")
	e.RetryAfter = wait
	return e
}

// Principal is the authenticated caller of a request.
type Principal struct {
	TenantID int64
	UserID   int64
	IsAdmin  bool
}

// Grant is an issued token pair.
type Grant struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    int64 // seconds
}

// Config tunes the Service.
type Config struct {
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	// CacheTTL is how long a verified access token is trusted without
	// asking the database again; a token revoked on another instance stays
	// usable here for at most this long.
	CacheTTL time.Duration
	// AccountBrake and AddressBrake count failed logins per account and per
	// client address.
	AccountBrake ratelimit.Limiter
	AddressBrake ratelimit.Limiter
	// Metrics counts login failures and brake refusals; may be nil.
	Metrics *metrics.Metrics
}

// Store is what sign-in needs of the database.
type Store interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	UserByEmail(ctx context.Context, tenantID int64, email string) (store.User, error)
	InsertTokens(ctx context.Context, q store.Querier, tenantID int64, p store.TokenPair) error
	AccessTokenByHash(ctx context.Context, tenantID int64, hash []byte) (store.AccessToken, error)
	SpendRefreshToken(ctx context.Context, q store.Querier, tenantID int64, hash []byte, now time.Time) (userID int64, family []byte, err error)
	RevokeFamily(ctx context.Context, q store.Querier, tenantID int64, family []byte) error
}

// Service runs the OAuth2 grants and checks bearer tokens.
type Service struct {
	db     Store
	hasher *Hasher
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	cache  tokenCache
}

// NewService returns a Service on db.
func NewService(db Store, hasher *Hasher, cfg Config, log *slog.Logger) *Service {
	return &Service{db: db, hasher: hasher, cfg: cfg, log: log, now: time.Now,
		cache: tokenCache{entries: make(map[[32]byte]cachedToken)}}
}

// PasswordGrant checks an e-mail address and password in the tenant and
// issues a new token pair.
func (s *Service) PasswordGrant(ctx context.Context, tenantID int64, email, password, addr string) (Grant, error) {
	accountKey := fmt.Sprintf("login:%d:%s", tenantID, brakeDigest(store.EmailKey(email)))
	addressKey := "login-addr:" + brakeDigest(addr)
	// Every attempt is counted before the password is checked: counting
	// only failures, after the slow check, would let parallel guesses all
	// pass the brake before the first failure is recorded.
	if err := s.takeAttempt(ctx, accountKey, addressKey); err != nil {
		return Grant{}, err
	}
	user, err := s.db.UserByEmail(ctx, tenantID, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.hasher.VerifyDummy(ctx, password)
		return Grant{}, s.failLogin()
	case err != nil:
		return Grant{}, fmt.Errorf("password grant: %w", err)
	}
	if user.PasswordHash == "" { // a user who cannot sign in: no password set
		s.hasher.VerifyDummy(ctx, password)
		return Grant{}, s.failLogin()
	}
	ok, err := s.hasher.Verify(ctx, password, user.PasswordHash)
	if err != nil {
		return Grant{}, fmt.Errorf("password grant: %w", err)
	}
	if !ok {
		return Grant{}, s.failLogin()
	}
	if err := s.cfg.AccountBrake.Reset(ctx, accountKey); err != nil {
		s.log.Warn("reset login brake", "err", err)
	}
	var g Grant
	err = s.db.Tx(ctx, func(q store.Querier) error {
		g, err = s.issue(ctx, q, tenantID, user.ID, newFamily())
		return err
	})
	if err != nil {
		return Grant{}, fmt.Errorf("password grant: %w", err)
	}
	return g, nil
}

// brakeDigest is the fixed-size stand-in for a client-chosen part of a
// brake key: a megabyte-long username costs the brake's memory, in the
// process and in Redis, what a short one costs.
func brakeDigest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// takeAttempt counts a login attempt against the account's and the
// address's brakes, or refuses it (errs.Throttled).
func (s *Service) takeAttempt(ctx context.Context, accountKey, addressKey string) error {
	for i, l := range []ratelimit.Limiter{s.cfg.AccountBrake, s.cfg.AddressBrake} {
		wait, err := l.Take(ctx, []string{accountKey, addressKey}[i])
		if err != nil {
			return fmt.Errorf("login brake: %w", err)
		}
		if wait > 0 {
			s.cfg.Metrics.RateLimited("login")
			return throttled(wait)
		}
	}
	return nil
}

// failLogin records a failed login and returns the error for the client.
func (s *Service) failLogin() error {
	s.cfg.Metrics.LoginFailed()
	return ErrInvalidGrant
}

// RefreshGrant spends a refresh token and issues a new pair in the same
// family. A refresh token that was already spent revokes the whole family.
func (s *Service) RefreshGrant(ctx context.Context, tenantID int64, refreshToken string) (Grant, error) {
	var (
		g      Grant
		reused bool
	)
	err := s.db.Tx(ctx, func(q store.Querier) error {
		reused = false
		hash := hashToken(refreshToken)
		userID, family, err := s.db.SpendRefreshToken(ctx, q, tenantID, hash[:], s.now())
		if errors.Is(err, store.ErrTokenReused) {
			reused = true
			return s.db.RevokeFamily(ctx, q, tenantID, family)
		}
		if err != nil {
			return err
		}
		g, err = s.issue(ctx, q, tenantID, userID, family)
		return err
	})
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Grant{}, ErrInvalidGrant
	case err != nil:
		return Grant{}, fmt.Errorf("refresh grant: %w", err)
	case reused:
		s.cache.clear() // the family's access tokens may sit in the cache
		s.log.Warn("refresh token reused; token family revoked", "tenant_id", tenantID)
		return Grant{}, ErrInvalidGrant
	}
	return g, nil
}

func (s *Service) issue(ctx context.Context, q store.Querier, tenantID, userID int64, family []byte) (Grant, error) {
	access, accessHash := newToken(accessPrefix)
	refresh, refreshHash := newToken(refreshPrefix)
	now := s.now()
	err := s.db.InsertTokens(ctx, q, tenantID, store.TokenPair{
		AccessHash: accessHash, RefreshHash: refreshHash, UserID: userID, FamilyID: family,
		AccessExpiry: now.Add(s.cfg.AccessTTL), RefreshExpiry: now.Add(s.cfg.RefreshTTL),
	})
	if err != nil {
		return Grant{}, err
	}
	return Grant{AccessToken: access, RefreshToken: refresh, ExpiresIn: int64(s.cfg.AccessTTL / time.Second)}, nil
}

// Authenticate checks a bearer token presented to the tenant.
func (s *Service) Authenticate(ctx context.Context, tenantID int64, token string) (Principal, error) {
	if token == "" {
		return Principal{}, ErrUnauthorized
	}
	hash := hashToken(token)
	now := s.now()
	if p, ok := s.cache.get(hash, tenantID, now); ok {
		return p, nil
	}
	t, err := s.db.AccessTokenByHash(ctx, tenantID, hash[:])
	if errors.Is(err, store.ErrNotFound) {
		return Principal{}, ErrUnauthorized
	}
	if err != nil {
		return Principal{}, fmt.Errorf("authenticate: %w", err)
	}
	if t.Revoked || !now.Before(t.ExpiresAt) {
		return Principal{}, ErrUnauthorized
	}
	p := Principal{TenantID: tenantID, UserID: t.UserID, IsAdmin: t.IsAdmin}
	until := now.Add(s.cfg.CacheTTL)
	if t.ExpiresAt.Before(until) {
		until = t.ExpiresAt
	}
	s.cache.put(hash, p, until)
	return p, nil
}

// ForgetCachedTokens drops every cached token check, so that revocations
// made by this process take effect at once.
func (s *Service) ForgetCachedTokens() { s.cache.clear() }

// tokenCache remembers verified access tokens for a few seconds.
type tokenCache struct {
	mu      sync.RWMutex
	entries map[[32]byte]cachedToken
}

type cachedToken struct {
	p     Principal
	until time.Time
}

const cacheMax = 100000

func (c *tokenCache) get(hash [32]byte, tenantID int64, now time.Time) (Principal, bool) {
	c.mu.RLock()
	e, ok := c.entries[hash]
	c.mu.RUnlock()
	if !ok || e.p.TenantID != tenantID || !now.Before(e.until) {
		return Principal{}, false
	}
	return e.p, true
}

func (c *tokenCache) put(hash [32]byte, p Principal, until time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.entries) >= cacheMax {
		now := time.Now()
		for k, e := range c.entries {
			if !now.Before(e.until) {
				delete(c.entries, k)
			}
		}
		if len(c.entries) >= cacheMax {
			clear(c.entries)
		}
	}
	c.entries[hash] = cachedToken{p: p, until: until}
}

func (c *tokenCache) clear() {
	c.mu.Lock()
	clear(c.entries)
	c.mu.Unlock()
}
