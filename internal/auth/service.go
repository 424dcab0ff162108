package auth

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/puzpuzpuz/xsync/v4"

	"planwerk/internal/errs"
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

// Principal is the authenticated caller of a request.
type Principal struct {
	TenantID int64
	UserID   int64
	IsAdmin  bool
	// ReadOnly: the token's scope is read; every write is refused
	// (insufficient_scope).
	ReadOnly bool
	// ClientID is the API client the token was given to (0: the user
	// signed in themselves).
	ClientID int64
}

// Grant is an issued token pair.
type Grant struct {
	AccessToken  string
	RefreshToken string // none for API clients
	ExpiresIn    int64  // seconds
	Scope        string // the access token's: ScopeRead or ScopeReadWrite
}

// Config tunes the Service.
type Config struct {
	AccessTTL  time.Duration
	RefreshTTL time.Duration
	// CacheTTL is how long a verified access token is trusted without
	// asking the database again; a token revoked on another instance stays
	// usable here for at most this long.
	CacheTTL time.Duration
	// The login brake (see brake.go) counts failed sign-ins per account
	// and client address, per address, and per account.
	PairBrake    ratelimit.Limiter
	AddressBrake ratelimit.Limiter
	AccountBrake ratelimit.Limiter
	// Metrics counts grants and brake refusals; may be nil.
	Metrics *metrics.Metrics
}

// Store is what sign-in needs of the database: the tables of tokens and
// API clients (Tables).
type Store interface {
	ClientStore
	InsertTokens(ctx context.Context, q store.Querier, tenantID int64, p TokenPair) error
	AccessTokenByHash(ctx context.Context, tenantID int64, hash []byte) (AccessToken, error)
	SpendRefresh(ctx context.Context, q store.Querier, tenantID int64, hash []byte, now time.Time) (SpentRefresh, error)
	RevokeFamily(ctx context.Context, q store.Querier, tenantID int64, family []byte) error
	RevokeAccessToken(ctx context.Context, q store.Querier, tenantID int64, hash []byte) (bool, error)
	RefreshTokenFamily(ctx context.Context, q store.Querier, tenantID int64, hash []byte) ([]byte, error)
}

// Account is a user as sign-in sees them.
type Account struct {
	ID int64
	// PasswordHash is the user's password hash; "" for a user who cannot
	// sign in.
	PasswordHash string
}

// Users is what sign-in needs of the users, whose table is not sign-in's.
type Users interface {
	// UserByEmail finds a user of the tenant by e-mail address, ignoring
	// case; store.ErrNotFound when there is none.
	UserByEmail(ctx context.Context, tenantID int64, email string) (Account, error)
	// UserByID finds a user of the tenant by id; store.ErrNotFound when
	// there is none.
	UserByID(ctx context.Context, tenantID, id int64) (Account, error)
	// LockAdmin locks a user's row until q's transaction ends and reports
	// whether the user is an admin of the tenant (the tenant's first user
	// always is); false when there is no such user.
	LockAdmin(ctx context.Context, q store.Querier, tenantID, userID int64) (bool, error)
}

// Service runs the OAuth2 grants and checks bearer tokens.
type Service struct {
	db      Store
	clients ClientStore
	users   Users
	hasher  *Hasher
	cfg     Config
	log     *slog.Logger
	now     func() time.Time
	cache   tokenCache
}

// NewService returns a Service on db, finding users in users.
func NewService(db Store, users Users, hasher *Hasher, cfg Config, log *slog.Logger) *Service {
	return &Service{db: db, clients: db, users: users, hasher: hasher, cfg: cfg, log: log, now: time.Now,
		cache: tokenCache{entries: xsync.NewMap[[32]byte, cachedToken]()}}
}

// PasswordGrant checks an e-mail address and password in the tenant and
// issues a new token pair of the scope asked for: "" for the full scope
// (ScopeReadWrite), or a space-separated list of scope tokens
// (ErrInvalidScope when it names an unknown one, before anything is
// checked or counted). The login brake holds failed attempts.
func (s *Service) PasswordGrant(ctx context.Context, tenantID int64, email, password, scope, addr string) (Grant, error) {
	scope, err := narrowScope(scope, ScopeReadWrite)
	if err != nil {
		s.cfg.Metrics.Grant("password", outcome(err))
		return Grant{}, err
	}
	keys := newBrakeKeys(fmt.Sprintf("login:%d:%s", tenantID, brakeDigest(accountKey(email))), addr)
	var user Account
	err = s.braked(ctx, keys, func() error {
		var err error
		user, err = s.checkPassword(ctx, tenantID, email, password)
		return err
	})
	if err != nil {
		s.cfg.Metrics.Grant("password", outcome(err))
		if failed(err) {
			s.cfg.Metrics.LoginFailed()
		}
		return Grant{}, err
	}
	var g Grant
	err = s.db.Tx(ctx, func(q store.Querier) error {
		g, err = s.issue(ctx, q, tenantID, user.ID, newFamily(), scope, scope)
		return err
	})
	if err != nil {
		return Grant{}, fmt.Errorf("password grant: %w", err)
	}
	s.cfg.Metrics.Grant("password", "ok")
	return g, nil
}

// checkPassword finds the user and checks the password, spending the same
// time whether the user exists or not.
func (s *Service) checkPassword(ctx context.Context, tenantID int64, email, password string) (Account, error) {
	user, err := s.users.UserByEmail(ctx, tenantID, email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.hasher.VerifyDummy(ctx, password)
		return Account{}, ErrInvalidGrant
	case err != nil:
		return Account{}, fmt.Errorf("password grant: %w", err)
	}
	if user.PasswordHash == "" { // a user who cannot sign in: no password set
		s.hasher.VerifyDummy(ctx, password)
		return Account{}, ErrInvalidGrant
	}
	ok, err := s.hasher.Verify(ctx, password, user.PasswordHash)
	if err != nil {
		return Account{}, fmt.Errorf("password grant: %w", err)
	}
	if !ok {
		return Account{}, ErrInvalidGrant
	}
	return user, nil
}

// accountKey is the form of an e-mail address the login brake counts an
// account under: the case-insensitive one users are found by.
func accountKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// outcome labels a refused grant for the metrics.
func outcome(err error) string {
	switch e, _ := errs.As(err); {
	case errors.Is(err, ErrInvalidGrant):
		return "invalid_grant"
	case errors.Is(err, ErrInvalidClient):
		return "invalid_client"
	case errors.Is(err, ErrInvalidScope):
		return "invalid_scope"
	case e != nil && e.Kind == errs.Throttled:
		return "throttled"
	default:
		return "error"
	}
}

// RefreshGrant spends a refresh token and issues a new pair in the same
// family. A refresh token that was already spent revokes the whole family.
//
// scope "" asks for the refresh token's scope (its login's); a narrower
// one narrows the new access token only: the new refresh token keeps the
// scope of the one spent (RFC 6749 §6), so a later refresh may ask for
// the login's scope again. A scope that names an unknown token, or one
// wider than the refresh token's, is ErrInvalidScope, and the refresh
// token stays unspent.
func (s *Service) RefreshGrant(ctx context.Context, tenantID int64, refreshToken, scope string) (Grant, error) {
	g, err := s.refreshGrant(ctx, tenantID, refreshToken, scope)
	if err != nil {
		s.cfg.Metrics.Grant("refresh_token", outcome(err))
	} else {
		s.cfg.Metrics.Grant("refresh_token", "ok")
	}
	return g, err
}

func (s *Service) refreshGrant(ctx context.Context, tenantID int64, refreshToken, scope string) (Grant, error) {
	if scope != "" && normalScope(scope) == "" {
		return Grant{}, ErrInvalidScope // unknown whatever the token's scope: nothing to look up
	}
	var (
		g      Grant
		reused bool
	)
	err := s.db.Tx(ctx, func(q store.Querier) error {
		reused = false
		hash := hashToken(refreshToken)
		spent, err := s.db.SpendRefresh(ctx, q, tenantID, hash[:], s.now())
		if errors.Is(err, ErrTokenReused) {
			reused = true
			return s.db.RevokeFamily(ctx, q, tenantID, spent.FamilyID)
		}
		if err != nil {
			return err
		}
		// An error rolls the spending back: a refused scope leaves the
		// refresh token as it was.
		family := knownScope(spent.Scope)
		access, err := narrowScope(scope, family)
		if err != nil {
			return err
		}
		g, err = s.issue(ctx, q, tenantID, spent.UserID, spent.FamilyID, access, family)
		return err
	})
	switch {
	case errors.Is(err, ErrInvalidScope):
		return Grant{}, ErrInvalidScope
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

// Revoke ends a token (RFC 7009): an access token alone, a refresh token
// with its whole family. An unknown token is no error. hint
// ("access_token" or "refresh_token") only says which to look up first.
func (s *Service) Revoke(ctx context.Context, tenantID int64, token, hint string) error {
	hash := hashToken(token)
	refreshFirst := hint == "refresh_token"
	err := s.db.Tx(ctx, func(q store.Querier) error {
		for i := range 2 {
			if (i == 0) == refreshFirst {
				family, err := s.db.RefreshTokenFamily(ctx, q, tenantID, hash[:])
				if errors.Is(err, store.ErrNotFound) {
					continue
				}
				if err != nil {
					return err
				}
				return s.db.RevokeFamily(ctx, q, tenantID, family)
			}
			found, err := s.db.RevokeAccessToken(ctx, q, tenantID, hash[:])
			if err != nil || found {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	s.cache.clear()
	return nil
}

// issue stores and returns a new pair of the family: an access token of
// accessScope, a refresh token of refreshScope (the login's).
func (s *Service) issue(ctx context.Context, q store.Querier, tenantID, userID int64, family []byte, accessScope, refreshScope string) (Grant, error) {
	access, accessHash := newToken(accessPrefix)
	refresh, refreshHash := newToken(refreshPrefix)
	now := s.now()
	err := s.db.InsertTokens(ctx, q, tenantID, TokenPair{
		AccessHash: accessHash, RefreshHash: refreshHash, UserID: userID, FamilyID: family,
		AccessExpiry: now.Add(s.cfg.AccessTTL), RefreshExpiry: now.Add(s.cfg.RefreshTTL),
		AccessScope: accessScope, RefreshScope: refreshScope,
	})
	if err != nil {
		return Grant{}, err
	}
	return Grant{AccessToken: access, RefreshToken: refresh, ExpiresIn: int64(s.cfg.AccessTTL / time.Second), Scope: accessScope}, nil
}

// narrowScope returns the scope a grant asks for within have (ScopeRead
// or ScopeReadWrite): have when asked is "", otherwise the scope asked
// for (RFC 6749 §3.3: space-separated scope tokens, in any order; "write"
// includes reading). ErrInvalidScope when asked names an unknown token
// or is wider than have.
func narrowScope(asked, have string) (string, error) {
	if asked == "" {
		return have, nil
	}
	want := normalScope(asked)
	if want == "" || want == ScopeReadWrite && have != ScopeReadWrite {
		return "", ErrInvalidScope
	}
	return want, nil
}

// knownScope reads a stored scope as Authenticate reads an access
// token's: ScopeRead when it says exactly that, otherwise ScopeReadWrite
// (the column's default, the scope of every sign-in before scopes).
func knownScope(stored string) string {
	if stored == ScopeRead {
		return ScopeRead
	}
	return ScopeReadWrite
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
	p := Principal{TenantID: tenantID, UserID: t.UserID, IsAdmin: t.IsAdmin, ReadOnly: t.Scope == ScopeRead, ClientID: t.ClientID}
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

// tokenCache remembers verified access tokens for a few seconds. Every
// request reads it, without a lock; putting takes one only to make room.
type tokenCache struct {
	mu      sync.Mutex // held to make room in a full cache
	entries *xsync.Map[[32]byte, cachedToken]
}

type cachedToken struct {
	p     Principal
	until time.Time
}

const cacheMax = 100000

func (c *tokenCache) get(hash [32]byte, tenantID int64, now time.Time) (Principal, bool) {
	e, ok := c.entries.Load(hash)
	if !ok || e.p.TenantID != tenantID || !now.Before(e.until) {
		return Principal{}, false
	}
	return e.p, true
}

func (c *tokenCache) put(hash [32]byte, p Principal, until time.Time) {
	if c.entries.Size() >= cacheMax {
		c.mu.Lock()
		if c.entries.Size() >= cacheMax {
			now := time.Now()
			c.entries.DeleteMatching(func(_ [32]byte, e cachedToken) (bool, bool) { return !now.Before(e.until), false })
			if c.entries.Size() >= cacheMax {
				c.entries.Clear()
			}
		}
		c.mu.Unlock()
	}
	c.entries.Store(hash, cachedToken{p: p, until: until})
}

func (c *tokenCache) clear() { c.entries.Clear() }
