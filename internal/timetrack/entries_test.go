package timetrack_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

const entriesPath = "/v1/time-entries"

// combo is one setting of timerMode and useWorktime.
type combo struct {
	key      string
	mode     string
	worktime bool
}

var combos = []combo{
	{"D", "DURATION", false},
	{"DW", "DURATION", true},
	{"S", "START_TIME_END_TIME", false},
	{"SW", "START_TIME_END_TIME", true},
}

// created marks an expected success in a field rules table.
var created = []string{}

// allCombos gives the same expectation under every setting.
func allCombos(fields ...string) map[string][]string {
	return map[string][]string{"D": fields, "DW": fields, "S": fields, "SW": fields}
}

// byMode gives the same expectation for both worktime settings of each timerMode.
func byMode(duration, startEnd []string) map[string][]string {
	return map[string][]string{"D": duration, "DW": duration, "S": startEnd, "SW": startEnd}
}

// TestEntryFieldRules: the tables of the fields a time entry takes
// by trackingType, timerMode and useWorktime, with the attribute types,
// the required day and references. Each case is tried under the settings
// its want names: created (201) or 400 naming exactly the fields
// (docs/api.md "Time entry fields").
func TestEntryFieldRules(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		foreign := o.foreignProject(t)
		const day = "2026-03-02"
		const start, end = "2026-03-02T08:00:00.000Z", "2026-03-02T09:30:00.000Z"
		// m builds an entry of day with the given fields.
		m := func(kv ...any) M { return with(M{"day": day}, kv...) }
		work := func(kv ...any) M {
			return with(M{"day": day, "trackingType": "WORK", "project": o.p1, "task": o.t1}, kv...)
		}
		cases := []struct {
			name string
			body M
			want map[string][]string // by combo key; created: 201; absent: not tried
		}{
			// WORK: project and task, time fields by timerMode. DURATION
			// wants duration and sorting and no start or end times
			// (docs/api.md "Time entry fields"), START_TIME_END_TIME startTime and
			// endTime without sorting.
			{"WORK duration without sorting", work("duration", 3600), byMode([]string{"sorting"}, []string{"startTime", "duration"})},
			{"WORK sorting without duration", work("sorting", 1), byMode([]string{"duration"}, []string{"startTime", "sorting"})},
			{"WORK trackingType omitted", m("project", o.p1, "task", o.t1, "duration", 60, "sorting", 1), byMode(created, []string{"startTime", "duration", "sorting"})},
			{"WORK trackingType null", m("trackingType", nil, "project", o.p1, "task", o.t1, "duration", 60, "sorting", 1), byMode(created, []string{"startTime", "duration", "sorting"})},
			{"WORK duration and sorting", work("duration", 3600, "sorting", 2), byMode(created, []string{"startTime", "duration", "sorting"})},
			{"WORK zero duration", work("duration", 0, "sorting", 0), byMode(created, []string{"startTime", "duration", "sorting"})},
			{"WORK negative sorting", work("duration", 60, "sorting", -3), byMode(created, []string{"startTime", "duration", "sorting"})},
			{"WORK sorting null", work("duration", 60, "sorting", nil), byMode([]string{"sorting"}, []string{"startTime", "duration"})},
			{"WORK startTime and endTime", work("startTime", start, "endTime", end), byMode([]string{"duration", "sorting", "startTime", "endTime"}, created)},
			{"WORK running (startTime only)", work("startTime", start), byMode([]string{"duration", "sorting", "startTime"}, created)},
			{"WORK start, end and duration", work("startTime", start, "endTime", end, "duration", 5400), byMode([]string{"sorting", "startTime", "endTime"}, []string{"duration"})},
			{"WORK start, end, duration and sorting", work("startTime", start, "endTime", end, "duration", 5400, "sorting", 1), byMode([]string{"startTime", "endTime"}, []string{"duration", "sorting"})},
			{"WORK start, end and sorting", work("startTime", start, "endTime", end, "sorting", 1), byMode([]string{"duration", "startTime", "endTime"}, []string{"sorting"})},
			{"WORK duration and endTime", work("duration", 60, "sorting", 1, "endTime", end), byMode([]string{"endTime"}, []string{"startTime", "duration", "sorting"})},
			{"WORK endTime only", work("endTime", end), byMode([]string{"duration", "sorting", "endTime"}, []string{"startTime"})},
			{"WORK no time fields", work(), byMode([]string{"duration", "sorting"}, []string{"startTime"})},
			{"WORK without project (duration)", m("trackingType", "WORK", "task", o.t1, "duration", 60, "sorting", 1), map[string][]string{"D": {"project"}, "DW": {"project"}}},
			{"WORK without project (times)", m("trackingType", "WORK", "task", o.t1, "startTime", start, "endTime", end), map[string][]string{"S": {"project"}, "SW": {"project"}}},
			{"WORK without task (duration)", m("trackingType", "WORK", "project", o.p1, "duration", 60, "sorting", 1), map[string][]string{"D": {"task"}, "DW": {"task"}}},
			{"WORK without task (times)", m("trackingType", "WORK", "project", o.p1, "startTime", start), map[string][]string{"S": {"task"}, "SW": {"task"}}},
			{"WORK without project and task", m("trackingType", "WORK", "duration", 60, "sorting", 1), map[string][]string{"D": {"project", "task"}, "DW": {"project", "task"}}},
			{"WORK without project, task and sorting", m("trackingType", "WORK", "duration", 60), map[string][]string{"D": {"project", "task", "sorting"}, "DW": {"project", "task", "sorting"}}},
			{"WORK project null", work("project", nil, "duration", 60, "sorting", 1), map[string][]string{"D": {"project"}}},
			{"WORK endTime before startTime", work("startTime", end, "endTime", start), map[string][]string{"S": {"endTime"}, "SW": {"endTime"}}},
			{"WORK negative duration", work("duration", -60, "sorting", 1), byMode([]string{"duration"}, []string{"startTime", "duration", "sorting"})},
			{"WORK negative duration without sorting", work("duration", -60), map[string][]string{"D": {"duration", "sorting"}, "DW": {"duration", "sorting"}}},
			{"WORK duration beyond 366 days", work("duration", 31622401, "sorting", 1), byMode([]string{"duration"}, []string{"startTime", "duration", "sorting"})},
			// One problem per field, even when a field breaks two rules.
			{"WORK reversed times under DURATION", work("startTime", end, "endTime", start), map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}}},

			// WORKTIME: no project or task; always startTime and endTime.
			{"WORKTIME start and end", m("trackingType", "WORKTIME", "startTime", start, "endTime", end), allCombos()},
			{"WORKTIME with project", m("trackingType", "WORKTIME", "project", o.p1, "startTime", start, "endTime", end), allCombos("project")},
			{"WORKTIME with task", m("trackingType", "WORKTIME", "task", o.t1, "startTime", start, "endTime", end), allCombos("task")},
			{"WORKTIME with project and task", m("trackingType", "WORKTIME", "project", o.p1, "task", o.t1, "startTime", start, "endTime", end), allCombos("project", "task")},
			{"WORKTIME startTime only", m("trackingType", "WORKTIME", "startTime", start), allCombos("endTime")},
			{"WORKTIME endTime only", m("trackingType", "WORKTIME", "endTime", end), allCombos("startTime")},
			{"WORKTIME duration", m("trackingType", "WORKTIME", "duration", 3600), allCombos("startTime", "endTime", "duration")},
			{"WORKTIME start, end and duration", m("trackingType", "WORKTIME", "startTime", start, "endTime", end, "duration", 5400), allCombos("duration")},
			{"WORKTIME start, end and sorting", m("trackingType", "WORKTIME", "startTime", start, "endTime", end, "sorting", 1), allCombos("sorting")},
			{"WORKTIME endTime equals startTime", m("trackingType", "WORKTIME", "startTime", start, "endTime", start), allCombos("endTime")},
			{"WORKTIME endTime before startTime", m("trackingType", "WORKTIME", "startTime", end, "endTime", start), allCombos("endTime")},

			// BREAK: no project or task; with worktime startTime and endTime
			// (sorting allowed, not required), else as timerMode says
			// (under DURATION: duration and sorting).
			{"BREAK duration without sorting", m("trackingType", "BREAK", "duration", 900),
				map[string][]string{"D": {"sorting"}, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK duration and sorting", m("trackingType", "BREAK", "duration", 900, "sorting", 3),
				map[string][]string{"D": created, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration", "sorting"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK start and end", m("trackingType", "BREAK", "startTime", start, "endTime", end),
				map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}, "DW": created, "S": created, "SW": created}},
			{"BREAK start, end and sorting", m("trackingType", "BREAK", "startTime", start, "endTime", end, "sorting", 1),
				map[string][]string{"D": {"duration", "startTime", "endTime"}, "DW": created, "S": {"sorting"}, "SW": created}},
			{"BREAK startTime only", m("trackingType", "BREAK", "startTime", start),
				map[string][]string{"D": {"duration", "sorting", "startTime"}, "DW": {"endTime"}, "S": created, "SW": {"endTime"}}},
			{"BREAK no time fields", m("trackingType", "BREAK"),
				map[string][]string{"D": {"duration", "sorting"}, "DW": {"startTime", "endTime"}, "S": {"startTime"}, "SW": {"startTime", "endTime"}}},
			{"BREAK sorting only", m("trackingType", "BREAK", "sorting", 1),
				map[string][]string{"D": {"duration"}, "DW": {"startTime", "endTime"}, "S": {"startTime", "sorting"}, "SW": {"startTime", "endTime"}}},
			{"BREAK with project", m("trackingType", "BREAK", "project", o.p1, "startTime", start, "endTime", end),
				map[string][]string{"D": {"project", "duration", "sorting", "startTime", "endTime"}, "DW": {"project"}, "S": {"project"}, "SW": {"project"}}},
			{"BREAK with task", m("trackingType", "BREAK", "task", o.t1, "duration", 900, "sorting", 1),
				map[string][]string{"D": {"task"}, "DW": {"task", "startTime", "endTime", "duration"}}},
			{"BREAK negative duration", m("trackingType", "BREAK", "duration", -1, "sorting", 1),
				map[string][]string{"D": {"duration"}, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration", "sorting"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK reversed times", m("trackingType", "BREAK", "startTime", end, "endTime", start),
				map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}}},
			{"WORKTIME reversed times with duration", m("trackingType", "WORKTIME", "startTime", end, "endTime", start, "duration", -5), allCombos("endTime", "duration")},
			{"BREAK endTime before startTime", m("trackingType", "BREAK", "startTime", end, "endTime", start), map[string][]string{"DW": {"endTime"}, "S": {"endTime"}, "SW": {"endTime"}}},

			// Attribute types, the required day and references.
			{"day missing", M{"trackingType": "WORK", "project": o.p1, "task": o.t1, "duration": 60}, allCombos("day")},
			{"day null", work("day", nil, "duration", 60), allCombos("day")},
			{"day not a date", work("day", "2026-02-30", "duration", 60), allCombos("day")},
			{"day with a time", work("day", "2026-03-02T00:00:00.000Z", "duration", 60), allCombos("day")},
			{"unknown trackingType", m("trackingType", "OVERTIME", "duration", 60), allCombos("trackingType")},
			{"duration not an integer", work("duration", 1.5), allCombos("duration")},
			{"duration a string", work("duration", "3600"), allCombos("duration")},
			{"sorting a string", work("duration", 60, "sorting", "1"), allCombos("sorting")},
			{"startTime without offset", m("trackingType", "WORKTIME", "startTime", "2026-03-02T08:00:00", "endTime", end), allCombos("startTime")},
			{"endTime a date", m("trackingType", "WORKTIME", "startTime", start, "endTime", "2026-03-02"), allCombos("endTime")},
			{"unknown project", work("project", 999999, "duration", 60), allCombos("project")},
			{"unknown task", work("task", 999999, "duration", 60), allCombos("task")},
			{"another tenant's project", work("project", foreign, "duration", 60), allCombos("project")},
			{"a task as project", work("project", o.t1, "duration", 60), allCombos("project")},
			{"a project as task", work("task", o.p2, "duration", 60), allCombos("task")},
			{"unknown user", work("user", 999999, "duration", 60), allCombos("user")},
			{"project not an id", work("project", "Alpha", "duration", 60), allCombos("project")},
		}
		stored := 0
		for _, cb := range combos {
			o.settings(t, cb.mode, cb.worktime)
			for _, c := range cases {
				want, tried := c.want[cb.key]
				if !tried {
					continue
				}
				t.Run(cb.key+": "+c.name, func(t *testing.T) {
					if len(want) > 0 {
						o.admin.Invalid(t, http.MethodPost, entriesPath, c.body, want...)
						return
					}
					body := o.admin.Create(t, "time-entries", c.body)
					stored++
					checkCreated(t, o, c.body, body)
				})
			}
			// Refused writes stored nothing.
			if n := len(o.admin.List(t, entriesPath)); n != stored {
				t.Errorf("after %s: %d entries stored, %d creates succeeded", cb.key, n, stored)
			}
		}

		// The problem of a missing sorting says what is wanted.
		o.settings(t, "DURATION", false)
		for _, body := range []M{work("duration", 60), m("trackingType", "BREAK", "duration", 60)} {
			got := o.admin.Invalid(t, http.MethodPost, entriesPath, body, "sorting")
			if msg := testenv.ProblemMessage(got, "sorting"); !strings.Contains(msg, "sorting") || !strings.Contains(msg, "DURATION") {
				t.Errorf("DURATION entry without sorting: message %q names neither sorting nor DURATION", msg)
			}
		}

		// validationStatus is the service's: a value sent is ignored.
		if body := o.admin.Create(t, "time-entries", work("duration", 60, "sorting", 1, "validationStatus", "APPROVED")); body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("WORK sent as APPROVED: %v", body)
		}
		if body := o.admin.Create(t, "time-entries", m("trackingType", "BREAK", "duration", 60, "sorting", 1, "validationStatus", "APPROVED")); body["validationStatus"] != nil {
			t.Errorf("BREAK sent as APPROVED: %v", body)
		}
	})
}

// checkCreated checks the admin's created entry holds what was sent, its
// trackingType (WORK by default), the caller as its user and the
// validationStatus of its trackingType, and reads back the same.
func checkCreated(t *testing.T, o *office, sent, body M) {
	t.Helper()
	tt, _ := sent["trackingType"].(string)
	if tt == "" {
		tt = "WORK"
	}
	if body["trackingType"] != tt || testenv.Num(body["user"]) != o.admin.UserID || body["day"] != sent["day"] {
		t.Errorf("created %v, want trackingType %s, user %v (the caller)", body, tt, o.admin.UserID)
	}
	for _, f := range []string{"project", "task", "duration", "sorting", "startTime", "endTime"} {
		if v, ok := sent[f]; ok && fmt.Sprint(body[f]) != fmt.Sprint(v) {
			t.Errorf("%s = %v, sent %v", f, body[f], v)
		}
	}
	if tt == "WORK" && body["validationStatus"] != "NOTAPPROVED" {
		t.Errorf("validationStatus = %v, want NOTAPPROVED", body["validationStatus"])
	}
	if tt != "WORK" && body["validationStatus"] != nil {
		t.Errorf("a %s entry has validationStatus %v", tt, body["validationStatus"])
	}
	if !isTimestamp(body["createdAt"]) || !isTimestamp(body["updatedAt"]) {
		t.Errorf("timestamps %v %v", body["createdAt"], body["updatedAt"])
	}
	if got := o.admin.Get(t, "time-entries", testenv.ID(t, body)); !reflect.DeepEqual(got, body) {
		t.Errorf("GET = %v, POST answered %v", got, body)
	}
}

// TestEntryRulesOnUpdate: changes are checked against the settings in
// force when they are made, on the merged record.
func TestEntryRulesOnUpdate(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		const day = "2026-03-03"
		const start, end = "2026-03-03T08:00:00.000Z", "2026-03-03T10:00:00.000Z"
		path := entryPath(t, a.Create(t, "time-entries", M{"project": o.p1, "task": o.t1, "day": day, "duration": 3600, "sorting": 1}))
		wtPath := entryPath(t, a.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": day, "startTime": start, "endTime": end}))
		brPath := entryPath(t, a.Create(t, "time-entries", M{"trackingType": "BREAK", "day": day, "duration": 600, "sorting": 1}))
		change := func(method, path string, body M) M {
			t.Helper()
			return a.Object(t, method, path, body, http.StatusOK)
		}
		refuse := func(path string, body M, fields ...string) {
			t.Helper()
			a.Invalid(t, http.MethodPatch, path, body, fields...)
		}

		// Valid and invalid changes under DURATION.
		if body := change(http.MethodPatch, path, M{"duration": 1800, "sorting": 4}); body["duration"] != float64(1800) || body["sorting"] != float64(4) ||
			testenv.Num(body["project"]) != o.p1 || body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("PATCH duration: %v", body)
		}
		refuse(path, M{"duration": -1}, "duration")
		refuse(path, M{"startTime": start}, "startTime")
		refuse(path, M{"duration": nil}, "duration")
		refuse(path, M{"sorting": nil}, "sorting")
		refuse(brPath, M{"sorting": nil}, "sorting")
		refuse(path, M{"task": nil}, "task")
		refuse(path, M{"task": 999999}, "task")
		refuse(path, M{"day": "03.03.2026"}, "day")
		// Into WORKTIME keeping project, task and duration.
		refuse(path, M{"trackingType": "WORKTIME"}, "project", "task", "startTime", "endTime", "duration", "sorting")
		refuse(wtPath, M{"endTime": "2026-03-03T07:00:00.000Z"}, "endTime")
		refuse(wtPath, M{"endTime": nil}, "endTime")
		if got := a.Object(t, http.MethodGet, path, nil, http.StatusOK); got["duration"] != float64(1800) || got["sorting"] != float64(4) ||
			testenv.Num(got["task"]) != o.t1 || got["day"] != day || got["startTime"] != nil {
			t.Errorf("after refused PATCHes: %v", got)
		}

		// Turning the WORK entry into a WORKTIME entry: WORK fields go, times come.
		if body := change(http.MethodPut, path, M{"trackingType": "WORKTIME", "project": nil, "task": nil, "duration": nil, "sorting": nil, "startTime": start, "endTime": end}); body["trackingType"] != "WORKTIME" || body["validationStatus"] != nil || body["startTime"] != start {
			t.Errorf("PUT into WORKTIME: %v", body)
		}
		a.Invalid(t, http.MethodPut, path, M{"trackingType": "WORK", "project": o.p2, "task": o.t2, "duration": 60, "startTime": nil, "endTime": nil}, "sorting")
		if body := change(http.MethodPut, path, M{"trackingType": "WORK", "project": o.p2, "task": o.t2, "duration": 60, "sorting": 3, "startTime": nil, "endTime": nil}); body["trackingType"] != "WORK" ||
			body["validationStatus"] != "NOTAPPROVED" || testenv.Num(body["project"]) != o.p2 || body["sorting"] != float64(3) {
			t.Errorf("PUT back into WORK: %v", body)
		}

		// The settings change: the stored entries stay, but a change must
		// satisfy the new rules.
		o.settings(t, "START_TIME_END_TIME", false)
		if got := a.Object(t, http.MethodGet, path, nil, http.StatusOK); got["duration"] != float64(60) {
			t.Errorf("entry after the settings change: %v", got)
		}
		// A DURATION-style entry under START_TIME_END_TIME.
		refuse(path, M{"sorting": 2}, "startTime", "duration", "sorting")
		// To a running entry keeping sorting.
		refuse(path, M{"duration": nil, "startTime": start}, "sorting")
		if body := change(http.MethodPatch, path, M{"duration": nil, "sorting": nil, "startTime": start}); body["duration"] != nil || body["sorting"] != nil || body["startTime"] != start || body["endTime"] != nil {
			t.Errorf("PATCH to a running entry: %v", body)
		}
		refuse(path, M{"endTime": "2026-03-03T07:59:59.999Z"}, "endTime")
		if body := change(http.MethodPatch, path, M{"endTime": end}); body["endTime"] != end {
			t.Errorf("PATCH stopping the entry: %v", body)
		}
		refuse(path, M{"duration": 7200}, "duration")
		// The DURATION-style BREAK cannot be changed without its times now.
		refuse(brPath, M{"duration": 300}, "startTime", "duration", "sorting")

		o.settings(t, "START_TIME_END_TIME", true)
		// A BREAK without endTime under worktime.
		refuse(brPath, M{"duration": nil, "startTime": start, "sorting": 1}, "endTime")
		if body := change(http.MethodPatch, brPath, M{"duration": nil, "startTime": start, "endTime": end, "sorting": 1}); body["sorting"] != float64(1) || body["duration"] != nil {
			t.Errorf("PATCH BREAK into times under worktime: %v", body)
		}

		o.settings(t, "DURATION", false)
		// START_TIME_END_TIME-style WORK and BREAK entries under DURATION.
		refuse(path, M{"sorting": 1}, "duration", "startTime", "endTime")
		refuse(brPath, M{"sorting": 2}, "duration", "startTime", "endTime")
		// WORKTIME ignores the timerMode.
		if body := change(http.MethodPatch, wtPath, M{"endTime": "2026-03-03T11:00:00.000Z"}); body["endTime"] != "2026-03-03T11:00:00.000Z" {
			t.Errorf("PATCH WORKTIME under DURATION: %v", body)
		}
		// Back to a duration, first without sorting.
		refuse(path, M{"startTime": nil, "endTime": nil, "duration": 900}, "sorting")
		if body := change(http.MethodPatch, path, M{"startTime": nil, "endTime": nil, "duration": 900, "sorting": 5}); body["duration"] != float64(900) || body["sorting"] != float64(5) || body["startTime"] != nil {
			t.Errorf("PATCH back to a duration: %v", body)
		}
	})
}

// TestEntryOwnership: members write their own entries, admins anyone's.
func TestEntryOwnership(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a, mb := o.admin, o.member
		entry := func(kv ...any) M {
			return with(M{"project": o.p1, "task": o.t1, "day": "2026-03-04", "duration": 600, "sorting": 1}, kv...)
		}
		count := func() int { return len(a.List(t, entriesPath)) }
		user := func(rec M) int64 { return testenv.Num(rec["user"]) }

		own := mb.Create(t, "time-entries", entry())
		if user(own) != mb.UserID {
			t.Errorf("member's entry: user = %v, want the member %v", own["user"], mb.UserID)
		}
		if rec := mb.Create(t, "time-entries", entry("user", mb.UserID)); user(rec) != mb.UserID {
			t.Errorf("member's entry naming themselves: %v", rec)
		}
		if rec := a.Create(t, "time-entries", entry()); user(rec) != a.UserID {
			t.Errorf("admin's entry: user = %v, want the admin %v", rec["user"], a.UserID)
		}
		forMember := a.Create(t, "time-entries", entry("user", mb.UserID))
		if user(forMember) != mb.UserID {
			t.Errorf("admin's entry for the member: %v", forMember)
		}
		adminPath := entryPath(t, a.Create(t, "time-entries", entry("duration", 1200)))
		ownPath := entryPath(t, own)

		before := count()
		mb.Fail(t, http.MethodPost, entriesPath, entry("user", a.UserID), http.StatusForbidden, "forbidden")
		if st, _, raw := mb.Send(t, http.MethodPost, entriesPath, entry("user", 999999)); st != http.StatusForbidden && st != http.StatusBadRequest {
			t.Errorf("member creates an entry for an unknown user: %d %s", st, raw)
		}
		if n := count(); n != before {
			t.Errorf("refused creates stored entries: %d → %d", before, n)
		}
		mb.Fail(t, http.MethodPatch, adminPath, M{"duration": 1}, http.StatusForbidden, "forbidden")
		mb.Fail(t, http.MethodPut, adminPath, M{"user": mb.UserID}, http.StatusForbidden, "forbidden")
		mb.Fail(t, http.MethodDelete, adminPath, nil, http.StatusForbidden, "forbidden")
		if got := a.Object(t, http.MethodGet, adminPath, nil, http.StatusOK); got["duration"] != float64(1200) || user(got) != a.UserID {
			t.Errorf("admin's entry after the member's attempts: %v", got)
		}
		// The member may not give their entry to the admin.
		mb.Fail(t, http.MethodPatch, ownPath, M{"user": a.UserID}, http.StatusForbidden, "forbidden")
		if got := a.Object(t, http.MethodGet, ownPath, nil, http.StatusOK); user(got) != mb.UserID {
			t.Errorf("member's entry after the refused hand-over: %v", got)
		}

		// Members change and delete their own entries.
		if body := mb.Object(t, http.MethodPatch, ownPath, M{"duration": 900}, http.StatusOK); body["duration"] != float64(900) || user(body) != mb.UserID {
			t.Errorf("member changes their entry: %v", body)
		}
		if body := mb.Object(t, http.MethodDelete, ownPath, nil, http.StatusOK); body["id"] != own["id"] {
			t.Errorf("member deletes their entry: %v", body)
		}
		if st, _, _ := a.Send(t, http.MethodGet, ownPath, nil); st != http.StatusNotFound {
			t.Errorf("deleted entry: GET %d", st)
		}

		// Admins write anyone's entries.
		memberPath := entryPath(t, forMember)
		if body := a.Object(t, http.MethodPatch, memberPath, M{"duration": 42}, http.StatusOK); body["duration"] != float64(42) || user(body) != mb.UserID {
			t.Errorf("admin changes the member's entry: %v", body)
		}
		if body := a.Object(t, http.MethodPatch, memberPath, M{"user": a.UserID}, http.StatusOK); user(body) != a.UserID {
			t.Errorf("admin moves the member's entry to themselves: %v", body)
		}
		a.Invalid(t, http.MethodPatch, memberPath, M{"user": 999999}, "user")
		a.Object(t, http.MethodDelete, memberPath, nil, http.StatusOK)
		// Members read the tenant's entries.
		if n := len(mb.List(t, entriesPath)); n != count() {
			t.Errorf("member lists %d entries, the tenant has %d", n, count())
		}
	})
}
