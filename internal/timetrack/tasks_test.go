package timetrack_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

var tasksColl = store.Collection{Table: "records", Resource: "tasks"}

// taskPath is the path of a task.
func taskPath(id int64) string { return fmt.Sprintf("/v1/tasks/%d", id) }

// TestEntryTaskProject: a WORK entry's task belongs to the entry's project
// or to none, on create and on every kind of change; a breach → 400
// naming task, and nothing is written.
func TestEntryTaskProject(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		free := testenv.ID(t, o.admin.Create(t, "tasks", M{"name": "Anything"})) // no project
		foreign := testenv.ID(t, o.stranger(t).Create(t, "tasks", M{"name": "Foreign"}))
		const day = "2026-04-01"
		work := func(kv ...any) M {
			return with(M{"day": day, "project": o.p1, "task": o.t1, "duration": 600, "sorting": 1}, kv...)
		}
		brk := M{"trackingType": "BREAK", "day": day, "duration": 600, "sorting": 1}

		creates := []struct {
			name   string
			member bool
			body   M
			want   []string // nil: 201
		}{
			{"task of the entry's project", false, work(), nil},
			{"task of another project", false, work("task", o.t2), []string{"task"}},
			{"project of another task", false, work("project", o.p2), []string{"task"}},
			{"a member's entry with another project's task", true, work("task", o.t2), []string{"task"}},
			{"task without project", false, work("task", free), nil},
			{"task without project, the other project", true, work("task", free, "project", o.p2), nil},
			{"another tenant's task", false, work("task", foreign), []string{"task"}},
		}
		for _, c := range creates {
			t.Run("create: "+c.name, func(t *testing.T) {
				cl := o.admin
				if c.member {
					cl = o.member
				}
				before := len(o.admin.List(t, entriesPath))
				if c.want == nil {
					rec := cl.Create(t, "time-entries", c.body)
					if fmt.Sprint(rec["task"]) != fmt.Sprint(c.body["task"]) || fmt.Sprint(rec["project"]) != fmt.Sprint(c.body["project"]) {
						t.Errorf("created %v from %v", rec, c.body)
					}
					return
				}
				cl.Invalid(t, http.MethodPost, entriesPath, c.body, c.want...)
				if n := len(o.admin.List(t, entriesPath)); n != before {
					t.Errorf("a refused create stored an entry: %d → %d", before, n)
				}
			})
		}

		updates := []struct {
			name   string
			from   M
			method string
			body   M
			want   []string // nil: 200
		}{
			{"PATCH of the task alone", work(), http.MethodPatch, M{"task": o.t2}, []string{"task"}},
			{"PATCH of the project alone", work(), http.MethodPatch, M{"project": o.p2}, []string{"task"}},
			{"PATCH of project and task together", work(), http.MethodPatch, M{"project": o.p2, "task": o.t2}, nil},
			{"PATCH to a task without project", work(), http.MethodPatch, M{"task": free}, nil},
			{"PATCH of the project under a task without project", work("task", free), http.MethodPatch, M{"project": o.p2}, nil},
			{"PATCH from a task without project to another project's", work("task", free), http.MethodPatch, M{"task": o.t2}, []string{"task"}},
			{"PATCH of the duration alone", work(), http.MethodPatch, M{"duration": 1200}, nil},
			{"PUT with another project's task", work(), http.MethodPut, work("task", o.t2), []string{"task"}},
			{"PUT of project and task together", work(), http.MethodPut, work("project", o.p2, "task", o.t2), nil},
			{"a BREAK into WORK with another project's task", brk, http.MethodPatch, M{"trackingType": "WORK", "project": o.p1, "task": o.t2}, []string{"task"}},
			{"a BREAK into WORK with its project's task", brk, http.MethodPatch, M{"trackingType": "WORK", "project": o.p2, "task": o.t2}, nil},
		}
		for _, c := range updates {
			t.Run("update: "+c.name, func(t *testing.T) {
				rec := o.admin.Create(t, "time-entries", c.from)
				path := entryPath(t, rec)
				if c.want == nil {
					got := o.admin.Object(t, c.method, path, c.body, http.StatusOK)
					for _, k := range []string{"project", "task"} {
						if v, ok := c.body[k]; ok && fmt.Sprint(got[k]) != fmt.Sprint(v) {
							t.Errorf("%s = %v, sent %v", k, got[k], v)
						}
					}
					return
				}
				o.admin.Invalid(t, c.method, path, c.body, c.want...)
				if got := o.admin.Object(t, http.MethodGet, path, nil, http.StatusOK); got["updatedAt"] != rec["updatedAt"] || got["task"] != rec["task"] || got["project"] != rec["project"] {
					t.Errorf("after the refused change: %v, was %v", got, rec)
				}
			})
		}

		// The refusal says which task belongs to which project.
		got := o.admin.Invalid(t, http.MethodPost, entriesPath, work("task", o.t2), "task")
		want := fmt.Sprintf("task %d belongs to project %d, not to the entry's project %d", o.t2, o.p2, o.p1)
		if msg := testenv.ProblemMessage(got, "task"); !strings.HasPrefix(msg, want) {
			t.Errorf("message %q, want %q", msg, want)
		}
	})
}

// TestTaskProject: tasks declare project, a reference to a project of the
// tenant that populate expands; a task is refused a project while WORK
// entries of another project name it (400 naming project and the
// entries), and may always drop its project.
func TestTaskProject(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		foreign := o.foreignProject(t)

		// The declared reference.
		a.Invalid(t, http.MethodPost, "/v1/tasks", M{"name": "X", "project": foreign}, "project")
		a.Invalid(t, http.MethodPost, "/v1/tasks", M{"name": "X", "project": 999999}, "project")
		a.Invalid(t, http.MethodPost, "/v1/tasks", M{"name": "X", "project": "Alpha"}, "project")
		a.Invalid(t, http.MethodPost, "/v1/tasks", M{"name": "X", "project": o.t1}, "project")
		if got := a.Object(t, http.MethodGet, taskPath(o.t1)+"?populate=project", nil, http.StatusOK); func() bool {
			p, _ := got["project"].(map[string]any)
			return p == nil || p["name"] != "Alpha"
		}() {
			t.Errorf("populate=project: %v", got)
		}

		const day = "2026-04-02"
		entry := func(project, task int64) M {
			return a.Create(t, "time-entries", M{"day": day, "project": project, "task": task, "duration": 60, "sorting": 1})
		}
		loose := testenv.ID(t, a.Create(t, "tasks", M{"name": "Loose"}))
		e1 := testenv.ID(t, entry(o.p1, loose))
		// Only WORK entries count; WORKTIME and BREAK name no task.
		a.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": day, "startTime": "2026-04-02T08:00:00.000Z", "endTime": "2026-04-02T09:00:00.000Z"})

		steps := []struct {
			name   string
			method string
			body   M
			want   []string // nil: 200
		}{
			{"to another project", http.MethodPatch, M{"project": o.p2}, []string{"project"}},
			{"PUT to another project", http.MethodPut, M{"name": "Loose", "project": o.p2}, []string{"project"}},
			{"to another tenant's project", http.MethodPatch, M{"project": foreign}, []string{"project"}},
			{"to the entries' project", http.MethodPatch, M{"project": o.p1}, nil},
			{"keeping the project", http.MethodPatch, M{"name": "Kept"}, nil},
			{"from the entries' project to another", http.MethodPatch, M{"project": o.p2}, []string{"project"}},
			{"to no project", http.MethodPatch, M{"project": nil}, nil},
			{"again to another project", http.MethodPatch, M{"project": o.p2}, []string{"project"}},
		}
		for _, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				before := a.Get(t, "tasks", loose)
				if s.want == nil {
					got := a.Object(t, s.method, taskPath(loose), s.body, http.StatusOK)
					if v, ok := s.body["project"]; ok && fmt.Sprint(got["project"]) != fmt.Sprint(v) {
						t.Errorf("project = %v, sent %v", got["project"], v)
					}
					return
				}
				a.Invalid(t, s.method, taskPath(loose), s.body, s.want...)
				if got := a.Get(t, "tasks", loose); got["updatedAt"] != before["updatedAt"] {
					t.Errorf("a refused change was written: %v, was %v", got, before)
				}
			})
		}

		// The refusal names the entries in the way, the first few of many.
		got := a.Invalid(t, http.MethodPatch, taskPath(loose), M{"project": o.p2}, "project")
		if msg := testenv.ProblemMessage(got, "project"); !strings.Contains(msg, fmt.Sprintf("%d (project %d)", e1, o.p1)) || strings.Contains(msg, "and more") {
			t.Errorf("one conflicting entry: message %q", msg)
		}
		busy := testenv.ID(t, a.Create(t, "tasks", M{"name": "Busy"}))
		var ids []int64
		for i := 0; i < 4; i++ {
			ids = append(ids, testenv.ID(t, entry(o.p1, busy)))
		}
		other := testenv.ID(t, entry(o.p2, busy))
		got = a.Invalid(t, http.MethodPatch, taskPath(busy), M{"project": o.p2}, "project")
		if msg := testenv.ProblemMessage(got, "project"); !strings.Contains(msg, fmt.Sprintf("%d (project %d), %d (project %d), %d (project %d) and more", ids[0], o.p1, ids[1], o.p1, ids[2], o.p1)) {
			t.Errorf("four conflicting entries: message %q", msg)
		}
		got = a.Invalid(t, http.MethodPatch, taskPath(busy), M{"project": o.p1}, "project")
		if msg := testenv.ProblemMessage(got, "project"); !strings.Contains(msg, fmt.Sprintf(": %d (project %d);", other, o.p2)) {
			t.Errorf("one conflicting entry of the other project: message %q", msg)
		}

		// Once the entries are gone or agree, the change is allowed.
		a.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", other), nil, http.StatusOK)
		a.Object(t, http.MethodPatch, taskPath(busy), M{"project": o.p1}, http.StatusOK)
		a.Object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", e1), M{"project": o.p2}, http.StatusOK)
		a.Object(t, http.MethodPatch, taskPath(loose), M{"project": o.p2}, http.StatusOK)

		// Tasks filter by their project.
		if got := a.IDs(t, fmt.Sprintf(`/v1/tasks?where={"project":%d}&sort=id`, o.p1)); len(got) != 2 || got[0] != o.t1 || got[1] != busy {
			t.Errorf("tasks of project %d: %v", o.p1, got)
		}
	})
}

// TestEntryTaskProjectStored: entries that disagreed with their task before
// the rule (here: the task changed behind the service's back) stay as they
// are and can be read and deleted; a change is checked on the entry it
// leaves, so it must set the task or the project right.
func TestEntryTaskProjectStored(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		task := testenv.ID(t, a.Create(t, "tasks", M{"name": "Old", "project": o.p1}))
		body := M{"day": "2026-04-03", "project": o.p1, "task": task, "duration": 60, "sorting": 1}
		kept, gone := a.Create(t, "time-entries", body), a.Create(t, "time-entries", body)
		ctx := t.Context()
		db := o.srv.Service.DB
		if err := db.Tx(ctx, func(q store.Querier) error {
			return setProject(ctx, db.Records(q, o.tenant, tasksColl), task, o.p2)
		}); err != nil {
			t.Fatal(err)
		}

		path := entryPath(t, kept)
		if got := a.Object(t, http.MethodGet, path, nil, http.StatusOK); got["updatedAt"] != kept["updatedAt"] || testenv.Num(got["project"]) != o.p1 {
			t.Errorf("the stored entry changed: %v, was %v", got, kept)
		}
		if n := len(o.entries(t, M{"task": task})); n != 2 {
			t.Errorf("%d entries name the task, want 2", n)
		}
		a.Invalid(t, http.MethodPatch, path, M{"duration": 120}, "task")
		a.Object(t, http.MethodDelete, entryPath(t, gone), nil, http.StatusOK)
		if got := a.Object(t, http.MethodPatch, path, M{"project": o.p2, "duration": 120}, http.StatusOK); got["duration"] != float64(120) {
			t.Errorf("PATCH setting the project right: %v", got)
		}
	})
}

// setProject sets a task's project as a change written before the rule
// would have: directly, under the task's row lock.
func setProject(ctx context.Context, tasks store.Records, id, project int64) error {
	rec, err := tasks.Lock(ctx, id)
	if err != nil {
		return err
	}
	var doc M
	if err := json.Unmarshal(rec.Doc, &doc); err != nil {
		return err
	}
	doc["project"] = project
	_, err = tasks.Update(ctx, id, doc["createdAt"].(string), doc)
	return err
}

// answer is a request's status and body.
type answer struct {
	status int
	body   M
}

// holding runs hold in a transaction of the service's database and, while
// it is open, sends the requests. With wait set, on PostgreSQL it waits
// until each request waits for the transaction's locks (pg_blocking_pids:
// for the transaction itself or for a request queued before it), and
// fails the test when one is answered first; SQLite runs one write
// transaction at a time, so there the requests' writes follow the
// transaction by construction. Without wait (PostgreSQL only) every
// request must be answered while the transaction is open, and the test
// fails when one waits for it. holding returns the answers once the
// transaction has committed.
func holding(t *testing.T, o *office, b testenv.Backend, wait bool, hold func(ctx context.Context, q store.Querier) error, requests ...func() (int, M)) []answer {
	t.Helper()
	ctx := t.Context()
	db := o.srv.Service.DB
	answers := make([]chan answer, len(requests))
	runs := 0
	err := db.Tx(ctx, func(q store.Querier) error {
		if runs++; runs > 1 {
			return fmt.Errorf("the holding transaction was retried")
		}
		if err := hold(ctx, q); err != nil {
			return err
		}
		for i, r := range requests {
			answers[i] = make(chan answer, 1)
			go func() {
				st, m := r()
				answers[i] <- answer{st, m}
			}()
		}
		if b.Name != "postgres" {
			return nil
		}
		var pid int
		if err := q.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
			return err
		}
		for {
			answered := 0
			for i, ch := range answers {
				select {
				case a := <-ch:
					ch <- a
					if wait {
						return fmt.Errorf("request %d was answered (%d %v) while the transaction held its locks", i, a.status, a.body)
					}
					answered++
				default:
				}
			}
			if answered == len(requests) {
				return nil
			}
			// Waiting for the transaction, or for another waiter ahead
			// in the queue of the same row.
			var waiting int
			if err := db.QueryRowContext(ctx, `WITH RECURSIVE w(pid) AS (
					SELECT pid FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))
					UNION SELECT a.pid FROM pg_stat_activity a JOIN w ON w.pid = ANY(pg_blocking_pids(a.pid)))
				SELECT count(*) FROM w`, pid).Scan(&waiting); err != nil {
				return err
			}
			switch {
			case wait && waiting >= len(requests):
				return nil
			case !wait && waiting > 0:
				return fmt.Errorf("%d requests wait for the transaction's locks", waiting)
			}
			time.Sleep(time.Millisecond) // polls a condition; no outcome depends on it
		}
	})
	if err != nil {
		t.Error(err)
	}
	out := make([]answer, len(answers))
	for i, ch := range answers {
		if ch != nil {
			out[i] = <-ch
		}
	}
	return out
}

// TestTaskProjectRace: a WORK entry and a change of its task's project
// that meet are serialised on the task: whichever commits second sees
// the first and is refused, so they never both succeed and disagree.
func TestTaskProjectRace(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		a := o.admin
		const day = "2026-04-06"
		newTask := func(name string) int64 { return testenv.ID(t, a.Create(t, "tasks", M{"name": name})) }
		post := func(task int64) func() (int, M) {
			return func() (int, M) {
				return send(t, a, http.MethodPost, entriesPath, M{"day": day, "project": o.p1, "task": task, "duration": 60, "sorting": 1})
			}
		}
		patch := func(task int64) func() (int, M) {
			return func() (int, M) { return send(t, a, http.MethodPatch, taskPath(task), M{"project": o.p2}) }
		}
		agree := func(task int64) {
			t.Helper()
			p := testenv.Num(a.Get(t, "tasks", task)["project"])
			for _, e := range o.entries(t, M{"task": task}) {
				if p != 0 && testenv.Num(e["project"]) != p {
					t.Errorf("task %d is of project %d, its entry %v is not", task, p, e)
				}
			}
		}

		t.Run("an entry waits for a change of its task", func(t *testing.T) {
			task := newTask("A")
			got := holding(t, o, b, true, func(ctx context.Context, q store.Querier) error {
				return setProject(ctx, o.srv.Service.DB.Records(q, o.tenant, tasksColl), task, o.p2)
			}, post(task))
			if got[0].status != http.StatusBadRequest || testenv.ProblemMessage(got[0].body, "task") == "" {
				t.Errorf("entry of project %d naming a task moved to %d: %d %v", o.p1, o.p2, got[0].status, got[0].body)
			}
			agree(task)
		})

		t.Run("a change of a task waits for an entry", func(t *testing.T) {
			task := newTask("B")
			var entry int64
			got := holding(t, o, b, true, func(ctx context.Context, q store.Querier) error {
				db := o.srv.Service.DB
				if _, err := db.Records(q, o.tenant, tasksColl).Share(ctx, task); err != nil {
					return err
				}
				rec, err := db.Records(q, o.tenant, store.Collection{Table: "records", Resource: "time-entries"}).Insert(ctx, map[string]any{
					"user": o.admin.UserID, "trackingType": "WORK", "validationStatus": "NOTAPPROVED",
					"day": day, "project": o.p1, "task": task, "duration": 60, "sorting": 1})
				entry = rec.ID
				return err
			}, patch(task))
			if msg := testenv.ProblemMessage(got[0].body, "project"); got[0].status != http.StatusBadRequest || !strings.Contains(msg, fmt.Sprintf("%d (project %d)", entry, o.p1)) {
				t.Errorf("task moved to %d under an entry of %d: %d %v", o.p2, o.p1, got[0].status, got[0].body)
			}
			agree(task)
		})

		t.Run("entries of one task do not wait for each other", func(t *testing.T) {
			if b.Name != "postgres" {
				t.Skip("SQLite runs one write transaction at a time")
			}
			task := newTask("D")
			got := holding(t, o, b, false, func(ctx context.Context, q store.Querier) error {
				_, err := o.srv.Service.DB.Records(q, o.tenant, tasksColl).Share(ctx, task)
				return err
			}, post(task))
			if got[0].status != http.StatusCreated {
				t.Errorf("entry beside another naming its task: %d %v", got[0].status, got[0].body)
			}
		})

		t.Run("an entry and a change of its task at once", func(t *testing.T) {
			task := newTask("C")
			got := holding(t, o, b, true, func(ctx context.Context, q store.Querier) error {
				_, err := o.srv.Service.DB.Records(q, o.tenant, tasksColl).Lock(ctx, task)
				return err
			}, post(task), patch(task))
			entryOK, taskOK := got[0].status == http.StatusCreated, got[1].status == http.StatusOK
			if entryOK == taskOK {
				t.Errorf("the entry answered %d %v, the change of its task %d %v: want exactly one to succeed", got[0].status, got[0].body, got[1].status, got[1].body)
			}
			for i, field := range []string{"task", "project"} {
				if ok := []bool{entryOK, taskOK}[i]; !ok && (got[i].status != http.StatusBadRequest || testenv.ProblemMessage(got[i].body, field) == "") {
					t.Errorf("refused with %d %v, want 400 naming %s", got[i].status, got[i].body, field)
				}
			}
			agree(task)
		})
	})
}
