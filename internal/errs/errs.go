// Package errs is Planwerk's one vocabulary of refusals: the kinds of
// error a request can end in, with the API's code and a message that
// says what to fix. Domain packages return them; the HTTP edge maps each
// kind to its status in one table. Nothing here knows HTTP.
package errs

import (
	"errors"
	"slices"
	"strings"
	"time"
)

// Kind classifies a refusal; the HTTP edge maps each kind to one status.
type Kind int

// The kinds of refusal.
const (
	Invalid            Kind = iota + 1 // the request or a field of it is not valid
	Unauthorized                       // no valid credentials
	Forbidden                          // the caller may not do this
	NotFound                           // no such record or endpoint
	MethodNotAllowed                   // the path does not take this method
	Timeout                            // the client stopped sending the body
	Conflict                           // the request conflicts with the stored state
	TooLarge                           // the body is larger than allowed
	URITooLong                         // the query string is longer than allowed
	UnsupportedMedia                   // the body is not of a type the endpoint takes
	Throttled                          // too many requests of the caller; retry later
	Unavailable                        // a part of the service cannot answer now; retry later
	Full                               // a part of the service has no room left
	Canceled                           // the client went away
	PreconditionFailed                 // the record is no longer the one the request names (If-Match)
	Unprocessable                      // the request cannot be done as sent (an Idempotency-Key reused for another request)
	Gone                               // what the request names is no longer kept (an expired cursor)
	NotAcceptable                      // the endpoint cannot answer in a type the request accepts
	numKinds
)

var kindNames = [numKinds]string{"", "invalid", "unauthorized", "forbidden", "not found", "method not allowed",
	"timeout", "conflict", "too large", "URI too long", "unsupported media", "throttled", "unavailable", "full", "canceled",
	"precondition failed", "unprocessable", "gone", "not acceptable"}

func (k Kind) String() string {
	if k <= 0 || k >= numKinds {
		return "unknown"
	}
	return kindNames[k]
}

// Kinds returns every kind, for the tables that must cover them all.
func Kinds() []Kind {
	out := make([]Kind, 0, numKinds-1)
	for k := Invalid; k < numKinds; k++ {
		out = append(out, k)
	}
	return out
}

// Problem names one invalid field and what is wrong with it; Message
// follows the field's name ("must be a date YYYY-MM-DD").
type Problem struct {
	Field   string
	Message string
}

// Error is a refused request. Nothing was written.
type Error struct {
	Kind     Kind
	Code     string // the API's error code (docs/api.md "Errors"), such as "invalid" or "day_approved"
	Message  string
	Problems []Problem
	// RetryAfter, when set, says when the request may succeed.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// New returns an Error of a kind with its code and message.
func New(kind Kind, code, message string) *Error {
	return &Error{Kind: kind, Code: code, Message: message}
}

// Fields refuses a request naming every invalid field at once; the
// message lists the fields, the problems say what is wrong with each.
func Fields(problems ...Problem) *Error {
	names := make([]string, 0, len(problems))
	for _, p := range problems {
		if !slices.Contains(names, p.Field) {
			names = append(names, p.Field)
		}
	}
	return &Error{Kind: Invalid, Code: "invalid", Problems: problems,
		Message: "the request is not valid: see " + strings.Join(names, ", ")}
}

// Field is a 400 naming one invalid field.
func Field(field, message string) *Error {
	return Fields(Problem{Field: field, Message: message})
}

// Forbid refuses what the caller may not do.
func Forbid(message string) *Error { return New(Forbidden, "forbidden", message) }

// Conflicts refuses what conflicts with the stored state.
func Conflicts(message string) *Error { return New(Conflict, "conflict", message) }

// As returns the Error in err's chain.
func As(err error) (*Error, bool) {
	var e *Error
	ok := errors.As(err, &e)
	return e, ok
}

// Named reports whether problems name field.
func Named(problems []Problem, field string) bool {
	for _, p := range problems {
		if p.Field == field {
			return true
		}
	}
	return false
}
