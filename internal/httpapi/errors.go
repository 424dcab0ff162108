package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/fault"
	"planwerk/internal/files"
	"planwerk/internal/gate"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// Error is an error with its HTTP answer. Handlers return it, or any error
// that errorFor maps, and the adapter writes the contract's JSON body.
type Error struct {
	Status     int
	Code       string
	Message    string
	Problems   []Problem
	RetryAfter time.Duration
}

// Problem names one invalid field of a request.
type Problem struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Message }

// errorBody is the JSON body of every error answer outside the token endpoint.
type errorBody struct {
	Code     string    `json:"code"`
	Message  string    `json:"message"`
	Problems []Problem `json:"problems,omitempty"`
}

// Errorf builds an *Error.
func Errorf(status int, code, message string) *Error {
	return &Error{Status: status, Code: code, Message: message}
}

// errorFor maps any error to its answer. Errors it does not know become a
// generic 500; their cause is only logged.
func errorFor(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var te *tenancy.Error
	if errors.As(err, &te) {
		return Errorf(http.StatusBadRequest, te.Code, te.Message)
	}
	var qe *query.Error
	if errors.As(err, &qe) {
		return &Error{Status: http.StatusBadRequest, Code: "invalid_query", Message: qe.Error(),
			Problems: []Problem{{Field: qe.Param, Message: qe.Message}}}
	}
	var fe *files.Error
	if errors.As(err, &fe) {
		return &Error{Status: fe.Status, Code: fe.Code, Message: fe.Message, RetryAfter: fe.RetryAfter}
	}
	var re *records.Error
	if errors.As(err, &re) {
		e := &Error{Status: recordStatus[re.Kind], Code: re.Code, Message: re.Message}
		for _, p := range re.Problems {
			e.Problems = append(e.Problems, Problem{Field: p.Field, Message: p.Field + " " + p.Message})
		}
		if e.Status == 0 {
			e.Status = http.StatusInternalServerError
		}
		return e
	}
	var busy *gate.BusyError
	if errors.As(err, &busy) {
		if busy.Queued {
			return &Error{Status: http.StatusTooManyRequests, Code: "too_many_requests", RetryAfter: busy.RetryAfter(),
				Message: "this account has as many requests of this kind waiting as it may; retry shortly"}
		}
		return &Error{Status: http.StatusServiceUnavailable, Code: "overloaded", RetryAfter: busy.RetryAfter(),
			Message: "the request waited too long for its turn (" + busy.Gate + "); retry shortly"}
	}
	var be *bodyError
	if errors.As(err, &be) {
		if be.timeout {
			return Errorf(http.StatusRequestTimeout, "body_timeout", "the request body stalled: no data arrived for too long")
		}
		return Errorf(http.StatusBadRequest, "invalid_body", "the request body cannot be read")
	}
	if e := faultError(err); e != nil {
		return e
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return Errorf(http.StatusRequestEntityTooLarge, "body_too_large",
			"the request body is larger than "+strconv.FormatInt(mbe.Limit, 10)+" bytes")
	case errors.Is(err, auth.ErrUnauthorized):
		return Errorf(http.StatusUnauthorized, "unauthorized", "a valid bearer token is required")
	case errors.Is(err, store.ErrNotFound):
		return Errorf(http.StatusNotFound, "not_found", "no such record")
	case errors.Is(err, store.ErrConflict):
		return Errorf(http.StatusConflict, "conflict", "the record conflicts with an existing one")
	case errors.Is(err, context.Canceled):
		return Errorf(499, "canceled", "the client went away")
	}
	return Errorf(http.StatusInternalServerError, "internal_error", "internal server error")
}

// dependencyRetry is the Retry-After of answers about a dependency that
// is down: long enough for a restart, short enough not to idle.
const dependencyRetry = 5 * time.Second

// faultError answers a failure of a dependency: 507 when it is full, 503
// naming it when it cannot be reached or answers too slowly.
func faultError(err error) *Error {
	f, ok := fault.As(store.Fault(err))
	if !ok {
		return nil
	}
	if f.Full {
		return &Error{Status: http.StatusInsufficientStorage, Code: "insufficient_storage", RetryAfter: dependencyRetry,
			Message: "the " + string(f.Part) + " has no room left"}
	}
	e := &Error{Status: http.StatusServiceUnavailable, RetryAfter: dependencyRetry}
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

// recordStatus maps the kinds of refusal of the records rules to statuses.
var recordStatus = map[records.Kind]int{
	records.Invalid:   http.StatusBadRequest,
	records.Forbidden: http.StatusForbidden,
	records.NotFound:  http.StatusNotFound,
	records.Conflict:  http.StatusConflict,
}

// handlerFunc is an HTTP handler that returns its error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: a returned error is logged when it is the
// server's fault and answered with the contract's JSON error.
func (s *Server) handle(h handlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	})
}

func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	e := errorFor(err)
	s.logFailure(r, e, err)
	if e.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="planwerk"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfterSeconds(e.RetryAfter))
	}
	writeJSON(w, e.Status, errorBody{Code: e.Code, Message: e.Message, Problems: e.Problems})
}

// logFailure logs an answer that is the server's fault once: a 500 as an
// error, a dependency's failure as a warning.
func (s *Server) logFailure(r *http.Request, e *Error, err error) {
	var busy *gate.BusyError
	if errors.As(err, &busy) {
		s.metrics.Overloaded(busy.Gate, busy.Queued)
	}
	switch {
	case e.Status == http.StatusInternalServerError:
		s.log.ErrorContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "err", err)
	case e.Status >= 500:
		s.log.WarnContext(r.Context(), "request failed", "request_id", requestID(r.Context()), "code", e.Code, "err", err)
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
