package timetrack_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"sync"
	"testing"

	"planwerk/internal/testenv"
)

// TestTotalsAtEveryCommit: the time totals equal the sum over the
// entries at every commit, while writers move entries between users,
// projects and days (across a month's end), others create and delete
// entries, and an admin approves and unapproves days; readers ask all
// along. The moved entries' seconds are a constant every answer must
// show whatever the moves in flight; each created entry adds a known
// amount, so an answer may show only whole ones. Once the writers are
// done, every grouping of several ranges (whole months, a month's end,
// days alone) equals what the list of entries sums to.
func TestTotalsAtEveryCommit(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		users := []int64{a.UserID, o.member.UserID, a.Member(t, "third@ttco.test").UserID}
		churnUser := a.Member(t, "churn@ttco.test").UserID
		type pt struct{ project, task int64 }
		projects := []pt{{o.p1, o.t1}, {o.p2, o.t2}}
		p3 := testenv.ID(t, a.Create(t, "projects", M{"name": "Gamma"}))
		projects = append(projects, pt{p3, testenv.ID(t, a.Create(t, "tasks", M{"name": "Run", "project": p3}))})
		churnProject := testenv.ID(t, a.Create(t, "projects", M{"name": "Churn"}))
		churnTask := testenv.ID(t, a.Create(t, "tasks", M{"name": "Churn", "project": churnProject}))
		// The days entries move among: the last of January and the first
		// of February.
		var days []string
		for d := 25; d <= 31; d++ {
			days = append(days, fmt.Sprintf("2026-01-%02d", d))
		}
		for d := 1; d <= 3; d++ {
			days = append(days, fmt.Sprintf("2026-02-%02d", d))
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const moving, churnSeconds = 30, 7
		var moved int64
		var ids []int64
		for i := range moving {
			p := projects[i%len(projects)]
			secs := int64(600 + 60*i)
			moved += secs
			ids = append(ids, testenv.ID(t, a.Create(t, "time-entries", M{"user": users[i%len(users)],
				"project": p.project, "task": p.task, "day": days[i%len(days)], "duration": secs, "sorting": i})))
		}
		ranges := [][2]string{
			{"2026-01-01", "2026-02-28"}, // whole months
			{"2026-01-20", "2026-02-28"}, // a month's end, then a whole month
			{"2026-01-25", "2026-02-03"}, // days alone
			{"2025-12-01", "2026-03-31"}, // whole months around them
		}

		const movers, moves, churners, churns, approvals = 2, 40, 2, 15, 20
		var wg sync.WaitGroup
		var mu sync.Mutex
		var failures []string
		fail := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			if len(failures) < 10 {
				failures = append(failures, fmt.Sprintf(format, args...))
			}
		}
		for g := range movers {
			r := rand.New(rand.NewPCG(uint64(g), 7))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range moves {
					p := projects[r.IntN(len(projects))]
					id := ids[r.IntN(len(ids))]
					st, _, raw := a.Send(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), M{
						"user": users[r.IntN(len(users))], "project": p.project, "task": p.task, "day": days[r.IntN(len(days))]})
					if st != http.StatusOK && st != http.StatusForbidden { // 403: a day approved
						fail("moving entry %d: %d %s", id, st, raw)
					}
				}
			}()
		}
		for range churners {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range churns {
					st, _, raw := a.Send(t, http.MethodPost, "/v1/time-entries", M{"user": churnUser, "project": churnProject, "task": churnTask,
						"day": days[i%len(days)], "duration": churnSeconds, "sorting": 1})
					if st != http.StatusCreated {
						fail("creating an entry: %d %s", st, raw)
						continue
					}
					id := testenv.ID(t, testenv.Decode(t, raw))
					if i%3 == 0 { // some stay
						continue
					}
					if st, _, raw := a.Send(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", id), nil); st != http.StatusOK && st != http.StatusNoContent {
						fail("deleting entry %d: %d %s", id, st, raw)
					}
				}
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range approvals {
				it := item(projects[i%len(projects)].project, days[rng.IntN(len(days))])
				for _, action := range []string{"approve", "unapprove"} {
					if st, _, raw := a.Send(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": action, "items": []M{it}}); st != http.StatusOK {
						fail("%s %v: %d %s", action, it, st, raw)
					}
				}
			}
		}()
		writersDone := make(chan struct{})
		go func() { wg.Wait(); close(writersDone) }()

		// check asks for every grouping of a range and checks what any
		// commit must show: the moved seconds whole, churned entries whole.
		check := func(rg [2]string) {
			for _, groupBy := range []string{"", "user", "project", "day"} {
				ans := totalsOf(t, a, rg[0], rg[1], groupBy)
				work := int64(ans.Totals["WORK"])
				if extra := work - moved; extra < 0 || extra%churnSeconds != 0 {
					fail("%s..%s by %q: WORK %d, want %d and whole %d-second entries", rg[0], rg[1], groupBy, work, moved, churnSeconds)
				}
				var sum, churned int64
				for _, g := range ans.Groups {
					s, _ := g["seconds"].(map[string]any)
					w, _ := s["WORK"].(float64)
					sum += int64(w)
					if k, _ := g[groupBy].(float64); (groupBy == "user" && int64(k) == churnUser) || (groupBy == "project" && int64(k) == churnProject) {
						churned += int64(w)
					}
				}
				if groupBy != "" && sum != work {
					fail("%s..%s by %s: groups sum to %d, totals %d", rg[0], rg[1], groupBy, sum, work)
				}
				if (groupBy == "user" || groupBy == "project") && sum-churned != moved {
					fail("%s..%s by %s: the moved entries' groups sum to %d, want %d", rg[0], rg[1], groupBy, sum-churned, moved)
				}
			}
		}
		reads := 0
	read:
		for {
			select {
			case <-writersDone:
				break read
			default:
			}
			check(ranges[reads%len(ranges)])
			reads++
		}
		for _, f := range failures {
			t.Error(f)
		}
		if t.Failed() {
			return
		}

		// At rest: every grouping equals the list's sums.
		entries := a.List(t, "/v1/time-entries?limit=50000")
		for _, rg := range append(ranges, [2]string{"2026-01-31", "2026-02-01"}, [2]string{"2026-02-02", "2026-02-02"}) {
			for _, groupBy := range []string{"", "user", "project", "day"} {
				want := map[string]map[string]int64{}
				for _, e := range entries {
					day, _ := e["day"].(string)
					if day < rg[0] || day > rg[1] {
						continue
					}
					key := ""
					if groupBy != "" {
						key = fmt.Sprint(e[groupBy])
					}
					if want[key] == nil {
						want[key] = map[string]int64{}
					}
					d, _ := e["duration"].(float64)
					want[key][fmt.Sprint(e["trackingType"])] += int64(d)
				}
				ans := totalsOf(t, a, rg[0], rg[1], groupBy)
				got := map[string]map[string]int64{}
				if groupBy == "" {
					if len(want) > 0 {
						got[""] = map[string]int64{}
						for tt, s := range ans.Totals {
							if s != 0 {
								got[""][tt] = int64(s)
							}
						}
					}
				}
				for _, g := range ans.Groups {
					s, _ := g["seconds"].(map[string]any)
					m := map[string]int64{}
					for tt, v := range s {
						if f, _ := v.(float64); f != 0 {
							m[tt] = int64(f)
						}
					}
					got[fmt.Sprint(g[groupBy])] = m
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s..%s by %q: %v, the entries sum to %v", rg[0], rg[1], groupBy, got, want)
				}
			}
		}
		t.Logf("%d reads beside %d moves, %d creates and %d approvals", reads, movers*moves, churners*churns, 2*approvals)
	})
}

// totalsOf GETs the totals (groupBy "": the totals alone).
func totalsOf(t *testing.T, c *testenv.Client, from, to, groupBy string) totalsAnswer {
	t.Helper()
	if groupBy == "" {
		var ans totalsAnswer
		st, _, raw := c.Send(t, http.MethodGet, "/v1/analytics/time-totals?from="+from+"&to="+to, nil)
		if st != http.StatusOK {
			t.Errorf("totals %s..%s: %d %s", from, to, st, raw)
			return ans
		}
		testenv.DecodeInto(t, raw, &ans)
		return ans
	}
	return totals(t, c, from, to, groupBy)
}
