package httpapi

import (
	"net/url"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCheckQuery: checkQuery passes a query exactly when it decodes and
// every name and value is UTF-8 text without NUL, whether or not the
// query has escapes (its shortcut for one without must agree). The seeds
// run as an ordinary test.
func FuzzCheckQuery(f *testing.F) {
	for _, seed := range []string{"", "a=b", "a=%ff", "%ff=1", "a=%00", "a=b%00c&d=e", "a=%c3%a4", "a=%c3", "a=%zz",
		"where=%7B%22a%22%3A1%7D", "a=\xff", "a=b+c", "a;b=c"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		err := checkQuery(raw)
		q, perr := url.ParseQuery(raw)
		want := perr == nil
		for name, values := range q {
			want = want && utf8.ValidString(name) && !strings.Contains(name, "\x00")
			for _, v := range values {
				want = want && utf8.ValidString(v) && !strings.Contains(v, "\x00")
			}
		}
		if raw == "" {
			want = true
		}
		if (err == nil) != want {
			t.Fatalf("checkQuery(%q) = %v, want passing %v (parse error %v)", raw, err, want, perr)
		}
	})
}
