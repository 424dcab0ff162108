package jsontext

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// errNotObject is Members' answer to text that is not one JSON object.
var errNotObject = errors.New("jsontext: not a JSON object")

// Members calls fn with each top-level member of the JSON object doc, in
// order: its key as a decoder reads it (escapes resolved) and the JSON
// text of its value as doc has it. Both are valid only during the call.
// It reads doc once without decoding the values, for the callers that
// take a stored record apart member by member (a sheet's cells). Text
// that is not one object is an error; inside a nested value it checks
// only that brackets and strings close, which is all a stored document
// needs.
func Members(doc []byte, fn func(key, value []byte) error) error {
	i := space(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return errNotObject
	}
	i = space(doc, i+1)
	if i < len(doc) && doc[i] == '}' {
		return end(doc, i+1)
	}
	for {
		if i >= len(doc) || doc[i] != '"' {
			return errNotObject
		}
		j, special := str(doc, i)
		if j < 0 {
			return errNotObject
		}
		key := doc[i+1 : j-1]
		if special {
			var k string
			if err := json.Unmarshal(doc[i:j], &k); err != nil {
				return errNotObject
			}
			key = []byte(k)
		}
		i = space(doc, j)
		if i >= len(doc) || doc[i] != ':' {
			return errNotObject
		}
		i = space(doc, i+1)
		j = value(doc, i)
		if j < 0 {
			return errNotObject
		}
		if err := fn(key, doc[i:j]); err != nil {
			return err
		}
		i = space(doc, j)
		if i >= len(doc) {
			return errNotObject
		}
		switch doc[i] {
		case ',':
			i = space(doc, i+1)
		case '}':
			return end(doc, i+1)
		default:
			return errNotObject
		}
	}
}

// end checks that only white space follows the object.
func end(doc []byte, i int) error {
	if space(doc, i) != len(doc) {
		return errNotObject
	}
	return nil
}

// space skips JSON white space from i.
func space(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\n' || doc[i] == '\r') {
		i++
	}
	return i
}

// str reads the string that starts at doc[i] (a quote) and returns where
// it ends (after its closing quote), -1 if it does not; special: it holds
// an escape, a control character or bytes that are not UTF-8, so that
// its text is not its raw bytes.
func str(doc []byte, i int) (int, bool) {
	special := false
	ascii := true
	for j := i + 1; j < len(doc); j++ {
		switch c := doc[j]; {
		case c == '"':
			if !ascii && !utf8.Valid(doc[i+1:j]) {
				special = true
			}
			return j + 1, special
		case c == '\\':
			special = true
			j++ // the escaped character, a quote included
		case c < 0x20:
			special = true
		case c >= 0x80:
			ascii = false
		}
	}
	return -1, false
}

// value reads the value that starts at doc[i] and returns where it ends,
// -1 if it does not.
func value(doc []byte, i int) int {
	if i >= len(doc) {
		return -1
	}
	switch c := doc[i]; {
	case c == '"':
		j, _ := str(doc, i)
		return j
	case c == '{' || c == '[':
		return nested(doc, i)
	case c == 't':
		return literal(doc, i, "true")
	case c == 'f':
		return literal(doc, i, "false")
	case c == 'n':
		return literal(doc, i, "null")
	case c == '-' || (c >= '0' && c <= '9'):
		j := i + 1
		for j < len(doc) && (doc[j] >= '0' && doc[j] <= '9' || doc[j] == '.' || doc[j] == 'e' || doc[j] == 'E' || doc[j] == '+' || doc[j] == '-') {
			j++
		}
		return j
	}
	return -1
}

func literal(doc []byte, i int, word string) int {
	if !bytes.HasPrefix(doc[i:], []byte(word)) {
		return -1
	}
	return i + len(word)
}

// nested reads the object or array that starts at doc[i] and returns
// where it ends, -1 if its brackets do not close in order.
func nested(doc []byte, i int) int {
	var stack []byte
	for j := i; j < len(doc); j++ {
		switch c := doc[j]; c {
		case '"':
			k, _ := str(doc, j)
			if k < 0 {
				return -1
			}
			j = k - 1
		case '{', '[':
			stack = append(stack, c+2) // '{'+2 is '}', '['+2 is ']'
		case '}', ']':
			if len(stack) == 0 || stack[len(stack)-1] != c {
				return -1
			}
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return j + 1
			}
		}
	}
	return -1
}
