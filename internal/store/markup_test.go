package store

import (
	"encoding/json"
	"reflect"
	"testing"
)

// FuzzMarkupUnescaped: the document means what it meant, and no escape
// of markup is left in its strings; without one it is as it was. The
// seeds run as an ordinary test.
func FuzzMarkupUnescaped(f *testing.F) {
	for _, seed := range []string{
		`{"a":"\u003cb\u003e \u0026 \u003C"}`, `{"a":"\\u003c"}`, `{"a":"\\\u003c"}`, `{"\u0026":1}`,
		`{"a":"\u00e4\u003c\n"}`, `{"a":"plain"}`, `["\u003e",{"x":"\u0026amp;"}]`, `{"a":"\"\u003c\""}`, `"\u003c`, `{}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		var before any
		if json.Unmarshal(doc, &before) != nil {
			return
		}
		out, changed := markupUnescaped(doc)
		var after any
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("%s became %s, which is no JSON: %v", doc, out, err)
		}
		if !reflect.DeepEqual(before, after) {
			t.Fatalf("%s became %s, which means another value", doc, out)
		}
		if again, more := markupUnescaped(out); more {
			t.Fatalf("%s became %s, which still has escapes of markup (%s)", doc, out, again)
		}
		if !changed && string(out) != string(doc) {
			t.Fatalf("%s became %s unchanged", doc, out)
		}
	})
}
