package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/resource"
)

// resourceRoutes registers the generic endpoints of every registry entry.
func (s *Server) resourceRoutes() {
	for _, r := range s.reg.All() {
		base := r.Path()
		s.data("GET "+base, s.list(r))
		s.data("GET "+base+"/{id}", s.get(r))
		if r.ReadOnly {
			continue // other methods: 405 from the mux
		}
		s.data("POST "+base, s.create(r))
		s.data("PATCH "+base+"/{id}", s.update(r))
		s.data("PUT "+base+"/{id}", s.update(r))
		s.data("DELETE "+base+"/{id}", s.remove(r))
	}
}

// deprecation marks answers of deprecated resources (RFC 9745: the date
// since which the resource is deprecated).
const deprecatedSince = "@1735689600" // 2025-01-01

// markDeprecated sets the Deprecation header on every answer under a
// deprecated resource's path, errors included.
func (s *Server) markDeprecated(w http.ResponseWriter, path string) {
	for _, p := range s.deprecated {
		if path == p || strings.HasPrefix(path, p+"/") {
			w.Header().Set("Deprecation", deprecatedSince)
		}
	}
}

func (s *Server) list(r *resource.Resource) handlerFunc {
	schema := r.Schema()
	return func(w http.ResponseWriter, req *http.Request) error {
		w.Header().Add("Vary", "Accept")
		media, err := negotiate(req, listMedia...)
		if err != nil {
			return err
		}
		if len(req.URL.RawQuery) > maxQueryBytes {
			return errs.New(errs.URITooLong, "query_too_long", "the query string is longer than "+strconv.Itoa(maxQueryBytes)+" bytes")
		}
		params, err := parseQuery(req.URL.RawQuery)
		if err != nil {
			return err
		}
		q, err := query.Parse(params, schema)
		if err != nil {
			return err
		}
		listing, err := s.records.Query(req.Context(), principalOf(req), r, q)
		if err != nil {
			return err
		}
		defer listing.Close()
		if next := listing.Next(); next != "" {
			w.Header().Set("Link", "<"+s.baseURL(req)+nextPage(req.URL, next)+`>; rel="next"`)
		}
		// The records are spooled: what follows waits only on the client,
		// and on look-ups of referenced records, each with a deadline of
		// its own.
		if media != jsonMedia {
			return s.streamSheet(w, req, r, listing, media)
		}
		return s.streamList(w, req, func(emit func([]byte) error) error {
			return listing.Each(infoFrom(req.Context()).base, s.cfg.RequestTimeout, emit)
		})
	}
}

// nextPage is the request continued after a cursor: its path and its
// query in the order given, with after= the cursor instead of its own and
// without skip, which the cursor has taken into account.
func nextPage(u *url.URL, cursor string) string {
	var b strings.Builder
	b.WriteString(u.EscapedPath())
	b.WriteByte('?')
	for part := range strings.SplitSeq(u.RawQuery, "&") {
		k, v, _ := strings.Cut(part, "=")
		key, err1 := url.QueryUnescape(k)
		value, err2 := url.QueryUnescape(v)
		if err1 != nil || err2 != nil || key == "" || key == "skip" || key == "after" {
			continue
		}
		b.WriteString(url.QueryEscape(key))
		b.WriteByte('=')
		b.WriteString(url.QueryEscape(value))
		b.WriteByte('&')
	}
	b.WriteString("after=")
	b.WriteString(cursor)
	return b.String()
}

// maxQueryBytes caps list query strings.
const maxQueryBytes = 128 << 10

// streamList writes a JSON array while the rows are read: memory does not
// grow with the list. Once the first byte is out, a failure can no longer
// become an error answer; the connection is cut instead, so the client
// sees a truncated body, never a complete-looking wrong one.
func (s *Server) streamList(w http.ResponseWriter, req *http.Request, run func(emit func([]byte) error) error) error {
	bw := bufio.NewWriterSize(w, 32<<10)
	started := false
	n := 0
	emit := func(doc []byte) error {
		if !started {
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.WriteHeader(http.StatusOK)
			started = true
			bw.WriteByte('[')
		} else {
			bw.WriteByte(',')
		}
		n++
		if _, err := bw.Write(doc); err != nil {
			return &clientWriteError{err}
		}
		return nil
	}
	err := run(emit)
	if err != nil && !started {
		return err
	}
	if err != nil {
		var we *clientWriteError
		if errors.As(err, &we) {
			s.log.InfoContext(req.Context(), "client stopped reading a list", "request_id", requestID(req.Context()), "err", err)
		} else {
			s.log.ErrorContext(req.Context(), "list failed while streaming", "request_id", requestID(req.Context()), "err", err)
		}
		panic(http.ErrAbortHandler)
	}
	if !started {
		writeRawJSON(w, http.StatusOK, []byte("[]\n"))
		return nil
	}
	bw.WriteString("]\n")
	if err := bw.Flush(); err != nil {
		s.log.InfoContext(req.Context(), "client stopped reading a list", "request_id", requestID(req.Context()), "err", err)
		panic(http.ErrAbortHandler)
	}
	return nil
}

// clientWriteError is a failure to write the answer: the client's doing.
type clientWriteError struct{ err error }

func (e *clientWriteError) Error() string { return "write answer: " + e.err.Error() }
func (e *clientWriteError) Unwrap() error { return e.err }

func (s *Server) get(r *resource.Resource) handlerFunc {
	schema := r.Schema()
	return func(w http.ResponseWriter, req *http.Request) error {
		id, err := pathID(req)
		if err != nil {
			return err
		}
		var populate []string
		// Most reads name no query: nothing to parse.
		if ps := queryValues(req)["populate"]; len(ps) > 0 {
			q, err := query.Parse(req.URL.Query(), schema)
			if err != nil {
				return err
			}
			populate = q.Populate
		}
		rec, err := s.records.Get(req.Context(), principalOf(req), r, id, populate)
		if err != nil {
			return err
		}
		writeRecord(w, req, http.StatusOK, rec)
		return nil
	}
}

func (s *Server) create(r *resource.Resource) handlerFunc {
	return func(w http.ResponseWriter, req *http.Request) error {
		input, err := decodeBody(req)
		if err != nil {
			return err
		}
		rec, err := s.records.Create(req.Context(), principalOf(req), r, input)
		if err != nil {
			return err
		}
		if rec.ID != 0 {
			w.Header().Set("Location", r.Path()+"/"+strconv.FormatInt(rec.ID, 10))
		}
		writeRecord(w, req, http.StatusCreated, rec)
		return nil
	}
}

func (s *Server) update(r *resource.Resource) handlerFunc {
	return func(w http.ResponseWriter, req *http.Request) error {
		id, err := pathID(req)
		if err != nil {
			return err
		}
		input, err := decodeBody(req)
		if err != nil {
			return err
		}
		rec, err := s.records.Update(req.Context(), principalOf(req), r, id, input, req.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		writeRecord(w, req, http.StatusOK, rec)
		return nil
	}
}

func (s *Server) remove(r *resource.Resource) handlerFunc {
	return func(w http.ResponseWriter, req *http.Request) error {
		id, err := pathID(req)
		if err != nil {
			return err
		}
		rec, err := s.records.Delete(req.Context(), principalOf(req), r, id, req.Header.Get("If-Match"))
		if err != nil {
			return err
		}
		writeRecord(w, req, http.StatusOK, rec)
		return nil
	}
}

// pathID reads the {id} path segment; anything but a positive integer
// names no record.
func pathID(req *http.Request) (int64, error) {
	raw := req.PathValue("id")
	id, err := strconv.ParseInt(raw, 10, 64)
	// Only the canonical form names a record: "+5" and "05" do not.
	if err != nil || id <= 0 || strconv.FormatInt(id, 10) != raw {
		return 0, errs.New(errs.NotFound, "not_found", "no such record: ids are positive integers")
	}
	return id, nil
}

func docID(doc []byte) (int64, bool) {
	var head struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(doc, &head) != nil || head.ID == 0 {
		return 0, false
	}
	return head.ID, true
}

// maxJSONDepth caps the nesting of request bodies.
const maxJSONDepth = 32

// decodeBody reads a JSON object body; every JSON body of the API is read
// here. Numbers keep their exact text. An object naming a key twice, at
// any depth, is refused. The body is read as JSON whatever its
// Content-Type says (curl -d sends a form type), except multipart, which
// is never a record.
func decodeBody(req *http.Request) (map[string]any, error) {
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); strings.HasPrefix(mt, "multipart/") {
		return nil, errs.New(errs.UnsupportedMedia, "unsupported_media_type", "send the record as application/json")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return nil, err // a *http.MaxBytesError becomes 413
	}
	dup, twice, err := walkJSON(body, maxJSONDepth)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errs.New(errs.Invalid, "invalid_json", "the body is not valid JSON: "+err.Error())
	}
	// Token, not More: More reports false before a stray '}' or ']'.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errs.New(errs.Invalid, "invalid_json", "the body holds more than one JSON value")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errs.New(errs.Invalid, "invalid_json", "the body must be a JSON object")
	}
	if twice {
		// The decoder would keep the last value: which one the client
		// meant is not for the service to guess.
		return nil, &errs.Error{Kind: errs.Invalid, Code: "invalid_json",
			Message:  "the body names the key " + strconv.Quote(dup) + " more than once in one object; send each key once",
			Problems: []errs.Problem{{Field: dup, Message: "is named more than once in its object"}}}
	}
	if err := storable(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// storable refuses what JSON allows but the two engines cannot store
// alike: NUL characters in text (PostgreSQL's jsonb refuses them, so the
// write failed with a 500 there) and numbers beyond a 64-bit float (SQLite
// reads them as infinity or zero, PostgreSQL exactly, and PostgreSQL then
// fails every comparison of the attribute with a float).
func storable(v any) error {
	switch x := v.(type) {
	case string:
		if strings.IndexByte(x, 0) >= 0 {
			return errs.New(errs.Invalid, "invalid_json", "text must not contain NUL characters (\\u0000)")
		}
	case json.Number:
		s := string(x)
		f, err := strconv.ParseFloat(s, 64)
		mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
		if err != nil || (f == 0 && strings.ContainsAny(mantissa, "123456789")) {
			return errs.New(errs.Invalid, "invalid_json", "the number "+s+" is out of the range of a 64-bit float")
		}
	case map[string]any:
		for k, e := range x {
			if err := storable(k); err != nil {
				return err
			}
			if err := storable(e); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range x {
			if err := storable(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkJSON reads a body once without decoding it: it refuses nesting
// deeper than limit, and returns the path of the first key that an object
// names twice, such as "items[0].day" (twice: there is one). Keys are
// compared as the decoder reads them (escapes resolved, invalid UTF-8
// replaced). What it finds counts only for a body that is valid JSON; the
// decoder judges the rest.
func walkJSON(body []byte, limit int) (dup string, twice bool, err error) {
	// Room for ordinary bodies: two allocations in all.
	w := jsonWalk{stack: make([]jsonFrame, 0, 8), keys: make([][]byte, 0, 32)}
	inString, escaped, special := false, false, false
	start := 0
	for i, c := range body {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped, special = true, true
			case c == '"':
				inString = false
				if w.expectsKey() && w.named(jsonKey(body[start:i], special)) {
					return w.path(), true, nil
				}
			case c < 0x20 || c >= 0x80:
				special = true
			}
		case c == '"':
			inString, special, start = true, false, i+1
		case c == '{' || c == '[':
			if len(w.stack) >= limit {
				return "", false, errs.New(errs.Invalid, "too_deep", "the body is nested deeper than "+strconv.Itoa(limit)+" levels")
			}
			w.open(c == '{')
		case c == '}' || c == ']':
			w.close()
		case c == ',':
			w.next()
		}
	}
	return "", false, nil
}

// jsonWalk is where walkJSON is: the objects and arrays it is in, and the
// keys of those objects so far, in one list for all (an object's keys
// follow those of the objects around it, and go when it ends).
type jsonWalk struct {
	stack []jsonFrame
	keys  [][]byte
}

// jsonFrame is an object or array walkJSON is in.
type jsonFrame struct {
	object bool
	// key: the object's next string is a key; index: the array element
	// being read.
	key   bool
	index int
	// keys: where the object's keys start in jsonWalk.keys; set holds
	// them instead once there are many.
	keys int
	set  map[string]struct{}
}

// manyKeys is how many keys an object's keys are searched one by one.
const manyKeys = 16

func (w *jsonWalk) open(object bool) {
	w.stack = append(w.stack, jsonFrame{object: object, key: object, keys: len(w.keys)})
}

func (w *jsonWalk) close() {
	if n := len(w.stack); n > 0 {
		w.keys = w.keys[:w.stack[n-1].keys]
		w.stack = w.stack[:n-1]
	}
}

// next moves on to the next member or element.
func (w *jsonWalk) next() {
	if n := len(w.stack); n > 0 {
		if f := &w.stack[n-1]; f.object {
			f.key = true
		} else {
			f.index++
		}
	}
}

func (w *jsonWalk) expectsKey() bool {
	n := len(w.stack)
	return n > 0 && w.stack[n-1].object && w.stack[n-1].key
}

// named records the next key of the innermost object and reports whether
// the object had it. The last key of each object is the one being read.
func (w *jsonWalk) named(name []byte) bool {
	f := &w.stack[len(w.stack)-1]
	f.key = false
	if f.set != nil {
		w.keys[len(w.keys)-1] = name
		if _, ok := f.set[string(name)]; ok {
			return true
		}
		f.set[string(name)] = struct{}{}
		return false
	}
	for _, k := range w.keys[f.keys:] {
		if bytes.Equal(k, name) {
			w.keys = append(w.keys, name)
			return true
		}
	}
	w.keys = append(w.keys, name)
	if len(w.keys)-f.keys > manyKeys {
		f.set = make(map[string]struct{}, 2*manyKeys)
		for _, k := range w.keys[f.keys:] {
			f.set[string(k)] = struct{}{}
		}
		// From here on only the last key is kept, for the path.
		w.keys = append(w.keys[:f.keys], name)
	}
	return false
}

// path names the member being read, as problems name fields:
// "items[0].day".
func (w *jsonWalk) path() string {
	var b strings.Builder
	for i, f := range w.stack {
		switch {
		case !f.object:
			b.WriteString("[" + strconv.Itoa(f.index) + "]")
		default:
			if i > 0 {
				b.WriteByte('.')
			}
			end := len(w.keys)
			if i+1 < len(w.stack) {
				end = w.stack[i+1].keys
			}
			if end > f.keys { // else no JSON: a value without a key
				b.Write(w.keys[end-1])
			}
		}
	}
	return b.String()
}

// jsonKey is a key as the decoder reads it, from its text between the
// quotes; special: the text has escapes, control or non-ASCII bytes.
func jsonKey(raw []byte, special bool) []byte {
	if !special {
		return raw
	}
	quoted := make([]byte, 0, len(raw)+2)
	quoted = append(append(append(quoted, '"'), raw...), '"')
	var k string
	if json.Unmarshal(quoted, &k) != nil {
		return raw // not JSON: the decoder refuses the body
	}
	return []byte(k)
}

// parseQuery parses a query string, refusing malformed escapes.
func parseQuery(raw string) (map[string][]string, error) {
	v, err := url.ParseQuery(raw)
	if err != nil {
		return nil, errs.New(errs.Invalid, "invalid_query", "the query string cannot be parsed: "+err.Error())
	}
	return v, nil
}

// queryValues is the request's query, nil when it has none, without
// parsing an empty one.
func queryValues(r *http.Request) url.Values {
	if r.URL.RawQuery == "" {
		return nil
	}
	return r.URL.Query()
}
