package query

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A list's order is a sequence of terms, the SQL expressions of its ORDER
// BY: one for a column or a declared attribute, four for an open one
// (kind, number, text, boolean), and id last unless a key named it. A
// cursor holds the last row's value of each term, and the next page is
// the rows after them in that order: a page far down costs what the first
// costs, since nothing before the cursor is read.

// termKind is what a term's values are.
type termKind uint8

const (
	termInt  termKind = iota // an integer: id, an open attribute's kind and boolean rank
	termNum                  // a number of a declared or an open attribute
	termText                 // text: the timestamps' columns, a declared or an open attribute
	termBool                 // a declared boolean attribute
)

// termShape is a term without its expression: what parsing a cursor needs.
type termShape struct {
	kind termKind
	desc bool
	// nullable terms may hold NULL, which sorts before every value (ASC
	// NULLS FIRST, DESC NULLS LAST).
	nullable bool
	// nulls: the ORDER BY names where NULLs go.
	nulls bool
}

// term is one expression of the order.
type term struct {
	termShape
	expr string
}

// shapes are the terms of keys.
func shapes(keys []SortKey) []termShape {
	var out []termShape
	hasID := false
	for _, k := range keys {
		desc := k.Dir == Desc
		switch {
		case k.Field.Column == "id":
			hasID = true
			out = append(out, termShape{kind: termInt, desc: desc, nulls: true})
		case k.Field.Column != "":
			out = append(out, termShape{kind: termText, desc: desc, nulls: true})
		case !k.Field.open():
			kind := termText
			switch k.Field.Type {
			case Integer, Number:
				kind = termNum
			case Boolean:
				kind = termBool
			}
			out = append(out, termShape{kind: kind, desc: desc, nullable: true, nulls: true})
		default:
			out = append(out,
				termShape{kind: termInt, desc: desc},
				termShape{kind: termNum, desc: desc, nullable: true, nulls: true},
				termShape{kind: termText, desc: desc, nullable: true, nulls: true},
				termShape{kind: termInt, desc: desc, nullable: true, nulls: true})
		}
	}
	if !hasID {
		out = append(out, termShape{kind: termInt})
	}
	return out
}

// terms are the expressions of the order by keys.
func (c compiler) terms(s *SQL, keys []SortKey) []term {
	sh := shapes(keys)
	out := make([]term, 0, len(sh))
	i := 0
	add := func(expr string) {
		out = append(out, term{termShape: sh[i], expr: expr})
		i++
	}
	for _, k := range keys {
		switch {
		case k.Field.Column != "":
			add(k.Field.Column)
		case !k.Field.open():
			// Declared attributes sort by the expressions of their
			// indexes, which may then deliver the rows in order.
			add(c.e.declared(c.e.direct(k.Field), k.Field.Type))
		default:
			// Open attributes sort by kind (missing/null, numbers,
			// strings, booleans, others), then by value within the kind.
			r := c.open(s, k.Field.Name)
			add(c.sortRank(r))
			add(c.e.num(r))
			add("CASE WHEN " + c.e.isType(r, KindString) + " THEN " + c.e.text(r) + " END")
			add(c.e.sortBool(r))
		}
	}
	if i < len(sh) {
		add("id")
	}
	return out
}

// after writes the condition that a row comes after the cursor's keys in
// the order of ts: lexicographically, each term in its direction, NULL
// before every value. Written as gt(1) OR (eq(1) AND (gt(2) OR ...)), it
// grows with the terms, not with their square; a first term with a value
// also bounds the rows from one side, which an index on it can seek to.
func (c compiler) after(s *SQL, ts []term, keys []any) {
	params := make([]string, len(ts))
	for i, t := range ts {
		if keys[i] != nil {
			params[i] = c.e.key(s, t.kind, keys[i])
		}
	}
	gt := func(i int) string {
		t, p := ts[i], params[i]
		switch {
		case p == "" && t.desc:
			return ""
		case p == "":
			return t.expr + " IS NOT NULL"
		case !t.desc:
			return t.expr + " > " + p
		case t.nullable:
			return "(" + t.expr + " < " + p + " OR " + t.expr + " IS NULL)"
		}
		return t.expr + " < " + p
	}
	eq := func(i int) string {
		if params[i] == "" {
			return ts[i].expr + " IS NULL"
		}
		return ts[i].expr + " = " + params[i]
	}
	s.Write("(")
	if len(ts) > 1 && params[0] != "" {
		switch t := ts[0]; {
		case !t.desc:
			s.Write(t.expr, " >= ", params[0], " AND ")
		case !t.nullable:
			s.Write(t.expr, " <= ", params[0], " AND ")
		}
	}
	var chain func(i int)
	chain = func(i int) {
		g := gt(i)
		if i == len(ts)-1 {
			if g == "" {
				g = "1=0"
			}
			s.Write(g)
			return
		}
		if g != "" {
			s.Write("(", g, " OR ")
		}
		s.Write("(", eq(i), " AND ")
		chain(i + 1)
		s.Write(")")
		if g != "" {
			s.Write(")")
		}
	}
	chain(0)
	s.Write(")")
}

// Cursors are at most this long: the query string's own bound is more.
const maxCursor = 64 << 10

// Cursor encodes the keys of a row (the values of its order's terms, as
// the database returned them) as the opaque after= of the next page.
func Cursor(keys []SortKey, values []any) (string, error) {
	sh := shapes(keys)
	if len(values) != len(sh) {
		return "", errors.New("cursor: a key for each term of the order")
	}
	out := make([]any, 0, len(values)+1)
	out = append(out, signature(keys))
	for i, v := range values {
		k, err := normalize(sh[i].kind, v)
		if err != nil {
			return "", err
		}
		out = append(out, k)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// signature names the order a cursor belongs to.
func signature(keys []SortKey) []string {
	sig := make([]string, 0, len(keys))
	for _, k := range keys {
		d := "+"
		if k.Dir == Desc {
			d = "-"
		}
		sig = append(sig, d+k.Field.Name)
	}
	return sig
}

// normalize turns a value the database returned for a term into the
// cursor's form: int64, json.Number, string, bool or nil.
func normalize(kind termKind, v any) (any, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case []byte:
		return normalize(kind, string(v))
	case int32:
		return normalize(kind, int64(v))
	case int:
		return normalize(kind, int64(v))
	case int64:
		switch kind {
		case termInt:
			return v, nil
		case termNum:
			return json.Number(strconv.FormatInt(v, 10)), nil
		case termBool:
			return v != 0, nil
		}
	case float64:
		if kind == termNum && !math.IsInf(v, 0) && !math.IsNaN(v) {
			return json.Number(strconv.FormatFloat(v, 'g', -1, 64)), nil
		}
	case string:
		switch kind {
		case termText:
			return v, nil
		case termNum:
			if validNumber(v) {
				return json.Number(v), nil
			}
		case termInt:
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n, nil
			}
		}
	case bool:
		if kind == termBool {
			return v, nil
		}
	}
	return nil, errors.New("cursor: a key of an unexpected type")
}

func validNumber(s string) bool {
	var n json.Number
	return json.Unmarshal([]byte(s), &n) == nil && s != "" && s[0] != '"'
}

// parseAfter reads the after= parameter against the request's order: it
// must be a cursor of the same order, with a value of the right kind for
// each term.
func parseAfter(raw string, keys []SortKey) ([]any, error) {
	bad := func(why string) error {
		return errorf("after", "not a cursor of this list: %s; follow the Link of the page before", why)
	}
	if len(raw) > maxCursor {
		return nil, bad("too long")
	}
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return nil, bad("not base64url")
	}
	if !utf8.Valid(b) {
		return nil, bad("not UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var got []any
	if err := dec.Decode(&got); err != nil {
		return nil, bad("not a JSON array")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, bad("more than one JSON value")
	}
	sh := shapes(keys)
	if len(got) != len(sh)+1 {
		return nil, bad("made for another sort")
	}
	sig, ok := got[0].([]any)
	want := signature(keys)
	if !ok || len(sig) != len(want) {
		return nil, bad("made for another sort")
	}
	for i, w := range want {
		if s, ok := sig[i].(string); !ok || s != w {
			return nil, bad("made for another sort")
		}
	}
	values := got[1:]
	for i, v := range values {
		t := sh[i]
		if v == nil {
			if !t.nullable {
				return nil, bad("a key missing")
			}
			continue
		}
		switch t.kind {
		case termInt:
			n, ok := v.(json.Number)
			if !ok {
				return nil, bad("a key of the wrong type")
			}
			// Ids are at most 2^53, as every integer of a record is.
			x, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || x > 1<<53 || x < -(1<<53) {
				return nil, bad("a key of the wrong type or out of range")
			}
			values[i] = x
		case termNum:
			n, ok := v.(json.Number)
			if !ok {
				return nil, bad("a key of the wrong type")
			}
			if f, err := n.Float64(); err != nil || math.IsInf(f, 0) {
				return nil, bad("a number out of range")
			}
		case termText:
			if s, ok := v.(string); !ok || strings.ContainsRune(s, 0) {
				return nil, bad("a key of the wrong type")
			}
		case termBool:
			if _, ok := v.(bool); !ok {
				return nil, bad("a key of the wrong type")
			}
		}
	}
	return values, nil
}
