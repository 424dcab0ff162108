package etag

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"unicode/utf8"
)

// canonical returns doc in the canonical form, the bytes
// json.Marshal gives for what json.Unmarshal reads from doc into an any
// (decodeAgain), without building that value: the tag of every answer
// with a record costs this. It walks the document once and copies what
// is already canonical (whole-number literals, plain strings, literals);
// the rest (a string with escapes, markup characters or invalid UTF-8, a
// fraction or exponent) goes through encoding/json piece by piece, so
// the output stays exactly what encoding/json writes. ok is false when
// doc is not one JSON value: the caller then falls back to decodeAgain.
func canonical(doc []byte) (out []byte, ok bool) {
	c := canonicalizer{in: doc}
	out, ok = c.value(make([]byte, 0, len(doc)))
	if !ok {
		return nil, false
	}
	c.space()
	return out, c.pos == len(c.in)
}

// decodeAgain is the canonical form by definition: decoded into an any
// and encoded again.
func decodeAgain(doc []byte) ([]byte, bool) {
	var v any
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, false
	}
	b, err := json.Marshal(v)
	return b, err == nil
}

type canonicalizer struct {
	in    []byte
	pos   int
	depth int
}

// maxDepth is encoding/json's own limit of nesting.
const maxDepth = 10000

func (c *canonicalizer) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// value appends the canonical form of the value at pos to out.
func (c *canonicalizer) value(out []byte) ([]byte, bool) {
	c.space()
	if c.pos >= len(c.in) {
		return nil, false
	}
	switch b := c.in[c.pos]; {
	case b == '{' || b == '[':
		if c.depth++; c.depth > maxDepth {
			return nil, false
		}
		defer func() { c.depth-- }()
		if b == '{' {
			return c.object(out)
		}
		return c.array(out)
	case b == '"':
		raw, ok := c.stringToken()
		if !ok {
			return nil, false
		}
		return appendString(out, raw)
	case b == 't':
		return c.literal(out, "true")
	case b == 'f':
		return c.literal(out, "false")
	case b == 'n':
		return c.literal(out, "null")
	default:
		return c.number(out)
	}
}

func (c *canonicalizer) literal(out []byte, lit string) ([]byte, bool) {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(lit)) {
		return nil, false
	}
	c.pos += len(lit)
	return append(out, lit...), true
}

// indexFrom is the number of an object's members from which they are
// found through a map.
const indexFrom = 16

// member is an object's member: its decoded key and canonical value.
type member struct {
	key   string
	value []byte
}

func (c *canonicalizer) object(out []byte) ([]byte, bool) {
	c.pos++ // {
	var members []member
	var index map[string]int // key to member, from indexFrom members on
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		return append(out, "{}"...), true
	}
	for {
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return nil, false
		}
		raw, ok := c.stringToken()
		if !ok {
			return nil, false
		}
		key, ok := decodeString(raw)
		if !ok {
			return nil, false
		}
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return nil, false
		}
		c.pos++
		v, ok := c.value(nil)
		if !ok {
			return nil, false
		}
		// A repeated key keeps its last value, as a map does. Past a few
		// members they are found through a map, so that a document of
		// many keys costs no more than their number.
		i := -1
		if index != nil {
			if j, ok := index[key]; ok {
				i = j
			}
		} else {
			i = slices.IndexFunc(members, func(m member) bool { return m.key == key })
		}
		if i >= 0 {
			members[i].value = v
		} else {
			members = append(members, member{key, v})
			if index != nil {
				index[key] = len(members) - 1
			} else if len(members) == indexFrom {
				index = make(map[string]int, 2*indexFrom)
				for j, m := range members {
					index[m.key] = j
				}
			}
		}
		more, ok := c.next('}')
		if !ok {
			return nil, false
		}
		if !more {
			break
		}
	}
	slices.SortFunc(members, func(a, b member) int { return strings.Compare(a.key, b.key) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = appendKey(out, m.key); !ok {
			return nil, false
		}
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), true
}

func (c *canonicalizer) array(out []byte) ([]byte, bool) {
	c.pos++ // [
	out = append(out, '[')
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		return append(out, ']'), true
	}
	for first := true; ; first = false {
		if !first {
			out = append(out, ',')
		}
		var ok bool
		if out, ok = c.value(out); !ok {
			return nil, false
		}
		more, ok := c.next(']')
		if !ok {
			return nil, false
		}
		if !more {
			return append(out, ']'), true
		}
	}
}

// next reads what follows an element of an object or array: a comma
// (more follows) or closer (the end).
func (c *canonicalizer) next(closer byte) (more, ok bool) {
	c.space()
	if c.pos >= len(c.in) {
		return false, false
	}
	switch c.in[c.pos] {
	case ',':
		c.pos++
		return true, true
	case closer:
		c.pos++
		return false, true
	}
	return false, false
}

// stringToken returns the string literal at pos, quotes included.
func (c *canonicalizer) stringToken() ([]byte, bool) {
	start := c.pos
	for i := c.pos + 1; i < len(c.in); i++ {
		switch c.in[i] {
		case '\\':
			i++
		case '"':
			c.pos = i + 1
			return c.in[start:c.pos], true
		}
	}
	return nil, false
}

// plain reports whether a string literal's bytes are already what
// encoding/json writes for its value: valid UTF-8 without escapes,
// control characters, the markup characters it escapes (<, >, &) or the
// line and paragraph separators.
func plain(body []byte) bool {
	for i := 0; i < len(body); {
		b := body[i]
		if b < utf8.RuneSelf {
			if b < 0x20 || b == '\\' || b == '"' || b == '<' || b == '>' || b == '&' {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(body[i:])
		if r == utf8.RuneError || r == '\u2028' || r == '\u2029' {
			return false
		}
		i += size
	}
	return true
}

// appendString appends the canonical form of a string literal.
func appendString(out, raw []byte) ([]byte, bool) {
	if plain(raw[1 : len(raw)-1]) {
		return append(out, raw...), true
	}
	s, ok := decodeString(raw)
	if !ok {
		return nil, false
	}
	return appendKey(out, s)
}

// decodeString returns the value of a string literal.
func decodeString(raw []byte) (string, bool) {
	body := raw[1 : len(raw)-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		for _, b := range body {
			if b < 0x20 {
				return "", false
			}
		}
		return string(body), true
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", false
	}
	return s, true
}

// appendKey appends s encoded as encoding/json encodes a string.
func appendKey(out []byte, s string) ([]byte, bool) {
	if plain([]byte(s)) {
		out = append(out, '"')
		out = append(out, s...)
		return append(out, '"'), true
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, false
	}
	return append(out, b...), true
}

// number appends the canonical form of the number at pos: a whole
// number of at most 15 digits is its own (a float64 holds it exactly and
// prints it so); any other goes through float64 as encoding/json takes
// it.
func (c *canonicalizer) number(out []byte) ([]byte, bool) {
	start := c.pos
	i := c.pos
	if i < len(c.in) && c.in[i] == '-' {
		i++
	}
	digits := i
	for i < len(c.in) && c.in[i] >= '0' && c.in[i] <= '9' {
		i++
	}
	n := i - digits
	whole := n > 0 && (n == 1 || c.in[digits] != '0')
	for i < len(c.in) && strings.IndexByte("0123456789+-.eE", c.in[i]) >= 0 {
		i++
		whole = false
	}
	c.pos = i
	lit := c.in[start:i]
	if whole && n <= 15 {
		return append(out, lit...), true
	}
	var f float64
	if err := json.Unmarshal(lit, &f); err != nil {
		return nil, false
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, false
	}
	return append(out, b...), true
}
