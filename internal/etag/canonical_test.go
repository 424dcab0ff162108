package etag

import (
	"bytes"
	"encoding/json"
	"testing"
)

// canonicalSeeds are documents of every shape canonical takes apart:
// the seed corpus of FuzzCanonical, run by plain go test.
var canonicalSeeds = []string{
	`{"id":7,"day":"2026-01-02","project":12,"validationStatus":"APPROVED","createdAt":"2026-01-01T00:00:00.000Z"}`,
	`{"id": 7, "day": "2026-01-02", "nested": {"z": 1.5, "a": [1e21, null, true, false]}}`,
	`{"b":1,"a":2,"b":3}`,
	`{"note":"<b>&amp;</b> ü \u2028 \u00fc \ud83d\ude00 \"quoted\" \\ back\/slash"}`,
	`{"\u0061":1,"a":2}`,
	`{"x":"caf\u00e9","y":"café"}`,
	"{\"raw\":\"line\u2028sep\u2029para\"}",
	"{\"bad\":\"\xff\xfe\"}",
	`{"ctl":"a\tb\nc\u0001"}`,
	`[0, -0, 1, -1, 123456789012345, 1234567890123456, 12345678901234567890123, 0.1, 1.0, 1e-7, 1E+2, -2.5e-300, 1e400]`,
	`[01]`, `[1.]`, `[-]`, `[1,]`, `{"a":1,}`, `{,}`, `[truex]`, `nul`, `"str"`, `  42  `, `[] x`,
	`{}`, `[]`, `[[[[[]]]]]`, `{"a":{"b":{"c":{}}}}`, ``, `"unterminated`, `{"a" 1}`, `{"a":1 "b":2}`,
}

// FuzzCanonical: the canonical form is exactly what encoding/json makes
// of a document decoded and encoded again, and canonical refuses only
// what that way refuses too (or a nesting it need not follow).
func FuzzCanonical(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, ok := canonical(doc)
		want, wantOK := decodeAgain(doc)
		if ok && (!wantOK || !bytes.Equal(got, want)) {
			t.Fatalf("canonical(%q) = %q, encoding/json: %q (ok %v)", doc, got, want, wantOK)
		}
		if !ok && wantOK && json.Valid(doc) && len(doc) < 1<<16 {
			t.Fatalf("canonical(%q) refused a document encoding/json takes: %q", doc, want)
		}
	})
}

// TestOfSameAsBefore: tags handed out before canonical existed stay
// valid: Of still hashes what decoding and encoding again gives.
func TestOfSameAsBefore(t *testing.T) {
	t.Parallel()
	for _, s := range canonicalSeeds {
		want, ok := decodeAgain([]byte(s))
		if !ok {
			want = []byte(s)
		}
		if got, wantTag := Of([]byte(s)), ofBytes(want); got != wantTag {
			t.Errorf("Of(%q) = %s, want %s", s, got, wantTag)
		}
	}
}

func BenchmarkOf(b *testing.B) {
	doc := []byte(canonicalSeeds[0])
	b.Run("canonical", func(b *testing.B) {
		for b.Loop() {
			Of(doc)
		}
	})
	b.Run("decode and encode", func(b *testing.B) {
		for b.Loop() {
			form, _ := decodeAgain(doc)
			ofBytes(form)
		}
	})
}
