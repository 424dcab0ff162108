package timetrack_test

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

const bulkPath = "/v1/approval/bulk-approve"

// TestApproval: approving a project day closes it to WORK writes and
// marks its WORK entries APPROVED; unapproving opens it again.
func TestApproval(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a, mb := o.admin, o.member
		const day, day2, day3 = "2026-04-06", "2026-04-07", "2026-04-08"
		work := func(project, task int64, d string, secs int) M {
			return M{"project": project, "task": task, "day": d, "duration": secs, "sorting": 1}
		}
		status := func(rec M) any { return a.Get(t, "time-entries", testenv.ID(t, rec))["validationStatus"] }
		p := func(rec M) string { return entryPath(t, rec) }
		id := func(rec M) int64 { return testenv.ID(t, rec) }
		if days := a.List(t, "/v1/project-days"); len(days) != 0 {
			t.Fatalf("project days before any approval: %v", days)
		}
		e1 := a.Create(t, "time-entries", work(o.p1, o.t1, day, 3600))
		e2 := mb.Create(t, "time-entries", work(o.p1, o.t1, day, 1800))
		e3 := a.Create(t, "time-entries", work(o.p2, o.t2, day, 600))
		e4 := a.Create(t, "time-entries", work(o.p1, o.t1, day2, 60))
		w1 := a.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": day, "startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T16:00:00.000Z"})
		b1 := a.Create(t, "time-entries", M{"trackingType": "BREAK", "day": day, "duration": 900, "sorting": 1})
		for _, rec := range []M{e1, e2, e3, e4} {
			if got := status(rec); got != "NOTAPPROVED" {
				t.Errorf("entry %d before approval: validationStatus %v", id(rec), got)
			}
		}

		// Members may not approve.
		mb.Fail(t, http.MethodPost, bulkPath, M{"action": "approve", "items": []any{item(o.p1, day)}}, http.StatusForbidden, "forbidden")
		if days := a.List(t, "/v1/project-days"); len(days) != 0 {
			t.Fatalf("project days after the member's approval: %v", days)
		}
		if got := status(e1); got != "NOTAPPROVED" {
			t.Errorf("entry after the member's approval: %v", got)
		}

		// Approve (p1, day).
		res := o.approve(t, "approve", item(o.p1, day))
		if len(res) != 1 {
			t.Fatalf("approve answered %v", res)
		}
		pd := res[0]
		if _, ok := pd["id"].(float64); !ok || testenv.Num(pd["project"]) != o.p1 || pd["day"] != day || pd["validationStatus"] != "APPROVED" ||
			!isTimestamp(pd["createdAt"]) || !isTimestamp(pd["updatedAt"]) || len(pd) != 6 {
			t.Errorf("approved project day: %v", pd)
		}
		if days := mb.List(t, "/v1/project-days"); len(days) != 1 || !reflect.DeepEqual(days[0], pd) {
			t.Errorf("project days after approval: %v, want [%v]", days, pd)
		}
		if got := a.Get(t, "project-days", id(pd)); !reflect.DeepEqual(got, pd) {
			t.Errorf("GET project day: %v, want %v", got, pd)
		}
		q := fmt.Sprintf("/v1/project-days?project=%d&day=%s&validationStatus=APPROVED", o.p1, day)
		if days := a.List(t, q); len(days) != 1 || days[0]["id"] != pd["id"] {
			t.Errorf("GET %s: %v", q, days)
		}
		if days := a.List(t, fmt.Sprintf("/v1/project-days?project=%d", o.p2)); len(days) != 0 {
			t.Errorf("project days of p2: %v", days)
		}
		// WORK entries of the pair are APPROVED; others keep their state.
		for _, rec := range []M{e1, e2} {
			if got := status(rec); got != "APPROVED" {
				t.Errorf("entry %d on the approved day: %v", id(rec), got)
			}
		}
		for _, rec := range []M{e3, e4} {
			if got := status(rec); got != "NOTAPPROVED" {
				t.Errorf("entry %d of another pair: %v", id(rec), got)
			}
		}
		for _, rec := range []M{w1, b1} {
			if got := status(rec); got != nil {
				t.Errorf("%s entry got validationStatus %v", rec["trackingType"], got)
			}
		}
		approved := o.entries(t, M{"validationStatus": "APPROVED"})
		if len(approved) != 2 || id(approved[0]) != id(e1) || id(approved[1]) != id(e2) {
			t.Errorf("APPROVED entries: %v", approved)
		}

		// The approved pair is closed to WORK writes: 403 day_approved, nothing written.
		pairWhere := M{"project": o.p1, "day": day, "trackingType": "WORK"}
		before := len(o.entries(t, M{}))
		for _, c := range []*testenv.Client{a, mb} {
			refusal := c.Fail(t, http.MethodPost, entriesPath, work(o.p1, o.t1, day, 60), http.StatusForbidden, "day_approved")
			// The refusal says how to undo the approval.
			if msg, _ := refusal["message"].(string); !strings.Contains(msg, "unapproves the day") ||
				!strings.Contains(msg, fmt.Sprintf(`{"action": "unapprove", "items": [{"project": %d, "day": "%s"}]}`, o.p1, day)) {
				t.Errorf("day_approved says %q, not how to unapprove the day", msg)
			}
		}
		// The admin creating one for the member.
		a.Fail(t, http.MethodPost, entriesPath, M{"project": o.p1, "task": o.t2, "day": day, "duration": 60, "sorting": 1, "user": mb.UserID}, http.StatusForbidden, "day_approved")
		if n := len(o.entries(t, M{})); n != before {
			t.Errorf("refused creates stored entries: %d → %d", before, n)
		}
		if n := len(o.entries(t, pairWhere)); n != 2 {
			t.Errorf("WORK entries on the approved pair: %d, want 2", n)
		}
		refusedChanges := []struct {
			name string
			c    *testenv.Client
			path string
			body M
		}{
			{"change duration", a, p(e1), M{"duration": 10}},
			{"member changes their approved entry", mb, p(e2), M{"duration": 10}},
			{"move out to another day", a, p(e1), M{"day": day2}},
			{"move out to another project", a, p(e1), M{"project": o.p2, "task": o.t2}},
			{"change trackingType away", a, p(e1), M{"trackingType": "WORKTIME", "project": nil, "task": nil, "duration": nil, "sorting": nil,
				"startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T09:00:00.000Z"}},
			{"move in from another day", a, p(e4), M{"day": day}},
			{"move in from another project", a, p(e3), M{"project": o.p1, "task": o.t1}},
			{"turn a WORKTIME entry into WORK there", a, p(w1), M{"trackingType": "WORK", "project": o.p1, "task": o.t1,
				"startTime": nil, "endTime": nil, "duration": 60, "sorting": 1}},
			{"turn a BREAK entry into WORK there", a, p(b1), M{"trackingType": "WORK", "project": o.p1, "task": o.t1}},
		}
		snapshot := a.List(t, entriesPath)
		for _, c := range refusedChanges {
			for _, m := range []string{http.MethodPatch, http.MethodPut} {
				t.Run(m+" "+c.name, func(t *testing.T) {
					c.c.Fail(t, m, c.path, c.body, http.StatusForbidden, "day_approved")
				})
			}
		}
		// Deleting an approved entry.
		a.Fail(t, http.MethodDelete, p(e1), nil, http.StatusForbidden, "day_approved")
		mb.Fail(t, http.MethodDelete, p(e2), nil, http.StatusForbidden, "day_approved")
		if after := a.List(t, entriesPath); !reflect.DeepEqual(after, snapshot) {
			t.Errorf("refused changes wrote something:\nbefore %v\nafter  %v", snapshot, after)
		}

		// WORKTIME and BREAK entries on that day stay free.
		if body := a.Object(t, http.MethodPatch, p(w1), M{"endTime": "2026-04-06T17:00:00.000Z"}, http.StatusOK); body["endTime"] != "2026-04-06T17:00:00.000Z" || body["validationStatus"] != nil {
			t.Errorf("change WORKTIME on the approved day: %v", body)
		}
		w2 := mb.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": day, "startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T12:00:00.000Z"})
		b2 := mb.Create(t, "time-entries", M{"trackingType": "BREAK", "day": day, "duration": 300, "sorting": 2})
		if body := a.Object(t, http.MethodPatch, p(b1), M{"duration": 1200}, http.StatusOK); body["duration"] != float64(1200) {
			t.Errorf("change BREAK on the approved day: %v", body)
		}
		for _, rec := range []M{w2, b2} {
			mb.Object(t, http.MethodDelete, p(rec), nil, http.StatusOK)
		}
		// Another project on the same day, and the same project on another day, are free.
		e5 := mb.Create(t, "time-entries", work(o.p2, o.t2, day, 120))
		if e5["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("entry of p2 on the day: %v", e5)
		}
		if body := a.Object(t, http.MethodPatch, p(e3), M{"duration": 700}, http.StatusOK); body["duration"] != float64(700) {
			t.Errorf("change p2's entry on the day: %v", body)
		}
		a.Object(t, http.MethodPatch, p(e4), M{"duration": 70}, http.StatusOK)
		mb.Object(t, http.MethodDelete, p(e5), nil, http.StatusOK)

		// Re-approving is idempotent; duplicates collapse; the answer keeps the request's order.
		res = o.approve(t, "approve", item(o.p1, day))
		if len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "APPROVED" || res[0]["createdAt"] != pd["createdAt"] {
			t.Errorf("re-approve: %v, want the same record %v", res, pd)
		}
		res = o.approve(t, "approve", item(o.p2, day3), item(o.p2, day3), item(o.p1, day), item(o.p2, day3))
		if len(res) != 2 || testenv.Num(res[0]["project"]) != o.p2 || res[0]["day"] != day3 || res[0]["validationStatus"] != "APPROVED" ||
			res[1]["id"] != pd["id"] {
			t.Errorf("approve with duplicates: %v", res)
		}
		if days := a.List(t, "/v1/project-days"); len(days) != 2 {
			t.Errorf("project days after the duplicates: %v", days)
		}
		// A day without entries can be approved too; it is closed all the same.
		a.Fail(t, http.MethodPost, entriesPath, work(o.p2, o.t2, day3, 60), http.StatusForbidden, "day_approved")

		// Unapprove: the record stays, NOTAPPROVED; the entries are NOTAPPROVED and writable again.
		res = o.approve(t, "unapprove", item(o.p1, day))
		if len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "NOTAPPROVED" || res[0]["createdAt"] != pd["createdAt"] ||
			!isTimestamp(res[0]["updatedAt"]) || res[0]["updatedAt"].(string) < pd["updatedAt"].(string) {
			t.Errorf("unapprove: %v (approved was %v)", res, pd)
		}
		if got := a.Get(t, "project-days", id(pd)); got["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("project day after unapprove: %v", got)
		}
		for _, rec := range []M{e1, e2} {
			if got := status(rec); got != "NOTAPPROVED" {
				t.Errorf("entry %d after unapprove: %v", id(rec), got)
			}
		}
		if n := len(o.entries(t, M{"validationStatus": "APPROVED"})); n != 0 {
			t.Errorf("%d APPROVED entries after unapprove", n)
		}
		if body := mb.Object(t, http.MethodPatch, p(e2), M{"duration": 1700}, http.StatusOK); body["duration"] != float64(1700) || body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("member changes their entry after unapprove: %v", body)
		}
		e6 := mb.Create(t, "time-entries", work(o.p1, o.t1, day, 60))
		if e6["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("new entry after unapprove: %v", e6)
		}
		if body := a.Object(t, http.MethodPatch, p(e4), M{"day": day}, http.StatusOK); body["day"] != day {
			t.Errorf("move an entry into the unapproved day: %v", body)
		}
		a.Object(t, http.MethodDelete, p(e1), nil, http.StatusOK)
		// Unapproving twice is idempotent as well.
		if res := o.approve(t, "unapprove", item(o.p1, day)); len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("second unapprove: %v", res)
		}
		// Approving again closes the pair again and catches the entries written meanwhile.
		o.approve(t, "approve", item(o.p1, day))
		for _, rec := range []M{e2, e4, e6} {
			if got := status(rec); got != "APPROVED" {
				t.Errorf("entry %d after the second approval: %v", id(rec), got)
			}
		}
		if n := len(o.entries(t, pairWhere)); n != 3 {
			t.Errorf("WORK entries on the pair: %d, want 3", n)
		}
		// Another tenant sees none of it.
		other := o.stranger(t)
		if days := other.List(t, "/v1/project-days"); len(days) != 0 {
			t.Errorf("other tenant's project days: %v", days)
		}
		if st, _, raw := other.Send(t, http.MethodGet, fmt.Sprintf("/v1/project-days/%d", id(pd)), nil); st != http.StatusNotFound {
			t.Errorf("other tenant GETs the project day: %d %s", st, raw)
		}
		// ProjectDays are read-only.
		for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete} {
			path := "/v1/project-days"
			if m != http.MethodPost {
				path += fmt.Sprintf("/%d", id(pd))
			}
			if st, _, _ := a.Send(t, m, path, M{"validationStatus": "NOTAPPROVED"}); st != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %d, want 405", m, path, st)
			}
		}
	})
}

// TestBulkApproveValidation: a bulk approval with any bad part is refused
// whole, naming every bad part, and changes nothing.
func TestBulkApproveValidation(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		foreign := o.foreignProject(t)
		const day, day2 = "2026-04-13", "2026-04-14"
		a.Create(t, "time-entries", M{"project": o.p1, "task": o.t1, "day": day, "duration": 60, "sorting": 1})
		o.member.Create(t, "time-entries", M{"project": o.p2, "task": o.t2, "day": day, "duration": 60, "sorting": 1})
		a.Create(t, "time-entries", M{"project": o.p2, "task": o.t2, "day": day2, "duration": 60, "sorting": 1})
		o.approve(t, "approve", item(o.p2, day2))
		state := func() string {
			_, _, d := a.Send(t, http.MethodGet, "/v1/project-days", nil)
			_, _, te := a.Send(t, http.MethodGet, entriesPath, nil)
			return string(d) + "\n" + string(te)
		}
		before := state()
		good := item(o.p1, day)
		many := make([]any, 1001)
		for i := range many {
			many[i] = item(o.p1, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly))
		}
		approve := func(items ...any) M { return M{"action": "approve", "items": items} }
		cases := []struct {
			name   string
			body   M
			fields []string
		}{
			{"unknown action", M{"action": "close", "items": []any{good}}, []string{"action"}},
			{"upper-case action", M{"action": "APPROVE", "items": []any{good}}, []string{"action"}},
			{"action missing", M{"items": []any{good}}, []string{"action"}},
			{"items missing", M{"action": "approve"}, []string{"items"}},
			{"items empty", approve(), []string{"items"}},
			{"items not an array", M{"action": "approve", "items": good}, []string{"items"}},
			{"too many items", approve(many...), []string{"items"}},
			{"item not an object", approve("p1"), []string{"items[0]"}},
			{"day not a date", approve(item(o.p1, "2026-02-30")), []string{"items[0].day"}},
			{"day in another format", approve(item(o.p1, "13.04.2026")), []string{"items[0].day"}},
			{"day missing", approve(M{"project": o.p1}), []string{"items[0].day"}},
			{"day a number", approve(M{"project": o.p1, "day": 20260413}), []string{"items[0].day"}},
			{"project missing", approve(M{"day": day}), []string{"items[0].project"}},
			{"project a string", approve(M{"project": fmt.Sprint(o.p1), "day": day}), []string{"items[0].project"}},
			{"project zero", approve(item(0, day)), []string{"items[0].project"}},
			{"project fractional", approve(item(float64(o.p1)+0.5, day)), []string{"items[0].project"}},
			{"unknown project", approve(item(999999, day)), []string{"items[0].project"}},
			{"another tenant's project", approve(item(foreign, day)), []string{"items[0].project"}},
			{"a task as project", approve(item(o.t1, day)), []string{"items[0].project"}},
			{"unknown key", M{"action": "approve", "items": []any{good}, "force": true}, []string{"force"}},
			{"one unknown project among good ones", approve(good, item(o.p2, day), item(999999, day)), []string{"items[2].project"}},
			{"one bad day among good ones", approve(good, item(o.p1, "x"), item(o.p2, day)), []string{"items[1].day"}},
			{"one foreign project among good ones", approve(item(foreign, day), good), []string{"items[0].project"}},
			{"unapprove with a bad item", M{"action": "unapprove", "items": []any{item(o.p2, day2), item(999999, day2)}}, []string{"items[1].project"}},
			{"several problems", M{"action": "x", "items": []any{M{}, item(o.p1, day)}}, []string{"action", "items[0].day", "items[0].project"}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				a.Invalid(t, http.MethodPost, bulkPath, c.body, c.fields...)
			})
			if after := state(); after != before {
				t.Fatalf("%s changed the data:\nbefore %s\nafter  %s", c.name, before, after)
			}
		}
		for _, raw := range []string{`{"action":"approve"`, `[{"project":1,"day":"2026-04-13"}]`, ``} {
			a.Fail(t, http.MethodPost, bulkPath, raw, http.StatusBadRequest, "invalid_json")
		}
		// Members are refused whatever they send.
		for _, action := range []string{"approve", "unapprove"} {
			o.member.Fail(t, http.MethodPost, bulkPath, M{"action": action, "items": []any{good, item(o.p2, day2)}}, http.StatusForbidden, "forbidden")
		}
		if after := state(); after != before {
			t.Fatalf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
		}
		// Without a token: 401. Other methods: 405.
		if st, _, raw := a.Anonymous().Send(t, http.MethodPost, bulkPath, approve(good)); st != http.StatusUnauthorized {
			t.Errorf("bulk approve without a token: %d %s", st, raw)
		}
		if st, _, _ := a.Send(t, http.MethodGet, bulkPath, nil); st != http.StatusMethodNotAllowed {
			t.Errorf("GET bulk-approve: %d, want 405", st)
		}
		// The good items alone go through, all of them.
		res := o.approve(t, "approve", good, item(o.p2, day))
		if len(res) != 2 || testenv.Num(res[0]["project"]) != o.p1 || testenv.Num(res[1]["project"]) != o.p2 {
			t.Errorf("good items: %v", res)
		}
		if n := len(o.entries(t, M{"day": day, "validationStatus": "APPROVED"})); n != 2 {
			t.Errorf("APPROVED entries on %s: %d, want 2", day, n)
		}
	})
}

// TestBulkApproveMixed: one approval of several projects on days they
// share and days of their own, over days not approved yet, approved and
// unapproved before, approves exactly its pairs: each of their WORK
// entries and none of the other pairs', the answer in the request's order
// with the records as stored (one per pair), and the change feed shows
// each record it changed once: the entries, then the days in the
// request's order (a day already approved unchanged).
func TestBulkApproveMixed(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		p3 := testenv.ID(t, a.Create(t, "projects", M{"name": "Gamma"}))
		t3 := testenv.ID(t, a.Create(t, "tasks", M{"name": "Run", "project": p3}))
		tasks := map[int64]int64{o.p1: o.t1, o.p2: o.t2, p3: t3}
		days := []string{"2026-05-04", "2026-05-05", "2026-05-06", "2026-05-07"}
		type pr struct {
			project int64
			day     string
		}
		entries := map[pr][]int64{}
		for _, p := range []int64{o.p1, o.p2, p3} {
			for _, d := range days {
				for k := 0; k < 2; k++ {
					rec := a.Create(t, "time-entries", M{"project": p, "task": tasks[p], "day": d, "duration": 60 + k, "sorting": k + 1})
					entries[pr{p, d}] = append(entries[pr{p, d}], testenv.ID(t, rec))
				}
			}
		}
		worktime := testenv.ID(t, a.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": days[0],
			"startTime": days[0] + "T08:00:00.000Z", "endTime": days[0] + "T16:00:00.000Z"}))
		approvedBefore := o.approve(t, "approve", item(o.p1, days[1]))[0]
		o.approve(t, "approve", item(o.p2, days[0]))
		unapprovedBefore := o.approve(t, "unapprove", item(o.p2, days[0]))[0]
		cursor := feedEnd(t, a)

		// p1 and p2 share days 0 and 1; p3 has day 2 alone.
		want := []pr{{o.p2, days[1]}, {o.p1, days[0]}, {p3, days[2]}, {o.p1, days[1]}, {o.p2, days[0]}}
		var items []M
		for _, p := range want {
			items = append(items, item(p.project, p.day))
		}
		res := o.approve(t, "approve", items...)
		if len(res) != len(want) {
			t.Fatalf("approve answered %d records: %v", len(res), res)
		}
		stored := map[int64]M{}
		for _, pd := range a.List(t, "/v1/project-days") {
			stored[testenv.ID(t, pd)] = pd
		}
		if len(stored) != 5 {
			t.Errorf("%d project days stored, want 5: %v", len(stored), stored)
		}
		for i, p := range want {
			got := res[i]
			if testenv.Num(got["project"]) != p.project || got["day"] != p.day || got["validationStatus"] != "APPROVED" {
				t.Errorf("answer %d: %v, want (%d, %s) APPROVED", i, got, p.project, p.day)
			}
			if s := stored[testenv.ID(t, got)]; fmt.Sprint(s) != fmt.Sprint(got) {
				t.Errorf("answer %d: %v, stored %v", i, got, s)
			}
		}
		if fmt.Sprint(res[3]) != fmt.Sprint(approvedBefore) {
			t.Errorf("the day approved before: %v, was %v", res[3], approvedBefore)
		}
		if res[4]["id"] != unapprovedBefore["id"] || res[4]["createdAt"] != unapprovedBefore["createdAt"] {
			t.Errorf("the day unapproved before: %v, was %v", res[4], unapprovedBefore)
		}

		approved := map[pr]bool{}
		for _, p := range want {
			approved[p] = true
		}
		var changedEntries []string
		for p, ids := range entries {
			wantStatus := "NOTAPPROVED"
			if approved[p] {
				wantStatus = "APPROVED"
			}
			for _, id := range ids {
				if got := a.Get(t, "time-entries", id)["validationStatus"]; got != wantStatus {
					t.Errorf("entry %d of (%d, %s): %v, want %s", id, p.project, p.day, got, wantStatus)
				}
				if approved[p] && p != (pr{o.p1, days[1]}) {
					changedEntries = append(changedEntries, fmt.Sprintf("time-entries update %d", id))
				}
			}
		}
		if got := a.Get(t, "time-entries", worktime)["validationStatus"]; got != nil {
			t.Errorf("the WORKTIME entry: validationStatus %v", got)
		}

		changes := feedAfter(t, a, cursor)
		if len(changes) != len(changedEntries)+4 {
			t.Fatalf("the approval's changes: %v\nwant the entries' %v and four days'", changes, changedEntries)
		}
		gotEntries := slices.Sorted(slices.Values(changes[:len(changedEntries)]))
		if !slices.Equal(gotEntries, slices.Sorted(slices.Values(changedEntries))) {
			t.Errorf("the entries' changes: %v, want %v", gotEntries, changedEntries)
		}
		wantDays := []string{
			fmt.Sprintf("project-days create %d", testenv.ID(t, res[0])),
			fmt.Sprintf("project-days create %d", testenv.ID(t, res[1])),
			fmt.Sprintf("project-days create %d", testenv.ID(t, res[2])),
			fmt.Sprintf("project-days update %d", testenv.ID(t, res[4])),
		}
		if got := changes[len(changedEntries):]; !slices.Equal(got, wantDays) {
			t.Errorf("the days' changes: %v, want %v", got, wantDays)
		}

		// Unapproving the same items opens exactly those pairs again.
		for i, pd := range o.approve(t, "unapprove", items...) {
			if pd["id"] != res[i]["id"] || pd["validationStatus"] != "NOTAPPROVED" {
				t.Errorf("unapprove answer %d: %v", i, pd)
			}
		}
		if n := len(o.entries(t, M{"validationStatus": "APPROVED"})); n != 0 {
			t.Errorf("%d APPROVED entries after unapproving", n)
		}
	})
}

// feedEnd is the change feed's cursor after its last change.
func feedEnd(t *testing.T, c *testenv.Client) string {
	t.Helper()
	after := ""
	for {
		next, changes := feedPage(t, c, after)
		if len(changes) == 0 {
			return after
		}
		after = next
	}
}

// feedAfter is the feed's changes after the cursor, as "resource op id".
func feedAfter(t *testing.T, c *testenv.Client, after string) []string {
	t.Helper()
	var out []string
	for {
		next, changes := feedPage(t, c, after)
		if len(changes) == 0 {
			return out
		}
		out = append(out, changes...)
		after = next
	}
}

// feedPage reads one page of the change feed after the cursor.
func feedPage(t *testing.T, c *testenv.Client, after string) (string, []string) {
	t.Helper()
	path := "/v1/changes?limit=1000"
	if after != "" {
		path += "&after=" + url.QueryEscape(after)
	}
	var page struct {
		Changes []struct {
			Resource string
			ID       int64
			Op       string
		}
		Next string
	}
	st, _, raw := c.Send(t, http.MethodGet, path, nil)
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, st, raw)
	}
	testenv.DecodeInto(t, raw, &page)
	var out []string
	for _, ch := range page.Changes {
		out = append(out, fmt.Sprintf("%s %s %d", ch.Resource, ch.Op, ch.ID))
	}
	return page.Next, out
}
