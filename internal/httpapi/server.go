// Package httpapi is Planwerk's HTTP edge: routes, middleware, the
// token endpoint and the JSON error body.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/exports"
	"planwerk/internal/feed"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/gate"
	"planwerk/internal/idempotency"
	"planwerk/internal/metrics"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/skills"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
	"planwerk/internal/timetrack"
	"planwerk/internal/tracing"
	"planwerk/internal/users"
	"planwerk/internal/webhooks"
)

// Config is what the HTTP edge needs to know.
type Config struct {
	// MaxBodyBytes caps request bodies outside file uploads.
	MaxBodyBytes int64
	// MaxUploadBytes is the per-upload cap; upload bodies may be this
	// large plus room for the multipart framing.
	MaxUploadBytes int64
	// PublicURL is the base of signed download URLs; empty: the request's
	// host when it is BaseDomain or a tenant host of it.
	PublicURL  string
	BaseDomain string
	// RequestTimeout ends a request that has not answered in time; a
	// streaming answer takes it afresh for each step that moves data.
	RequestTimeout time.Duration
	// WriteIdleTimeout cuts off a client that takes no data, or sends no
	// body data, for this long.
	WriteIdleTimeout time.Duration
	// MetricsElsewhere: /metrics is served on a listener of its own, not here.
	MetricsElsewhere bool
	// TenantRequests is how many requests of one tenant are in progress
	// at once; more wait for a free slot.
	TenantRequests int
	// CORSOrigins are the origins besides the tenants' own whose browser
	// requests get CORS headers (lower case, scheme://host[:port]).
	CORSOrigins []string
	// TrustedProxies are the networks of the reverse proxies whose
	// forwarding headers name the client (see clientAddress).
	TrustedProxies []netip.Prefix
}

// Users finds a user of a tenant (users.Tables).
type Users interface {
	UserByID(ctx context.Context, tenantID, id int64) (users.User, error)
}

// Deps are the parts the HTTP edge talks to.
type Deps struct {
	DB       *store.DB
	Auth     *auth.Service
	Users    Users
	Tenants  *tenancy.Resolver
	Registry *resource.Registry
	Records  *records.Service
	Time     *timetrack.Service
	Skills   *skills.Service
	Files    *files.Service
	Store    filestore.Store
	Feed     *feed.Service
	Webhooks *webhooks.Service
	// Exports makes the tenants' data exports (nil: no such endpoints).
	Exports *exports.Service
	// Idempotency keeps the Idempotency-Keys of the requests that carry one.
	Idempotency idempotency.Store
	Metrics     *metrics.Metrics
	Log         *slog.Logger
}

// Server serves the API.
type Server struct {
	cfg     Config
	db      *store.DB
	auth    *auth.Service
	users   Users
	tenants *tenancy.Resolver
	reg     *resource.Registry
	records *records.Service
	skills  *skills.Service
	time    *timetrack.Service
	files   *files.Service
	fstore  filestore.Store
	feed    *feed.Service
	hooks   *webhooks.Service
	exports *exports.Service
	keys    *idempotency.Service
	metrics *metrics.Metrics
	log     *slog.Logger
	mux     *http.ServeMux
	table   []Route
	// handler is the middleware around the mux, composed once in New.
	handler http.Handler
	// routed are the patterns of the route table, and methods the methods
	// it uses (sorted, HEAD beside GET): unmatched lists the methods of a
	// 405's Allow header from them.
	routed  map[string]bool
	methods []string
	// deprecated are the paths of deprecated resources, for markDeprecated.
	deprecated []string
	// requests shares the requests in progress among tenants.
	requests *gate.Gate
	// inFlight counts requests being handled, so that a shutdown can wait
	// for the clean-up of those it cuts.
	inFlight sync.WaitGroup
	// traced: each request is a server span (tracing was on when New ran).
	traced bool
}

// Auth says what a route requires of a request.
type Auth int

// Route requirements.
const (
	Public Auth = iota // nothing (operations, signed downloads)
	Tenant             // a tenant header (the token endpoint)
	Bearer             // a tenant header and a bearer token
)

// Route is one entry of the route table.
type Route struct {
	Method string
	Path   string // with {name} wildcards
	Auth   Auth
}

// Routes returns the route table, in registration order.
func (s *Server) Routes() []Route { return append([]Route(nil), s.table...) }

// route registers a handler and records it in the route table.
func (s *Server) route(pattern string, auth Auth, h http.Handler) {
	method, path, _ := strings.Cut(pattern, " ")
	s.table = append(s.table, Route{Method: method, Path: path, Auth: auth})
	s.routed[pattern] = true
	if !slices.Contains(s.methods, method) {
		s.methods = append(s.methods, method)
	}
	s.mux.Handle(pattern, h)
}

// New returns a Server with all routes registered.
func New(cfg Config, d Deps) *Server {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.RequestTimeout <= 0 {
		cfg.RequestTimeout = 30 * time.Second
	}
	if cfg.WriteIdleTimeout <= 0 {
		cfg.WriteIdleTimeout = 30 * time.Second
	}
	if cfg.TenantRequests <= 0 {
		cfg.TenantRequests = 64
	}
	s := &Server{cfg: cfg, db: d.DB, auth: d.Auth, users: d.Users, tenants: d.Tenants, reg: d.Registry, records: d.Records, skills: d.Skills,
		time: d.Time, files: d.Files, fstore: d.Store, feed: d.Feed, hooks: d.Webhooks, exports: d.Exports, metrics: d.Metrics, log: d.Log, mux: http.NewServeMux(),
		keys:   idempotency.New(d.Idempotency, idempotencyConfig(), d.Log),
		routed: map[string]bool{}, traced: tracing.Enabled(), requests: gate.New("requests", gate.Options{PerKey: cfg.TenantRequests, MaxQueue: 4 * cfg.TenantRequests})}
	for _, r := range s.reg.All() {
		if r.Deprecated {
			s.deprecated = append(s.deprecated, r.Path())
		}
	}
	s.routes()
	if slices.Contains(s.methods, http.MethodGet) && !slices.Contains(s.methods, http.MethodHead) {
		s.methods = append(s.methods, http.MethodHead) // the mux serves HEAD with GET's handler
	}
	slices.Sort(s.methods)
	s.mux.Handle(unmatchedPattern, http.HandlerFunc(s.unmatched))
	// Preflights are answered before anything counts the request against
	// a tenant; answers are compressed as the handlers write them.
	s.handler = s.observe(s.cors(s.compress(s.limitBody(http.HandlerFunc(s.dispatch)))))
	return s
}

// routes is the route table: every endpoint of the service, in one place.
func (s *Server) routes() {
	// Operations: no tenant, no token.
	s.route("GET /healthz", Public, s.handle(s.healthz))
	s.route("GET /readyz", Public, s.handle(s.readyz))
	if s.metrics != nil && !s.cfg.MetricsElsewhere {
		s.route("GET /metrics", Public, s.metrics.Handler())
	}

	// The token endpoint needs the tenant but no token; its errors follow RFC 6749.
	s.route("POST /oauth2/token", Tenant, http.HandlerFunc(s.token))
	s.route("POST /oauth2/revoke", Tenant, http.HandlerFunc(s.revoke))

	// Data endpoints: tenant, then bearer token.
	s.data("GET /v1/users/me", s.usersMe)
	s.resourceRoutes()
	s.timeRoutes()
	s.fileRoutes()
	s.skillRoutes()
	s.clientRoutes()
	s.data("GET /v1/changes", s.changes)
	s.auditRoutes()
	s.webhookRoutes()
	s.exportRoutes()
	s.docsRoutes()
}

// data registers a /v1 endpoint behind tenant resolution and
// authentication; a POST also takes an Idempotency-Key, behind the check
// of its permit.
func (s *Server) data(pattern string, h handlerFunc) {
	next := s.handle(h)
	if method, _, _ := strings.Cut(pattern, " "); method == http.MethodPost {
		p := s.permitOf(pattern)
		next = s.permitted(p.may, s.idempotent(next, p.shows))
	}
	s.route(pattern, Bearer, s.withTenant(s.withAuth(next)))
}

// A permit says who may make the requests of a keyed route (a POST, which
// takes an Idempotency-Key). It is checked in front of the idempotency
// middleware: a new request and the replay of a kept answer pass the same
// check and get the same refusal, so that a replay answers only a caller
// who may still make the request. The token's scope is checked before it
// (withAuth); the services check again as they do for every request.
type permit struct {
	// may refuses a request by what it names: the caller's role, the
	// resource or the record of its path.
	may func(r *http.Request) error
	// shows, if set, refuses to replay a kept success whose record the
	// caller may no longer see (or write, where that is the rule): that
	// record is known only once the request has run. id is the record's,
	// doc the answer's body.
	shows func(r *http.Request, id int64, doc []byte) error
}

// permitOf is the permit of each keyed route of the route table; a POST
// without one stops the server from starting.
func (s *Server) permitOf(pattern string) permit {
	switch pattern {
	case "POST /v1/api-clients":
		p := admins("only admins may manage API clients")
		p.shows = func(r *http.Request, id int64, _ []byte) error {
			_, err := s.auth.Client(r.Context(), principalOf(r), id)
			return err
		}
		return p
	case "POST /v1/webhooks":
		p := admins("only admins may manage webhooks")
		p.shows = func(r *http.Request, id int64, _ []byte) error {
			_, err := s.hooks.Get(r.Context(), principalOf(r), id)
			return err
		}
		return p
	case "POST /v1/account/exports":
		return admins("only admins may export the tenant's data")
	case "POST /v1/approval/bulk-approve":
		return admins("only admins may approve project days")
	case "POST /v1/skill-sets/{id}/apply":
		return admins("only admins may apply skill sets")
	case "POST /v1/files/upload/{model}/{record}":
		return permit{may: s.mayUpload, shows: s.showsUpload}
	}
	if name, ok := strings.CutPrefix(pattern, "POST /v1/"); ok {
		if r, ok := s.reg.Get(name); ok && !r.ReadOnly {
			return s.recordPermit(r)
		}
	}
	panic("httpapi: the keyed route " + pattern + " has no permit")
}

// admins permits admins only; the message is the service's own.
func admins(message string) permit {
	return permit{may: func(r *http.Request) error {
		if !principalOf(r).IsAdmin {
			return errs.Forbid(message)
		}
		return nil
	}}
}

// recordPermit permits the creation of a record of res as the write rule
// of the registry does: admins only, or members their own records. The
// record a kept answer shows must still be one the caller may write, as
// the answer names its owner, and read as it is now (else the 404 of
// reading it).
func (s *Server) recordPermit(res *resource.Resource) permit {
	return permit{
		may: func(r *http.Request) error { return records.MayCreate(principalOf(r), res) },
		shows: func(r *http.Request, id int64, doc []byte) error {
			caller := principalOf(r)
			if err := s.records.MayWrite(caller, res, doc); err != nil {
				return err
			}
			_, err := s.records.Get(r.Context(), caller, res, id, nil)
			return err
		},
	}
}

// uploadOwners are the resources whose records take files, by the model
// of the upload path.
var uploadOwners = map[string]string{"document": "documents", "expense": "expenses"}

// mayUpload permits an upload as files.Service.Upload does first: the
// caller must see the record the file attaches to (else 404) and may
// change it (else 403). What names no such record is left to the handler,
// which refuses it alike for every caller.
func (s *Server) mayUpload(r *http.Request) error {
	name, ok := uploadOwners[r.PathValue("model")]
	if !ok {
		return nil
	}
	id, err := pathInt(r, "record")
	if err != nil {
		return nil
	}
	res := s.reg.Must(name)
	caller := principalOf(r)
	rec, err := s.records.Get(r.Context(), caller, res, id, nil)
	if err != nil {
		return err
	}
	return s.records.MayWrite(caller, res, rec.Doc)
}

// showsUpload: the upload a kept answer shows must still be its record's
// (not deleted, nor replaced since).
func (s *Server) showsUpload(r *http.Request, id int64, _ []byte) error {
	record, err := pathInt(r, "record")
	if err != nil {
		return err
	}
	ups, err := s.files.List(r.Context(), principalOf(r), r.PathValue("model"), record)
	if err != nil {
		return err
	}
	for _, up := range ups {
		if up.ID == id {
			return nil
		}
	}
	return errs.New(errs.NotFound, "not_found", "no such upload")
}

// permitted answers a request its permit refuses with the refusal.
func (s *Server) permitted(may func(r *http.Request) error, next http.Handler) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := may(r); err != nil {
			return err
		}
		next.ServeHTTP(w, r)
		return nil
	})
}

// Share is the fair share of requests in progress, for monitoring.
func (s *Server) Share() *gate.Gate { return s.requests }

// Wait waits until every request being handled has returned, or ctx
// ends: after a shutdown cuts connections, their handlers still clean up
// (temporary files, incomplete uploads).
func (s *Server) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		s.inFlight.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.handler.ServeHTTP(w, r)
}

// limitBody caps request bodies: uploads at the per-upload cap plus room
// for the multipart framing (the cap itself is enforced while streaming),
// everything else at MaxBodyBytes.
func (s *Server) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		limit := s.cfg.MaxBodyBytes
		if strings.HasPrefix(r.URL.Path, "/v1/files/upload/") {
			limit = s.cfg.MaxUploadBytes + 1<<20
		}
		r.Body = http.MaxBytesReader(w, r.Body, limit)
		next.ServeHTTP(w, r)
	})
}

// dispatch routes the request. The mux matches it once: it sets the
// request's pattern and path values, redirects paths to their clean form,
// and sends what no route matches to unmatched.
func (s *Server) dispatch(w http.ResponseWriter, r *http.Request) {
	s.markDeprecated(w, r.URL.Path)
	if !strings.HasPrefix(r.URL.Path, "/") {
		// No pattern matches a request without a path (CONNECT naming a
		// host, a request for "*").
		s.unmatched(w, r)
		return
	}
	s.mux.ServeHTTP(w, r)
}

// unmatchedPattern catches every request that no route of the table
// matches; it is not a route, and the metrics count it as unmatched.
const unmatchedPattern = "/"

// unmatched answers a request no route matches with the API's JSON error
// instead of the mux's plain text: 405 with an Allow header when routes
// of other methods match the path, as the mux would decide, else 404.
func (s *Server) unmatched(w http.ResponseWriter, r *http.Request) {
	var allow []string
	probe := &http.Request{Host: r.Host, URL: r.URL}
	for _, m := range s.methods {
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); s.routed[pattern] {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		s.writeError(w, r, errs.New(errs.MethodNotAllowed, "method_not_allowed",
			r.Method+" is not allowed on "+r.URL.Path))
		return
	}
	s.writeError(w, r, errs.New(errs.NotFound, "not_found", "no endpoint at "+r.URL.Path))
}

func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

func (s *Server) usersMe(w http.ResponseWriter, r *http.Request) error {
	p := principalOf(r)
	u, err := s.users.UserByID(r.Context(), p.TenantID, p.UserID)
	if err != nil {
		return err
	}
	writeRecord(w, r, http.StatusOK, u.Record())
	return nil
}

// isFormContentType reports whether a Content-Type header names a
// form-encoded body, ignoring parameters such as charset.
func isFormContentType(ct string) bool {
	mt, _, _ := strings.Cut(ct, ";")
	return strings.EqualFold(strings.TrimSpace(mt), "application/x-www-form-urlencoded")
}
