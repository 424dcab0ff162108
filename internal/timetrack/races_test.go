package timetrack_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// approvalRace runs writers against one approval of the project day it.
// Each writer calls write(g) again and again until a write is refused
// with day_approved. The approval starts once every writer has had a
// write accepted (answered ok), so it meets writers in flight; a write
// sent after the approval has answered must be refused, so every writer
// ends. Nothing waits on a clock. write makes writer g's next write and
// returns its status and answer; it is called from the writers'
// goroutines. approvalRace returns the approval's answer, how long it
// took, and the count of the writes' answers by status.
func approvalRace(t *testing.T, admin *testenv.Client, it M, writers, ok int, write func(g int) (int, M)) (approval []M, took time.Duration, statuses map[int]int) {
	t.Helper()
	var (
		mu       sync.Mutex
		answered atomic.Bool // the approval has answered
		first    sync.WaitGroup
		done     sync.WaitGroup
	)
	statuses = map[int]int{}
	first.Add(writers)
	done.Add(writers)
	for g := 0; g < writers; g++ {
		go func() {
			defer done.Done()
			var once sync.Once
			defer once.Do(first.Done)
			for i := 0; ; i++ {
				late := answered.Load()
				st, rec := write(g)
				mu.Lock()
				statuses[st]++
				mu.Unlock()
				switch {
				case st == ok && late:
					t.Errorf("writer %d: a write sent after the approval answered was accepted: %v", g, rec)
					return
				case st == ok:
					once.Do(first.Done)
				case st == http.StatusForbidden && rec["code"] == "day_approved":
					if i == 0 {
						t.Errorf("writer %d: refused before the approval started: %v", g, rec)
					}
					return // approved: every later write is refused too
				default:
					t.Errorf("writer %d: %d %v", g, st, rec)
					return
				}
			}
		}()
	}
	first.Wait()
	t0 := time.Now()
	st, _, raw := admin.Send(t, http.MethodPost, bulkPath, M{"action": "approve", "items": []any{it}})
	took = time.Since(t0)
	answered.Store(true)
	done.Wait()
	if st != http.StatusOK || json.Unmarshal(raw, &approval) != nil {
		t.Fatalf("approve %v: %d %s after %v", it, st, raw, took)
	}
	return approval, took, statuses
}

// send makes a request from a writer's goroutine and decodes its answer.
func send(t *testing.T, c *testenv.Client, method, path string, body M) (int, M) {
	st, _, raw := c.Send(t, method, path, body)
	var rec M
	if err := json.Unmarshal(raw, &rec); err != nil {
		t.Errorf("%s %s: %d, not a JSON object: %s", method, path, st, raw)
	}
	return st, rec
}

// TestApprovalRace: writers POST WORK entries to one (project, day) while
// an admin approves it. Every write either committed before the approval
// (and is APPROVED now) or was refused with day_approved; none slips past.
func TestApprovalRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		const writers, rounds = 16, 5
		for round := 0; round < rounds; round++ {
			day := fmt.Sprintf("2026-06-%02d", round+1)
			project, task := o.p1, o.t1
			if round%2 == 1 {
				project, task = o.p2, o.t2
			}
			var mu sync.Mutex
			created := map[int64]bool{}
			res, _, statuses := approvalRace(t, o.admin, item(project, day), writers, http.StatusCreated, func(g int) (int, M) {
				c := o.admin
				if g%2 == 1 {
					c = o.member
				}
				st, rec := send(t, c, http.MethodPost, entriesPath, M{"project": project, "task": task, "day": day, "duration": 60, "sorting": g})
				if st == http.StatusCreated {
					if rec["validationStatus"] != "NOTAPPROVED" {
						t.Errorf("writer %d: created %v", g, rec)
					}
					mu.Lock()
					created[testenv.Num(rec["id"])] = true
					mu.Unlock()
				}
				return st, rec
			})

			for st, n := range statuses {
				if st >= 500 || (st != http.StatusCreated && st != http.StatusForbidden) {
					t.Errorf("round %d: %d answers with status %d", round, n, st)
				}
			}
			if len(res) != 1 || res[0]["validationStatus"] != "APPROVED" || testenv.Num(res[0]["project"]) != project || res[0]["day"] != day {
				t.Errorf("round %d: approve answered %v", round, res)
			}
			stored := o.entries(t, M{"project": project, "day": day, "trackingType": "WORK"})
			if len(stored) != statuses[http.StatusCreated] || len(stored) != len(created) {
				t.Errorf("round %d: %d entries stored, %d answered 201 (%d distinct ids)", round, len(stored), statuses[http.StatusCreated], len(created))
			}
			for _, rec := range stored {
				id := testenv.ID(t, rec)
				if !created[id] {
					t.Errorf("round %d: stored entry %d was never answered 201", round, id)
				}
				if rec["validationStatus"] != "APPROVED" {
					t.Errorf("round %d: entry %d slipped past the approval: %v", round, id, rec)
				}
			}
			if statuses[http.StatusForbidden] < writers {
				t.Errorf("round %d: %d refusals, want one per writer (%d)", round, statuses[http.StatusForbidden], writers)
			}
			// The pair stays closed.
			o.member.Fail(t, http.MethodPost, entriesPath, M{"project": project, "task": task, "day": day, "duration": 60, "sorting": 1}, http.StatusForbidden, "day_approved")
			t.Logf("%s round %d: %d created, %d refused", b.Name, round, statuses[http.StatusCreated], statuses[http.StatusForbidden])
			if t.Failed() {
				return
			}
		}
	})
}

// TestApprovalRaceWithEdits: while an admin approves a project day, writers
// keep changing its WORK entries and moving entries in and out of it. The
// approval must neither deadlock with them nor let a change through after
// it: every answer is 200 or 403 day_approved, the approval succeeds, and
// each entry ends as its last accepted change left it.
func TestApprovalRaceWithEdits(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		const editors, movers, rounds = 12, 4, 3
		for round := 0; round < rounds; round++ {
			day := fmt.Sprintf("2026-07-%02d", 2*round+1)
			other := fmt.Sprintf("2026-07-%02d", 2*round+2)
			type final struct {
				day      string
				duration float64
			}
			paths := make([]string, editors+movers)
			last := make([]final, editors+movers) // each written by its writer only
			for i := range paths {
				d := day
				if i >= editors {
					d = other
				}
				paths[i] = entryPath(t, o.admin.Create(t, "time-entries", M{"project": o.p1, "task": o.t1, "day": d, "duration": 1, "sorting": i}))
				last[i] = final{d, 1}
			}
			changes := make([]int, len(paths))
			_, took, statuses := approvalRace(t, o.admin, item(o.p1, day), len(paths), http.StatusOK, func(g int) (int, M) {
				changes[g]++
				next := final{last[g].day, float64(1 + changes[g])}
				if g >= editors { // movers go back and forth between the days
					next.day = day
					if last[g].day == day {
						next.day = other
					}
				}
				st, rec := send(t, o.admin, http.MethodPatch, paths[g], M{"day": next.day, "duration": next.duration})
				if st == http.StatusOK {
					last[g] = next
				}
				return st, rec
			})

			for st, n := range statuses {
				if st != http.StatusOK && st != http.StatusForbidden {
					t.Errorf("round %d: %d answers with status %d", round, n, st)
				}
			}
			for g, path := range paths {
				rec := o.admin.Object(t, http.MethodGet, path, nil, http.StatusOK)
				want := "NOTAPPROVED"
				if last[g].day == day {
					want = "APPROVED"
				}
				if rec["day"] != last[g].day || rec["duration"] != last[g].duration || rec["validationStatus"] != want {
					t.Errorf("round %d: entry %s is %v, want day %s, duration %v (its last accepted change), %s",
						round, path, rec, last[g].day, last[g].duration, want)
				}
			}
			if n := len(o.entries(t, M{"project": o.p1, "day": day, "validationStatus": "NOTAPPROVED"})); n != 0 {
				t.Errorf("round %d: %d NOTAPPROVED entries on the approved day", round, n)
			}
			t.Logf("%s round %d: %d changes accepted, %d refused; approval took %v", b.Name, round, statuses[http.StatusOK], statuses[http.StatusForbidden], took)
			if t.Failed() {
				return
			}
		}
	})
}
