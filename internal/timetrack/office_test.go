package timetrack_test

// Black-box tests of time tracking: account settings, the field rules of
// time entries, who may write them, the agreement of their tasks and
// projects, the approval of project days and the time totals report.
// Every test runs the real service on SQLite and on PostgreSQL; this file
// holds the tenant they share.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// M is a JSON object of a request or an answer.
type M = testenv.M

// office is a tenant ready for time tracking: its admin, a member, two
// projects and a task of each.
type office struct {
	srv           *testenv.Server
	tenant        int64
	admin, member *testenv.Client
	p1, p2        int64 // projects
	t1, t2        int64 // tasks of p1 and p2
}

// newOffice starts the service on the backend and prepares the tenant.
func newOffice(t *testing.T, b testenv.Backend) *office {
	t.Helper()
	srv := testenv.Start(t, b)
	tn := srv.CreateTenant(t, "ttco")
	admin := srv.SignIn(t, tn)
	o := &office{srv: srv, tenant: tn.ID, admin: admin, member: admin.Member(t, "member@ttco.test")}
	if u := admin.Get(t, "users", o.member.UserID); u["isAdmin"] != false {
		t.Fatalf("member is an admin: %v", u)
	}
	o.p1 = testenv.ID(t, admin.Create(t, "projects", M{"name": "Alpha"}))
	o.p2 = testenv.ID(t, admin.Create(t, "projects", M{"name": "Beta"}))
	o.t1 = testenv.ID(t, admin.Create(t, "tasks", M{"name": "Build", "project": o.p1}))
	o.t2 = testenv.ID(t, admin.Create(t, "tasks", M{"name": "Test", "project": o.p2}))
	return o
}

// stranger is the admin of another tenant.
func (o *office) stranger(t *testing.T) *testenv.Client {
	t.Helper()
	return o.srv.SignIn(t, o.srv.CreateTenant(t, "ttother"))
}

// foreignProject is a project of another tenant.
func (o *office) foreignProject(t *testing.T) int64 {
	t.Helper()
	return testenv.ID(t, o.stranger(t).Create(t, "projects", M{"name": "Foreign"}))
}

// settings sets the account settings as the admin.
func (o *office) settings(t *testing.T, mode string, worktime bool) {
	t.Helper()
	body := o.admin.Object(t, http.MethodPatch, "/v1/account/settings", M{"timerMode": mode, "useWorktime": worktime}, http.StatusOK)
	if body["timerMode"] != mode || body["useWorktime"] != worktime {
		t.Fatalf("set settings %s/%v: %v", mode, worktime, body)
	}
}

// approve posts a bulk approval as the admin and returns its records.
func (o *office) approve(t *testing.T, action string, items ...M) []M {
	t.Helper()
	return o.admin.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": action, "items": items}, http.StatusOK)
}

// entries lists the time entries a where criterion selects.
func (o *office) entries(t *testing.T, where M) []M {
	t.Helper()
	w, err := json.Marshal(where)
	if err != nil {
		t.Fatal(err)
	}
	return o.admin.List(t, "/v1/time-entries?where="+url.QueryEscape(string(w)))
}

// item is one (project, day) of a bulk approval.
func item(project any, day string) M {
	return M{"project": project, "day": day}
}

// with is base with the key/value pairs kv set.
func with(base M, kv ...any) M {
	out := M{}
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// entryPath is the path of a time entry.
func entryPath(t *testing.T, rec M) string {
	t.Helper()
	return fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, rec))
}

func isTimestamp(v any) bool {
	s, ok := v.(string)
	if !ok || len(s) != len("2006-01-02T15:04:05.000Z") {
		return false
	}
	_, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	return err == nil
}
