// Package jsontext encodes JSON as Planwerk writes it: as encoding/json
// does, except that "<", ">" and "&" are written as themselves rather than
// as \u003c, \u003e and \u0026. encoding/json escapes them for JSON put
// into HTML; Planwerk's JSON is read as JSON, and escaped it made error
// messages read "use one of \u003c, \u003c=" and URLs with a query broke
// when pasted from an answer.
package jsontext

import (
	"bytes"
	"encoding/json"
	"io"
)

// Marshal is json.Marshal without the escapes of markup.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := NewEncoder(&buf).Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// NewEncoder is json.NewEncoder without the escapes of markup: each
// value it encodes ends with a newline.
func NewEncoder(w io.Writer) *json.Encoder {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc
}

// Whole reads a whole number in any of the forms a decoded JSON number
// takes (json.Number, float64, or int64 where a decoder made one).
func Whole(v any) (int64, bool) {
	switch n := v.(type) {
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	case int64:
		return n, true
	case float64:
		return int64(n), n == float64(int64(n))
	}
	return 0, false
}
