package lifecycle

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"planwerk/internal/audit"
)

// Values in the archive (docs/tenant-archive.md "Values"): written the
// same whichever engine they were read from, and read back into either,
// so that a row of SQLite and its copy in PostgreSQL hold the same
// values (a document the same JSON, a text the same bytes).

// scanTargets are the Scan destinations of a row of cols.
func scanTargets(cols []column) []any {
	out := make([]any, len(cols))
	for i, c := range cols {
		switch c.kind {
		case kindInt:
			out[i] = new(sql.NullInt64)
		case kindText:
			out[i] = new(sql.NullString)
		case kindBool:
			out[i] = new(sql.NullBool)
		case kindBlob:
			out[i] = new([]byte)
		case kindDoc:
			out[i] = new(sql.RawBytes)
		}
	}
	return out
}

// appendRow appends the row scanned into vals (scanTargets of cols) as a
// JSON object, its members named as the columns, and the object's
// members extra (name and value, already JSON) after them. It raises
// *maxID to the row's largest id.
func appendRow(b []byte, cols []column, vals []any, maxID *int64, extra ...string) ([]byte, error) {
	b = append(b, '{')
	for i, c := range cols {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '"')
		b = append(b, c.name...)
		b = append(b, '"', ':')
		var err error
		if b, err = appendValue(b, c, vals[i], maxID); err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
	}
	for i := 0; i+1 < len(extra); i += 2 {
		b = append(b, `,"`+extra[i]+`":`+extra[i+1]...)
	}
	return append(b, '}', '\n'), nil
}

func appendValue(b []byte, c column, v any, maxID *int64) ([]byte, error) {
	switch v := v.(type) {
	case *sql.NullInt64:
		if !v.Valid {
			return append(b, "null"...), nil
		}
		if c.id && v.Int64 > *maxID {
			*maxID = v.Int64
		}
		return strconv.AppendInt(b, v.Int64, 10), nil
	case *sql.NullString:
		if !v.Valid {
			return append(b, "null"...), nil
		}
		return appendString(b, v.String)
	case *sql.NullBool:
		if !v.Valid {
			return append(b, "null"...), nil
		}
		return strconv.AppendBool(b, v.Bool), nil
	case *[]byte:
		if *v == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, *v)
		return append(b, '"'), nil
	case *sql.RawBytes:
		return appendDoc(b, *v)
	}
	return nil, fmt.Errorf("no archive form for %T", v)
}

// appendDoc appends a document as the JSON value it is. One that spans
// lines (a line is a row) is written without the spaces between its
// tokens, which no reader of it tells apart.
func appendDoc(b, doc []byte) ([]byte, error) {
	if doc == nil {
		return append(b, "null"...), nil
	}
	if !json.Valid(doc) {
		return nil, errors.New("a document that is not JSON")
	}
	if bytes.ContainsAny(doc, "\r\n") {
		var buf bytes.Buffer
		if err := json.Compact(&buf, doc); err != nil {
			return nil, err
		}
		doc = buf.Bytes()
	}
	return append(b, doc...), nil
}

// appendString appends s as a JSON string, escaping only what JSON
// requires: the same text comes back. Text that is not UTF-8 is refused,
// since JSON could not carry it unchanged.
func appendString(b []byte, s string) ([]byte, error) {
	if !utf8.ValidString(s) {
		return nil, errors.New("text that is not UTF-8")
	}
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"'), nil
}

// maxID is the largest id an archive may hold: ids are JSON numbers, and
// 2^53 is the largest that every JSON reader keeps exact; the service
// never draws one near it.
const maxID = 1 << 53

// idHeadroom is how far beyond the largest id the database has drawn an
// archive's ids may lie (docs/decisions.md "Moving a tenant"): ids
// an import holds are reserved, and on PostgreSQL the sequence every
// tenant draws from moves up to them.
const idHeadroom = 1 << 40

// idRange is the largest id of the rows read so far, and the largest id
// the database had drawn when the import began, beyond which by more
// than idHeadroom no id may lie.
type idRange struct {
	high, drawn int64
}

// take raises the range's high to id, once it is in bounds.
func (r *idRange) take(id int64) error {
	if err := r.check(id); err != nil {
		return err
	}
	r.high = max(r.high, id)
	return nil
}

// check refuses an id more than idHeadroom beyond the ids drawn.
func (r *idRange) check(id int64) error {
	if bound := r.drawn + idHeadroom; id > bound {
		return fmt.Errorf("id %d lies beyond %d, 2^40 past the largest id this database has drawn (%d): the ids drawn after it would near 2^53, beyond which JSON is not exact", id, bound, r.drawn)
	}
	return nil
}

// parseRow reads a line of a table's member into the values of cols, in
// their order, as statement arguments: int64, string, bool, []byte, or
// nil for null; a document as its text. Every column must be there and
// nothing else, and every value one the service could have written (ids
// in 1 … maxID, text of UTF-8 without NUL, what a column's check
// allows, ids within ids's bounds). It raises ids to the row's largest id.
func parseRow(line []byte, cols []column, extra []string, ids *idRange) ([]any, map[string]json.RawMessage, error) {
	if !utf8.Valid(line) {
		return nil, nil, errors.New("text that is not UTF-8")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, err
	}
	if len(m) != len(cols)+len(extra) {
		for name := range m {
			if !hasColumn(cols, name) && !slices.Contains(extra, name) {
				return nil, nil, fmt.Errorf("unknown column %q", name)
			}
		}
	}
	out := make([]any, len(cols))
	for i, c := range cols {
		raw, ok := m[c.name]
		if !ok {
			return nil, nil, fmt.Errorf("no column %q", c.name)
		}
		v, err := parseValue(c, raw)
		if err == nil && v != nil && c.check != nil {
			err = c.check(v)
		}
		if id, ok := v.(int64); ok && err == nil && c.id {
			err = ids.take(id)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.name, err)
		}
		out[i] = v
	}
	return out, m, nil
}

func parseValue(c column, raw json.RawMessage) (any, error) {
	if string(raw) == "null" {
		return nil, nil
	}
	switch c.kind {
	case kindInt:
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err == nil && (c.id || c.ref) && (n < 1 || n > maxID) {
			err = fmt.Errorf("id %d outside 1 … 2^53", n)
		}
		return n, err
	case kindText:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, errors.New("text holding NUL")
		}
		return s, nil
	case kindBool:
		var v bool
		err := json.Unmarshal(raw, &v)
		return v, err
	case kindBlob:
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return base64.StdEncoding.DecodeString(s)
	case kindDoc:
		if raw[0] != '{' {
			return nil, errors.New("a document must be a JSON object")
		}
		if err := noNUL(raw); err != nil {
			return nil, err
		}
		return string(raw), nil
	}
	return nil, fmt.Errorf("unknown kind %d", c.kind)
}

// noNUL refuses a JSON text whose strings hold NUL (\u0000), which no
// write of the service stores and PostgreSQL's jsonb cannot hold. Only a
// text with the escape in it is decoded to tell.
func noNUL(raw []byte) error {
	if !bytes.Contains(raw, []byte(`\u0000`)) {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if holdsNUL(v) {
		return errors.New("text holding NUL")
	}
	return nil
}

func holdsNUL(v any) bool {
	switch v := v.(type) {
	case string:
		return strings.IndexByte(v, 0) >= 0
	case []any:
		return slices.ContainsFunc(v, holdsNUL)
	case map[string]any:
		for k, e := range v {
			if strings.IndexByte(k, 0) >= 0 || holdsNUL(e) {
				return true
			}
		}
	}
	return false
}

func hasColumn(cols []column, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

// Checks of column values (column.check), each of a value of its
// column's kind.

// notNegative: a count or a size.
func notNegative(v any) error {
	if v.(int64) < 0 {
		return errors.New("negative")
	}
	return nil
}

// timestamp: the service's own form, YYYY-MM-DDTHH:mm:ss.sssZ.
func timestamp(v any) error {
	s := v.(string)
	if t, err := time.Parse(timestampLayout, s); err != nil || t.Format(timestampLayout) != s {
		return fmt.Errorf("%q is not a timestamp of the form YYYY-MM-DDTHH:mm:ss.sssZ", s)
	}
	return nil
}

const timestampLayout = "2006-01-02T15:04:05.000Z"

// oneOf: one of the values the service writes.
func oneOf(values ...string) func(v any) error {
	return func(v any) error {
		if !slices.Contains(values, v.(string)) {
			return fmt.Errorf("%q is none of %s", v, strings.Join(values, ", "))
		}
		return nil
	}
}

// webURL: an absolute http or https URL.
func webURL(v any) error {
	u, err := url.Parse(v.(string))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("%q is not an http or https URL", v)
	}
	return nil
}

// jsonStrings: a JSON list of strings, as text.
func jsonStrings(v any) error {
	var list []string
	if err := json.Unmarshal([]byte(v.(string)), &list); err != nil || list == nil {
		return errors.New("not a JSON list of strings")
	}
	return nil
}

// jsonObject: a JSON object, as text.
func jsonObject(v any) error {
	s := v.(string)
	if !strings.HasPrefix(s, "{") || !json.Valid([]byte(s)) {
		return errors.New("not a JSON object")
	}
	return noNUL([]byte(s))
}

// auditHash: an audit entry's hash.
func auditHash(v any) error {
	if !audit.IsHash(v.(string)) {
		return errors.New("not 64 lowercase hex digits")
	}
	return nil
}
