package canonical

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"
)

// Canonical writes v as RFC 8785 (JCS) canonical JSON, for tests that
// check the service's hashes with a canonicaliser of their own rather
// than the service's. v is JSON decoded with UseNumber: nil, bool,
// json.Number, string, []any and map[string]any. Members are sorted by
// the UTF-16 code units of their names; strings escape only what RFC
// 8785 escapes; numbers are written as ECMAScript writes a double.
func Canonical(v any) ([]byte, error) {
	var b strings.Builder
	if err := canonical(&b, v); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func canonical(b *strings.Builder, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case json.Number:
		f, err := strconv.ParseFloat(v.String(), 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("canonical JSON: number %s: not a double", v)
		}
		b.WriteString(ecmaNumber(f))
	case string:
		canonicalString(b, v)
	case []any:
		b.WriteByte('[')
		for i, x := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonical(b, x); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(x, y string) int {
			return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
		})
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			canonicalString(b, k)
			b.WriteByte(':')
			if err := canonical(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("canonical JSON: %T is not a decoded JSON value (decode with UseNumber)", v)
	}
	return nil
}

// canonicalString escapes '"', '\\' and the control characters (the
// five with a short form by it, the others as \u00xx); every other
// character is written as it is.
func canonicalString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// ecmaNumber is ECMAScript's Number::toString of f: the shortest digits
// that read back as f, in plain notation from 1e-6 up to 1e21, else as
// d.ddde±x; zero (also -0) is "0".
func ecmaNumber(f float64) string {
	if f == 0 {
		return "0"
	}
	if a := math.Abs(f); a >= 1e-6 && a < 1e21 {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(f, 'e', -1, 64), "e")
	return mantissa + "e" + exp[:1] + strings.TrimLeft(exp[1:], "0")
}

// AuditHash recomputes an audit entry's hash, with Canonical: the hex
// SHA-256 of its prevHash followed by its canonical JSON without its
// hash. e is the entry as JSON decoded with UseNumber.
func AuditHash(e map[string]any) (string, error) {
	body := make(map[string]any, len(e))
	for k, v := range e {
		if k != "hash" {
			body[k] = v
		}
	}
	c, err := Canonical(body)
	if err != nil {
		return "", err
	}
	prev, _ := e["prevHash"].(string)
	sum := sha256.Sum256(append([]byte(prev), c...))
	return hex.EncodeToString(sum[:]), nil
}

// CheckAuditChain checks a tenant's whole audit log as the API gave it,
// without the service's code: seq 1, 2, 3… without gaps, each prevHash
// the hash of the entry before (64 zeros for the first), and each hash
// recomputed (AuditHash). It returns the entries decoded.
func CheckAuditChain(t testing.TB, entries []json.RawMessage) []map[string]any {
	t.Helper()
	prev := strings.Repeat("0", 64)
	out := make([]map[string]any, 0, len(entries))
	for i, raw := range entries {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var e map[string]any
		if err := d.Decode(&e); err != nil {
			t.Fatalf("entry %s: %v", raw, err)
		}
		if seq, _ := e["seq"].(json.Number); seq.String() != strconv.Itoa(i+1) {
			t.Fatalf("entry %d has seq %v", i+1, e["seq"])
		}
		if e["prevHash"] != prev {
			t.Fatalf("entry %d: prevHash %v, want the hash before it %s", i+1, e["prevHash"], prev)
		}
		hash, _ := e["hash"].(string)
		got, err := AuditHash(e)
		if err != nil {
			t.Fatal(err)
		}
		if got != hash {
			t.Fatalf("entry %d: hash %s, recomputed %s from %s", i+1, hash, got, raw)
		}
		prev = hash
		out = append(out, e)
	}
	return out
}
