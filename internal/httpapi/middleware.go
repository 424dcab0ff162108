package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"planwerk/internal/audit"
	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/gate"
	"planwerk/internal/store"
	"planwerk/internal/tracing"
)

// requestInfo travels with a request: the middleware fills it in and the
// log line at the end reads it.
type requestInfo struct {
	id        string
	tenant    store.Tenant
	principal auth.Principal
	// base is the request's context without its deadline: it ends when
	// the client goes away or the server stops. Streaming answers derive
	// fresh deadlines from it for the work they do while they stream.
	base context.Context
}

type infoKey struct{}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(infoKey{}).(*requestInfo)
	return info
}

func requestID(ctx context.Context) string {
	if info := infoFrom(ctx); info != nil {
		return info.id
	}
	return ""
}

// principalOf returns the authenticated caller of the request.
func principalOf(r *http.Request) auth.Principal { return infoFrom(r.Context()).principal }

// statusWriter remembers the status and size of the answer for the log.
type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *statusWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// observe gives each request an id, turns panics into a generic 500 and
// logs one line per request. Neither query strings nor headers are
// logged: they may carry credentials.
func (s *Server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		s.inFlight.Add(1)
		defer s.inFlight.Done()
		info := &requestInfo{id: newRequestID()}
		w.Header().Set("X-Request-Id", info.id)
		if s.traced {
			var span trace.Span
			r, span = serverSpan(r)
			defer span.End()
		}
		// Every request has a deadline; streams derive fresh ones from
		// info.base for each step that moves data.
		info.base = context.WithValue(r.Context(), infoKey{}, info)
		// Changes made before the caller is known (none but the
		// service's own) are the API's, of no actor.
		info.base = audit.WithSource(info.base, audit.Source{Actor: audit.Actor{Via: audit.ViaAPI}, RequestID: info.id})
		ctx, cancel := context.WithTimeout(info.base, s.cfg.RequestTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &idleBody{ReadCloser: r.Body, rc: http.NewResponseController(w), idle: s.cfg.WriteIdleTimeout}
		}
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.ErrorContext(r.Context(), "panic", "request_id", info.id,
					"panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					s.writeError(sw, r, fmt.Errorf("panic: %v", p))
				}
			}
			attrs := []slog.Attr{
				slog.String("method", r.Method),
				slog.String("path", r.URL.Path),
				slog.Int("status", sw.status),
				slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000),
				slog.Int64("bytes", sw.bytes),
				slog.String("request_id", info.id),
			}
			if info.tenant.Slug != "" {
				attrs = append(attrs, slog.String("tenant", info.tenant.Slug))
			}
			if info.principal.UserID != 0 {
				attrs = append(attrs, slog.Int64("user_id", info.principal.UserID))
			}
			route := r.Pattern
			if route == unmatchedPattern {
				route = ""
			}
			if s.traced {
				if span := trace.SpanFromContext(r.Context()); span.IsRecording() {
					endServerSpan(span, r.Method, route, sw.status)
					attrs = append(attrs, slog.String("traceId", span.SpanContext().TraceID().String()))
				}
			}
			logRequest(r.Context(), s.log, attrs)
			s.metrics.Request(route, r.Method, sw.status, time.Since(start).Seconds())
		}()
		next.ServeHTTP(sw, r)
	})
}

// logRequest writes a request's log line. It hands the record to the
// handler itself, as Logger.LogAttrs would, without the caller's program
// counter, which the line does not show and which costs a stack walk per
// request.
func logRequest(ctx context.Context, log *slog.Logger, attrs []slog.Attr) {
	h := log.Handler()
	if !h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(time.Now(), slog.LevelInfo, "request", 0)
	rec.AddAttrs(attrs...)
	_ = h.Handle(ctx, rec)
}

// serverSpan starts the server span of a request, continuing the W3C
// trace context the request carries, with the attributes of the HTTP
// semantic conventions that are known before it runs. It is a thin span
// of the service's own rather than otelhttp's, which computes metric
// attributes for every request that Prometheus already counts (decisions:
// "Tracing").
func serverSpan(r *http.Request) (*http.Request, trace.Span) {
	ctx := tracing.Propagator.Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	attrs := []attribute.KeyValue{semconv.HTTPRequestMethodKey.String(r.Method), semconv.URLPath(r.URL.Path),
		semconv.URLScheme(scheme), semconv.ServerAddress(r.Host), semconv.NetworkProtocolVersion(protocolVersion(r))}
	if ua := r.UserAgent(); ua != "" {
		attrs = append(attrs, semconv.UserAgentOriginal(ua))
	}
	ctx, span := tracing.Tracer().Start(ctx, r.Method, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
	return r.WithContext(ctx), span
}

// protocolVersion is the request's HTTP version as the semantic
// conventions write it ("1.1", "2"), without formatting it for each
// request.
func protocolVersion(r *http.Request) string {
	switch {
	case r.ProtoMajor == 1 && r.ProtoMinor == 1:
		return "1.1"
	case r.ProtoMajor == 2:
		return "2"
	case r.ProtoMajor == 1 && r.ProtoMinor == 0:
		return "1.0"
	}
	return fmt.Sprintf("%d.%d", r.ProtoMajor, r.ProtoMinor)
}

// endServerSpan names a request's server span by its method and route
// pattern ("GET /v1/projects/{id}"), as the semantic conventions ask (a
// request no route matched keeps the method alone), and records its
// status: a 5xx marks it failed.
func endServerSpan(span trace.Span, method, route string, status int) {
	if _, path, _ := strings.Cut(route, " "); path != "" {
		span.SetName(method + " " + path)
		span.SetAttributes(semconv.HTTPRoute(path))
	}
	if status != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	}
	if status >= 500 {
		span.SetStatus(codes.Error, http.StatusText(status))
	}
}

func newRequestID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// withTenant resolves the tenant of the request or answers 400, and
// holds one of the tenant's share of requests in progress until the
// answer is written: a burst of one tenant waits behind itself.
func (s *Server) withTenant(next http.Handler) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if err := checkQuery(r.URL.RawQuery); err != nil {
			return err
		}
		t, err := s.tenants.Resolve(r)
		if err != nil {
			return err
		}
		r, release, err := s.enterTenant(r, t)
		if err != nil {
			return err
		}
		defer release()
		next.ServeHTTP(w, r)
		return nil
	})
}

// checkQuery refuses a query string that does not decode, or whose
// names or values, once decoded, are not UTF-8 text without NUL: no
// parameter Planwerk reads can be such text, and PostgreSQL refuses it
// as a statement's text (which was a 500 where a parameter reached one).
// A query without any escape (or semicolon, which no query may hold) is
// only scanned.
func checkQuery(raw string) error {
	if raw == "" || (!strings.ContainsAny(raw, "%;") && cleanText(raw)) {
		return nil
	}
	q, err := parseQuery(raw)
	if err != nil {
		return err
	}
	for name, values := range q {
		if !cleanText(name) {
			return invalidParameter(strings.ToValidUTF8(name, "\uFFFD"))
		}
		for _, v := range values {
			if !cleanText(v) {
				return invalidParameter(name)
			}
		}
	}
	return nil
}

// cleanText reports whether s is UTF-8 text without NUL.
func cleanText(s string) bool { return utf8.ValidString(s) && strings.IndexByte(s, 0) < 0 }

func invalidParameter(name string) error {
	return &errs.Error{Kind: errs.Invalid, Code: "invalid_query",
		Message:  "the query parameter " + strconv.Quote(name) + " is not UTF-8 text without NUL characters once percent-decoded",
		Problems: []errs.Problem{{Field: name, Message: "is not UTF-8 text without NUL characters"}}}
}

// enterTenant makes the request's waits count against tenant t and takes
// a slot of its share of requests in progress.
func (s *Server) enterTenant(r *http.Request, t store.Tenant) (*http.Request, func(), error) {
	info := infoFrom(r.Context())
	info.tenant = t
	info.base = gate.WithKey(info.base, t.ID)
	r = r.WithContext(gate.WithKey(r.Context(), t.ID))
	release, err := s.requests.Acquire(r.Context())
	if err != nil {
		return r, nil, err
	}
	return r, release, nil
}

// withAuth requires a valid bearer token of the request's tenant.
func (s *Server) withAuth(next http.Handler) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		token, ok := bearerToken(r)
		if !ok {
			return auth.ErrUnauthorized
		}
		info := infoFrom(r.Context())
		p, err := s.auth.Authenticate(r.Context(), info.tenant.ID, token)
		if err != nil {
			return err
		}
		if p.ReadOnly && r.Method != http.MethodGet && r.Method != http.MethodHead {
			// Every route but GET writes: one check covers them all.
			return errs.New(errs.Forbidden, "insufficient_scope",
				`the token's scope is "read": writes need a token with the scope "read write"`)
		}
		info.principal = p
		src, err := auditSource(r, info.id, p)
		if err != nil {
			return err
		}
		next.ServeHTTP(w, r.WithContext(audit.WithSource(r.Context(), src)))
		return nil
	})
}

// auditSource is who makes the request's changes and why, for the audit
// log: its caller, its id and its Change-Reason, which a write must send
// well-formed or not at all (400 invalid_reason, before anything is
// written).
func auditSource(r *http.Request, requestID string, p auth.Principal) (audit.Source, error) {
	src := audit.Source{Actor: audit.Actor{Via: audit.ViaAPI}, RequestID: requestID}
	if p.UserID != 0 {
		id := p.UserID
		src.Actor.User = &id
	}
	if p.ClientID != 0 {
		id := p.ClientID
		src.Actor.APIClient = &id
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return src, nil
	}
	reason, _, err := audit.ParseReason(r.Header.Get("Change-Reason"))
	src.Reason = reason
	return src, err
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// bearerPresented reports whether the request presents a bearer token,
// well-formed or not: its Authorization header names the Bearer scheme.
func bearerPresented(r *http.Request) bool {
	scheme, _, _ := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	return strings.EqualFold(scheme, "Bearer")
}
