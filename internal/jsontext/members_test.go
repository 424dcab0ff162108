package jsontext_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"planwerk/internal/jsontext"
)

// FuzzMembers: for every JSON object, Members gives the members a
// decoder reads, in order, each value's text decoding to the decoder's
// value; for any other text it returns (an error or not) without
// panicking. The seeds run as a test.
func FuzzMembers(f *testing.F) {
	for _, seed := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"id":7,"name":"x","n":null,"b":true,"c":false}`,
		`{"nested":{"a":[1,{"b":"}"}],"c":"]"},"after":-2.5e3}`,
		`{"esc\"aped":"a\\b\"c","\u00e9":"\ud83d\ude00","é":1}`,
		`{"a" : [ 1 , 2 ] , "b" : { } }`, `{"a":"\u0000"}`, "{\"\xff\":1}",
		`{"a":1,}`, `{"a"}`, `{"a":}`, `{"a":[}`, `{"a":1} x`, `[1]`, `"s"`, ``, `{`, `{"a":"`, `{"a":tru}`,
		`{"a":1}{"b":2}`, `{"a":{"b":[1,2,{"c":"d\\"}]}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var keys []string
		var values [][]byte
		err := jsontext.Members(doc, func(k, v []byte) error {
			keys = append(keys, string(k))
			values = append(values, bytes.Clone(v))
			return nil
		})
		wantKeys, wantValues, ok := decodeObject(doc)
		if !ok {
			return // not an object: any answer but a panic
		}
		if err != nil {
			t.Fatalf("Members(%q): %v", doc, err)
		}
		if !reflect.DeepEqual(keys, wantKeys) {
			t.Fatalf("Members(%q): keys %q, want %q", doc, keys, wantKeys)
		}
		for i, v := range values {
			var got any
			if err := json.Unmarshal(v, &got); err != nil || !reflect.DeepEqual(got, wantValues[i]) {
				t.Fatalf("Members(%q): %q is %q (%v), want %v", doc, keys[i], v, err, wantValues[i])
			}
		}
	})
}

// decodeObject reads doc as encoding/json does: ok when it is one JSON
// object, with its keys in order and their values.
func decodeObject(doc []byte) (keys []string, values []any, ok bool) {
	if !json.Valid(doc) {
		return nil, nil, false
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, nil, false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, false
		}
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, nil, false
		}
		keys, values = append(keys, tok.(string)), append(values, v)
	}
	return keys, values, true
}
