package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/feed"
)

// changes is GET /v1/changes: the change feed after a cursor.
func (s *Server) changes(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	for k, v := range q {
		switch {
		case k != "after" && k != "limit" && k != "resources" && k != "wait":
			return errs.Field(k, "is not a parameter of the change feed (after, limit, resources, wait)")
		case len(v) > 1:
			return errs.Field(k, "must be given once")
		}
	}
	req := feed.Request{After: q.Get("after")}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return errs.Field("limit", "must be a whole number")
		}
		if req.Limit = n; n == 0 {
			req.Limit = -1 // 0 is no limit the feed takes
		}
	}
	if v := q.Get("wait"); v != "" {
		secs, err := strconv.ParseFloat(v, 64)
		if err != nil || secs < 0 || secs > feed.MaxWait.Seconds() {
			return errs.Field("wait", "must be 0 to 30 seconds")
		}
		req.Wait = time.Duration(secs * float64(time.Second))
	}
	if v := q.Get("resources"); v != "" {
		req.Resources = strings.Split(v, ",")
	}
	// A wait ends before the request's deadline, with the page so far.
	if dl, ok := r.Context().Deadline(); ok && req.Wait > time.Until(dl)-time.Second {
		req.Wait = max(0, time.Until(dl)-time.Second)
	}
	page, err := s.feed.Read(r.Context(), principalOf(r), req)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}
