package records_test

// Black-box tests of the generic record engine: the resource endpoints
// every resource of the registry has (docs/api.md "Data API conventions",
// "Attributes", "Lists", "Roles", "Tenancy"), over HTTP on both database engines. They
// iterate the registry: a resource added to it is tested here without
// changing these tests. The set of paths itself is pinned by the API
// description's golden file (internal/openapi).
//
// This file holds what the tests share: a valid create body of every
// resource, derived from the registry, and a record of every read-only
// resource.

import (
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"regexp"
	"testing"

	"planwerk/internal/query"
	"planwerk/internal/resource"
	"planwerk/internal/testenv"
)

// M is a JSON object of a request or an answer.
type M = testenv.M

// registry is the table of resources the tests iterate.
var registry = resource.New()

// timestampRE is the API's timestamp format, YYYY-MM-DDTHH:mm:ss.sssZ.
var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// checkStamps checks a record's createdAt and updatedAt.
func checkStamps(t *testing.T, m M) {
	t.Helper()
	for _, f := range []string{"createdAt", "updatedAt"} {
		s, _ := m[f].(string)
		if !timestampRE.MatchString(s) {
			t.Errorf("%s = %v, want YYYY-MM-DDTHH:mm:ss.sssZ", f, m[f])
		}
	}
	if c, u := m["createdAt"].(string), m["updatedAt"].(string); u < c {
		t.Errorf("updatedAt %s before createdAt %s", u, c)
	}
}

// containsID reports whether a list holds the record id.
func containsID(list []M, id int64) bool {
	for _, m := range list {
		if f, _ := m["id"].(float64); int64(f) == id {
			return true
		}
	}
	return false
}

// archivesOnDelete: deleting a skill assignment archives it (status 0)
// and keeps the record (docs/api.md "Skills").
func archivesOnDelete(r *resource.Resource) bool { return r.Name == "skill-assignments" }

// bodies makes valid create bodies of every resource for one tenant.
// The records that bodies refer to are made by its client on first use.
type bodies struct {
	c    *testenv.Client
	refs map[string]int64 // a record of each resource referred to
	seq  int
}

// newBodies makes bodies for c's tenant; a reference to a user names the
// caller.
func newBodies(c *testenv.Client) *bodies {
	return &bodies{c: c, refs: map[string]int64{"users": c.UserID}}
}

// next is a number not used before by b.
func (b *bodies) next() int {
	b.seq++
	return b.seq
}

// rule is what the own rules of the resource name need of a create body
// beyond its declared attributes; the rest of a body is derived from the
// registry. Each case names the rule it satisfies.
func (b *bodies) rule(t *testing.T, name string) M {
	t.Helper()
	switch name {
	case "time-entries":
		// A time entry is WORK unless it says otherwise, and under the
		// default timer mode (DURATION) a WORK entry needs a project, a
		// task, a duration and a sorting.
		return M{"trackingType": "WORK", "project": b.ref(t, "projects"), "task": b.ref(t, "tasks"), "duration": 3600, "sorting": 1}
	case "skill-assignments":
		// The tag of a skill assignment is a skill, and a user holds
		// each skill once.
		return M{"tag": b.skill(t)}
	case "documents":
		// A member sees a user document only when it is about
		// themselves: a project document is one every member sees.
		return M{"model": "project"}
	}
	return M{}
}

// body is a valid create body of r: what r's own rules need (rule),
// extra unless r has only its declared attributes, and a value for every
// other required attribute from its declaration. A reference names a
// record of its resource, made first.
func (b *bodies) body(t *testing.T, r *resource.Resource, extra M) M {
	t.Helper()
	body := b.rule(t, r.Name)
	if !r.DeclaredOnly {
		maps.Copy(body, extra)
	}
	// Values first, then references: a polymorphic reference follows
	// the model chosen for it.
	for _, refs := range []bool{false, true} {
		for _, a := range r.Attrs {
			_, set := body[a.Name]
			if set || !a.Required || a.ReadOnly || (a.Ref != "" || a.RefByModel != "") != refs {
				continue
			}
			body[a.Name] = b.value(t, r, a, body)
		}
	}
	return body
}

// value is a value of a that its declaration accepts.
func (b *bodies) value(t *testing.T, r *resource.Resource, a resource.Attr, body M) any {
	t.Helper()
	if target, ok := r.RefTarget(a, body); ok {
		return b.ref(t, target)
	}
	switch {
	case a.RefByModel != "":
		t.Fatalf("%s.%s: the model %v names no resource", r.Name, a.Name, body[a.RefByModel])
	case len(a.Enum) > 0:
		return a.Enum[0]
	case len(a.Ints) > 0:
		return a.Ints[0]
	}
	switch a.Type {
	case query.String:
		return fmt.Sprintf("%s %d", a.Name, b.next())
	case query.Integer, query.Number:
		return 1
	case query.Boolean:
		return false
	case query.Date:
		return "2026-01-05"
	case query.Timestamp:
		return "2026-01-05T08:00:00.000Z"
	}
	t.Fatalf("no value for the required attribute %s.%s of type %v: extend bodies.value", r.Name, a.Name, a.Type)
	return nil
}

// ref is a record of the resource name, made on first use.
func (b *bodies) ref(t *testing.T, name string) int64 {
	t.Helper()
	if id, ok := b.refs[name]; ok {
		return id
	}
	r, ok := registry.Get(name)
	if !ok || r.ReadOnly {
		t.Fatalf("a reference to %s: not a resource records can be created of", name)
	}
	id := testenv.ID(t, b.c.Create(t, name, b.body(t, r, nil)))
	b.refs[name] = id
	return id
}

// skill makes a new skill: a tag with a type, which needs a category.
func (b *bodies) skill(t *testing.T) int64 {
	t.Helper()
	return testenv.ID(t, b.c.Create(t, "tags", M{"name": fmt.Sprint("skill ", b.next()), "type": 1, "category": b.ref(t, "tag-categories")}))
}

// readOnlyRecords make a record of each read-only resource the way the
// service does, labelled where the resource takes a label. Each entry
// names the rule.
var readOnlyRecords = map[string]func(t *testing.T, b *bodies, label string) M{
	// A holiday is an absence of the tenant's PublicHoliday absence type.
	"holidays": func(t *testing.T, b *bodies, label string) M {
		absence := b.c.Create(t, "absences", M{"absenceType": publicHoliday(t, b.c), "label": label, "day": "2026-12-25"})
		holiday := b.c.Get(t, "holidays", testenv.ID(t, absence))
		if !reflect.DeepEqual(holiday, absence) {
			t.Fatalf("holiday %v, want the absence %v", holiday, absence)
		}
		return holiday
	},
	// A project day is written by an approval; its project is one of its
	// own, so that the approval blocks no other WORK entry.
	"project-days": func(t *testing.T, b *bodies, _ string) M {
		return approve(t, b.c, testenv.ID(t, b.c.Create(t, "projects", M{"name": "approved"})), "2026-02-02")
	},
}

// readOnlyRecord makes a record of the read-only resource r.
func (b *bodies) readOnlyRecord(t *testing.T, r *resource.Resource, label string) M {
	t.Helper()
	makeRecord, ok := readOnlyRecords[r.Name]
	if !ok {
		t.Fatalf("no records of the read-only resource %s: extend readOnlyRecords", r.Name)
	}
	return makeRecord(t, b, label)
}

// publicHoliday is the id of the tenant's PublicHoliday absence type.
func publicHoliday(t *testing.T, c *testenv.Client) int64 {
	t.Helper()
	types := c.List(t, "/v1/absence-types?name=PublicHoliday")
	if len(types) != 1 {
		t.Fatalf("PublicHoliday absence types: %v", types)
	}
	return testenv.ID(t, types[0])
}

// approve approves a project's day and returns the project day.
func approve(t *testing.T, c *testenv.Client, project int64, day string) M {
	t.Helper()
	days := c.Array(t, http.MethodPost, "/v1/approval/bulk-approve",
		M{"action": "approve", "items": []M{{"project": project, "day": day}}}, http.StatusOK)
	if len(days) != 1 || days[0]["validationStatus"] != "APPROVED" {
		t.Fatalf("approval of project %d on %s: %v", project, day, days)
	}
	return days[0]
}
