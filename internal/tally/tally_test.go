package tally

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// TestSplit: a range of days is cut into the whole months it covers and
// the days before and after them, which together are every day of the
// range once.
func TestSplit(t *testing.T) {
	cases := []struct {
		from, to string
		want     string
	}{
		{"2026-01-01", "2026-01-31", "[] 2026-01..2026-01"},
		{"2026-01-01", "2026-12-31", "[] 2026-01..2026-12"},
		{"2026-01-02", "2026-01-31", "[[2026-01-02 2026-01-31]] .."},
		{"2026-01-01", "2026-01-30", "[[2026-01-01 2026-01-30]] .."},
		{"2026-01-15", "2026-01-15", "[[2026-01-15 2026-01-15]] .."},
		{"2026-01-20", "2026-02-28", "[[2026-01-20 2026-01-31]] 2026-02..2026-02"},
		{"2026-01-20", "2026-03-05", "[[2026-01-20 2026-01-31] [2026-03-01 2026-03-05]] 2026-02..2026-02"},
		{"2026-01-20", "2026-02-05", "[[2026-01-20 2026-02-05]] .."},
		{"2024-02-01", "2024-02-29", "[] 2024-02..2024-02"},
		{"2024-02-01", "2024-02-28", "[[2024-02-01 2024-02-28]] .."},
		{"2025-12-31", "2027-01-01", "[[2025-12-31 2025-12-31] [2027-01-01 2027-01-01]] 2026-01..2026-12"},
	}
	for _, c := range cases {
		sp := split(c.from, c.to)
		if got := fmt.Sprintf("%v %s..%s", sp.days, sp.firstMonth, sp.lastMonth); got != c.want {
			t.Errorf("split(%s, %s) = %s, want %s", c.from, c.to, got, c.want)
		}
		// Every day once.
		f, _ := time.Parse(time.DateOnly, c.from)
		to, _ := time.Parse(time.DateOnly, c.to)
		for d := f; !d.After(to); d = d.AddDate(0, 0, 1) {
			day, n := d.Format(time.DateOnly), 0
			for _, r := range sp.days {
				if day >= r[0] && day <= r[1] {
					n++
				}
			}
			if m := day[:7]; sp.firstMonth != "" && m >= sp.firstMonth && m <= sp.lastMonth {
				n++
			}
			if n != 1 {
				t.Errorf("split(%s, %s): %s is in %d parts", c.from, c.to, day, n)
			}
		}
	}
}

// TestOf: what a stored document counts toward.
func TestOf(t *testing.T) {
	cases := []struct {
		doc  string
		want string // "-": nothing
	}{
		{`{"trackingType":"WORK","user":3,"project":5,"day":"2026-01-05","duration":3600}`, "{WORK 3 5 2026-01-05 3600}"},
		{`{"trackingType":"BREAK","user":3,"day":"2026-01-05","duration":900}`, "{BREAK 3 0 2026-01-05 900}"},
		{`{"trackingType":"WORK","user":3,"project":5,"day":"2026-01-05","startTime":"2026-01-05T09:00:00.000Z","endTime":"2026-01-05T10:30:00.500Z","duration":5}`, "{WORK 3 5 2026-01-05 5400}"},
		{`{"trackingType":"WORK","user":3,"project":5,"day":"2026-01-05","startTime":"2026-01-05T09:00:00.000Z","duration":5}`, "{WORK 3 5 2026-01-05 0}"},
		{`{"trackingType":"WORKTIME","user":3,"day":"2026-01-05"}`, "{WORKTIME 3 0 2026-01-05 0}"},
		{`{"trackingType":"OTHER","user":3,"day":"2026-01-05","duration":1}`, "-"},
		{`{"user":3,"day":"2026-01-05","duration":1}`, "-"},
		{`{"trackingType":"WORK","user":3,"duration":1}`, "-"},
		{`{"trackingType":"WORK","user":3,"day":"2026-1-5","duration":1}`, "-"},
	}
	for _, c := range cases {
		var doc map[string]any
		if err := json.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		got := "-"
		if e, ok := Of(doc); ok {
			got = fmt.Sprint(e)
		}
		if got != c.want {
			t.Errorf("Of(%s) = %s, want %s", c.doc, got, c.want)
		}
	}
}
