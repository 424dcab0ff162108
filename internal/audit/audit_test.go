package audit_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"planwerk/internal/audit"
	"planwerk/internal/errs"
	"planwerk/internal/testenv/canonical"
)

func ptr[T any](v T) *T { return &v }

// chain makes n linked entries of one tenant.
func chain(t *testing.T, n int) []audit.Entry {
	t.Helper()
	out := make([]audit.Entry, n)
	prev := audit.ZeroHash
	for i := range out {
		e := audit.Entry{Seq: int64(i + 1), At: fmt.Sprintf("2026-11-27T10:00:%02dZ", i%60),
			Actor: audit.Actor{User: ptr(int64(7)), Via: audit.ViaAPI}, RequestID: ptr(fmt.Sprintf("req-%d", i)),
			Resource: "time-entries", Record: ptr(int64(17)), Op: audit.OpUpdate, Changed: []string{"duration", "startTime"},
			Before: json.RawMessage(`{"id":17,"duration":3600,"note":"<a & b>"}`),
			After:  json.RawMessage(`{"id":17,"duration":7200,"note":"Übersicht \"x\"\n"}`)}
		if i%3 == 0 {
			e.Reason = ptr("late correction, agreed with HR")
		}
		if err := audit.Link(prev, &e); err != nil {
			t.Fatal(err)
		}
		out[i], prev = e, e.Hash
	}
	return out
}

// TestCanonicalRFC8785: the canonical JSON of RFC 8785's own example.
func TestCanonicalRFC8785(t *testing.T) {
	t.Parallel()
	e := audit.Entry{Seq: 1, Before: json.RawMessage(`{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
		"string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/", "literals": [null, true, false]}`)}
	c, err := audit.Canonical(e)
	if err != nil {
		t.Fatal(err)
	}
	want := `"before":{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`
	if !strings.Contains(string(c), want) {
		t.Errorf("canonical JSON:\n got %s\nwant it to hold %s", c, want)
	}
}

// TestHashRecomputed: every hash of a chain, recomputed with a
// canonicaliser that is not the package's (keys sorted by UTF-16 code
// units, strings escaped as RFC 8785 says), is the one the entry carries.
func TestHashRecomputed(t *testing.T) {
	t.Parallel()
	for _, e := range chain(t, 12) {
		var doc map[string]any
		raw, _ := json.Marshal(e)
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if err := dec.Decode(&doc); err != nil {
			t.Fatal(err)
		}
		got, err := canonical.AuditHash(doc)
		if err != nil {
			t.Fatal(err)
		}
		if got != e.Hash {
			t.Errorf("seq %d: recomputed %s, entry says %s", e.Seq, got, e.Hash)
		}
	}
}

// TestVerify: an intact chain verifies; an entry changed, removed or
// inserted breaks it at that entry; a chain whose oldest entries were
// purged verifies from the start the purge kept, and from nowhere else;
// heads kept before must still be reached.
func TestVerify(t *testing.T) {
	t.Parallel()
	intact := chain(t, 10)
	verify := func(start audit.Head, entries []audit.Entry, expect ...audit.Head) (int64, error) {
		v := audit.NewVerifier(start)
		v.Expect(expect...)
		_, err := audit.Walk(context.Background(), v, pages(entries), 3)
		return v.Count(), err
	}
	inserted := slices.Clone(intact)
	forged := audit.Entry{Seq: 5, At: "2026-11-27T11:00:00Z", Actor: audit.Actor{Via: audit.ViaCLI}, Resource: "settings", Op: audit.OpUpdate}
	_ = audit.Link(intact[3].Hash, &forged)
	inserted = slices.Insert(inserted, 4, forged)
	purged := audit.Head{Seq: 3, Hash: intact[2].Hash}
	rehashed := func() []audit.Entry {
		c := slices.Clone(intact)
		c[6].Actor = audit.Actor{User: ptr(int64(1)), Via: audit.ViaAPI}
		for i := 6; i < len(c); i++ {
			_ = audit.Link(c[i-1].Hash, &c[i])
		}
		return c
	}()
	head := audit.Head{Seq: 10, Hash: intact[9].Hash}
	cases := []struct {
		name    string
		start   audit.Head
		entries []audit.Entry
		expect  []audit.Head
		brokeAt int64 // 0: verifies
	}{
		{"intact", audit.Origin, intact, nil, 0},
		{"empty", audit.Origin, nil, nil, 0},
		{"purged before seq 4", purged, intact[3:], nil, 0},
		{"everything but the newest purged", audit.Head{Seq: 9, Hash: intact[8].Hash}, intact[9:], nil, 0},
		{"oldest removed without a purge", audit.Origin, intact[1:], nil, 1},
		{"oldest three removed without a purge", audit.Origin, intact[3:], nil, 1},
		{"removed beyond the purge", purged, intact[4:], nil, 4},
		{"purge's hash is not the entry before", audit.Head{Seq: 3, Hash: intact[1].Hash}, intact[3:], nil, 4},
		{"an entry left below the purge", purged, intact[2:], nil, 4},
		{"after changed", audit.Origin, func() []audit.Entry {
			c := slices.Clone(intact)
			c[6].After = json.RawMessage(`{"id":17,"duration":60}`)
			return c
		}(), nil, 7},
		{"actor changed and rehashed", audit.Origin, func() []audit.Entry {
			c := slices.Clone(intact)
			c[6].Actor = audit.Actor{User: ptr(int64(1)), Via: audit.ViaAPI}
			_ = audit.Link(c[5].Hash, &c[6])
			return c
		}(), nil, 8},
		{"removed", audit.Origin, slices.Delete(slices.Clone(intact), 2, 3), nil, 3},
		{"last removed and the rest renumbered", audit.Origin, func() []audit.Entry {
			c := slices.Delete(slices.Clone(intact), 2, 3)
			for i := 2; i < len(c); i++ {
				c[i].Seq--
			}
			return c
		}(), nil, 3},
		{"inserted", audit.Origin, inserted, nil, 6},
		{"first does not follow zero", audit.Origin, func() []audit.Entry {
			c := slices.Clone(intact)
			c[0].PrevHash = strings.Repeat("1", 64)
			return c
		}(), nil, 1},
		{"the head kept is reached", audit.Origin, intact, []audit.Head{{Seq: 4, Hash: intact[3].Hash}, head}, 0},
		{"newest removed, head kept", audit.Origin, intact[:8], []audit.Head{head}, 9},
		{"newest removed, no head kept", audit.Origin, intact[:8], nil, 0},
		{"rewritten and rehashed, head kept", audit.Origin, rehashed, []audit.Head{head}, 10},
		{"rewritten and rehashed, no head kept", audit.Origin, rehashed, nil, 0},
		{"the head kept was purged", purged, intact[3:], []audit.Head{{Seq: 2, Hash: strings.Repeat("9", 64)}}, 0},
		{"the purge's own head differs from the head kept", purged, intact[3:], []audit.Head{{Seq: 3, Hash: intact[1].Hash}}, 3},
	}
	for _, c := range cases {
		n, err := verify(c.start, c.entries, c.expect...)
		var broken *audit.Broken
		switch {
		case c.brokeAt == 0 && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.brokeAt == 0 && n != int64(len(c.entries)):
			t.Errorf("%s: %d verified of %d", c.name, n, len(c.entries))
		case c.brokeAt != 0 && !errors.As(err, &broken):
			t.Errorf("%s: verified (%v), want broken at seq %d", c.name, err, c.brokeAt)
		case c.brokeAt != 0 && broken.Seq != c.brokeAt:
			t.Errorf("%s: broken at seq %d (%s), want %d", c.name, broken.Seq, broken.Reason, c.brokeAt)
		}
	}
}

// pages reads entries as a store's pages would: those after a seq, at
// most limit.
func pages(entries []audit.Entry) audit.Pages {
	return func(_ context.Context, after int64, limit int, fn func(audit.Entry) error) error {
		n := 0
		for _, e := range entries {
			if e.Seq <= after || n == limit {
				continue
			}
			n++
			if err := fn(e); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestChanged: the top-level attributes that differ, sorted byte-wise;
// all of them on create and delete; extra names (a password) joined.
func TestChanged(t *testing.T) {
	t.Parallel()
	before := map[string]any{"id": 1.0, "name": "a", "tags": []any{1.0, 2.0}, "gone": true}
	after := map[string]any{"id": 1.0, "name": "b", "tags": []any{1.0, 2.0}, "Zeta": nil}
	cases := []struct {
		name          string
		before, after map[string]any
		extra         []string
		want          []string
	}{
		{"update", before, after, nil, []string{"Zeta", "gone", "name"}},
		{"create", nil, after, nil, []string{"Zeta", "id", "name", "tags"}},
		{"delete", before, nil, nil, []string{"gone", "id", "name", "tags"}},
		{"password only", before, before, []string{"password"}, []string{"password"}},
		{"nothing", after, after, nil, []string{}},
	}
	for _, c := range cases {
		if got := audit.Changed(c.before, c.after, c.extra...); !slices.Equal(got, c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestParseReason: percent-decoded, a stray "%" kept, 1–500 characters
// of UTF-8; empty is none; anything else → invalid_reason.
func TestParseReason(t *testing.T) {
	t.Parallel()
	cases := []struct {
		header, want string
		ok, bad      bool
	}{
		{"", "", false, false},
		{"late correction", "late correction", true, false},
		{"%C3%9Cberstunden%20korrigiert", "Überstunden korrigiert", true, false},
		{"100% sure", "100% sure", true, false},
		{"50%", "50%", true, false},
		{"%4", "%4", true, false},
		{"%zz", "%zz", true, false},
		{"%41%62c", "Abc", true, false},
		{strings.Repeat("ü", 500), strings.Repeat("ü", 500), true, false},
		{strings.Repeat("%C3%BC", 500), strings.Repeat("ü", 500), true, false},
		{strings.Repeat("a", 501), "", false, true},
		{"%FF", "", false, true},
		{"%C3", "", false, true},
		{"\xff", "", false, true},
		{"%00", "", false, true},
		{"Grund%00", "", false, true},
		{"%2500", "%00", true, false},
	}
	for _, c := range cases {
		got, ok, err := audit.ParseReason(c.header)
		var e *errs.Error
		switch {
		case c.bad && (!errors.As(err, &e) || e.Code != "invalid_reason"):
			t.Errorf("%q: %v, want invalid_reason", c.header, err)
		case !c.bad && (err != nil || ok != c.ok || got != c.want):
			t.Errorf("%q: %q %v %v, want %q %v", c.header, got, ok, err, c.want, c.ok)
		}
	}
}

// FuzzParseReason: a reason taken is valid UTF-8 of 1–500 characters
// without NUL; a header without "%" that is taken is the reason as it is.
func FuzzParseReason(f *testing.F) {
	for _, s := range []string{"", "x", "%", "%%41", "%C3%9C", "%e2%82%ac", strings.Repeat("%41", 501), "\x00",
		"a%00b", "%00", "\xff", "%ff", "%C3", "ok%C3%28"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r, ok, err := audit.ParseReason(header)
		if err != nil {
			return
		}
		if !ok {
			if header != "" {
				t.Fatalf("%q: neither a reason nor an error", header)
			}
			return
		}
		if n := utf8.RuneCountInString(r); !utf8.ValidString(r) || strings.IndexByte(r, 0) >= 0 || n < 1 || n > audit.MaxReason {
			t.Fatalf("%q: taken as %q", header, r)
		}
		if !strings.Contains(header, "%") && r != header {
			t.Fatalf("%q: changed to %q", header, r)
		}
	})
}

// TestPieces: the canonical JSON put together from an entry's pieces,
// its prevHash and seq is the canonical JSON of the whole entry, and its
// seal is its hash, for entries with every kind of member.
func TestPieces(t *testing.T) {
	t.Parallel()
	reasons := []*string{nil, ptr(""), ptr("a \"quoted\" reason\\ with\ttabs\nand\u0001\u001f control, <html> & ünïcödé 𝄞 \u2028")}
	for i, e := range chain(t, 6) {
		e.Reason = reasons[i%len(reasons)]
		if i%2 == 1 {
			e.Record, e.Actor = nil, audit.Actor{Via: audit.ViaCLI}
			e.Before = nil
		}
		if i == 4 {
			e.Actor.APIClient = ptr(int64(1) << 52)
			e.After = nil
		}
		var err error
		if e.Before, err = audit.CanonicalDoc(e.Before); err != nil {
			t.Fatal(err)
		}
		if e.After, err = audit.CanonicalDoc(e.After); err != nil {
			t.Fatal(err)
		}
		want, err := audit.Canonical(e)
		if err != nil {
			t.Fatal(err)
		}
		p := audit.PiecesOf(e)
		got := p.Head + e.PrevHash + p.Mid + fmt.Sprint(e.Seq) + "}"
		if got != string(want) {
			t.Errorf("entry %d from pieces:\n got %s\nwant %s", i, got, want)
		}
		h, err := audit.HashOf(e)
		if err != nil {
			t.Fatal(err)
		}
		if s := p.Seal(e.PrevHash, e.Seq); s != h {
			t.Errorf("entry %d: seal %s, hash %s", i, s, h)
		}
		if s := audit.Seal(e, e.PrevHash, e.Seq); s != h {
			t.Errorf("entry %d: Seal %s, hash %s", i, s, h)
		}
	}
}

// FuzzAppendString: a string written as canonical JSON is what RFC 8785
// makes of it.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", "\"\\/\b\f\n\r\t\u0000\u001f\u007f", "<&>\u2028\u2029", "€𝄞", "\xff\xfe broken"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := audit.CanonicalDoc(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := audit.AppendString(nil, s); string(got) != string(want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	})
}

// FuzzAppendCanonical: a document written canonical from its decoded
// value is what RFC 8785 makes of its text.
func FuzzAppendCanonical(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5,"x",null,true,{"é":1e21,"e":-0,"\ud83d\ude00":2,"\uffff":3}]}`, `"<&>\u2028"`, `[333333333.33333329,1E30,4.50,2e-3,1e-27]`,
		`{"id":17,"note":"Übersicht \"x\"\n\t\u0001","nested":{"z":{},"a":[]}}`, `0`, `-12345678901234567890`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		var v any
		if json.Unmarshal([]byte(doc), &v) != nil {
			return
		}
		want, err := audit.CanonicalDoc([]byte(doc))
		if err != nil {
			return
		}
		got, err := audit.AppendCanonical(nil, v)
		if err != nil {
			t.Fatal(err)
		}
		if doc == "null" {
			want = []byte("null")
		}
		if string(got) != string(want) {
			t.Errorf("%s: got %s, want %s", doc, got, want)
		}
	})
}
