package auth_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/ratelimit"
	"planwerk/internal/store"
)

// tokenDouble stands in for the tables of tokens: it holds one access
// token and the pairs issued. The methods a test does not reach are the
// nil interface's and would panic.
type tokenDouble struct {
	auth.Store
	mu      sync.Mutex
	token   auth.AccessToken
	err     error // of AccessTokenByHash, before token
	lookups int
	issued  []auth.TokenPair
}

func (d *tokenDouble) Tx(_ context.Context, fn func(q store.Querier) error) error { return fn(nil) }

func (d *tokenDouble) AccessTokenByHash(context.Context, int64, []byte) (auth.AccessToken, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lookups++
	return d.token, d.err
}

func (d *tokenDouble) InsertTokens(_ context.Context, _ store.Querier, _ int64, p auth.TokenPair) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.issued = append(d.issued, p)
	return nil
}

// userDouble stands in for the users: one account, under one address.
type userDouble struct {
	auth.Users
	email   string
	account auth.Account
}

func (d userDouble) UserByEmail(_ context.Context, _ int64, email string) (auth.Account, error) {
	if email != d.email {
		return auth.Account{}, fmt.Errorf("user: %w", store.ErrNotFound)
	}
	return d.account, nil
}

func doubleService(tokens *tokenDouble, users auth.Users, hasher *auth.Hasher) *auth.Service {
	brake := func() ratelimit.Limiter { return ratelimit.NewMemory(ratelimit.Rule{Burst: 10, Every: time.Minute}) }
	return auth.NewService(tokens, users, hasher, auth.Config{
		AccessTTL: time.Hour, RefreshTTL: 24 * time.Hour, CacheTTL: time.Minute,
		PairBrake: brake(), AddressBrake: brake(), AccountBrake: brake(),
	}, slog.New(slog.DiscardHandler))
}

// TestAuthenticateStoredToken: what a bearer token's stored row says
// decides the principal; a token checked once is trusted from the cache
// until CacheTTL, without asking the tables again.
func TestAuthenticateStoredToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	for _, c := range []struct {
		name  string
		token auth.AccessToken
		err   error
		want  auth.Principal
		fails string // "": authenticated; "unauthorized": ErrUnauthorized; "error": another error
	}{
		{name: "unknown", err: fmt.Errorf("access token: %w", store.ErrNotFound), fails: "unauthorized"},
		{name: "broken lookup", err: errors.New("connection reset"), fails: "error"},
		{name: "revoked", token: auth.AccessToken{UserID: 3, ExpiresAt: later, Revoked: true, Scope: auth.ScopeReadWrite}, fails: "unauthorized"},
		{name: "expired", token: auth.AccessToken{UserID: 3, ExpiresAt: time.Now().Add(-time.Second), Scope: auth.ScopeReadWrite}, fails: "unauthorized"},
		{name: "admin", token: auth.AccessToken{UserID: 3, IsAdmin: true, ExpiresAt: later, Scope: auth.ScopeReadWrite},
			want: auth.Principal{TenantID: 9, UserID: 3, IsAdmin: true}},
		{name: "read-only client", token: auth.AccessToken{UserID: 4, ExpiresAt: later, Scope: auth.ScopeRead, ClientID: 12},
			want: auth.Principal{TenantID: 9, UserID: 4, ReadOnly: true, ClientID: 12}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			tokens := &tokenDouble{token: c.token, err: c.err}
			s := doubleService(tokens, userDouble{}, nil)
			for range 2 {
				p, err := s.Authenticate(ctx, 9, "pwa_token")
				switch {
				case c.fails != "" && err == nil:
					t.Fatalf("Authenticate = %+v, want an error", p)
				case c.fails == "unauthorized" && !errors.Is(err, auth.ErrUnauthorized),
					c.fails == "error" && errors.Is(err, auth.ErrUnauthorized):
					t.Fatalf("Authenticate: err = %v, want %s", err, c.fails)
				case c.fails == "" && (err != nil || p != c.want):
					t.Fatalf("Authenticate = %+v, %v; want %+v", p, err, c.want)
				}
			}
			wantLookups := 2 // refusals are not cached
			if c.fails == "" {
				wantLookups = 1
			}
			if tokens.lookups != wantLookups {
				t.Errorf("%d lookups for two checks, want %d", tokens.lookups, wantLookups)
			}
		})
	}
}

// TestPasswordGrantIssues: the right password issues a pair of the full
// scope to the account, in one family; a wrong one, or an account without
// a password, issues nothing.
func TestPasswordGrantIssues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	hasher := auth.NewHasher(1)
	hash, err := hasher.Hash(ctx, "right-password")
	if err != nil {
		t.Fatal(err)
	}
	users := userDouble{email: "ann@example.test", account: auth.Account{ID: 7, PasswordHash: hash}}
	tokens := &tokenDouble{}
	s := doubleService(tokens, users, hasher)
	for _, c := range []struct{ email, password string }{
		{"ann@example.test", "wrong-password"},
		{"bob@example.test", "right-password"},
	} {
		if _, err := s.PasswordGrant(ctx, 9, c.email, c.password, "", "192.0.2.1"); !errors.Is(err, auth.ErrInvalidGrant) {
			t.Errorf("%s with %s: err = %v, want ErrInvalidGrant", c.email, c.password, err)
		}
	}
	nobody := doubleService(tokens, userDouble{email: "ann@example.test", account: auth.Account{ID: 7}}, hasher)
	if _, err := nobody.PasswordGrant(ctx, 9, "ann@example.test", "", "", "192.0.2.1"); !errors.Is(err, auth.ErrInvalidGrant) {
		t.Errorf("an account without a password: err = %v, want ErrInvalidGrant", err)
	}
	if len(tokens.issued) != 0 {
		t.Fatalf("refused grants issued %d pairs", len(tokens.issued))
	}
	before := time.Now()
	g, err := s.PasswordGrant(ctx, 9, "ann@example.test", "right-password", "", "192.0.2.1")
	if err != nil {
		t.Fatal(err)
	}
	if len(tokens.issued) != 1 {
		t.Fatalf("%d pairs issued, want 1", len(tokens.issued))
	}
	p := tokens.issued[0]
	if p.UserID != 7 || p.AccessScope != auth.ScopeReadWrite || p.RefreshScope != auth.ScopeReadWrite || len(p.FamilyID) == 0 {
		t.Errorf("issued pair = %+v, want user 7's of the full scope in a family", p)
	}
	if p.AccessExpiry.Before(before.Add(time.Hour)) || p.RefreshExpiry.Before(before.Add(24*time.Hour)) {
		t.Errorf("expiries %v and %v, want an hour and a day on", p.AccessExpiry, p.RefreshExpiry)
	}
	if g.AccessToken == "" || g.RefreshToken == "" || g.Scope != auth.ScopeReadWrite || g.ExpiresIn != 3600 {
		t.Errorf("grant = %+v", g)
	}
}
