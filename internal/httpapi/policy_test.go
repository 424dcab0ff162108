package httpapi_test

// The role model as one table (CONTRACT.md "Roles", "Tenancy";
// docs/decisions.md "Roles", "Who may write"): every resource of the
// registry and every method, plus the endpoints that are not resources,
// for an admin, a member on their own record, a member on someone else's
// record and the admin of another tenant. Every refused write is checked
// to have written nothing.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"reflect"
	"testing"

	"planwerk/internal/query"
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
	srv                    *testenv.Server
	admin, member, foreign *skClient
	seq                    int
	// refs are the records valid bodies refer to, by resource.
	refs map[string]int64
	// approvalProject is a project only the approval checks use, so that
	// approving its days never blocks the time entries of the table.
	approvalProject, skillCategory, publicHoliday int64
}

func polSetup(t *testing.T, b testenv.Backend) *polEnv {
	t.Helper()
	srv := testenv.Start(t, b)
	ta := srv.CreateTenant(t, "acme")
	tb := srv.CreateTenant(t, "beta")
	e := &polEnv{srv: srv, admin: skSignIn(t, srv, ta), foreign: skSignIn(t, srv, tb)}
	e.member = e.admin.skMember(t, "member@acme.test")
	a := e.admin
	project := rsID(t, a.create(t, "projects", skM{"name": "P"}))
	e.refs = map[string]int64{
		"users":                a.userID,
		"projects":             project,
		"tasks":                rsID(t, a.create(t, "tasks", skM{"name": "T", "project": project})),
		"clients":              rsID(t, a.create(t, "clients", skM{"name": "C"})),
		"tags":                 rsID(t, a.create(t, "tags", skM{"name": "plain"})),
		"tag-categories":       rsID(t, a.create(t, "tag-categories", skM{"name": "skills"})),
		"skill-set-categories": rsID(t, a.create(t, "skill-set-categories", skM{"name": "sets"})),
		"absence-types":        rsID(t, a.create(t, "absence-types", skM{"name": "Vacation"})),
	}
	e.refs["skill-sets"] = rsID(t, a.create(t, "skill-sets", skM{"name": "S", "category": e.refs["skill-set-categories"]}))
	e.approvalProject = rsID(t, a.create(t, "projects", skM{"name": "approved"}))
	e.skillCategory = e.refs["tag-categories"]
	types := a.list(t, "/v1/absence-types?name=PublicHoliday")
	if len(types) != 1 {
		t.Fatalf("PublicHoliday types: %v", types)
	}
	e.publicHoliday = rsID(t, types[0])
	return e
}

// skill creates a new skill (a user holds each skill once, so every
// skill assignment of the table needs its own).
func (e *polEnv) skill(t *testing.T) int64 {
	t.Helper()
	e.seq++
	return rsID(t, e.admin.create(t, "tags", skM{"name": fmt.Sprint("skill ", e.seq), "type": 1, "category": e.skillCategory}))
}

// body is a valid create body for r, built from the registry: every
// required attribute gets a value its rules accept (references name the
// records of refs). owner is the user the record is about; 0 leaves the
// user out where that is allowed.
func (e *polEnv) body(t *testing.T, r *resource.Resource, owner int64) skM {
	t.Helper()
	e.seq++
	label := fmt.Sprintf("policy %s %d", r.Name, e.seq)
	body := skM{"label": label}
	switch r.Name {
	case "time-entries":
		// DURATION mode, the default: WORK needs project, task, day, duration and sorting.
		body["trackingType"] = "WORK"
		body["project"] = e.refs["projects"]
		body["task"] = e.refs["tasks"]
		body["day"] = "2026-01-05"
		body["duration"] = 3600
		body["sorting"] = e.seq
	case "documents":
		body["model"] = "project"
		body["record"] = e.refs["projects"]
		body["category"] = 7
		body["name"] = label
	case "tags", "absence-types", "skill-sets", "projects", "tasks", "clients":
		body["name"] = label
	case "tag-assignments":
		body["tag"] = e.refs["tags"]
		body["model"] = "project"
		body["record"] = e.refs["projects"]
	case "skill-assignments":
		body["tag"] = e.skill(t)
		body["proficiency"] = 3
		if owner == 0 {
			owner = e.admin.userID
		}
	case "users":
		body["email"] = fmt.Sprintf("policy%d@acme.test", e.seq)
		body["password"] = "policy-password"
		body["isAdmin"] = false
	case "absences":
		body["absenceType"] = e.refs["absence-types"]
		body["day"] = "2026-03-02"
	case "expenses":
		body["amount"] = 42.5
	case "project-days":
		// Read-only: the body is what a client would try to write.
		body = skM{"project": e.approvalProject, "day": "2026-02-16", "validationStatus": "APPROVED"}
	}
	if _, ok := r.Attr("user"); ok && owner != 0 {
		body["user"] = owner
	}
	for _, a := range r.Attrs {
		if _, ok := body[a.Name]; ok || !a.Required || a.ReadOnly {
			continue
		}
		switch {
		case a.Ref != "":
			id, ok := e.refs[a.Ref]
			if !ok {
				t.Fatalf("%s.%s refers to %s: add a record of it to refs", r.Name, a.Name, a.Ref)
			}
			body[a.Name] = id
		case len(a.Enum) > 0:
			body[a.Name] = a.Enum[0]
		case len(a.Ints) > 0:
			body[a.Name] = a.Ints[0]
		case a.Type == query.Date:
			body[a.Name] = "2026-01-05"
		case a.Type == query.Timestamp:
			body[a.Name] = "2026-01-05T08:00:00.000Z"
		case a.Type == query.String:
			body[a.Name] = label
		case a.Type == query.Boolean:
			body[a.Name] = false
		default:
			t.Fatalf("no value for the required attribute %s.%s: extend polEnv.body", r.Name, a.Name)
		}
	}
	return body
}

// countPath lists every record of r that a POST could add.
func polCountPath(r *resource.Resource) string {
	if r.Name == "tags" {
		return r.Path() + "?includeSkills=true&limit=50000"
	}
	return r.Path() + "?limit=50000"
}

func polRecPath(r *resource.Resource, rec skM) string {
	f, _ := rec["id"].(float64)
	return fmt.Sprintf("%s/%d", r.Path(), int64(f))
}

// snapshot is a record as the admin sees it (nil when it is gone).
func (e *polEnv) snapshot(t *testing.T, r *resource.Resource, rec skM) skM {
	t.Helper()
	status, _, raw := e.admin.send(t, http.MethodGet, polRecPath(r, rec), nil)
	if status == http.StatusNotFound {
		return nil
	}
	if status != http.StatusOK {
		t.Fatalf("admin GET %s: %d %s", polRecPath(r, rec), status, raw)
	}
	var m skM
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// readOnlyRecord makes the record of a read-only resource the table reads.
func (e *polEnv) readOnlyRecord(t *testing.T, r *resource.Resource) skM {
	t.Helper()
	switch r.Name {
	case "holidays":
		abs := e.admin.create(t, "absences", skM{"absenceType": e.publicHoliday, "day": "2026-12-25", "label": "policy holiday"})
		return e.admin.get(t, "holidays", rsID(t, abs))
	case "project-days":
		days := e.admin.arr(t, http.MethodPost, "/v1/approval/bulk-approve",
			skM{"action": "approve", "items": []skM{{"project": e.approvalProject, "day": "2026-02-02"}}}, http.StatusOK)
		if len(days) != 1 {
			t.Fatalf("bulk approve: %v", days)
		}
		return days[0]
	}
	t.Fatalf("no records for the read-only resource %s: extend readOnlyRecord", r.Name)
	return nil
}

// polCheck runs every method of the table for one role on one record
// (target nil: the role's POST creates it) and checks the answers and,
// for refused writes, that nothing changed.
func (e *polEnv) check(t *testing.T, r *resource.Resource, role polRole, c *skClient, target skM) {
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
					owner = e.member.userID // a record about themselves, still not theirs to write
				}
			case polOther:
				if r.Write == resource.OwnRecords {
					owner = e.admin.userID // someone else's
				}
			}
			body := e.body(t, r, owner)
			before := len(e.admin.list(t, polCountPath(r)))
			status, _, raw := c.send(t, http.MethodPost, r.Path(), body)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			after := len(e.admin.list(t, polCountPath(r)))
			if want != http.StatusCreated {
				if after != before {
					t.Errorf("%s was refused but the list grew from %d to %d", what, before, after)
				}
				continue
			}
			var rec skM
			if err := json.Unmarshal(raw, &rec); err != nil {
				t.Fatalf("%s: %s", what, raw)
			}
			if after != before+1 {
				t.Errorf("%s: list from %d to %d", what, before, after)
			}
			if r.Write == resource.OwnRecords && rsNum(rec["user"]) != c.userID {
				t.Errorf("%s: user %v, want the caller %d by default", what, rec["user"], c.userID)
			}
			if target == nil {
				target = rec
			}
		case polList:
			status, _, raw := c.send(t, http.MethodGet, r.Path()+"?limit=50000", nil)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			var list []skM
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
			status, _, raw := c.send(t, http.MethodGet, polRecPath(r, target), nil)
			if status != want {
				t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
				continue
			}
			if status == http.StatusOK {
				var got skM
				_ = json.Unmarshal(raw, &got)
				if snap := e.snapshot(t, r, target); !reflect.DeepEqual(got, snap) {
					t.Errorf("%s: %v, want %v", what, got, snap)
				}
			}
		default: // PATCH, PUT, DELETE
			e.write(t, r, c, method, target, skM{"note": string(role) + " " + method}, want, what)
			if method == http.MethodPut && role == polOwn && r.Write == resource.OwnRecords {
				// Giving one's record away is a write of someone else's record.
				e.write(t, r, c, http.MethodPatch, target, skM{"user": e.admin.userID}, http.StatusForbidden, what+" (give away)")
			}
		}
	}
}

// write sends one change of target and checks the answer; a refused one
// must leave the record as it was.
func (e *polEnv) write(t *testing.T, r *resource.Resource, c *skClient, method string, target, body skM, want int, what string) {
	t.Helper()
	before := e.snapshot(t, r, target)
	status, _, raw := c.send(t, method, polRecPath(r, target), body)
	if status != want {
		t.Errorf("%s: status %d, want %d: %s", what, status, want, raw)
	}
	after := e.snapshot(t, r, target)
	switch {
	case status >= 300:
		var m skM
		if err := json.Unmarshal(raw, &m); err != nil || m["code"] == nil {
			t.Errorf("%s: error body %s", what, raw)
		}
		if !reflect.DeepEqual(before, after) {
			t.Errorf("%s was refused but the record changed:\n%v\n%v", what, before, after)
		}
	case method == http.MethodDelete && r.Name == "skill-assignments":
		if after == nil || rsNum(after["status"]) != 0 {
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
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := polSetup(t, b)
		a, m := e.admin, e.member
		resources := e.srv.Service.Registry.All()
		if len(resources) != 41 {
			t.Fatalf("%d resources in the registry", len(resources))
		}
		for _, r := range resources {
			t.Run(r.Name, func(t *testing.T) {
				// Records of the table: the admin's (which the admin
				// changes and deletes) and someone else's (which the member
				// and the other tenant must not touch).
				var mine, others skM
				if r.ReadOnly {
					mine = e.readOnlyRecord(t, r)
					others = mine
				} else {
					others = a.create(t, r.Name, e.body(t, r, 0))
				}
				t.Run(string(polAdmin), func(t *testing.T) {
					e.check(t, r, polAdmin, a, mine)
					if r.Write == resource.OwnRecords {
						// An admin writes for others too.
						rec := a.create(t, r.Name, e.body(t, r, m.userID))
						if rsNum(rec["user"]) != m.userID {
							t.Errorf("admin's record for the member: %v", rec)
						}
						a.object(t, http.MethodPatch, polRecPath(r, rec), skM{"note": "admin"}, http.StatusOK)
					}
				})
				// Records about the member: their own (created by the
				// member's POST), or about them but not theirs to write.
				if r.Write == resource.OwnRecords || r.Name == "users" || r.Name == "skill-assignments" || r.Name == "documents" {
					t.Run(string(polOwn), func(t *testing.T) {
						var own skM
						switch r.Name {
						case "users":
							own = a.get(t, "users", m.userID)
						case "skill-assignments":
							own = a.create(t, r.Name, e.body(t, r, m.userID))
						case "documents":
							own = a.create(t, r.Name, skM{"model": "user", "record": m.userID, "category": 1, "visibleToUser": true})
						}
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
					bad := skM{}
					for _, at := range r.Attrs {
						bad[at.Name] = skM{"wrong": true}
					}
					n := len(a.list(t, polCountPath(r)))
					a.fail(t, http.MethodPost, r.Path(), bad, http.StatusBadRequest)
					m.fail(t, http.MethodPost, r.Path(), bad, http.StatusForbidden)
					e.write(t, r, m, http.MethodPatch, others, bad, http.StatusForbidden, "member-other PATCH with a bad body "+r.Name)
					if got := len(a.list(t, polCountPath(r))); got != n {
						t.Errorf("%d records after refused POSTs, want %d", got, n)
					}
				})
				if r.Name == "documents" {
					t.Run(string(polHidden), func(t *testing.T) {
						hidden := a.create(t, r.Name, skM{"model": "user", "record": a.userID, "category": 2, "visibleToUser": true, "label": "admin's contract"})
						e.check(t, r, polHidden, m, hidden)
					})
				}
				t.Run(string(polForeign), func(t *testing.T) {
					e.check(t, r, polForeign, e.foreign, others)
				})
			})
		}

		t.Run("account settings", func(t *testing.T) {
			settings := func(c *skClient) skM { return c.object(t, http.MethodGet, "/v1/account/settings", nil, http.StatusOK) }
			before := settings(a)
			for _, method := range []string{http.MethodPatch, http.MethodPut} {
				m.fail(t, method, "/v1/account/settings", skM{"timerMode": "START_TIME_END_TIME", "useWorktime": true}, http.StatusForbidden)
			}
			if got := settings(a); !reflect.DeepEqual(got, before) {
				t.Errorf("settings after a member's refused change: %v, want %v", got, before)
			}
			if got := settings(m); !reflect.DeepEqual(got, before) {
				t.Errorf("member reads settings %v, want %v", got, before)
			}
			// The other tenant's admin changes only their own tenant.
			fb := settings(e.foreign)
			e.foreign.object(t, http.MethodPatch, "/v1/account/settings", skM{"timerMode": "START_TIME_END_TIME"}, http.StatusOK)
			if got := settings(a); !reflect.DeepEqual(got, before) {
				t.Errorf("settings after another tenant's change: %v, want %v", got, before)
			}
			e.foreign.object(t, http.MethodPatch, "/v1/account/settings", fb, http.StatusOK)
			got := a.object(t, http.MethodPatch, "/v1/account/settings", before, http.StatusOK)
			if got["timerMode"] != before["timerMode"] {
				t.Errorf("admin's change: %v", got)
			}
		})

		t.Run("bulk approve", func(t *testing.T) {
			days := func() []skM { return a.list(t, "/v1/project-days") }
			before := days()
			items := []skM{{"project": e.approvalProject, "day": "2026-02-09"}}
			for _, action := range []string{"approve", "unapprove"} {
				m.fail(t, http.MethodPost, "/v1/approval/bulk-approve", skM{"action": action, "items": items}, http.StatusForbidden)
			}
			skAbsent(t, e.foreign, "projects", e.approvalProject)
			e.foreign.fail(t, http.MethodPost, "/v1/approval/bulk-approve", skM{"action": "approve", "items": items}, http.StatusBadRequest, "items[0].project")
			if got := days(); !reflect.DeepEqual(got, before) {
				t.Errorf("project days after refused approvals: %v, want %v", got, before)
			}
			if got := e.foreign.list(t, "/v1/project-days"); len(got) != 0 {
				t.Errorf("the other tenant has project days: %v", got)
			}
			got := a.arr(t, http.MethodPost, "/v1/approval/bulk-approve", skM{"action": "approve", "items": items}, http.StatusOK)
			if len(got) != 1 || got[0]["validationStatus"] != "APPROVED" {
				t.Errorf("admin's approval: %v", got)
			}
			a.arr(t, http.MethodPost, "/v1/approval/bulk-approve", skM{"action": "unapprove", "items": items}, http.StatusOK)
		})

		t.Run("skill set apply", func(t *testing.T) {
			set := rsID(t, a.create(t, "skill-sets", skM{"name": "apply", "category": e.refs["skill-set-categories"]}))
			a.create(t, "tag-assignments", skM{"tag": e.skill(t), "model": "skillSet", "record": set})
			user := rsID(t, a.create(t, "users", skM{"email": "apply@acme.test"}))
			path := fmt.Sprintf("/v1/skill-sets/%d/apply", set)
			before := a.list(t, "/v1/skill-assignments")
			m.fail(t, http.MethodPost, path, skM{"users": []int64{user}}, http.StatusForbidden)
			m.fail(t, http.MethodPost, path, skM{"users": []int64{m.userID}}, http.StatusForbidden)
			skAbsent(t, e.foreign, "skill-sets", set)
			e.foreign.fail(t, http.MethodPost, path, skM{"users": []int64{e.foreign.userID}}, http.StatusNotFound)
			if got := a.list(t, "/v1/skill-assignments"); !reflect.DeepEqual(got, before) {
				t.Errorf("skill assignments after refused applies changed")
			}
			if got := e.foreign.list(t, "/v1/skill-assignments"); len(got) != 0 {
				t.Errorf("the other tenant has skill assignments: %v", got)
			}
			got := a.arr(t, http.MethodPost, path, skM{"users": []int64{user}}, http.StatusOK)
			if len(got) != 1 || rsNum(got[0]["user"]) != user {
				t.Errorf("admin's apply: %v", got)
			}
		})

		t.Run("file uploads", func(t *testing.T) {
			uploads := func(model string, rec int64) []skM {
				return a.list(t, fmt.Sprintf("/v1/files/%s/%d", model, rec))
			}
			refused := func(c *skClient, model string, rec int64, want int, what string) {
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
			accepted := func(c *skClient, model string, rec int64, what string) {
				t.Helper()
				if status, raw := polUpload(t, c, model, rec); status != http.StatusCreated {
					t.Errorf("%s: upload status %d, want 201: %s", what, status, raw)
				}
				if got := uploads(model, rec); len(got) != 1 {
					t.Errorf("%s: uploads %v", what, got)
				}
			}
			projectDoc := rsID(t, a.create(t, "documents", skM{"model": "project", "record": e.refs["projects"], "category": 8}))
			adminsDoc := rsID(t, a.create(t, "documents", skM{"model": "user", "record": a.userID, "category": 1, "visibleToUser": true}))
			membersDoc := rsID(t, a.create(t, "documents", skM{"model": "user", "record": m.userID, "category": 1, "visibleToUser": true}))
			adminsExpense := rsID(t, a.create(t, "expenses", skM{"amount": 1}))
			membersExpense := rsID(t, m.create(t, "expenses", skM{"amount": 2}))
			skAbsent(t, e.foreign, "documents", projectDoc)
			skAbsent(t, e.foreign, "expenses", adminsExpense)

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
			if got := m.list(t, fmt.Sprintf("/v1/files/document/%d", projectDoc)); len(got) != 1 {
				t.Errorf("member's view of the project document's files: %v", got)
			}
			m.fail(t, http.MethodGet, fmt.Sprintf("/v1/files/document/%d", adminsDoc), nil, http.StatusNotFound)
		})

		// Last, so that the other tenant had no records of its own while
		// the table looked up the tenant's ids there: a POST of the
		// tenant's bodies in the other tenant. References to the tenant's
		// records are unknown there (400); either way the tenant gains
		// nothing.
		t.Run("foreign POST", func(t *testing.T) {
			for _, r := range resources {
				body := e.body(t, r, 0)
				before := len(a.list(t, polCountPath(r)))
				want := http.StatusCreated
				switch {
				case r.ReadOnly:
					want = http.StatusMethodNotAllowed
				case polForeignRef(t, e, r, body):
					want = http.StatusBadRequest
				}
				status, _, raw := e.foreign.send(t, http.MethodPost, r.Path(), body)
				if status != want {
					t.Errorf("foreign POST %s: status %d, want %d: %s", r.Name, status, want, raw)
				}
				if after := len(a.list(t, polCountPath(r))); after != before {
					t.Errorf("foreign POST %s: the tenant's list grew from %d to %d", r.Name, before, after)
				}
			}
		})
	})
}

// polForeignRef reports whether body refers to a record that the other
// tenant does not have.
func polForeignRef(t *testing.T, e *polEnv, r *resource.Resource, body skM) bool {
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
		status, _, _ := e.foreign.send(t, http.MethodGet, fmt.Sprintf("/v1/%s/%v", target, v), nil)
		if status == http.StatusNotFound {
			return true
		}
	}
	return false
}

// polUpload uploads a small file to a document or expense.
func polUpload(t *testing.T, c *skClient, model string, record int64) (int, []byte) {
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
	req, err := http.NewRequest(http.MethodPost, c.srv.URL+fmt.Sprintf("/v1/files/upload/%s/%d?delete_others=1", model, record), &buf)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", c.slug)
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, raw
}
