package records

import (
	"testing"
	"time"
)

// TestDocAccessors: the accessors read each attribute type in every form
// a document holds it (decoded from storage, or as Apply converted it),
// and tell a null attribute from one not named at all.
func TestDocAccessors(t *testing.T) {
	t.Parallel()
	stored, err := Decode([]byte(`{"project": 7, "duration": -30, "day": "2026-03-02", "billable": true,
		"startTime": "2026-03-02T08:00:00.000Z", "endTime": "soon", "category": null}`))
	if err != nil {
		t.Fatal(err)
	}
	applied := Doc{"project": int64(7), "duration": float64(-30), "status": float64(1.5)}
	for name, d := range map[string]Doc{"stored": stored, "applied": applied} {
		if id, ok := d.Ref("project"); !ok || id != 7 {
			t.Errorf("%s Ref(project) = %d, %v; want 7", name, id, ok)
		}
		if n, ok := d.Int("duration"); !ok || n != -30 {
			t.Errorf("%s Int(duration) = %d, %v; want -30", name, n, ok)
		}
	}
	if _, ok := applied.Int("status"); ok {
		t.Error("Int reads 1.5 as a whole number")
	}
	if _, ok := stored.String("project"); ok {
		t.Error("String reads a number")
	}
	if day, ok := stored.String("day"); !ok || day != "2026-03-02" {
		t.Errorf("String(day) = %q, %v", day, ok)
	}
	if !stored.Bool("billable") || stored.Bool("project") || stored.Bool("missing") {
		t.Error("Bool is true for anything but true")
	}
	start, ok := stored.Time("startTime")
	if want := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC); !ok || !start.Equal(want) {
		t.Errorf("Time(startTime) = %v, %v; want %v", start, ok, want)
	}
	if _, ok := stored.Time("endTime"); ok {
		t.Error("Time reads text that is no timestamp")
	}
	if stored.Has("category") || !stored.Names("category") || stored.Names("missing") {
		t.Error("Has or Names mistake a null for a value or a missing attribute")
	}
	var none DocView // a create's Old, a delete's New
	if none.Has("project") || none.Names("project") {
		t.Error("the empty view has an attribute")
	}
}
