package query_test

import (
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"planwerk/internal/query"
)

// stdlib is what Go's RFC 3339 parser makes of s, in the stored form
// (milliseconds cut off), for the forms it reads: upper-case T and Z,
// no leap second.
func stdlib(s string) (string, bool) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return "", false
	}
	return t.UTC().Truncate(time.Millisecond).Format(query.TimestampLayout), true
}

// TestNormalTimestampOrder: date-times sent with any offset and any
// number of fractional digits are stored so that their text sorts in
// time order — a later instant never gets an earlier stored form — and
// agree with Go's own RFC 3339 parser.
func TestNormalTimestampOrder(t *testing.T) {
	t.Parallel()
	rng := mrand.New(mrand.NewPCG(3339, 1))
	base := time.Date(2026, 3, 29, 0, 0, 0, 0, time.UTC) // around a change to summer time
	type sent struct {
		at   time.Time
		text string
	}
	var all []sent
	for range 2000 {
		at := base.Add(time.Duration(rng.Int64N(int64(72 * time.Hour))))
		if rng.IntN(4) == 0 {
			at = at.Truncate(time.Second)
		}
		minutes := rng.IntN(2*(23*60+59)+1) - (23*60 + 59)
		local := at.In(time.FixedZone("", minutes*60))
		digits := rng.IntN(10)
		text := local.Format("2006-01-02T15:04:05")
		if digits > 0 {
			text += "." + fmt.Sprintf("%09d", local.Nanosecond())[:digits]
		}
		if minutes == 0 && rng.IntN(2) == 0 {
			text += "Z"
		} else {
			text += local.Format("-07:00")
		}
		if digits > 0 {
			// The instant sent is the one the digits name.
			at = at.Truncate(time.Second).Add(time.Duration(local.Nanosecond()) / pow10(9-digits) * pow10(9-digits))
		} else {
			at = at.Truncate(time.Second)
		}
		all = append(all, sent{at, text})
	}
	stored := make([]string, len(all))
	for i, s := range all {
		norm, err := query.NormalTimestamp(s.text)
		if err != nil {
			t.Fatalf("%s: %v", s.text, err)
		}
		if want, ok := stdlib(s.text); !ok || norm != want {
			t.Fatalf("%s stored as %s; Go's parser reads %s (%v)", s.text, norm, want, ok)
		}
		if want := s.at.UTC().Truncate(time.Millisecond).Format(query.TimestampLayout); norm != want {
			t.Fatalf("%s stored as %s, want %s", s.text, norm, want)
		}
		if again, err := query.NormalTimestamp(norm); err != nil || again != norm {
			t.Fatalf("%s: the stored form %s reads as %s, %v", s.text, norm, again, err)
		}
		stored[i] = norm
	}
	for i := range all {
		for j := range all {
			if all[i].at.Before(all[j].at) && stored[i] > stored[j] {
				t.Fatalf("%s is before %s, but stored %s > %s", all[i].text, all[j].text, stored[i], stored[j])
			}
		}
	}
}

func pow10(n int) time.Duration {
	d := time.Duration(1)
	for range n {
		d *= 10
	}
	return d
}

// FuzzNormalTimestamp: whatever is accepted is stored in the stored
// form, reads back as itself, and agrees with Go's RFC 3339 parser
// wherever that parser reads the text too.
func FuzzNormalTimestamp(f *testing.F) {
	for _, s := range []string{"2026-03-02T08:00:00Z", "2026-03-02T09:00:00.123456789+01:00", "2026-03-02t08:00:00z",
		"2016-12-31T23:59:60Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.9-00:00", "2026-03-02T08:00:00",
		"2026-02-29T08:00:00Z", "2026-03-02T08:00:00+24:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		norm, err := query.NormalTimestamp(s)
		if err != nil {
			return
		}
		if _, perr := time.Parse(query.TimestampLayout, norm); perr != nil || len(norm) != len(query.TimestampLayout) {
			t.Fatalf("%q stored as %q", s, norm)
		}
		if again, err := query.NormalTimestamp(norm); err != nil || again != norm {
			t.Fatalf("%q: the stored form %q reads as %q, %v", s, norm, again, err)
		}
		// Go's parser also reads a few forms RFC 3339 does not have
		// (more than 9 fractional digits); compare only where both read.
		if want, ok := stdlib(s); ok && !strings.Contains(s, ":60") && norm != want {
			t.Fatalf("%q stored as %q; Go's parser reads %q", s, norm, want)
		}
	})
}
