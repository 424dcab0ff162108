package timetrack_test

import (
	"net/http"
	"slices"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// TestEntryDateTimes: startTime and endTime may be sent as any RFC 3339
// date-time; they come back in UTC with milliseconds (further digits cut
// off), a where range given in another offset finds them by instant, the
// end must be after the start as instants, and the time an entry counts
// is measured between the instants.
func TestEntryDateTimes(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		o.settings(t, "START_TIME_END_TIME", false)
		const day = "2026-03-02"
		entry := func(start, end string) M {
			return M{"trackingType": "WORK", "project": o.p1, "task": o.t1, "day": day, "startTime": start, "endTime": end}
		}
		check := func(rec M, start, end string) {
			t.Helper()
			if rec["startTime"] != start || rec["endTime"] != end {
				t.Errorf("entry %v: startTime %v, endTime %v; want %s, %s", rec["id"], rec["startTime"], rec["endTime"], start, end)
			}
		}

		// 08:00Z to 10:30:00.5Z, sent in CET and in New York time.
		e1 := a.Create(t, "time-entries", entry("2026-03-02T09:00:00+01:00", "2026-03-02T05:30:00.5-05:00"))
		check(e1, "2026-03-02T08:00:00.000Z", "2026-03-02T10:30:00.500Z")
		check(a.Get(t, "time-entries", testenv.ID(t, e1)), "2026-03-02T08:00:00.000Z", "2026-03-02T10:30:00.500Z")
		// 10:00Z to 11:00:00.123Z, as Go and Python write them.
		e2 := a.Create(t, "time-entries", entry("2026-03-02T10:00:00Z", "2026-03-02T11:00:00.123456+00:00"))
		check(e2, "2026-03-02T10:00:00.000Z", "2026-03-02T11:00:00.123Z")
		// 07:00Z to 07:45Z: as sent, the start's text is after the end's
		// and after the other entries' starts.
		e3 := a.Create(t, "time-entries", entry("2026-03-02T12:00:00+05:00", "2026-03-02t07:45:00.999999999z"))
		check(e3, "2026-03-02T07:00:00.000Z", "2026-03-02T07:45:00.999Z")
		id1, id2, id3 := testenv.ID(t, e1), testenv.ID(t, e2), testenv.ID(t, e3)

		// The end before the start as instants, though not as local
		// clock times: 08:00Z to 07:00Z.
		a.Invalid(t, http.MethodPost, entriesPath, entry("2026-03-02T08:00:00Z", "2026-03-02T09:00:00+02:00"), "endTime")
		// Malformed date-times are refused naming the field.
		a.Invalid(t, http.MethodPost, entriesPath, entry("2026-03-02T08:00:00", "2026-03-02T09:00:00Z"), "startTime")
		a.Invalid(t, http.MethodPatch, entryPath(t, e1), M{"endTime": "2026-03-02T11:00:00+0100"}, "endTime")

		ids := func(where M) []int64 {
			t.Helper()
			var out []int64
			for _, rec := range o.entries(t, where) {
				out = append(out, testenv.ID(t, rec))
			}
			slices.Sort(out)
			return out
		}
		for _, c := range []struct {
			name  string
			where M
			want  []int64
		}{
			// 08:00Z ≤ startTime < 10:00Z, in New York and in CET.
			{"range in offsets", M{"startTime": M{">=": "2026-03-02T03:00:00-05:00", "<": "2026-03-02T11:00:00+01:00"}}, []int64{id1}},
			{"range in UTC", M{"startTime": M{">=": "2026-03-02T08:00:00Z", "<": "2026-03-02T10:00:00Z"}}, []int64{id1}},
			{"after, in India", M{"startTime": M{">": "2026-03-02T14:00:00+05:30"}}, []int64{id2}},
			{"up to, with nanoseconds", M{"endTime": M{"<=": "2026-03-02T07:45:00.999000001Z"}}, []int64{id3}},
			{"equal, in CET", M{"endTime": "2026-03-02T11:30:00.5+01:00"}, []int64{id1}},
			{"in, mixed offsets", M{"startTime": M{"in": []any{"2026-03-02T09:00:00+01:00", "2026-03-02T10:00:00.000-00:00"}}}, []int64{id1, id2}},
			{"not equal", M{"startTime": M{"!=": "2026-03-02T02:00:00-05:00"}}, []int64{id1, id2}},
			{"the UTC day", M{"startTime": day}, []int64{id1, id2, id3}},
		} {
			if got := ids(c.where); !slices.Equal(got, c.want) {
				t.Errorf("%s: where %v selects %v, want %v", c.name, c.where, got, c.want)
			}
		}
		// A per-attribute filter with an offset matches the instant.
		if got := a.IDs(t, entriesPath+"?startTime="+"2026-03-02T09:00:00%2B01:00"); !slices.Equal(got, []int64{id1}) {
			t.Errorf("startTime=2026-03-02T09:00:00+01:00 selects %v, want [%d]", got, id1)
		}
		// Sorted by instant, not by the text sent.
		var sorted []int64
		for _, rec := range a.List(t, entriesPath+"?sort=startTime") {
			sorted = append(sorted, testenv.ID(t, rec))
		}
		if !slices.Equal(sorted, []int64{id3, id1, id2}) {
			t.Errorf("sorted by startTime: %v, want %v", sorted, []int64{id3, id1, id2})
		}
		// createdAt takes an offset too; an hour either side of now.
		now := time.Now()
		before := now.Add(-time.Hour).In(time.FixedZone("", -(9*60+30)*60)).Format(time.RFC3339Nano)
		after := now.Add(time.Hour).In(time.FixedZone("", 14*3600)).Format(time.RFC3339)
		if got := ids(M{"createdAt": M{">": before, "<": after}}); len(got) != 3 {
			t.Errorf("created between %s and %s: %v, want the 3 entries", before, after, got)
		}

		// The time counted is end − start between the instants, whole
		// seconds: 9000 + 3600 + 2700.
		if got := totals(t, a, day, day, "day").Totals["WORK"]; got != 9000+3600+2700 {
			t.Errorf("WORK seconds of %s: %v, want %d", day, got, 9000+3600+2700)
		}
		// A change with an offset is stored in UTC too.
		e2 = a.Object(t, http.MethodPatch, entryPath(t, e2), M{"endTime": "2026-03-02T12:00:00+01:00"}, http.StatusOK)
		check(e2, "2026-03-02T10:00:00.000Z", "2026-03-02T11:00:00.000Z")
	})
}
