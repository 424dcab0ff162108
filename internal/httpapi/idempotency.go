package httpapi

import (
	"io"
	"net/http"

	"planwerk/internal/idempotency"
)

// idempotent lets a POST be retried safely with an Idempotency-Key (see
// package idempotency); without the header nothing changes. It runs after
// authentication and the route's permit: keys belong to a user, and are
// replayed only to a caller who may make the request. shows, if set, must
// let the caller see the record of a kept success before it is replayed
// (see permit).
func (s *Server) idempotent(next http.Handler, shows func(r *http.Request, id int64, doc []byte) error) http.Handler {
	var check idempotency.Shows
	if shows != nil {
		check = func(r *http.Request, body []byte) error {
			if id, ok := docID(body); ok {
				return shows(r, id, body)
			}
			return nil
		}
	}
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		if len(r.Header.Values(idempotency.Header)) == 0 {
			next.ServeHTTP(w, r)
			return nil
		}
		p := principalOf(r)
		return s.keys.Serve(w, r, p.TenantID, p.UserID, next, check)
	})
}

// idempotencyConfig is what the idempotency service needs of the edge:
// its bound on multipart part headers, and its request ids for the log.
func idempotencyConfig() idempotency.Config {
	return idempotency.Config{
		Parts:     func(body io.Reader, boundary string) io.Reader { return newPartHeaderLimit(body, boundary) },
		RequestID: requestID,
	}
}
