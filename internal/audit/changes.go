package audit

import (
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"planwerk/internal/errs"
)

// Changed lists the top-level attributes whose values differ between the
// record before and after a write, sorted byte-wise: every attribute of
// the one that exists on a create (before nil) or a delete (after nil).
// Both are decoded JSON. extra names attributes that changed but are
// shown in neither (a password).
func Changed(before, after map[string]any, extra ...string) []string {
	out := slices.Clone(extra)
	for name, v := range after {
		if w, ok := before[name]; !ok || !reflect.DeepEqual(v, w) {
			out = append(out, name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MaxReason is the most characters a Change-Reason may have.
const MaxReason = 500

// ParseReason reads a Change-Reason header: percent-decoded (a "%" that
// starts no %XX sequence stays as it is), then valid UTF-8 of 1 to
// MaxReason characters, without NUL. An empty header is no reason (ok false).
func ParseReason(header string) (reason string, ok bool, err error) {
	if header == "" {
		return "", false, nil
	}
	r := percentDecode(header)
	switch n := utf8.RuneCountInString(r); {
	case !utf8.ValidString(r):
		return "", false, errs.New(errs.Invalid, "invalid_reason", "Change-Reason: not valid UTF-8 once percent-decoded")
	case strings.IndexByte(r, 0) >= 0:
		// No engine keeps it alike: PostgreSQL's text cannot hold it.
		return "", false, errs.New(errs.Invalid, "invalid_reason", "Change-Reason: holds NUL (%00) once percent-decoded")
	case n > MaxReason:
		return "", false, errs.New(errs.Invalid, "invalid_reason", "Change-Reason: more than 500 characters")
	}
	return r, true, nil
}

// percentDecode replaces each %XX sequence by its byte; any other "%"
// stays.
func percentDecode(s string) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}
