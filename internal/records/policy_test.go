package records_test

// The role model as one table (docs/api.md "Roles", "Tenancy";
// docs/decisions.md "Roles", "Who may write"): every resource of the
// registry and every method, plus the endpoints that are not resources,
// for an admin, a member on their own record, a member on someone else's
// record and the admin of another tenant. Every refused write is checked
// to have written nothing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime/multipart"
	"net/http"
	"reflect"
	"testing"

	"planwerk/internal/resource"
	"planwerk/internal/testenv"
)

// polRole is who calls, and on which record.
type polRole string

const (
	polAdmin   polRole = "admin"         // the tenant's admin, on a record of the tenant
	polOwn     polRole = "member-own"    // a member, on a record about themselves
	polOther   polRole = "member-other"  // a member, on a record of someone else
	polHidden  polRole = "member-hidden" // a member, on a user document about someone else
	polForeign polRole = "foreign-admin" // another tenant's admin, on the tenant's record
)

// polList stands for GET on the collection in the method lists.
const polList = "LIST"

var polMethods = []string{http.MethodPost, polList, http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete}

// polWant is the policy table: the status role gets for method on r.
func polWant(r *resource.Resource, role polRole, method string) int {
	read := method == polList || method == http.MethodGet
	if r.ReadOnly && !read {
		return http.StatusMethodNotAllowed
	}
	switch role {
	case polAdmin:
		if method == http.MethodPost {
			return http.StatusCreated
		}
		return http.StatusOK
	case polOwn:
		switch {
		case read:
			return http.StatusOK
		case r.Write == resource.OwnRecords && method == http.MethodPost:
			return http.StatusCreated
		case r.Write == resource.OwnRecords:
			return http.StatusOK
		}
		return http.StatusForbidden
	case polOther:
		if read {
			return http.StatusOK
		}
		return http.StatusForbidden
	case polHidden:
		switch method {
		case polList:
			return http.StatusOK // without the record
		case http.MethodPost:
			return http.StatusForbidden
		}
		return http.StatusNotFound
	case polForeign:
		if method == polList {
			return http.StatusOK // without the record
		}
		return http.StatusNotFound
	}
	panic("unknown role " + role)
}

// polEnv is tenant acme (admin, member) and tenant beta (its admin).
type polEnv struct {
	admin, member, foreign *testenv.Client
	// bodies are the admin's valid bodies of every resource.
	bodies *bodies
	seq    int
}

func polSetup(t *testing.T, b testenv.Backend) *polEnv {
	t.Helper()
	srv := testenv.Start(t, b)
	ta := srv.CreateTenant(t, "acme")
	tb := srv.CreateTenant(t, "beta")
	e := &polEnv{admin: srv.SignIn(t, ta), foreign: srv.SignIn(t, tb)}
	e.member = e.admin.Member(t, "member@acme.test")
	e.bodies = newBodies(e.admin)
	return e
}

// body is a valid create body of r, labelled. owner is the user the
// record is about; 0 leaves the user out where that is allowed.
func (e *polEnv) body(t *testing.T, r *resource.Resource, owner int64) M {
	t.Helper()
	e.seq++
	body := e.bodies.body(t, r, M{"label": fmt.Sprintf("policy %s %d", r.Name, e.seq)})
	if _, ok := r.Attr("user"); ok && owner != 0 {
		body["user"] = owner
	}
	return body
}

// polCountPath lists every record of r that a POST could add: the tag
// list shows plain tags only, unless includeSkills=true.
func polCountPath(r *resource.Resource) string {
	if r.Name == "tags" {
		return r.Path() + "?includeSkills=true&limit=50000"
	}
	return r.Path() + "?limit=50000"
}

func polRecPath(r *resource.Resource, rec M) string {
	f, _ := rec["id"].(float64)
	return fmt.Sprintf("%s/%d", r.Path(), int64(f))
}

// snapshot is a record as the admin sees it (nil when it is gone).
func (e *polEnv) snapshot(t *testing.T, r *resource.Resource, rec M) M {
	t.Helper()
	status, _, raw := e.admin.Send(t, http.MethodGet, polRecPath(r, rec), nil)
	if status == http.StatusNotFound {
		return nil
	}
	if status != http.StatusOK {
		t.Fatalf("admin GET %s: %d %s", polRecPath(r, rec), status, raw)
	}
	var m M
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// aboutMember is a record about the member that is not theirs to write
// (nil: the member's own POST makes it, for resources they write their
// own records of); ok is false when r has no records about a user.
func (e *polEnv) aboutMember(t *testing.T, r *resource.Resource) (rec M, ok bool) {
	t.Helper()
	m := e.member
	switch {
	case r.Write == resource.OwnRecords:
		return nil, true
	case r.Name == "users":
		return e.admin.Get(t, "users", m.UserID), true
	case r.Name == "documents":
		// A member sees a user document about themselves when
		// visibleToUser is true.
		return e.admin.Create(t, r.Name, M{"model": "user", "record": m.UserID, "category": 1, "visibleToUser": true}), true
	}
	if _, ok := r.Attr("user"); ok && !r.ReadOnly {
		return e.admin.Create(t, r.Name, e.body(t, r, m.UserID)), true
	}
	return nil, false
}

// absent makes sure c's tenant has no record res/id: a test's premise
// when it uses id as another tenant's record.
func absent(t *testing.T, c *testenv.Client, res string, id int64) {
	t.Helper()
	if status, _, _ := c.Send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil); status != http.StatusNotFound {
		t.Fatalf("premise: %s %d exists in tenant %s (status %d)", res, id, c.Slug, status)
	}
}

// polCheck runs every method of the table for one role on one record
// (target nil: the role's POST creates it) and checks the answers and,
// for refused writes, that nothing changed.
func (e *polEnv) check(t *testing.T, r *resource.Resource, role polRole, c *testenv.Client, target M) {
	t.Helper()
	for _, method := range polMethods {
		want := polWant(r, role, method)
		what := fmt.Sprintf("%s %s %s", role, method, r.Name)
		switch method {
		case http.MethodPost:
			if role == polForeign || role == polHidden {
				continue // the foreign POSTs run last; the hidden record adds nothing to POST
			}
			var owner int64
			switch role {
			case polOwn:
				if r.Write != resource.OwnRecords {
					owner = e.member.UserID // a record about themselves, still not theirs to write
				}
			case polOther:
				if r.Write == resource.OwnRecords {
					owner = e.admin.UserID // someone else's
				}
			}
			body := e.body(t, r, owner)
			before := len(e.admin.List(t, polCountPath(r)))
			status, _, raw := c.Send(t, http.MethodPost, r.Path(), body)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			after := len(e.admin.List(t, polCountPath(r)))
			if want != http.StatusCreated {
				if after != before {
					t.Errorf("%s was refused but the list grew from %d to %d", what, before, after)
				}
				continue
			}
			var rec M
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatalf("%s: %s", what, raw)
			}
			if after != before+1 {
				t.Errorf("%s: list from %d to %d", what, before, after)
			}
			if r.Write == resource.OwnRecords && testenv.Num(rec["user"]) != c.UserID {
				t.Errorf("%s: user %v, want the caller %d by default", what, rec["user"], c.UserID)
			}
			if target == nil {
				target = rec
			}
		case polList:
			status, _, raw := c.Send(t, http.MethodGet, r.Path()+"?limit=50000", nil)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			var list []M
			if err := json.Unmarshal(raw, &list); err != nil {
				t.Fatalf("%s: %s", what, raw)
			}
			found := false
			for _, m := range list {
				if role != polForeign {
					found = found || m["id"] == target["id"]
					continue
				}
				// SQLite numbers records per tenant: the other tenant may
				// have its own record of the same id, so look for the
				// record itself.
				found = found || m["id"] == target["id"] && m["createdAt"] == target["createdAt"] ||
					target["label"] != nil && m["label"] == target["label"] ||
					r.Name == "project-days" && reflect.DeepEqual(m["project"], target["project"]) && m["day"] == target["day"]
			}
			if shouldSee := role != polForeign && role != polHidden; found != shouldSee {
				t.Errorf("%s: record in the list %v, want %v", what, found, shouldSee)
			}
		case http.MethodGet:
			status, _, raw := c.Send(t, http.MethodGet, polRecPath(r, target), nil)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			if status == http.StatusOK {
				var got M
				_ = json.Unmarshal(raw, &got)
				if snap := e.snapshot(t, r, target); !reflect.DeepEqual(got, snap) {
					t.Errorf("%s: %v, want %v", what, got, snap)
				}
			}
		default: // PATCH, PUT, DELETE
			e.write(t, r, c, method, target, M{"note": string(role) + " " + method}, want, what)
			if method == http.MethodPut && role == polOwn && r.Write == resource.OwnRecords {
				// Giving one's record away is a write of someone else's record.
				e.write(t, r, c, http.MethodPatch, target, M{"user": e.admin.UserID}, http.StatusForbidden, what+" (give away)")
			}
		}
	}
}

// write sends one change of target and checks the answer; a refused one
// must leave the record as it was.
func (e *polEnv) write(t *testing.T, r *resource.Resource, c *testenv.Client, method string, target, body M, want int, what string) {
	t.Helper()
	before := e.snapshot(t, r, target)
	status, _, raw := c.Send(t, method, polRecPath(r, target), body)
	if status != want {
		t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
	}
	after := e.snapshot(t, r, target)
	switch {
	case status >= 300:
		var m M
		if err := json.Unmarshal(raw, &m); err != nil || m["code"] == nil {
			t.Errorf("%s: error body %s", what, raw)
		}
		if !reflect.DeepEqual(before, after) {
			t.Errorf("%s was refused but the record changed:\n%v\n%v", what, before, after)
		}
	case method == http.MethodDelete && r.Name == "skill-assignments":
		if after == nil || testenv.Num(after["status"]) != 0 {
			t.Errorf("%s: archived record %v", what, after)
		}
	case method == http.MethodDelete:
		if after != nil {
			t.Errorf("%s: record still there: %v", what, after)
		}
	default:
		if after["note"] != body["note"] {
			t.Errorf("%s: record after the change %v", what, after)
		}
	}
}

// TestPolicyTable checks the role model for every resource and method.
func TestPolicyTable(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := polSetup(t, b)
		a, m := e.admin, e.member
		resources := registry.All()
		for _, r := range resources {
			t.Run(r.Name, func(t *testing.T) {
				// Records of the table: the admin's (which the admin
				// changes and deletes) and someone else's (which the member
				// and the other tenant must not touch).
				var mine, others M
				if r.ReadOnly {
					mine = e.bodies.readOnlyRecord(t, r, "policy holiday")
					others = mine
				} else {
					others = a.Create(t, r.Name, e.body(t, r, 0))
				}
				t.Run(string(polAdmin), func(t *testing.T) {
					e.check(t, r, polAdmin, a, mine)
					if r.Write == resource.OwnRecords {
						// An admin writes for others too.
						rec := a.Create(t, r.Name, e.body(t, r, m.UserID))
						if testenv.Num(rec["user"]) != m.UserID {
							t.Errorf("admin's record for the member: %v", rec)
						}
						a.Object(t, http.MethodPatch, polRecPath(r, rec), M{"note": "admin"}, http.StatusOK)
					}
				})
				if own, ok := e.aboutMember(t, r); ok {
					t.Run(string(polOwn), func(t *testing.T) {
						e.check(t, r, polOwn, m, own)
					})
				}
				t.Run(string(polOther), func(t *testing.T) {
					e.check(t, r, polOther, m, others)
					if r.ReadOnly || r.Write == resource.OwnRecords || len(r.Attrs) == 0 {
						return
					}
					// A member's write is refused as such, whatever its
					// body: every declared attribute of the wrong type is
					// a 400 for an admin, a 403 for a member.
					bad := M{}
					for _, at := range r.Attrs {
						bad[at.Name] = M{"wrong": true}
					}
					n := len(a.List(t, polCountPath(r)))
					a.Fail(t, http.MethodPost, r.Path(), bad, http.StatusBadRequest, "")
					m.Fail(t, http.MethodPost, r.Path(), bad, http.StatusForbidden, "")
					e.write(t, r, m, http.MethodPatch, others, bad, http.StatusForbidden, "member-other PATCH with a bad body "+r.Name)
					if got := len(a.List(t, polCountPath(r))); got != n {
						t.Errorf("%d records after refused POSTs, want %d", got, n)
					}
				})
				if r.Name == "documents" {
					t.Run(string(polHidden), func(t *testing.T) {
						hidden := a.Create(t, r.Name, M{"model": "user", "record": a.UserID, "category": 2, "visibleToUser": true, "label": "admin's contract"})
						e.check(t, r, polHidden, m, hidden)
					})
				}
				t.Run(string(polForeign), func(t *testing.T) {
					e.check(t, r, polForeign, e.foreign, others)
				})
			})
		}

		t.Run("account settings", func(t *testing.T) {
			settings := func(c *testenv.Client) M {
				return c.Object(t, http.MethodGet, "/v1/account/settings", nil, http.StatusOK)
			}
			before := settings(a)
			for _, method := range []string{http.MethodPatch, http.MethodPut} {
				m.Fail(t, method, "/v1/account/settings", M{"timerMode": "START_TIME_END_TIME", "useWorktime": true}, http.StatusForbidden, "")
			}
			if got := settings(a); !reflect.DeepEqual(got, before) {
				t.Errorf("settings after a member's refused change: %v, want %v", got, before)
			}
			if got := settings(m); !reflect.DeepEqual(got, before) {
				t.Errorf("member reads settings %v, want %v", got, before)
			}
			// The other tenant's admin changes only their own tenant.
			fb := settings(e.foreign)
			e.foreign.Object(t, http.MethodPatch, "/v1/account/settings", M{"timerMode": "START_TIME_END_TIME"}, http.StatusOK)
			if got := settings(a); !reflect.DeepEqual(got, before) {
				t.Errorf("settings after another tenant's change: %v, want %v", got, before)
			}
			e.foreign.Object(t, http.MethodPatch, "/v1/account/settings", fb, http.StatusOK)
			got := a.Object(t, http.MethodPatch, "/v1/account/settings", before, http.StatusOK)
			if got["timerMode"] != before["timerMode"] {
				t.Errorf("admin's change: %v", got)
			}
		})

		t.Run("bulk approve", func(t *testing.T) {
			days := func() []M { return a.List(t, "/v1/project-days") }
			before := days()
			project := testenv.ID(t, a.Create(t, "projects", M{"name": "approvals"}))
			items := []M{{"project": project, "day": "2026-02-09"}}
			for _, action := range []string{"approve", "unapprove"} {
				m.Fail(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": action, "items": items}, http.StatusForbidden, "")
			}
			absent(t, e.foreign, "projects", project)
			e.foreign.Fail(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": "approve", "items": items}, http.StatusBadRequest, "", "items[0].project")
			if got := days(); !reflect.DeepEqual(got, before) {
				t.Errorf("project days after refused approvals: %v, want %v", got, before)
			}
			if got := e.foreign.List(t, "/v1/project-days"); len(got) != 0 {
				t.Errorf("the other tenant has project days: %v", got)
			}
			approve(t, a, project, "2026-02-09")
			a.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": "unapprove", "items": items}, http.StatusOK)
		})

		t.Run("skill set apply", func(t *testing.T) {
			set := testenv.ID(t, a.Create(t, "skill-sets", M{"name": "apply", "category": e.bodies.ref(t, "skill-set-categories")}))
			a.Create(t, "tag-assignments", M{"tag": e.bodies.skill(t), "model": "skillSet", "record": set})
			user := testenv.ID(t, a.Create(t, "users", M{"email": "apply@acme.test"}))
			path := fmt.Sprintf("/v1/skill-sets/%d/apply", set)
			before := a.List(t, "/v1/skill-assignments")
			m.Fail(t, http.MethodPost, path, M{"users": []int64{user}}, http.StatusForbidden, "")
			m.Fail(t, http.MethodPost, path, M{"users": []int64{m.UserID}}, http.StatusForbidden, "")
			absent(t, e.foreign, "skill-sets", set)
			e.foreign.Fail(t, http.MethodPost, path, M{"users": []int64{e.foreign.UserID}}, http.StatusNotFound, "")
			if got := a.List(t, "/v1/skill-assignments"); !reflect.DeepEqual(got, before) {
				t.Errorf("skill assignments after refused applies changed")
			}
			if got := e.foreign.List(t, "/v1/skill-assignments"); len(got) != 0 {
				t.Errorf("the other tenant has skill assignments: %v", got)
			}
			got := a.Array(t, http.MethodPost, path, M{"users": []int64{user}}, http.StatusOK)
			if len(got) != 1 || testenv.Num(got[0]["user"]) != user {
				t.Errorf("admin's apply: %v", got)
			}
		})

		t.Run("file uploads", func(t *testing.T) {
			uploads := func(model string, rec int64) []M {
				return a.List(t, fmt.Sprintf("/v1/files/%s/%d", model, rec))
			}
			refused := func(c *testenv.Client, model string, rec int64, want int, what string) {
				t.Helper()
				before := uploads(model, rec)
				status, raw := polUpload(t, c, model, rec)
				if status != want {
					t.Errorf("%s: upload status %d, want %d: %s", what, status, want, raw)
				}
				if got := uploads(model, rec); !reflect.DeepEqual(got, before) {
					t.Errorf("%s: uploads after a refused upload %v, want %v", what, got, before)
				}
			}
			accepted := func(c *testenv.Client, model string, rec int64, what string) {
				t.Helper()
				if status, raw := polUpload(t, c, model, rec); status != http.StatusCreated {
					t.Errorf("%s: upload status %d, want 201: %s", what, status, raw)
				}
				if got := uploads(model, rec); len(got) != 1 {
					t.Errorf("%s: uploads %v", what, got)
				}
			}
			projectDoc := testenv.ID(t, a.Create(t, "documents", M{"model": "project", "record": e.bodies.ref(t, "projects"), "category": 8}))
			adminsDoc := testenv.ID(t, a.Create(t, "documents", M{"model": "user", "record": a.UserID, "category": 1, "visibleToUser": true}))
			membersDoc := testenv.ID(t, a.Create(t, "documents", M{"model": "user", "record": m.UserID, "category": 1, "visibleToUser": true}))
			adminsExpense := testenv.ID(t, a.Create(t, "expenses", M{"amount": 1}))
			membersExpense := testenv.ID(t, m.Create(t, "expenses", M{"amount": 2}))
			absent(t, e.foreign, "documents", projectDoc)
			absent(t, e.foreign, "expenses", adminsExpense)

			refused(m, "document", projectDoc, http.StatusForbidden, "member on a project document")
			refused(m, "document", membersDoc, http.StatusForbidden, "member on a document about themselves")
			refused(m, "document", adminsDoc, http.StatusNotFound, "member on another user's document")
			refused(e.foreign, "document", projectDoc, http.StatusNotFound, "other tenant on a document")
			refused(m, "expense", adminsExpense, http.StatusForbidden, "member on another's expense")
			refused(e.foreign, "expense", adminsExpense, http.StatusNotFound, "other tenant on an expense")
			refused(e.foreign, "expense", membersExpense, http.StatusNotFound, "other tenant on an expense")
			accepted(a, "document", projectDoc, "admin on a project document")
			accepted(a, "document", adminsDoc, "admin on a user document")
			accepted(a, "expense", adminsExpense, "admin on an expense")
			accepted(m, "expense", membersExpense, "member on their own expense")
			// The member reads the files of what they may read.
			if got := m.List(t, fmt.Sprintf("/v1/files/document/%d", projectDoc)); len(got) != 1 {
				t.Errorf("member's view of the project document's files: %v", got)
			}
			m.Fail(t, http.MethodGet, fmt.Sprintf("/v1/files/document/%d", adminsDoc), nil, http.StatusNotFound, "")
		})

		// Last, so that the other tenant had no records of its own while
		// the table looked up the tenant's ids there: a POST of the
		// tenant's bodies in the other tenant. References to the tenant's
		// records are unknown there (400); either way the tenant gains
		// nothing.
		t.Run("foreign POST", func(t *testing.T) {
			for _, r := range resources {
				body := e.body(t, r, 0)
				before := len(a.List(t, polCountPath(r)))
				want := http.StatusCreated
				switch {
				case r.ReadOnly:
					want = http.StatusMethodNotAllowed
				case polForeignRef(t, e, r, body):
					want = http.StatusBadRequest
				}
				status, _, raw := e.foreign.Send(t, http.MethodPost, r.Path(), body)
				if status != want {
					t.Errorf("foreign POST %s: status %d, want %d: %s", r.Name, status, want, raw)
				}
				if after := len(a.List(t, polCountPath(r))); after != before {
					t.Errorf("foreign POST %s: the tenant's list grew from %d to %d", r.Name, before, after)
				}
			}
		})
	})
}

// polForeignRef reports whether body refers to a record that the other
// tenant does not have.
func polForeignRef(t *testing.T, e *polEnv, r *resource.Resource, body M) bool {
	t.Helper()
	for _, a := range r.Attrs {
		v, ok := body[a.Name]
		if !ok || v == nil {
			continue
		}
		target, ok := r.RefTarget(a, body)
		if !ok {
			continue
		}
		status, _, _ := e.foreign.Send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%v", target, v), nil)
		if status == http.StatusNotFound {
			return true
		}
	}
	return false
}

// polUpload uploads a small file to a document or expense.
func polUpload(t *testing.T, c *testenv.Client, model string, record int64) (int, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "policy.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fw.Write([]byte("policy test file")); err != nil {
		t.Fatal(err)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	req := c.Request(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/%s/%d?delete_others=1", model, record), &buf)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	status, _, raw := testenv.Do(t, req)
	return status, raw
}

// TestMemberPolicy: members read everything and write only their own time
// entries, absence requests and expenses.
func TestMemberPolicy(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		member := admin.Member(t, "member@acme.test")
		memberID := member.UserID
		usersMe := func(c *testenv.Client) M { return c.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK) }
		if me := usersMe(member); testenv.Num(me["id"]) != memberID || me["isAdmin"] != false {
			t.Fatalf("member's users/me: %v", me)
		}
		project := admin.Create(t, "projects", M{"name": "P"})
		pid := testenv.ID(t, project)
		task := admin.Create(t, "tasks", M{"name": "T", "project": pid})
		tid := testenv.ID(t, task)

		t.Run("members read every list", func(t *testing.T) {
			for _, r := range srv.Service.Registry.All() {
				member.List(t, r.Path())
			}
			if got := member.Get(t, "projects", pid); !reflect.DeepEqual(got, project) {
				t.Errorf("member GET project: %v", got)
			}
			if !containsID(member.List(t, "/v1/users"), tn.AdminID) {
				t.Error("member does not see the admin user")
			}
		})

		t.Run("members write no shared records", func(t *testing.T) {
			before := len(admin.List(t, "/v1/projects"))
			for _, res := range []string{"projects", "tasks", "clients", "tags", "documents", "users", "skill-assignments", "roles"} {
				body := M{"name": "member's"}
				switch res {
				case "documents":
					body = M{"model": "user", "record": memberID, "category": 1}
				case "users":
					body = M{"email": "sneaky@acme.test", "password": "sneaky-password", "isAdmin": true}
				}
				n := len(admin.List(t, "/v1/"+res))
				member.Fail(t, http.MethodPost, "/v1/"+res, body, http.StatusForbidden, "forbidden")
				if got := len(admin.List(t, "/v1/"+res)); got != n {
					t.Errorf("%s: %d records after a refused POST, want %d", res, got, n)
				}
			}
			if got := len(admin.List(t, "/v1/projects")); got != before {
				t.Errorf("projects: %d, want %d", got, before)
			}
			for _, method := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
				member.Fail(t, method, fmt.Sprintf("/v1/projects/%d", pid), M{"name": "changed"}, http.StatusForbidden, "forbidden")
			}
			if got := admin.Get(t, "projects", pid); !reflect.DeepEqual(got, project) {
				t.Errorf("project after refused writes: %v", got)
			}
			// No promoting oneself, no changing others.
			member.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", memberID), M{"isAdmin": true}, http.StatusForbidden, "forbidden")
			member.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", tn.AdminID), M{"password": "taken-over-1"}, http.StatusForbidden, "forbidden")
			member.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", tn.AdminID), nil, http.StatusForbidden, "forbidden")
			if me := usersMe(member); me["isAdmin"] != false {
				t.Errorf("member became admin: %v", me)
			}
			srv.SignIn(t, tn) // the admin's password still works
		})

		t.Run("members write their own time entries", func(t *testing.T) {
			count := func() int { return len(admin.List(t, "/v1/time-entries")) }
			n := count()
			own := member.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "WORK", "project": pid, "task": tid, "duration": 60, "sorting": 1})
			ownID := testenv.ID(t, own)
			if own["user"] != float64(memberID) {
				t.Errorf("member's entry belongs to %v, want %d", own["user"], memberID)
			}
			explicit := member.Create(t, "time-entries", M{"day": "2026-01-06", "trackingType": "BREAK", "duration": 60, "sorting": 1, "user": memberID})
			if explicit["user"] != float64(memberID) {
				t.Errorf("explicit own user: %v", explicit)
			}
			member.Fail(t, http.MethodPost, "/v1/time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1, "user": tn.AdminID}, http.StatusForbidden, "forbidden")
			if got := count(); got != n+2 {
				t.Errorf("time entries: %d, want %d", got, n+2)
			}

			adminEntry := admin.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 30, "sorting": 1})
			aid := testenv.ID(t, adminEntry)
			if adminEntry["user"] != float64(tn.AdminID) {
				t.Errorf("admin's entry: %v", adminEntry)
			}
			for _, method := range []string{http.MethodPatch, http.MethodPut} {
				member.Fail(t, method, fmt.Sprintf("/v1/time-entries/%d", aid), M{"duration": 1}, http.StatusForbidden, "forbidden")
				member.Fail(t, method, fmt.Sprintf("/v1/time-entries/%d", aid), M{"user": memberID}, http.StatusForbidden, "forbidden")
			}
			member.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", aid), nil, http.StatusForbidden, "forbidden")
			if got := admin.Get(t, "time-entries", aid); !reflect.DeepEqual(got, adminEntry) {
				t.Errorf("admin's entry after refused writes: %v", got)
			}

			p := member.Object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), M{"duration": 120}, http.StatusOK)
			if p["duration"] != 120.0 || p["user"] != float64(memberID) {
				t.Errorf("member's PATCH of own entry: %v", p)
			}
			// Giving an entry away is a write of someone else's record.
			member.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), M{"user": tn.AdminID}, http.StatusForbidden, "forbidden")
			if got := member.Get(t, "time-entries", ownID); got["user"] != float64(memberID) || got["duration"] != 120.0 {
				t.Errorf("own entry after refused hand-over: %v", got)
			}
			// The admin may do all of it.
			ap := admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), M{"duration": 240}, http.StatusOK)
			if ap["duration"] != 240.0 || ap["user"] != float64(memberID) {
				t.Errorf("admin's PATCH of the member's entry: %v", ap)
			}
			forMember := admin.Create(t, "time-entries", M{"day": "2026-01-07", "trackingType": "BREAK", "duration": 60, "sorting": 2, "user": memberID})
			if forMember["user"] != float64(memberID) {
				t.Errorf("admin's entry for the member: %v", forMember)
			}
			admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, forMember)), nil, http.StatusOK)
			member.Object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", ownID), nil, http.StatusOK)
			member.Fail(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d", ownID), nil, http.StatusNotFound, "not_found")
		})

		t.Run("members write their own absence requests and expenses", func(t *testing.T) {
			for _, res := range []string{"absence-requests", "expenses"} {
				own := member.Create(t, res, M{"note": "mine"})
				if own["user"] != float64(memberID) {
					t.Errorf("%s: %v", res, own)
				}
				member.Fail(t, http.MethodPost, "/v1/"+res, M{"user": tn.AdminID}, http.StatusForbidden, "forbidden")
				theirs := admin.Create(t, res, M{"note": "admin's"})
				member.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, theirs)), M{"note": "x"}, http.StatusForbidden, "forbidden")
				member.Fail(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, theirs)), nil, http.StatusForbidden, "forbidden")
				member.Object(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, own)), M{"note": "still mine"}, http.StatusOK)
				member.Object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, own)), nil, http.StatusOK)
				admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, theirs)), nil, http.StatusOK)
			}
		})

		t.Run("admins may do all", func(t *testing.T) {
			for _, res := range []string{"projects", "tags", "roles"} {
				rec := admin.Create(t, res, M{"name": "admin's"})
				admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, rec)), M{"name": "changed"}, http.StatusOK)
				admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, testenv.ID(t, rec)), nil, http.StatusOK)
			}
			// A promoted member may write everything too.
			admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", memberID), M{"isAdmin": true}, http.StatusOK)
			promoted := srv.SignIn(t, testenv.Tenant{Slug: tn.Slug, AdminEmail: "member@acme.test", Password: "member-password"}) // the password testenv gives members
			rec := promoted.Create(t, "projects", M{"name": "by a new admin"})
			promoted.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", testenv.ID(t, rec)), nil, http.StatusOK)
		})
	})
}
