package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/fault"
	"planwerk/internal/gate"
	"planwerk/internal/query"
	"planwerk/internal/store"
)

// statusOf is the one table from kinds of refusal to HTTP statuses.
var statusOf = map[errs.Kind]int{
	errs.Invalid:            http.StatusBadRequest,
	errs.Unauthorized:       http.StatusUnauthorized,
	errs.Forbidden:          http.StatusForbidden,
	errs.NotFound:           http.StatusNotFound,
	errs.MethodNotAllowed:   http.StatusMethodNotAllowed,
	errs.Timeout:            http.StatusRequestTimeout,
	errs.Conflict:           http.StatusConflict,
	errs.TooLarge:           http.StatusRequestEntityTooLarge,
	errs.URITooLong:         http.StatusRequestURITooLong,
	errs.UnsupportedMedia:   http.StatusUnsupportedMediaType,
	errs.Throttled:          http.StatusTooManyRequests,
	errs.Unavailable:        http.StatusServiceUnavailable,
	errs.Full:               http.StatusInsufficientStorage,
	errs.Canceled:           499, // nginx's "client closed request"; only logged
	errs.PreconditionFailed: http.StatusPreconditionFailed,
	errs.Unprocessable:      http.StatusUnprocessableEntity,
	errs.Gone:               http.StatusGone,
	errs.NotAcceptable:      http.StatusNotAcceptable,
}

// answer is an error as the client sees it.
type answer struct {
	status int
	*errs.Error
	// whole are problems whose messages are whole sentences (the list
	// language's); the domain's follow the field's name.
	whole []problem
}

// problem is one entry of an error body's problems.
type problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

// errorBody is the JSON body of every error answer outside the token endpoint.
type errorBody struct {
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Problems []problem `json:"problems,omitempty"`
}

func (a answer) body() errorBody {
	b := errorBody{Code: a.Code, Message: a.Message, Problems: a.whole}
	for _, p := range a.Problems {
		b.Problems = append(b.Problems, problem{Field: p.Field, Message: p.Field + " " + p.Message})
	}
	return b
}

var errInternal = errs.New(0, "internal_error", "internal server error")

// errorFor maps any error to its answer: first the refusals of the
// domain and the edge, then the failures of parts and dependencies.
// Errors it does not know become a generic 500; their cause is only logged.
func errorFor(err error) answer {
	var qe *query.Error
	if errors.As(err, &qe) {
		return answer{status: http.StatusBadRequest, Error: errs.New(errs.Invalid, "invalid_query", qe.Error()),
			whole: []problem{{Field: qe.Param, Message: qe.Message}}}
	}
	e := refusal(err)
	if e == nil {
		return answer{status: http.StatusInternalServerError, Error: errInternal}
	}
	status, ok := statusOf[e.Kind]
	if !ok {
		return answer{status: http.StatusInternalServerError, Error: errInternal}
	}
	return answer{status: status, Error: e}
}

// refusal finds what err says in the one vocabulary, nil if nothing.
func refusal(err error) *errs.Error {
	if e, ok := errs.As(err); ok {
		return e
	}
	var busy *gate.BusyError
	if errors.As(err, &busy) {
		if busy.Queued {
			return &errs.Error{Kind: errs.Throttled, Code: "too_many_requests", RetryAfter: busy.RetryAfter(),
				Message: "this account has as many requests of this kind waiting as it may; retry shortly"}
		}
		return &errs.Error{Kind: errs.Unavailable, Code: "overloaded", RetryAfter: busy.RetryAfter(),
			Message: "the request waited too long for its turn (" + busy.Gate + "); retry shortly"}
	}
	var be *bodyError
	if errors.As(err, &be) {
		if be.timeout {
			return errs.New(errs.Timeout, "body_timeout", "the request body stalled: no data arrived for too long")
		}
		return errs.New(errs.Invalid, "invalid_body", "the request body cannot be read")
	}
	if e := faultError(err); e != nil {
		return e
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return errs.New(errs.TooLarge, "body_too_large",
			"the request body is larger than "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
	case errors.Is(err, auth.ErrUnauthorized):
		return errs.New(errs.Unauthorized, "unauthorized", "a valid bearer token is required")
	case errors.Is(err, store.ErrNotFound):
		return errs.New(errs.NotFound, "not_found", "no such record")
	case errors.Is(err, store.ErrConflict):
		return errs.New(errs.Conflict, "conflict", "the record conflicts with an existing one")
	case errors.Is(err, context.Canceled):
		return errs.New(errs.Canceled, "canceled", "the client went away")
	}
	return nil
}

// dependencyRetry is the Retry-After of answers about a dependency that
// is down: long enough for a restart, short enough not to idle.
const dependencyRetry = 5 * time.Second

// faultError answers a failure of a dependency: full when it has no room,
// unavailable, naming it, when it cannot be reached or answers too slowly.
func faultError(err error) *errs.Error {
	f, ok := fault.As(store.Fault(err))
	if !ok {
		return nil
	}
	if f.Full {
		return &errs.Error{Kind: errs.Full, Code: "insufficient_storage", RetryAfter: dependencyRetry,
			Message: "the " + string(f.Part) + " has no room left"}
	}
	e := &errs.Error{Kind: errs.Unavailable, RetryAfter: dependencyRetry}
	switch f.Part {
	case fault.Database:
		e.Code, e.Message = "database_unavailable", "the database cannot be reached or does not answer in time"
		if errors.Is(err, store.ErrStatementTimeout) {
			e.Message = "the database ended the statement after its time limit; a narrower where or a lower limit may help"
		}
	case fault.FileStore:
		e.Code, e.Message = "file_store_unavailable", "the file store cannot be reached or does not answer in time"
	default:
		e.Code, e.Message = "disk_unavailable", "the service's local disk fails"
	}
	return e
}

// handlerFunc is an HTTP handler that returns its error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: a returned error is logged when it is the
// server's fault and answered with the API's JSON error.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	a := errorFor(err)
	s.logFailure(r, a, err)
	if a.status == http.StatusUnauthorized {
		challenge := `Bearer realm="planwerk"`
		if bearerPresented(r) {
			challenge += `, error="invalid_token"` // RFC 6750 §3.1
		}
		w.Header().Set("WWW-Authenticate", challenge)
	}
	if a.Code == "insufficient_scope" { // RFC 6750 §3.1
		w.Header().Set("WWW-Authenticate", `Bearer realm="planwerk", error="insufficient_scope", scope="read write"`)
	}
	if a.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(a.RetryAfter))
	}
	writeJSON(w, a.status, a.body())
}

// logFailure logs an answer that is the server's fault once: a 500 as an
// error, a dependency's failure as a warning.
func (s *Server) logFailure(r *http.Request, a answer, err error) {
	var busy *gate.BusyError
	if errors.As(err, &busy) {
		s.metrics.Overloaded(busy.Gate, busy.Queued)
	}
	switch {
	case a.status == http.StatusInternalServerError:
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "err", err)
	case a.status >= 500:
		s.log.WarnContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "code", a.Code, "err", err)
	}
}

// retryAfterSeconds rounds up, so a client never retries too early.
func retryAfterSeconds(d time.Duration) string {
	secs := int64((d + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	return strconv.FormatInt(secs, 10)
}
