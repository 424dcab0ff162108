package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/errs"
)

// decodeOf runs decodeBody on a request with body.
func decodeOf(body []byte) (map[string]any, error) {
	r := httptest.NewRequest(http.MethodPost, "/v1/projects", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return decodeBody(r)
}

// duplicateOf is the path decodeBody's error names for a key given twice;
// twice is false when the error is another (or none).
func duplicateOf(err error) (dup string, twice bool) {
	e, ok := errs.As(err)
	if !ok || e.Code != "invalid_json" || len(e.Problems) != 1 {
		return "", false
	}
	return e.Problems[0].Field, true
}

// firstDuplicate is the reference for duplicate keys: a json.Decoder's
// tokens, with the keys of each object in a set. It reports the path of
// the first key an object names twice (twice: there is one), as far as
// the body parses.
func firstDuplicate(body []byte) (dup string, twice bool) {
	type frame struct {
		object, key bool
		name        string
		index       int
		seen        map[string]bool
	}
	var stack []*frame
	path := func() string {
		var b strings.Builder
		for i, f := range stack {
			switch {
			case !f.object:
				b.WriteString("[" + strconv.Itoa(f.index) + "]")
			case i > 0:
				b.WriteString("." + f.name)
			default:
				b.WriteString(f.name)
			}
		}
		return b.String()
	}
	// done ends a value of the innermost object or array.
	done := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].object {
				stack[n-1].key = true
			} else {
				stack[n-1].index++
			}
		}
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	for {
		tok, err := dec.Token()
		if err != nil {
			return dup, twice
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				stack = append(stack, &frame{object: v == '{', key: v == '{', seen: map[string]bool{}})
				continue
			}
			stack = stack[:len(stack)-1]
			done()
		case string:
			if f := stack; len(f) > 0 && f[len(f)-1].object && f[len(f)-1].key {
				top := f[len(f)-1]
				top.key, top.name = false, v
				if top.seen[v] && !twice {
					dup, twice = path(), true
				}
				top.seen[v] = true
				continue
			}
			done()
		default:
			done()
		}
	}
}

// FuzzDecodeBody holds decodeBody to the reference on any body: it
// refuses a key named twice in one object exactly when the reference
// finds one, naming the same key at the same path, and a body it takes
// is what encoding/json decodes.
func FuzzDecodeBody(f *testing.F) {
	for _, seed := range []string{
		`{"scope": "read", "scope": "read write"}`,
		`{"name": "A", "n\u0061me": "B"}`,
		`{"a": {"x": 1, "y": {"z": 1, "z": 2}}}`,
		`{"list": [{"a": 1}, {"a": 1, "a": 2}]}`,
		`{"items": [[], [{"p": 1}], {"d": [1, {"k": 0, "k": 0}]}]}`,
		`{"a": {"x": 1}, "b": {"x": 1}, "list": [{"x": 1}, {"x": 2}]}`,
		`{"name": "Fine", "Name": "Other"}`,
		`{"a\"b": 1, "a\u0022b": 2}`,
		`{"\\": 1, "\u005c": 2}`,
		`{"a": "}\"{", "b": "[\\", "a": 1}`,
		"{\"a\xff\": 1, \"a\xfe\": 2}",
		"{\"\u00e4\": 1, \"\\u00e4\": 2}",
		`{"\ud83d\ude00": 1, "😀": 2}`,
		`{"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k17":17,"k18":18,"k3":0}`,
		`[{"a": 1, "a": 2}]`,
		`{"a": 1, "a": 2`,
		`{"a": 1} {"a": 2}`,
		`{"a": 1, "a": "\u0000"}`,
		`{"a": [1, 2, 3], "b": {"c": [{"d": {}}]}, "e": null, "f": 1e400}`,
		strings.Repeat(`{"a":`, 33) + "1" + strings.Repeat("}", 33),
		`]]{"a": 1, "a": 2}`,
		``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := decodeOf(body)
		dup, twice := firstDuplicate(body)
		object := json.Valid(body) && bytes.TrimLeft(body, " \t\r\n")[0] == '{'
		named, refused := duplicateOf(err)
		switch {
		case refused && (!twice || named != dup):
			t.Fatalf("%q: refused for the duplicate %q, the reference finds %q (%v)", body, named, dup, twice)
		case object && twice && !refused:
			if e, ok := errs.As(err); !ok || e.Code != "too_deep" {
				t.Fatalf("%q: the key %q is named twice, decodeBody answers %v", body, dup, err)
			}
		case err == nil:
			if twice {
				t.Fatalf("%q: taken with the key %q named twice", body, dup)
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			var want map[string]any
			if err := dec.Decode(&want); err != nil || !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: decoded %v, encoding/json %v (%v)", body, got, want, err)
			}
		}
	})
}

// TestDuplicateKeyPaths: the path a duplicate key is named by.
func TestDuplicateKeyPaths(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		body  string
		twice bool
		path  string
	}{
		{`{"scope": "read", "scope": "read write"}`, true, "scope"},
		{`{"a": {"x": 1, "y": {"z": 1, "z": 2}}}`, true, "a.y.z"},
		{`{"items": [{"p": 1}, {"d": 1, "d": 2}]}`, true, "items[1].d"},
		{`{"items": [[0, {"k": 0}], [1, 2, {"k": 0, "k": 0}]]}`, true, "items[1][2].k"},
		{`{"a": "}\"{", "b": "[,\\", "a": 1}`, true, "a"},
		{`{"n\u0061me": 1, "name": 2}`, true, "name"},
		{"{\"a\xff\": 1, \"a\xfe\": 2}", true, "a\ufffd"},
		{`{"": 1, "a": {"": 1}, "": 2}`, true, ""},
		{`{"a": {"x": 1}, "b": {"x": 1}, "c": [{"x": 1}, {"x": 1}]}`, false, ""},
		{`{"name": 1, "Name": 2}`, false, ""},
	} {
		_, err := decodeOf([]byte(c.body))
		if path, twice := duplicateOf(err); twice != c.twice || path != c.path {
			t.Errorf("%s: duplicate %q %v (%v), want %q %v", c.body, path, twice, err, c.path, c.twice)
		}
	}
}

// BenchmarkDecodeBody decodes an ordinary record body.
func BenchmarkDecodeBody(b *testing.B) {
	body := []byte(`{"day": "2026-03-02", "trackingType": "WORK", "project": 12, "task": 34, "duration": 3600, "sorting": 1,
		"note": "a note of some length to be realistic", "tags": [1, 2, 3], "meta": {"source": "app", "version": "1.2.3"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeOf(body); err != nil {
			b.Fatal(err)
		}
	}
}
