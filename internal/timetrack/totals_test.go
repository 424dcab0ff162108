package timetrack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

// totalsAnswer is the answer of the time totals report.
type totalsAnswer struct {
	From    string             `json:"from"`
	To      string             `json:"to"`
	GroupBy string             `json:"groupBy"`
	Groups  []M                `json:"groups"`
	Totals  map[string]float64 `json:"totals"`
}

// totals GETs the report as c; it must answer 200 with the report.
func totals(t *testing.T, c *testenv.Client, from, to, groupBy string) totalsAnswer {
	t.Helper()
	path := "/v1/analytics/time-totals?from=" + from + "&to=" + to + "&groupBy=" + groupBy
	st, _, raw := c.Send(t, http.MethodGet, path, nil)
	var ans totalsAnswer
	if err := json.Unmarshal(raw, &ans); st != http.StatusOK || err != nil || ans.Groups == nil {
		t.Fatalf("GET %s: %d %s (%v)", path, st, raw, err)
	}
	return ans
}

// TestTimeTotals: the seconds of WORK, WORKTIME and BREAK entries in a
// range of days, grouped by user, project or day.
func TestTimeTotals(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a, mb := o.admin, o.member
		const d0, d1, d2, d3, d4 = "2026-05-03", "2026-05-04", "2026-05-05", "2026-05-06", "2026-05-07"
		ts := func(day, clock string) string { return day + "T" + clock + ".000Z" }
		work := func(project, task int64, day string, kv ...any) M {
			return with(M{"project": project, "task": task, "day": day}, kv...)
		}
		// DURATION entries.
		a.Create(t, "time-entries", work(o.p1, o.t1, d1, "duration", 3600, "sorting", 1))
		mb.Create(t, "time-entries", work(o.p1, o.t1, d1, "duration", 1800, "sorting", 2))
		a.Create(t, "time-entries", work(o.p2, o.t2, d2, "duration", 600, "sorting", 1))
		a.Create(t, "time-entries", M{"trackingType": "BREAK", "day": d1, "duration": 900, "sorting": 2})
		a.Create(t, "time-entries", work(o.p1, o.t1, d0, "duration", 99999, "sorting", 1)) // outside
		a.Create(t, "time-entries", work(o.p2, o.t2, d4, "duration", 77777, "sorting", 1)) // outside
		// START_TIME_END_TIME entries, with worktime.
		o.settings(t, "START_TIME_END_TIME", true)
		mb.Create(t, "time-entries", work(o.p2, o.t2, d3, "startTime", ts(d3, "10:00:00"), "endTime", ts(d3, "12:15:00")))                     // 8100
		mb.Create(t, "time-entries", work(o.p1, o.t1, d3, "startTime", ts(d3, "13:00:00")))                                                    // running: 0
		a.Create(t, "time-entries", work(o.p1, o.t1, d3, "startTime", ts(d3, "07:00:00"), "endTime", ts(d3, "07:00:30")))                      // 30
		a.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": d2, "startTime": ts(d2, "08:00:00"), "endTime": ts(d2, "16:00:00")})  // 28800
		mb.Create(t, "time-entries", M{"trackingType": "BREAK", "day": d3, "startTime": ts(d3, "12:15:00"), "endTime": ts(d3, "12:45:00")})    // 1800
		mb.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": d4, "startTime": ts(d4, "08:00:00"), "endTime": ts(d4, "09:00:00")}) // outside
		mb.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": d0, "startTime": ts(d0, "08:00:00"), "endTime": ts(d0, "09:00:00")}) // outside
		// The settings in force do not change what stored entries count.
		o.settings(t, "DURATION", false)

		type secs = map[string]float64
		get := func(from, to, groupBy string) totalsAnswer {
			t.Helper()
			ans := totals(t, mb, from, to, groupBy)
			if ans.From != from || ans.To != to || ans.GroupBy != groupBy {
				t.Errorf("%s..%s by %s: echoes %q %q %q", from, to, groupBy, ans.From, ans.To, ans.GroupBy)
			}
			return ans
		}
		// byKey turns the groups into key → seconds, checking each group's shape.
		byKey := func(ans totalsAnswer) map[string]secs {
			t.Helper()
			out := map[string]secs{}
			for _, g := range ans.Groups {
				key, ok := g[ans.GroupBy]
				s, _ := g["seconds"].(map[string]any)
				if !ok || s == nil || len(g) != 2 {
					t.Errorf("group %v: want {%q: KEY, \"seconds\": {...}}", g, ans.GroupBy)
					continue
				}
				m := secs{}
				for k, v := range s {
					m[k], _ = v.(float64)
				}
				k := fmt.Sprint(key)
				if _, dup := out[k]; dup {
					t.Errorf("group %v appears twice", k)
				}
				out[k] = m
			}
			return out
		}
		k := func(id int64) string { return fmt.Sprint(id) }
		total := secs{"WORK": 3600 + 1800 + 600 + 8100 + 0 + 30, "WORKTIME": 28800, "BREAK": 900 + 1800}
		wantBy := map[string]map[string]secs{
			"user": {
				k(a.UserID):  {"WORK": 3600 + 600 + 30, "WORKTIME": 28800, "BREAK": 900},
				k(mb.UserID): {"WORK": 1800 + 8100 + 0, "WORKTIME": 0, "BREAK": 1800},
			},
			"project": {
				k(o.p1): {"WORK": 3600 + 1800 + 0 + 30, "WORKTIME": 0, "BREAK": 0},
				k(o.p2): {"WORK": 600 + 8100, "WORKTIME": 0, "BREAK": 0},
				"<nil>": {"WORK": 0, "WORKTIME": 28800, "BREAK": 2700},
			},
			"day": {
				d1: {"WORK": 5400, "WORKTIME": 0, "BREAK": 900},
				d2: {"WORK": 600, "WORKTIME": 28800, "BREAK": 0},
				d3: {"WORK": 8130, "WORKTIME": 0, "BREAK": 1800},
			},
		}
		for _, groupBy := range []string{"user", "project", "day"} {
			ans := get(d1, d3, groupBy)
			if got := byKey(ans); !reflect.DeepEqual(got, wantBy[groupBy]) {
				t.Errorf("groupBy=%s: %v, want %v", groupBy, got, wantBy[groupBy])
			}
			if !reflect.DeepEqual(secs(ans.Totals), total) {
				t.Errorf("groupBy=%s totals: %v, want %v", groupBy, ans.Totals, total)
			}
			if groupBy == "day" {
				var days []string
				for _, g := range ans.Groups {
					days = append(days, fmt.Sprint(g["day"]))
				}
				if !slices.Equal(days, []string{d1, d2, d3}) {
					t.Errorf("day groups in order %v", days)
				}
			}
		}
		// Inclusive bounds: one day, and the wider range that takes in d0 and d4.
		one := get(d1, d1, "day")
		if got := byKey(one); !reflect.DeepEqual(got, map[string]secs{d1: {"WORK": 5400, "WORKTIME": 0, "BREAK": 900}}) ||
			!reflect.DeepEqual(secs(one.Totals), secs{"WORK": 5400, "WORKTIME": 0, "BREAK": 900}) {
			t.Errorf("from=to=%s: %v totals %v", d1, got, one.Totals)
		}
		last := get(d3, d3, "project")
		if got := byKey(last); !reflect.DeepEqual(got, map[string]secs{
			k(o.p1): {"WORK": 30, "WORKTIME": 0, "BREAK": 0}, k(o.p2): {"WORK": 8100, "WORKTIME": 0, "BREAK": 0}, "<nil>": {"WORK": 0, "WORKTIME": 0, "BREAK": 1800}}) {
			t.Errorf("from=to=%s by project: %v", d3, got)
		}
		wide := get(d0, d4, "user")
		if !reflect.DeepEqual(secs(wide.Totals), secs{"WORK": total["WORK"] + 99999 + 77777, "WORKTIME": 28800 + 3600 + 3600, "BREAK": 2700}) {
			t.Errorf("from %s to %s totals: %v", d0, d4, wide.Totals)
		}
		if got := byKey(wide); got[k(a.UserID)]["WORK"] != 3600+600+30+99999+77777 || got[k(mb.UserID)]["WORKTIME"] != 7200 {
			t.Errorf("from %s to %s by user: %v", d0, d4, got)
		}
		// A range without entries: no groups, zero totals.
		empty := get("2027-01-01", "2027-12-31", "project")
		if len(empty.Groups) != 0 || !reflect.DeepEqual(secs(empty.Totals), secs{"WORK": 0, "WORKTIME": 0, "BREAK": 0}) {
			t.Errorf("empty range: %+v", empty)
		}
		// Approval does not change the totals.
		o.approve(t, "approve", item(o.p1, d1))
		if got := get(d1, d3, "project"); !reflect.DeepEqual(byKey(got), wantBy["project"]) {
			t.Errorf("after approval: %v", byKey(got))
		}

		// Bad parameters: 400 naming them.
		bad := []struct {
			query  string
			fields []string
		}{
			{"to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&groupBy=user", []string{"to"}},
			{"", []string{"from", "to"}},
			{"from=2026-5-4&to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&to=2026-05-32&groupBy=user", []string{"to"}},
			{"from=" + d1 + "T00:00:00.000Z&to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=team", []string{"groupBy"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=USER", []string{"groupBy"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=trackingType", []string{"groupBy"}},
			{"from=" + d3 + "&to=" + d1 + "&groupBy=day", []string{"to"}},
			{"from=2020-01-01&to=2030-01-01&groupBy=day", []string{"to"}},
		}
		for _, c := range bad {
			t.Run("?"+c.query, func(t *testing.T) {
				a.Invalid(t, http.MethodGet, "/v1/analytics/time-totals?"+c.query, nil, c.fields...)
			})
		}
		if st, _, raw := a.Anonymous().Send(t, http.MethodGet, "/v1/analytics/time-totals?from="+d1+"&to="+d3+"&groupBy=day", nil); st != http.StatusUnauthorized {
			t.Errorf("time totals without a token: %d %s", st, raw)
		}
		// Without groupBy (or with it empty): the totals alone, the same
		// as the grouped answer's.
		grouped := totals(t, a, d1, d3, "user")
		for _, q := range []string{"", "&groupBy="} {
			path := "/v1/analytics/time-totals?from=" + d1 + "&to=" + d3 + q
			st, _, raw := a.Send(t, http.MethodGet, path, nil)
			var plain map[string]json.RawMessage
			if st != http.StatusOK {
				t.Fatalf("GET %s: %d %s", path, st, raw)
			}
			testenv.DecodeInto(t, raw, &plain)
			var sums map[string]float64
			if err := json.Unmarshal(plain["totals"], &sums); err != nil || !reflect.DeepEqual(sums, grouped.Totals) ||
				plain["groups"] != nil || plain["groupBy"] != nil || string(plain["from"]) != `"`+d1+`"` {
				t.Errorf("GET %s: %v, want the totals alone, %v", path, plain, grouped.Totals)
			}
		}
		// Another tenant's totals are its own.
		if ans := totals(t, o.stranger(t), d0, d4, "user"); len(ans.Groups) != 0 || ans.Totals["WORK"] != 0 {
			t.Errorf("other tenant's totals: %+v", ans)
		}
	})
}
