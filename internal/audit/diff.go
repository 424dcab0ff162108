package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// Diff returns the canonical JSON of an entry's documents, before and
// after (JSON objects; empty or null for none), and the sorted names of
// their members that differ, with extra.
//
// A document that encoding/json wrote is mostly canonical already (its
// members sorted, its numbers written as RFC 8785 writes them): such a
// document is checked in one pass and kept as it is, and its members are
// compared as text (two canonical values are equal exactly when their
// texts are). Only a document that is not canonical (an escaped "<", a
// name with an escape, a number written otherwise) is decoded and
// written again.
func Diff(before, after []byte, extra ...string) (b, a []byte, changed []string, err error) {
	mb, okB := members(before)
	ma, okA := members(after)
	if okB && okA {
		return none(before), none(after), changedMembers(mb, ma, extra), nil
	}
	var db, da map[string]any
	if b, db, err = canonicalObject(before); err != nil {
		return nil, nil, nil, fmt.Errorf("before: %w", err)
	}
	if a, da, err = canonicalObject(after); err != nil {
		return nil, nil, nil, fmt.Errorf("after: %w", err)
	}
	return b, a, Changed(db, da, extra...), nil
}

// none is doc, or nil where doc is no document.
func none(doc []byte) []byte {
	if len(doc) == 0 || string(doc) == "null" {
		return nil
	}
	return doc
}

// canonicalObject decodes a document (a JSON object, or nothing) and
// returns its canonical JSON and its members.
func canonicalObject(doc []byte) ([]byte, map[string]any, error) {
	if len(doc) == 0 {
		return nil, nil, nil
	}
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		return nil, nil, err
	}
	if m == nil {
		return nil, nil, nil
	}
	c, err := AppendCanonical(make([]byte, 0, len(doc)), m)
	return c, m, err
}

// member is one member of a canonical object: its name as written (no
// escapes) and its value's text.
type member struct{ name, value []byte }

// members returns the members of doc when doc is no document (empty or
// null: none, ok) or a JSON object that is its own canonical form and
// whose names need no escapes; ok is false otherwise.
func members(doc []byte) ([]member, bool) {
	if len(doc) == 0 || string(doc) == "null" {
		return nil, true
	}
	s := scanner{doc: doc}
	out := make([]member, 0, 16)
	if !s.object(0, func(name, value []byte) { out = append(out, member{name, value}) }) || s.i != len(doc) {
		return nil, false
	}
	return out, true
}

// changedMembers is Changed for members of canonical objects, both in
// the canonical order of their names.
func changedMembers(before, after []member, extra []string) []string {
	out := slices.Clone(extra)
	for len(before) > 0 || len(after) > 0 {
		switch {
		case len(after) == 0 || len(before) > 0 && compareUTF16(string(before[0].name), string(after[0].name)) < 0:
			out = append(out, string(before[0].name))
			before = before[1:]
		case len(before) == 0 || compareUTF16(string(before[0].name), string(after[0].name)) > 0:
			out = append(out, string(after[0].name))
			after = after[1:]
		default:
			if !bytes.Equal(before[0].value, after[0].value) {
				out = append(out, string(after[0].name))
			}
			before, after = before[1:], after[1:]
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// maxDepth is the deepest nesting the scanner follows; a deeper document
// is decoded instead.
const maxDepth = 256

// scanner checks that a JSON text is in RFC 8785 canonical form: no
// white space, members in the order of their names' UTF-16 code units,
// strings escaped only where they must be (and then as RFC 8785 does),
// numbers as ECMAScript writes them.
type scanner struct {
	doc []byte
	i   int
}

func (s *scanner) value(depth int) bool {
	if s.i >= len(s.doc) || depth > maxDepth {
		return false
	}
	switch c := s.doc[s.i]; {
	case c == '{':
		return s.object(depth+1, nil)
	case c == '[':
		s.i++
		if s.peek(']') {
			return true
		}
		for {
			if !s.value(depth + 1) {
				return false
			}
			if s.peek(']') {
				return true
			}
			if !s.peek(',') {
				return false
			}
		}
	case c == '"':
		_, ok := s.str()
		return ok
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	}
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(s.doc[s.i:], []byte(lit)) {
			s.i += len(lit)
			return true
		}
	}
	return false
}

// object scans an object whose names need no escapes, telling each
// member to fn (when not nil).
func (s *scanner) object(depth int, fn func(name, value []byte)) bool {
	if !s.peek('{') {
		return false
	}
	if s.peek('}') {
		return true
	}
	var last []byte
	for {
		name, ok := s.str()
		if !ok || bytes.IndexByte(name, '\\') >= 0 || last != nil && compareUTF16(string(last), string(name)) >= 0 || !s.peek(':') {
			return false
		}
		start := s.i
		if !s.value(depth) {
			return false
		}
		if fn != nil {
			fn(name, s.doc[start:s.i])
		}
		last = name
		if s.peek('}') {
			return true
		}
		if !s.peek(',') {
			return false
		}
	}
}

// peek consumes c when it comes next.
func (s *scanner) peek(c byte) bool {
	if s.i < len(s.doc) && s.doc[s.i] == c {
		s.i++
		return true
	}
	return false
}

// str scans a canonical string and returns its text between the quotes.
func (s *scanner) str() ([]byte, bool) {
	if !s.peek('"') {
		return nil, false
	}
	start := s.i
	for s.i < len(s.doc) {
		c := s.doc[s.i]
		switch {
		case c == '"':
			s.i++
			return s.doc[start : s.i-1], true
		case c < 0x20:
			return nil, false
		case c == '\\':
			if s.i+1 >= len(s.doc) {
				return nil, false
			}
			switch s.doc[s.i+1] {
			case '"', '\\', 'b', 'f', 'n', 'r', 't':
				s.i += 2
			case 'u':
				// Only a control character without a short form.
				if s.i+6 > len(s.doc) || string(s.doc[s.i+2:s.i+4]) != "00" {
					return nil, false
				}
				v, err := strconv.ParseUint(string(s.doc[s.i+4:s.i+6]), 16, 8)
				if err != nil || v >= 0x20 || string(AppendString(nil, string(rune(v)))) != `"`+string(s.doc[s.i:s.i+6])+`"` {
					return nil, false
				}
				s.i += 6
			default:
				return nil, false
			}
		case c >= utf8.RuneSelf:
			r, size := utf8.DecodeRune(s.doc[s.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, false
			}
			s.i += size
		default:
			s.i++
		}
	}
	return nil, false
}

// number scans a number written as RFC 8785 writes it.
func (s *scanner) number() bool {
	start := s.i
	s.peek('-')
	digits := s.i
	for s.i < len(s.doc) && (s.doc[s.i] >= '0' && s.doc[s.i] <= '9' || s.doc[s.i] == '.' || s.doc[s.i] == 'e' || s.doc[s.i] == 'E' || s.doc[s.i] == '+' || s.doc[s.i] == '-') {
		s.i++
	}
	tok := s.doc[start:s.i]
	// The usual number, an integer of up to 15 digits, is its own
	// canonical form unless it has a leading zero or is -0.
	if n := s.i - digits; n > 0 && n <= 15 && (s.doc[digits] != '0' || n == 1 && start == digits) {
		plain := true
		for _, c := range s.doc[digits:s.i] {
			plain = plain && c >= '0' && c <= '9'
		}
		if plain {
			return true
		}
	}
	f, err := strconv.ParseFloat(string(tok), 64)
	if err != nil {
		return false
	}
	canonical, err := jcs.NumberToJSON(f)
	return err == nil && canonical == string(tok)
}
