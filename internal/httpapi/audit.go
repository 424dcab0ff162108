package httpapi

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/sheet"
	"planwerk/internal/spool"
	"planwerk/internal/store"
)

// The audit log's read side (docs/api.md "Audit log"): a page of the
// tenant's entries as JSON or CSV, and the entries of one record. Both
// are read into a spool as lists are (records.Listing): the database is
// read as fast as it delivers, the client is written to at its own pace,
// and memory stays flat however large the entries are.

// The audit log's limits on a page, and what it keeps in memory.
const (
	auditDefaultLimit = 1000
	auditMaxLimit     = 10000
	// auditSpoolMemory is how much of a page is held in memory before
	// the rest goes to a temporary file.
	auditSpoolMemory = 256 << 10
)

// auditNextHeader carries a CSV page's cursor: a CSV body has no place
// for it.
const auditNextHeader = "Audit-Next"

// auditCSVColumns are the header row of the audit log's CSV, one column
// per member of an entry.
var auditCSVColumns = []string{"seq", "at", "actor", "requestId", "reason", "resource", "record", "op", "changed",
	"before", "after", "prevHash", "hash"}

// Content types of the audit log's answers.
const (
	jsonContentType = "application/json; charset=utf-8"
	csvContentType  = "text/csv; charset=utf-8; header=present"
)

// auditRoutes are the audit log's endpoints: the log, and the history
// of every record served at /v1/NAME/{id}.
func (s *Server) auditRoutes() {
	s.data("GET /v1/audit-log", s.auditLog)
	for _, r := range s.reg.All() {
		s.data("GET "+r.Path()+"/{id}/history", s.history(auditResource(r), func(req *http.Request, id int64) error {
			_, err := s.records.Get(req.Context(), principalOf(req), r, id, nil)
			return err
		}))
	}
	s.data("GET /v1/api-clients/{id}/history", s.history("api-clients", func(req *http.Request, id int64) error {
		_, err := s.auth.Client(req.Context(), principalOf(req), id)
		return err
	}))
	s.data("GET /v1/webhooks/{id}/history", s.history("webhooks", func(req *http.Request, id int64) error {
		_, err := s.hooks.Get(req.Context(), principalOf(req), id)
		return err
	}))
}

// auditResource is the name the audit log records a resource's changes
// under: the change feed's, which for a resource derived from another
// (holidays) is its source's.
func auditResource(r *resource.Resource) string {
	if r.Source != "" {
		return r.Source
	}
	return r.Name
}

// auditLog answers GET /v1/audit-log: the tenant's entries that match
// the filters, oldest first, a page at a time (admins only), as JSON or,
// when the client asks for it, CSV.
func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) error {
	w.Header().Add("Vary", "Accept")
	caller := principalOf(r)
	if !caller.IsAdmin {
		return errs.Forbid("only admins may read the audit log")
	}
	f, err := auditFilter(r)
	if err != nil {
		return err
	}
	media, err := negotiate(r, jsonMedia, csvMedia)
	if err != nil {
		return err
	}
	if media == jsonMedia {
		p := s.readAudit(r.Context(), caller.TenantID, f, jsonEntries())
		defer p.Close()
		if _, err := p.sp.Long(); err != nil {
			return err
		}
		s.streamAudit(w, r, p, jsonContentType, `{"entries":[`, ",", func() string {
			return `],"next":"` + strconv.FormatInt(p.last, 10) + "\"}\n"
		})
		return nil
	}
	// The cursor goes in a header, before the body: the page is read
	// completely first (into the spool, not into memory).
	p := s.readAudit(r.Context(), caller.TenantID, f, csvEntries())
	defer p.Close()
	<-p.read
	if _, err := p.sp.Long(); err != nil {
		return err
	}
	w.Header().Set(auditNextHeader, strconv.FormatInt(p.last, 10))
	s.streamAudit(w, r, p, csvContentType, csvHeaderRow(), "", func() string { return "" })
	return nil
}

// history answers GET /v1/NAME/{id}/history: the record's entries, oldest
// first, to a caller that get lets read it. An admin also gets them once
// the record is gone, while it has any; every other refusal of get is
// the answer, as GET of the record answers it. Anyone else sees only the
// entries whose every state (before, after) they could read then, as the
// change feed shows them only the changes to records they may read: a
// document moved to a member shows them nothing of what it was before.
func (s *Server) history(resource string, get func(req *http.Request, id int64) error) handlerFunc {
	return func(w http.ResponseWriter, req *http.Request) error {
		id, err := pathID(req)
		if err != nil {
			return err
		}
		caller := principalOf(req)
		gone := false
		if err := get(req, id); err != nil {
			if !caller.IsAdmin || errorFor(err).status != http.StatusNotFound {
				return err
			}
			gone = true
		}
		encode := jsonEntries()
		if !caller.IsAdmin {
			encode = s.seenEntries(req.Context(), caller, encode)
		}
		p := s.readAudit(req.Context(), caller.TenantID, store.AuditFilter{Resource: resource, Record: &id}, encode)
		defer p.Close()
		long, err := p.sp.Long()
		if err != nil {
			return err
		}
		if gone && !long {
			<-p.read
			if p.n == 0 {
				return errs.New(errs.NotFound, "not_found", "no such record, and the audit log has no entry of one")
			}
		}
		s.streamAudit(w, req, p, jsonContentType, `{"entries":[`, ",", func() string { return "]}\n" })
		return nil
	}
}

// seenEntries is encode for the entries whose every state the caller may
// read (records.Service.Visible, as GET decides); nil for the others,
// which the page leaves out.
func (s *Server) seenEntries(ctx context.Context, caller auth.Principal, encode func(audit.Entry) ([]byte, error)) func(audit.Entry) ([]byte, error) {
	return func(e audit.Entry) ([]byte, error) {
		for _, state := range []json.RawMessage{e.Before, e.After} {
			if len(state) == 0 || string(state) == "null" {
				continue
			}
			if ok, err := s.records.Visible(ctx, caller, e.Resource, state); err != nil || !ok {
				return nil, err
			}
		}
		return encode(e)
	}
}

// auditPage is entries of the audit log being read into a spool, each
// already in the form the answer writes.
type auditPage struct {
	sp *spool.Spool
	// stop ends the read early; read is closed when the read has ended.
	stop context.CancelFunc
	read chan struct{}
	// n and last are how many entries were read and the seq of the last
	// one (the filter's After while none was): valid once read is closed.
	n    int
	last int64
}

// readAudit starts reading the entries f selects into a spool, each
// encoded by encode (nil: left out). Close the page when done.
func (s *Server) readAudit(ctx context.Context, tenantID int64, f store.AuditFilter, encode func(audit.Entry) ([]byte, error)) *auditPage {
	// Long pages spill to the system's temporary folder (TMPDIR).
	readCtx, stop := context.WithCancel(ctx)
	p := &auditPage{sp: spool.New("", auditSpoolMemory), stop: stop, read: make(chan struct{}), last: f.After}
	go func() {
		defer close(p.read)
		var err error
		defer func() {
			// Off the request's goroutine, a panic would end the process.
			if v := recover(); v != nil {
				err = fmt.Errorf("audit log read: panic: %v\n%s", v, debug.Stack())
			}
			p.sp.Finish(err)
		}()
		err = s.db.AuditEntries(readCtx, tenantID, f, func(e audit.Entry) error {
			b, err := encode(e)
			if err != nil || b == nil {
				return err
			}
			if err := p.sp.Add(b); err != nil {
				return err
			}
			p.n, p.last = p.n+1, e.Seq
			return nil
		})
	}()
	return p
}

// Close ends the read if it still runs and releases the page's memory
// and temporary file.
func (p *auditPage) Close() error {
	p.stop()
	<-p.read
	return p.sp.Close()
}

// streamAudit writes a page's answer: head, the entries with sep between
// them, and tail once all are read. Once the first byte is out, a failure
// cuts the connection (the client sees a truncated answer, never a
// complete-looking wrong one), as for lists.
func (s *Server) streamAudit(w http.ResponseWriter, req *http.Request, p *auditPage, contentType, head, sep string, tail func() string) {
	rd, err := p.sp.Reader()
	if err != nil {
		s.cutAnswer(req, err)
	}
	w.Header().Set("Content-Type", contentType)
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	bw.WriteString(head)
	for i := 0; ; i++ {
		entry, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.cutAnswer(req, err)
		}
		if i > 0 {
			bw.WriteString(sep)
		}
		if _, err := bw.Write(entry); err != nil {
			s.cutAnswer(req, &clientWriteError{err})
		}
	}
	<-p.read
	bw.WriteString(tail())
	if err := bw.Flush(); err != nil {
		s.cutAnswer(req, &clientWriteError{err})
	}
}

// cutAnswer ends an answer that has begun because of err: it logs why
// and aborts the handler, which cuts the connection.
func (s *Server) cutAnswer(req *http.Request, err error) {
	var we *clientWriteError
	if errors.As(err, &we) {
		s.log.InfoContext(req.Context(), "client stopped reading the audit log", "request_id", requestID(req.Context()), "err", err)
	} else {
		s.log.ErrorContext(req.Context(), "audit log read failed while streaming", "request_id", requestID(req.Context()), "err", err)
	}
	panic(http.ErrAbortHandler)
}

// jsonEntries returns an encoder of entries as the JSON answers show
// them. Its result is valid until its next call.
func jsonEntries() func(audit.Entry) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // the documents as stored, not with < > & escaped
	return func(e audit.Entry) ([]byte, error) {
		buf.Reset()
		if err := enc.Encode(e); err != nil {
			return nil, fmt.Errorf("audit entry %d: %w", e.Seq, err)
		}
		return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
	}
}

// csvEntries returns an encoder of entries as rows of the CSV answer
// (RFC 4180: CRLF line ends), in the columns of auditCSVColumns: actor,
// changed, before and after as JSON text (null for none), requestId,
// reason and record empty when null; text that would start a formula
// with a leading "'" (sheet.Text). Its result is valid until its next
// call.
func csvEntries() func(audit.Entry) ([]byte, error) {
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.UseCRLF = true
	row := make([]string, len(auditCSVColumns))
	return func(e audit.Entry) ([]byte, error) {
		actor, err := json.Marshal(e.Actor)
		if err != nil {
			return nil, fmt.Errorf("audit entry %d: %w", e.Seq, err)
		}
		changed := e.Changed
		if changed == nil {
			changed = []string{}
		}
		// Every text cell through sheet.Text (the reason is the
		// client's); seq and record are numbers.
		row[0], row[1], row[2] = strconv.FormatInt(e.Seq, 10), sheet.Text(e.At), sheet.Text(string(actor))
		row[3], row[4], row[5] = sheet.Text(optText(e.RequestID)), sheet.Text(optText(e.Reason)), sheet.Text(e.Resource)
		row[6], row[7], row[8] = "", sheet.Text(e.Op), sheet.Text(string(audit.AppendStrings(nil, changed)))
		if e.Record != nil {
			row[6] = strconv.FormatInt(*e.Record, 10)
		}
		row[9], row[10] = sheet.Text(jsonText(e.Before)), sheet.Text(jsonText(e.After))
		row[11], row[12] = sheet.Text(e.PrevHash), sheet.Text(e.Hash)
		buf.Reset()
		if err := cw.Write(row); err != nil {
			return nil, err
		}
		cw.Flush()
		return buf.Bytes(), cw.Error()
	}
}

// csvHeaderRow is the CSV answer's first line.
func csvHeaderRow() string { return strings.Join(auditCSVColumns, ",") + "\r\n" }

func optText(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// jsonText is a document's JSON text, null for none.
func jsonText(doc json.RawMessage) string {
	if len(doc) == 0 {
		return "null"
	}
	return string(doc)
}

// auditParams are the audit log's query parameters.
var auditParams = []string{"after", "limit", "resource", "record", "user", "op", "from", "to"}

// auditFilter reads the audit log's query parameters: each known, given
// once, not empty and well-formed, or 400 naming it.
func auditFilter(r *http.Request) (store.AuditFilter, error) {
	f := store.AuditFilter{Limit: auditDefaultLimit}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return f, err
	}
	for k, v := range q {
		switch {
		case !slices.Contains(auditParams, k):
			return f, errs.Field(k, "is not a parameter of the audit log ("+strings.Join(auditParams, ", ")+")")
		case len(v) > 1:
			return f, errs.Field(k, "must be given once")
		case v[0] == "":
			return f, errs.Field(k, "must not be empty (leave the parameter out instead)")
		}
	}
	get := func(name string) string {
		if v := q[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	whole := func(name string, least int64) (int64, bool, error) {
		v := get(name)
		if v == "" {
			return 0, false, nil
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < least {
			return 0, false, errs.Field(name, "must be a whole number of at least "+strconv.FormatInt(least, 10))
		}
		return n, true, nil
	}
	if f.After, _, err = whole("after", 0); err != nil {
		return f, errs.Field("after", "must be a cursor an earlier page returned (next)")
	}
	if n, ok, err := whole("limit", 1); err != nil {
		return f, err
	} else if ok {
		if n > auditMaxLimit {
			return f, errs.Field("limit", "must be at most "+strconv.Itoa(auditMaxLimit))
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
	f.Resource = get("resource")
	switch f.Op = get("op"); f.Op {
	case "", audit.OpCreate, audit.OpUpdate, audit.OpDelete:
	default:
		return f, errs.Field("op", "must be create, update or delete")
	}
	if f.From, err = auditInstant("from", get("from")); err != nil {
		return f, err
	}
	if f.To, err = auditInstant("to", get("to")); err != nil {
		return f, err
	}
	return f, nil
}

// auditInstant reads the RFC 3339 date-time of a bound on at ("" for
// none) in the stored form of at, which has milliseconds: an instant
// between two milliseconds becomes the later one, so that from
// (inclusive) and to (exclusive) select exactly the entries at or after,
// or before, the instant given.
func auditInstant(name, v string) (string, error) {
	if v == "" {
		return "", nil
	}
	ms, err := query.NormalTimestamp(v)
	if err != nil {
		return "", errs.Field(name, "must be an RFC 3339 date-time such as 2026-11-27T10:00:00Z: "+err.Error())
	}
	if wholeMillisecond(v) {
		return ms, nil
	}
	t, err := time.Parse(query.TimestampLayout, ms)
	if err != nil {
		return "", fmt.Errorf("audit log: %s: %w", name, err)
	}
	if t = t.Add(time.Millisecond); t.Year() > 9999 {
		return "", errs.Field(name, "must be within the years 0000 to 9999 in UTC")
	}
	return t.Format(query.TimestampLayout), nil
}

// wholeMillisecond reports whether a well-formed RFC 3339 date-time names
// an instant of whole milliseconds: no leap second (stored as the
// millisecond before it), no nonzero digit after the third fractional one.
func wholeMillisecond(v string) bool {
	if v[17:19] == "60" {
		return false
	}
	if v[19] != '.' {
		return true
	}
	for i := 20; i < len(v) && v[i] >= '0' && v[i] <= '9'; i++ {
		if i >= 23 && v[i] != '0' {
			return false
		}
	}
	return true
}
