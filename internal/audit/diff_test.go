package audit_test

import (
	"encoding/json"
	"slices"
	"testing"

	"planwerk/internal/audit"
)

// slowDiff is Diff by the long way: each document decoded, written
// canonical by an independent RFC 8785 implementation, and compared as
// decoded values.
func slowDiff(t *testing.T, before, after []byte, extra ...string) (b, a []byte, changed []string, ok bool) {
	t.Helper()
	decode := func(doc []byte) ([]byte, map[string]any, bool) {
		if len(doc) == 0 {
			return nil, nil, true
		}
		var m map[string]any
		if json.Unmarshal(doc, &m) != nil {
			return nil, nil, false
		}
		if m == nil {
			return nil, nil, true
		}
		c, err := audit.CanonicalDoc(doc)
		return c, m, err == nil
	}
	b, mb, okB := decode(before)
	a, ma, okA := decode(after)
	if !okB || !okA {
		return nil, nil, nil, false
	}
	return b, a, audit.Changed(mb, ma, extra...), true
}

// TestDiff: a document that is canonical already is kept as it is (the
// same bytes, not a copy) and compared member by member as text; any
// other is written canonical; either way the result is the long way's.
func TestDiff(t *testing.T) {
	t.Parallel()
	marshal := func(v map[string]any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	record := map[string]any{"id": 17, "name": "Übersicht", "hours": 7.5, "tags": []any{"a", 1e21}, "note": nil, "done": false,
		"nested": map[string]any{"b": 1, "a": []any{}}, "ctl": "a\u0001\n"}
	changed := map[string]any{"id": 17, "name": "Übersicht", "hours": 8, "tags": []any{"a", 1e21}, "done": false,
		"nested": map[string]any{"b": 1.0, "a": []any{}}, "ctl": "a\u0001\n", "added": "x"}
	cases := []struct {
		name          string
		before, after []byte
		extra         []string
		kept          bool // after is kept as it is
		want          []string
	}{
		{"create", nil, marshal(record), nil, true, []string{"ctl", "done", "hours", "id", "name", "nested", "note", "tags"}},
		{"update", marshal(record), marshal(changed), nil, true, []string{"added", "hours", "note"}},
		{"delete", marshal(record), []byte("null"), nil, false, []string{"ctl", "done", "hours", "id", "name", "nested", "note", "tags"}},
		{"password", marshal(changed), marshal(changed), []string{"password"}, true, []string{"password"}},
		{"escaped by encoding/json", nil, marshal(map[string]any{"a": "<&>"}), nil, false, []string{"a"}},
		{"not sorted", nil, []byte(`{"b":1,"a":2}`), nil, false, []string{"a", "b"}},
		{"white space", []byte(`{"a":1}`), []byte(`{"a": 1}`), nil, false, []string{}},
		{"number not canonical", []byte(`{"a":1}`), []byte(`{"a":1.0}`), nil, false, []string{}},
		{"name escaped", nil, []byte(`{"\u0061":1}`), nil, false, []string{"a"}},
		{"UTF-16 order", nil, []byte(`{"\ud83d\ude00":1,"\uffff":2}`), nil, false, []string{"\uffff", "😀"}},
		{"UTF-16 order, canonical", nil, []byte(`{"😀":1,"` + "\uffff" + `":2}`), nil, true, []string{"\uffff", "😀"}},
	}
	for _, c := range cases {
		b, a, got, err := audit.Diff(c.before, c.after, c.extra...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: changed %q, want %q", c.name, got, c.want)
		}
		if kept := len(a) > 0 && &a[0] == &c.after[0]; kept != c.kept {
			t.Errorf("%s: after kept as it is: %v, want %v", c.name, kept, c.kept)
		}
		wb, wa, wc, _ := slowDiff(t, c.before, c.after, c.extra...)
		if string(b) != string(wb) || string(a) != string(wa) || !slices.Equal(got, wc) {
			t.Errorf("%s: got %s %s %q, the long way %s %s %q", c.name, b, a, got, wb, wa, wc)
		}
	}
	for _, bad := range []string{`[1]`, `{"a":}`, `{"a":1e400}`, `"x"`} {
		if _, _, _, err := audit.Diff(nil, []byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzDiff: whatever the documents, Diff's result is the long way's.
func FuzzDiff(f *testing.F) {
	for _, s := range [][2]string{
		{``, `{"a":1,"b":[1.5,"x",null,true,{"e":-0}]}`},
		{`{"a":1}`, `{"a":1.0,"c":"\u003c"}`},
		{`{"id":17,"n":"\u0001\b"}`, `{"id":17,"n":"\u0001\u0008"}`},
		{`{"x":1e21,"y":1e-7,"z":0.000001}`, `{"x":1e+21,"y":1e-7,"z":0.000001}`},
		{`null`, `{"😀":1,"` + "\uffff" + `":2}`},
		{`{"a":012}`, `{"a":-0}`},
		{`{"a":123456789012345,"b":1234567890123456789}`, `{"a":{"b":{"c":[[[]]]}}}`},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, before, after string) {
		wb, wa, wc, ok := slowDiff(t, []byte(before), []byte(after))
		b, a, got, err := audit.Diff([]byte(before), []byte(after))
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("%q %q: %v", before, after, err)
		}
		if string(b) != string(wb) || string(a) != string(wa) || !slices.Equal(got, wc) {
			t.Errorf("%q %q: got %s %s %q, the long way %s %s %q", before, after, b, a, got, wb, wa, wc)
		}
	})
}
