// Package tenancy finds the tenant a request belongs to from its
// companyurl, origin, referrer or referer header and its host.
package tenancy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/puzpuzpuz/xsync/v4"

	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// Errors of resolution; each carries its error code (docs/api.md "Tenancy").
var (
	ErrRequired = errs.New(errs.Invalid, "tenant_required", "name the tenant in a companyurl, origin or referer header")
	ErrUnknown  = errs.New(errs.Invalid, "unknown_tenant", "no tenant matches the companyurl, origin or referer header")
	ErrMismatch = errs.New(errs.Invalid, "tenant_mismatch", "the tenant header names another tenant than the request host")
	// ErrSuspended: the tenant exists but its operator suspended it.
	ErrSuspended = errs.New(errs.Forbidden, "tenant_suspended", "this tenant is suspended; its data is kept, and its operator can resume it")
)

// Headers are the request headers that may name the tenant, in the order
// they are looked at.
var Headers = []string{"companyurl", "origin", "referrer", "referer"}

// ValidSlug reports whether s is a well-formed tenant slug: 2 to 63 of
// a-z, 0-9 and '-'.
func ValidSlug(s string) bool {
	if len(s) < 2 || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// SlugFromValue returns the slug a header value names: the value itself
// when it is a slug, SLUG.BASE-DOMAIN, or a URL whose host is
// SLUG.BASE-DOMAIN.
func SlugFromValue(value, baseDomain string) (string, bool) {
	v, ok := asciiLower(strings.TrimSpace(value))
	if !ok {
		return "", false
	}
	if v == "" {
		return "", false
	}
	if strings.Contains(v, "://") {
		u, err := url.Parse(v)
		if err != nil {
			return "", false
		}
		return SlugFromHost(u.Host, baseDomain)
	}
	if ValidSlug(v) {
		return v, true
	}
	// A bare host, possibly with a port and a path.
	if i := strings.IndexAny(v, "/?#"); i >= 0 {
		v = v[:i]
	}
	return SlugFromHost(v, baseDomain)
}

// SlugFromHost returns the slug of a tenant host SLUG.BASE-DOMAIN, with or
// without a port.
func SlugFromHost(host, baseDomain string) (string, bool) {
	host, ok := asciiLower(host)
	if !ok {
		return "", false
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(host, ".")
	suffix := "." + strings.ToLower(baseDomain)
	if !strings.HasSuffix(host, suffix) {
		return "", false
	}
	slug := strings.TrimSuffix(host, suffix)
	if !ValidSlug(slug) {
		return "", false
	}
	return slug, true
}

// asciiLower lower-cases ASCII letters and refuses anything non-ASCII, so
// that no Unicode case folding can turn a foreign name into a slug.
func asciiLower(s string) (string, bool) {
	b := []byte(s)
	for i, c := range b {
		if c >= 0x80 {
			return "", false
		}
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b), true
}

// RequestedSlug returns the slug a request names. The first header that
// names a slug decides; when the request host is a tenant host, the header
// must name the same tenant.
func RequestedSlug(r *http.Request, baseDomain string) (string, error) {
	present := false
	slug := ""
	for _, name := range Headers {
		for _, v := range r.Header.Values(name) {
			v = strings.TrimSpace(v)
			if v == "" || name == "origin" && strings.EqualFold(v, "null") {
				continue // empty, or a browser's "null" for opaque origins
			}
			present = true
			if s, ok := SlugFromValue(v, baseDomain); ok {
				slug = s
				break
			}
		}
		if slug != "" {
			break
		}
	}
	switch {
	case slug != "":
	case present:
		return "", ErrUnknown
	default:
		return "", ErrRequired
	}
	if hostSlug, ok := SlugFromHost(r.Host, baseDomain); ok && hostSlug != slug {
		return "", ErrMismatch
	}
	return slug, nil
}

// Tenants finds tenants by their slug or id.
type Tenants interface {
	TenantBySlug(ctx context.Context, slug string) (store.Tenant, error)
	TenantByID(ctx context.Context, id int64) (store.Tenant, error)
}

// CacheTTL is how long the service's resolvers keep a tenant they found:
// a tenant suspended, resumed or deleted shows on every instance within
// it.
const CacheTTL = 10 * time.Second

// Resolver maps slugs and ids to tenants, caching hits for a short while.
type Resolver struct {
	db         Tenants
	baseDomain string
	ttl        time.Duration
	mu         sync.Mutex // held to make room in a full cache
	// The caches are read without a lock: every request reads one.
	bySlug *xsync.Map[string, cachedTenant]
	byID   *xsync.Map[int64, cachedTenant]
}

type cachedTenant struct {
	t     store.Tenant
	until time.Time
}

// NewResolver returns a Resolver; tenants found stay cached for ttl.
func NewResolver(db Tenants, baseDomain string, ttl time.Duration) *Resolver {
	return &Resolver{db: db, baseDomain: baseDomain, ttl: ttl,
		bySlug: xsync.NewMap[string, cachedTenant](), byID: xsync.NewMap[int64, cachedTenant]()}
}

// Resolve returns the tenant of the request, or an *Error.
func (rs *Resolver) Resolve(r *http.Request) (store.Tenant, error) {
	slug, err := RequestedSlug(r, rs.baseDomain)
	if err != nil {
		return store.Tenant{}, err
	}
	return rs.Lookup(r.Context(), slug)
}

// Lookup returns the active tenant with slug; ErrSuspended when it is
// suspended, and ErrUnknown when there is none, or one being imported or
// deleted. A tenant's state is cached with it: a change shows within the
// cache's time to live.
func (rs *Resolver) Lookup(ctx context.Context, slug string) (store.Tenant, error) {
	t, err := cached(ctx, rs, rs.bySlug, slug, rs.db.TenantBySlug)
	if err != nil {
		return store.Tenant{}, err
	}
	return t, served(t)
}

// Serving says whether the tenant with id is served, as Lookup does for
// a slug: nil when it is active, else ErrSuspended or ErrUnknown. What
// names its tenant by id rather than by a request's headers asks it (a
// signed download link, a waiting read of the change feed).
func (rs *Resolver) Serving(ctx context.Context, id int64) error {
	t, err := cached(ctx, rs, rs.byID, id, rs.db.TenantByID)
	if err != nil {
		return err
	}
	return served(t)
}

// served is the refusal of a tenant that is not active, or nil.
func served(t store.Tenant) error {
	switch t.State {
	case store.TenantActive:
		return nil
	case store.TenantSuspended:
		return ErrSuspended
	}
	return ErrUnknown
}

// cached returns the tenant under key from cache, or finds it with find
// and keeps it for the resolver's time to live.
func cached[K comparable](ctx context.Context, rs *Resolver, cache *xsync.Map[K, cachedTenant], key K, find func(context.Context, K) (store.Tenant, error)) (store.Tenant, error) {
	now := time.Now()
	if c, ok := cache.Load(key); ok && now.Before(c.until) {
		return c.t, nil
	}
	t, err := find(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return store.Tenant{}, ErrUnknown
	}
	if err != nil {
		return store.Tenant{}, fmt.Errorf("resolve tenant: %w", err)
	}
	if cache.Size() >= resolverMax {
		rs.mu.Lock()
		evict(cache, now)
		rs.mu.Unlock()
	}
	cache.Store(key, cachedTenant{t: t, until: now.Add(rs.ttl)})
	return t, nil
}

// resolverMax bounds the slugs (and the ids) cached.
const resolverMax = 10000

// evict makes room in a full cache: first the entries that expired, and
// only when every entry is still fresh, all of them. Clearing at once
// would make a service with more active tenants than the bound look every
// one of them up again after each miss past it. The resolver's mutex is
// held, so that one caller sweeps at a time.
func evict[K comparable](cache *xsync.Map[K, cachedTenant], now time.Time) {
	if cache.Size() < resolverMax {
		return
	}
	cache.DeleteMatching(func(_ K, c cachedTenant) (bool, bool) { return !now.Before(c.until), false })
	if cache.Size() >= resolverMax {
		cache.Clear()
	}
}
