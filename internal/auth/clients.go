package auth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// Scopes of a token: what it may do.
const (
	ScopeRead      = "read"
	ScopeReadWrite = "read write"
)

// Bounds of API clients.
const (
	// MaxClients per tenant: enough for every integration a company runs,
	// few enough that listing them needs no paging.
	MaxClients    = 100
	maxClientName = 200
)

// Token prefixes of API client credentials (see tokens.go).
const (
	clientIDPrefix     = "pwc_"
	clientSecretPrefix = "pws_"
)

// ErrInvalidClient: an unknown client, a wrong secret, or a client whose
// user is gone.
var ErrInvalidClient = errors.New("invalid client")

// ErrInvalidScope: a requested scope the client does not have.
var ErrInvalidScope = errors.New("invalid scope")

// ClientStore is what API clients need of the database: the tables of
// API clients and tokens (Tables).
type ClientStore interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	InsertAPIClient(ctx context.Context, q store.Querier, tenantID int64, c APIClient) error
	CountAPIClients(ctx context.Context, q store.Querier, tenantID int64) (int, error)
	APIClients(ctx context.Context, tenantID int64) ([]APIClient, error)
	APIClientByID(ctx context.Context, tenantID, id int64) (APIClient, error)
	APIClientByClientID(ctx context.Context, tenantID int64, clientID string) (APIClient, error)
	DeleteAPIClient(ctx context.Context, q store.Querier, tenantID, id int64) error
	LockAPIClient(ctx context.Context, q store.Querier, tenantID, id int64) error
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	InsertClientToken(ctx context.Context, q store.Querier, tenantID int64, t ClientToken) error
}

// NewClient is a created API client with its secret, which is never shown again.
type NewClient struct {
	APIClient
	Secret string
}

// clientsLock is the lock key that makes a tenant's client creates count
// and insert one at a time, so that racing creates never pass MaxClients.
const clientsLock = "api-clients"

// CreateClient registers an API client from a request body: name, user
// and scope. Admins only; the caller is recorded as its creator, and when
// they stop being an admin or are deleted, the client ends (see
// Tables.RevokeClientsCreatedBy).
func (s *Service) CreateClient(ctx context.Context, caller Principal, input map[string]any) (NewClient, error) {
	if !caller.IsAdmin {
		return NewClient{}, errs.Forbid("only admins may manage API clients")
	}
	c, problems := parseClient(input)
	if len(problems) > 0 {
		return NewClient{}, errs.Fields(problems...)
	}
	if _, err := s.users.UserByID(ctx, caller.TenantID, c.UserID); errors.Is(err, store.ErrNotFound) {
		return NewClient{}, errs.Fields(errs.Problem{Field: "user", Message: "must be the id of a user of the tenant"})
	} else if err != nil {
		return NewClient{}, fmt.Errorf("create api client: %w", err)
	}
	secret, hash := newToken(clientSecretPrefix)
	c.ClientID = randomString(clientIDPrefix, 16) // an identifier, not a secret
	c.SecretHash = hash
	c.CreatedAt = store.Timestamp(s.now())
	c.CreatedBy = caller.UserID
	err := s.clients.Tx(ctx, func(q store.Querier) error {
		if err := s.clients.Lock(ctx, q, caller.TenantID, clientsLock); err != nil {
			return err
		}
		// The caller is an admin still, as the database says, not as a
		// token checked up to CacheTTL ago says; their row stays locked,
		// so that their demotion or deletion waits for this client and
		// then revokes it.
		if admin, err := s.users.LockAdmin(ctx, q, caller.TenantID, caller.UserID); err != nil {
			return err
		} else if !admin {
			return errs.Forbid("only admins may manage API clients")
		}
		n, err := s.clients.CountAPIClients(ctx, q, caller.TenantID)
		if err != nil {
			return err
		}
		if n >= MaxClients {
			return errs.New(errs.Conflict, "too_many_clients",
				fmt.Sprintf("the tenant has %d API clients, the most it may have; delete one first", MaxClients))
		}
		if c.ID, err = s.clients.NewID(ctx, q, caller.TenantID); err != nil {
			return err
		}
		return s.clients.InsertAPIClient(ctx, q, caller.TenantID, c)
	})
	if err != nil {
		return NewClient{}, fmt.Errorf("create api client: %w", err)
	}
	return NewClient{APIClient: c, Secret: secret}, nil
}

// parseClient reads an API client's fields and names every invalid one.
func parseClient(input map[string]any) (APIClient, []errs.Problem) {
	var c APIClient
	var problems []errs.Problem
	for k := range input {
		if k != "name" && k != "user" && k != "scope" {
			problems = append(problems, errs.Problem{Field: k, Message: "is not a field of an API client (name, user, scope)"})
		}
	}
	name, ok := input["name"].(string)
	name = strings.TrimSpace(name)
	if !ok || name == "" || utf8.RuneCountInString(name) > maxClientName {
		problems = append(problems, errs.Problem{Field: "name", Message: fmt.Sprintf("must be a text of 1 to %d characters", maxClientName)})
	}
	c.Name = name
	if n, ok := input["user"].(json.Number); ok {
		if id, err := n.Int64(); err == nil && id > 0 {
			c.UserID = id
		}
	}
	if c.UserID == 0 {
		problems = append(problems, errs.Problem{Field: "user", Message: "must be the id of a user of the tenant"})
	}
	scope, _ := input["scope"].(string)
	if c.Scope = normalScope(scope); c.Scope == "" {
		problems = append(problems, errs.Problem{Field: "scope", Message: `must be "read" or "read write"`})
	}
	return c, problems
}

// normalScope returns the scope a space-separated list of scope tokens
// names ("write" includes reading), or "" when it names none or an
// unknown one.
func normalScope(s string) string {
	tokens := strings.Fields(s)
	if len(tokens) == 0 {
		return ""
	}
	for _, t := range tokens {
		if t != "read" && t != "write" {
			return ""
		}
	}
	if slices.Contains(tokens, "write") {
		return ScopeReadWrite
	}
	return ScopeRead
}

// Clients lists the tenant's API clients. Admins only.
func (s *Service) Clients(ctx context.Context, caller Principal) ([]APIClient, error) {
	if !caller.IsAdmin {
		return nil, errs.Forbid("only admins may manage API clients")
	}
	return s.clients.APIClients(ctx, caller.TenantID)
}

// Client returns one API client. Admins only.
func (s *Service) Client(ctx context.Context, caller Principal, id int64) (APIClient, error) {
	if !caller.IsAdmin {
		return APIClient{}, errs.Forbid("only admins may manage API clients")
	}
	return s.clients.APIClientByID(ctx, caller.TenantID, id)
}

// DeleteClient removes an API client and revokes every token it was
// given; this instance forgets them at once, the others within CacheTTL.
func (s *Service) DeleteClient(ctx context.Context, caller Principal, id int64) (APIClient, error) {
	if !caller.IsAdmin {
		return APIClient{}, errs.Forbid("only admins may manage API clients")
	}
	c, err := s.clients.APIClientByID(ctx, caller.TenantID, id)
	if err != nil {
		return APIClient{}, err
	}
	if err := s.clients.Tx(ctx, func(q store.Querier) error {
		return s.clients.DeleteAPIClient(ctx, q, caller.TenantID, id)
	}); err != nil {
		return APIClient{}, err
	}
	s.cache.clear()
	return c, nil
}

// authenticateClient checks an API client's credentials in constant time
// per secret; an unknown client costs the same comparison.
func (s *Service) authenticateClient(ctx context.Context, tenantID int64, clientID, secret string) (APIClient, error) {
	c, err := s.clients.APIClientByClientID(ctx, tenantID, clientID)
	if errors.Is(err, store.ErrNotFound) {
		c.SecretHash = make([]byte, 32)
	} else if err != nil {
		return APIClient{}, fmt.Errorf("client credentials: %w", err)
	}
	got := hashToken(secret)
	if subtle.ConstantTimeCompare(got[:], c.SecretHash) != 1 || c.ID == 0 {
		return APIClient{}, ErrInvalidClient
	}
	return c, nil
}

// IsClientID reports whether id has the form of an API client's id, as
// opposed to the free-form ids password and refresh grants send.
func IsClientID(id string) bool { return strings.HasPrefix(id, clientIDPrefix) }

// CheckClient authenticates an API client's credentials sent along with
// a request that is not a client-credentials grant (revocation): ids of
// another form are not checked, as for the password grant.
func (s *Service) CheckClient(ctx context.Context, tenantID int64, clientID, secret, addr string) error {
	if !IsClientID(clientID) {
		return nil
	}
	return s.braked(ctx, s.clientBrake(tenantID, clientID, addr), func() error {
		_, err := s.authenticateClient(ctx, tenantID, clientID, secret)
		return err
	})
}

func (s *Service) clientBrake(tenantID int64, clientID, addr string) brakeKeys {
	return newBrakeKeys(fmt.Sprintf("client:%d:%s", tenantID, brakeDigest(clientID)), addr)
}

// ClientCredentialsGrant issues an access token (no refresh token) to an
// API client: it acts as the client's user within the client's scope, or
// the narrower scope asked for.
func (s *Service) ClientCredentialsGrant(ctx context.Context, tenantID int64, clientID, secret, scope, addr string) (Grant, error) {
	var c APIClient
	err := s.braked(ctx, s.clientBrake(tenantID, clientID, addr), func() error {
		var err error
		c, err = s.authenticateClient(ctx, tenantID, clientID, secret)
		return err
	})
	if err != nil {
		s.cfg.Metrics.Grant("client_credentials", outcome(err))
		return Grant{}, err
	}
	if scope != "" {
		want := normalScope(scope)
		if want == "" || (want == ScopeReadWrite && c.Scope != ScopeReadWrite) {
			s.cfg.Metrics.Grant("client_credentials", "invalid_scope")
			return Grant{}, ErrInvalidScope
		}
		c.Scope = want
	}
	if _, err := s.users.UserByID(ctx, tenantID, c.UserID); errors.Is(err, store.ErrNotFound) {
		s.cfg.Metrics.Grant("client_credentials", "invalid_client")
		return Grant{}, ErrInvalidClient // its user was deleted
	} else if err != nil {
		return Grant{}, fmt.Errorf("client credentials grant: %w", err)
	}
	access, hash := newToken(accessPrefix)
	err = s.clients.Tx(ctx, func(q store.Querier) error {
		// The client's row stays locked until the token is stored: a
		// delete of the client (or its creator's demotion) either came
		// first, and there is no token, or waits and then revokes it.
		if err := s.clients.LockAPIClient(ctx, q, tenantID, c.ID); errors.Is(err, store.ErrNotFound) {
			return ErrInvalidClient
		} else if err != nil {
			return err
		}
		return s.clients.InsertClientToken(ctx, q, tenantID, ClientToken{Hash: hash, UserID: c.UserID, ClientID: c.ID,
			FamilyID: newFamily(), Scope: c.Scope, Expiry: s.now().Add(s.cfg.AccessTTL)})
	})
	if errors.Is(err, ErrInvalidClient) {
		s.cfg.Metrics.Grant("client_credentials", "invalid_client")
		return Grant{}, ErrInvalidClient // deleted since it was authenticated
	}
	if err != nil {
		return Grant{}, fmt.Errorf("client credentials grant: %w", err)
	}
	s.cfg.Metrics.Grant("client_credentials", "ok")
	return Grant{AccessToken: access, ExpiresIn: int64(s.cfg.AccessTTL / time.Second), Scope: c.Scope}, nil
}
