package lifecycle

import (
	"bytes"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
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

// parseRow reads a line of a table's member into the values of cols, in
// their order, as statement arguments: int64, string, bool, []byte, or
// nil for null; a document as its text. Every column must be there and
// nothing else. It raises *maxID to the row's largest id.
func parseRow(line []byte, cols []column, extra []string, maxID *int64) ([]any, map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(line, &m); err != nil {
		return nil, nil, err
	}
	if len(m) != len(cols)+len(extra) {
		for name := range m {
			if !hasColumn(cols, name) && !contains(extra, name) {
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
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", c.name, err)
		}
		if id, ok := v.(int64); ok && c.id && id > *maxID {
			*maxID = id
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
		return strconv.ParseInt(string(raw), 10, 64)
	case kindText:
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
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
		if raw[0] != '{' && raw[0] != '[' {
			return nil, errors.New("a document must be a JSON object or list")
		}
		return string(raw), nil
	}
	return nil, fmt.Errorf("unknown kind %d", c.kind)
}

func hasColumn(cols []column, name string) bool {
	for _, c := range cols {
		if c.name == name {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
