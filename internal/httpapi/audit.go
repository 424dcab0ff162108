package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// The audit log's limits on a page.
const (
	auditDefaultLimit = 1000
	auditMaxLimit     = 10000
)

// auditRoutes are the audit log's endpoints.
func (s *Server) auditRoutes() {
	s.data("GET /v1/audit-log", s.auditLog)
}

// auditLog answers GET /v1/audit-log: the tenant's entries that match
// the filters, oldest first, a page at a time (admins only).
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) error {
	if !principalOf(r).IsAdmin {
		return errs.Forbid("only admins may read the audit log")
	}
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	entries := make([]audit.Entry, 0, min(f.Limit, 64))
	err = s.db.AuditEntries(r.Context(), principalOf(r).TenantID, f, func(e audit.Entry) error {
		entries = append(entries, e)
		return nil
	})
	if err != nil {
		return err
	}
	next := f.After
	if len(entries) > 0 {
		next = entries[len(entries)-1].Seq
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "next": strconv.FormatInt(next, 10)})
	return nil
}

// auditFilter reads the audit log's query parameters: each known, given
// once and well-formed, or 400 naming it.
func auditFilter(r *http.Request) (store.AuditFilter, error) {
	f := store.AuditFilter{Limit: auditDefaultLimit}
	q := r.URL.Query()
	for k, v := range q {
		switch k {
		case "after", "limit", "resource", "record", "user", "op", "from", "to":
		default:
			return f, errs.Field(k, "is not a parameter of the audit log (after, limit, resource, record, user, op, from, to)")
		}
		if len(v) > 1 {
			return f, errs.Field(k, "must be given once")
		}
	}
	whole := func(name string, min int64) (int64, bool, error) {
		v := q.Get(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < min {
			return 0, false, errs.Field(name, "must be a whole number of at least "+strconv.FormatInt(min, 10))
		}
		return n, true, nil
	}
	var err error
	if f.After, _, err = whole("after", 0); err != nil {
		return f, err
	}
	if n, ok, err := whole("limit", 1); err != nil {
		return f, err
	} else if ok {
		if n > auditMaxLimit {
			return f, errs.Field("limit", "must be at most 10000")
		}
		f.Limit = int(n)
	}
	if n, ok, err := whole("record", 1); err != nil {
		return f, err
	} else if ok {
		f.Record = &n
	}
	if n, ok, err := whole("user", 1); err != nil {
		return f, err
	} else if ok {
		f.User = &n
	}
	f.Resource = q.Get("resource")
	switch f.Op = q.Get("op"); f.Op {
	case "", audit.OpCreate, audit.OpUpdate, audit.OpDelete:
	default:
		return f, errs.Field("op", "must be create, update or delete")
	}
	for _, p := range []struct {
		name string
		to   *string
	}{{"from", &f.From}, {"to", &f.To}} {
		v := q.Get(p.name)
		if v == "" {
			continue
		}
		at, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return f, errs.Field(p.name, "must be a time in RFC 3339 (2026-11-27T10:00:00Z)")
		}
		*p.to = store.Timestamp(at)
	}
	return f, nil
}
