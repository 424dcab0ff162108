package httpapi_test

// Black-box tests of the generic resource endpoints (CONTRACT.md "Data API
// conventions", "Attributes", "Lists", "Roles"; SPEC.md "Resources and
// their fields", "List endpoints") on both database engines.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// rsContractPaths is CONTRACT.md's list of resource paths, in its order.
var rsContractPaths = []string{
	"/v1/absences", "/v1/absence-requests", "/v1/absence-types", "/v1/clients",
	"/v1/client-external-integrations", "/v1/contacts", "/v1/colors", "/v1/documents",
	"/v1/expenses", "/v1/expense-categories", "/v1/holidays", "/v1/integration-services",
	"/v1/integration-service-types", "/v1/invoices", "/v1/invoice-external-integrations",
	"/v1/planned-invoices", "/v1/overtime-reductions", "/v1/planner-assignments", "/v1/projects",
	"/v1/project-days", "/v1/project-milestones", "/v1/references", "/v1/reference-families",
	"/v1/reference-family-assignments", "/v1/roles", "/v1/tasks", "/v1/task-assignments",
	"/v1/teams", "/v1/team-assignments", "/v1/skill-assignments", "/v1/skill-sets",
	"/v1/skill-set-categories", "/v1/tags", "/v1/tag-assignments", "/v1/tag-categories",
	"/v1/time-entries", "/v1/users", "/v1/user-assignments", "/v1/user-employments",
	"/v1/user-integrations", "/v1/vacation-budgets",
}

// rsTimestampRE is the contract's timestamp format, YYYY-MM-DDTHH:mm:ss.sssZ.
var rsTimestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// rsM is a JSON object literal.
type rsM = map[string]any

// rsClient is a signed-in caller of one tenant.
type rsClient struct {
	srv    *testenv.Server
	slug   string
	token  string
	userID int64
}

func rsSignIn(t *testing.T, srv *testenv.Server, tn testenv.Tenant) *rsClient {
	t.Helper()
	return &rsClient{srv: srv, slug: tn.Slug, token: login(t, srv, tn).AccessToken, userID: tn.AdminID}
}

// send makes a request. body is nil (none), a string or []byte (sent as
// is), or any other value (JSON-encoded).
func (c *rsClient) send(t *testing.T, method, path string, body any) (int, http.Header, []byte) {
	t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		r = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, c.srv.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", c.slug)
	req.Header.Set("Authorization", "Bearer "+c.token)
	if r != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	if ct := resp.Header.Get("Content-Type"); len(raw) > 0 && !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, resp.Header, raw
}

// object makes a request that must answer want with a JSON object.
func (c *rsClient) object(t *testing.T, method, path string, body any, want int) rsM {
	t.Helper()
	status, _, raw := c.send(t, method, path, body)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var m rsM
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		t.Fatalf("%s %s: body is not a JSON object: %q", method, path, raw)
	}
	return m
}

func (c *rsClient) create(t *testing.T, res string, body any) rsM {
	t.Helper()
	return c.object(t, http.MethodPost, "/v1/"+res, body, http.StatusCreated)
}

func (c *rsClient) get(t *testing.T, res string, id int64) rsM {
	t.Helper()
	return c.object(t, http.MethodGet, fmt.Sprintf("/v1/%s/%d", res, id), nil, http.StatusOK)
}

// list GETs a list path that must answer 200 with a JSON array of objects.
func (c *rsClient) list(t *testing.T, path string) []rsM {
	t.Helper()
	status, _, raw := c.send(t, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", path, status, raw)
	}
	var arr []rsM
	if err := json.Unmarshal(raw, &arr); err != nil || arr == nil {
		t.Fatalf("GET %s: body is not a JSON array: %q", path, raw)
	}
	return arr
}

// ids GETs a list path and returns the ids in order.
func (c *rsClient) ids(t *testing.T, path string) []int64 {
	t.Helper()
	var out []int64
	for _, m := range c.list(t, path) {
		out = append(out, rsID(t, m))
	}
	return out
}

// fail makes a request that must answer the contract's JSON error.
func (c *rsClient) fail(t *testing.T, method, path string, body any, status int, code string) rsM {
	t.Helper()
	got, _, raw := c.send(t, method, path, body)
	return rsWantError(t, method+" "+path, got, raw, status, code)
}

func rsWantError(t *testing.T, what string, status int, raw []byte, wantStatus int, wantCode string) rsM {
	t.Helper()
	var m rsM
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: status %d, body is not a JSON object: %q", what, status, raw)
	}
	if status != wantStatus || m["code"] != wantCode {
		t.Fatalf("%s: got %d %s, want %d with code %q", what, status, raw, wantStatus, wantCode)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("%s: error without message: %s", what, raw)
	}
	return m
}

// rsProblemFields returns the fields named by an error's problems.
func rsProblemFields(m rsM) []string {
	var out []string
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		pm, _ := p.(map[string]any)
		f, _ := pm["field"].(string)
		out = append(out, f)
	}
	return out
}

func rsWantProblem(t *testing.T, m rsM, field string) {
	t.Helper()
	if !slices.Contains(rsProblemFields(m), field) {
		t.Errorf("problems %v do not name %q (body %v)", m["problems"], field, m)
	}
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		if pm, _ := p.(map[string]any); pm["message"] == nil || pm["message"] == "" {
			t.Errorf("problem without message: %v", p)
		}
	}
}

// rsProblemMessage returns the message of the problem naming field.
func rsProblemMessage(m rsM, field string) string {
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		if pm, _ := p.(map[string]any); pm["field"] == field {
			msg, _ := pm["message"].(string)
			return msg
		}
	}
	return ""
}

func rsID(t *testing.T, m rsM) int64 {
	t.Helper()
	f, ok := m["id"].(float64)
	if !ok || f != float64(int64(f)) || f <= 0 {
		t.Fatalf("id %v (%T) is not a positive integer: %v", m["id"], m["id"], m)
	}
	return int64(f)
}

// rsNum is a JSON number of a decoded body as an int64.
func rsNum(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

func rsCheckStamps(t *testing.T, m rsM) {
	t.Helper()
	for _, f := range []string{"createdAt", "updatedAt"} {
		s, _ := m[f].(string)
		if !rsTimestampRE.MatchString(s) {
			t.Errorf("%s = %v, want YYYY-MM-DDTHH:mm:ss.sssZ", f, m[f])
		}
	}
	if c, u := m["createdAt"].(string), m["updatedAt"].(string); u < c {
		t.Errorf("updatedAt %s before createdAt %s", u, c)
	}
}

func rsContainsID(list []rsM, id int64) bool {
	for _, m := range list {
		if f, _ := m["id"].(float64); int64(f) == id {
			return true
		}
	}
	return false
}

func rsJSONText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestRegistryPaths: every path of the contract answers, and only those;
// the generic endpoints create, read, change and delete records of every
// writable resource; read-only resources answer writes with 405.
func TestRegistryPaths(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := rsSignIn(t, srv, tn)

		var got []string
		for _, r := range srv.Service.Registry.All() {
			got = append(got, r.Path())
		}
		want := slices.Clone(rsContractPaths)
		sort.Strings(want)
		sort.Strings(got)
		if len(want) != 41 || !slices.Equal(got, want) {
			t.Fatalf("registry paths differ from CONTRACT.md:\n got %v\nwant %v", got, want)
		}
		// Near misses of real paths are not resources.
		for _, p := range []string{"/v1/project", "/v1/timeEntries", "/v1/time_entries", "/v1/Projects",
			"/v1/holiday", "/v1/projects/1/tasks", "/v1/project-day"} {
			c.fail(t, http.MethodGet, p, nil, http.StatusNotFound, "not_found")
		}

		readOnly := map[string]bool{"/v1/project-days": true, "/v1/holidays": true}
		fx := rsNewFixtures(t, c)
		for _, path := range rsContractPaths {
			name := strings.TrimPrefix(path, "/v1/")
			t.Run(name, func(t *testing.T) {
				status, hdr, raw := c.send(t, http.MethodGet, path, nil)
				var arr []rsM
				if status != http.StatusOK || json.Unmarshal(raw, &arr) != nil || arr == nil {
					t.Fatalf("GET %s: %d %q, want 200 with a JSON array", path, status, raw)
				}
				if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
					t.Errorf("GET %s: Deprecation header %q", path, dep)
				}
				if readOnly[path] {
					for _, req := range []struct{ method, path string }{
						{http.MethodPost, path}, {http.MethodPatch, path + "/1"},
						{http.MethodPut, path + "/1"}, {http.MethodDelete, path + "/1"},
					} {
						status, hdr, raw := c.send(t, req.method, req.path, `{"day":"2026-01-05"}`)
						rsWantError(t, req.method+" "+req.path, status, raw, http.StatusMethodNotAllowed, "method_not_allowed")
						if allow := hdr.Get("Allow"); !strings.Contains(allow, "GET") || strings.Contains(allow, req.method) {
							t.Errorf("%s %s: Allow %q", req.method, req.path, allow)
						}
						if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
							t.Errorf("%s %s (405): Deprecation header %q", req.method, req.path, dep)
						}
					}
					status, hdr, raw := c.send(t, http.MethodGet, path+"/1", nil)
					rsWantError(t, "GET "+path+"/1", status, raw, http.StatusNotFound, "not_found")
					if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
						t.Errorf("GET %s/1 (404): Deprecation header %q", path, dep)
					}
					// Every answer under a deprecated path carries the header,
					// errors included: 400, 401 and 404 as well as 405.
					status, hdr, raw = c.send(t, http.MethodGet, path+"?limit=-1", nil)
					rsWantError(t, "GET "+path+"?limit=-1", status, raw, http.StatusBadRequest, "invalid_query")
					if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
						t.Errorf("GET %s?limit=-1 (400): Deprecation header %q", path, dep)
					}
					for _, p := range []string{path, path + "/1"} {
						anon := &rsClient{srv: srv, slug: c.slug, token: "not-a-token"}
						status, hdr, raw = anon.send(t, http.MethodGet, p, nil)
						if status != http.StatusUnauthorized {
							t.Errorf("GET %s with a bad token: %d %s, want 401", p, status, raw)
						}
						if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
							t.Errorf("GET %s (401): Deprecation header %q", p, dep)
						}
					}
					for _, p := range []string{path + "/1/x", path + "/abc"} {
						status, hdr, raw = c.send(t, http.MethodGet, p, nil)
						rsWantError(t, "GET "+p, status, raw, http.StatusNotFound, "not_found")
						if dep := hdr.Get("Deprecation"); (path == "/v1/holidays") != (dep != "") {
							t.Errorf("GET %s (404): Deprecation header %q", p, dep)
						}
					}
					if n := len(c.list(t, path)); n != 0 {
						t.Errorf("a refused write left %d records", n)
					}
					return
				}

				res, _ := srv.Service.Registry.Get(name)
				body := rsValidBody(t, res, fx, rsM{"label": "first", "n": 1})
				status, hdr, raw = c.send(t, http.MethodPost, path, body)
				if status != http.StatusCreated {
					t.Fatalf("POST %s: %d %s", path, status, raw)
				}
				var rec rsM
				if err := json.Unmarshal(raw, &rec); err != nil {
					t.Fatalf("POST %s: %q", path, raw)
				}
				id := rsID(t, rec)
				rsCheckStamps(t, rec)
				if rec["label"] != "first" || rec["n"] != 1.0 {
					t.Errorf("created %v", rec)
				}
				if loc := hdr.Get("Location"); loc != fmt.Sprintf("%s/%d", path, id) {
					t.Errorf("Location %q", loc)
				}
				if got := c.get(t, name, id); !reflect.DeepEqual(got, rec) {
					t.Errorf("GET after POST:\n got %v\nwant %v", got, rec)
				}
				if !rsContainsID(c.list(t, path), id) {
					t.Errorf("list lacks the new record %d", id)
				}

				patched := c.object(t, http.MethodPatch, fmt.Sprintf("%s/%d", path, id), rsM{"label": "second", "extra": true}, http.StatusOK)
				if rsID(t, patched) != id || patched["label"] != "second" || patched["extra"] != true || patched["n"] != 1.0 ||
					patched["createdAt"] != rec["createdAt"] {
					t.Errorf("PATCH: %v (was %v)", patched, rec)
				}
				rsCheckStamps(t, patched)
				if patched["updatedAt"].(string) < rec["updatedAt"].(string) {
					t.Errorf("updatedAt went back: %v → %v", rec["updatedAt"], patched["updatedAt"])
				}
				if got := c.get(t, name, id); !reflect.DeepEqual(got, patched) {
					t.Errorf("GET after PATCH:\n got %v\nwant %v", got, patched)
				}

				put := c.object(t, http.MethodPut, fmt.Sprintf("%s/%d", path, id), rsM{"label": "third"}, http.StatusOK)
				if rsID(t, put) != id || put["label"] != "third" || put["extra"] != true || put["createdAt"] != rec["createdAt"] {
					t.Errorf("PUT (same as PATCH): %v", put)
				}
				rsCheckStamps(t, put)
				if got := c.get(t, name, id); !reflect.DeepEqual(got, put) {
					t.Errorf("GET after PUT:\n got %v\nwant %v", got, put)
				}

				deleted := c.object(t, http.MethodDelete, fmt.Sprintf("%s/%d", path, id), nil, http.StatusOK)
				if name == "skill-assignments" {
					// SPEC.md: removing a skill archives the assignment (status 0); the record is kept.
					if deleted["status"] != 0.0 || deleted["label"] != "third" || rsID(t, deleted) != id {
						t.Errorf("DELETE of a skill assignment: %v", deleted)
					}
					if got := c.get(t, name, id); !reflect.DeepEqual(got, deleted) {
						t.Errorf("archived skill assignment: %v, want %v", got, deleted)
					}
					return
				}
				if !reflect.DeepEqual(deleted, put) {
					t.Errorf("DELETE answered\n %v\nwant the deleted record\n %v", deleted, put)
				}
				for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete} {
					c.fail(t, m, fmt.Sprintf("%s/%d", path, id), rsM{"label": "again"}, http.StatusNotFound, "not_found")
				}
				if rsContainsID(c.list(t, path), id) {
					t.Errorf("list still holds deleted record %d", id)
				}
			})
		}
	})
}

// rsOpenBody holds an attribute of every JSON kind; none is declared by projects.
const rsOpenBody = `{
	"text": "Grüße \"quoted\" \\ back \u2713 <b>&amp;</b>",
	"empty": "",
	"int": 42,
	"big": 9007199254740993,
	"float": 12.50,
	"negative": -7,
	"negFloat": -0.25,
	"exp": 1e3,
	"zero": 0,
	"yes": true,
	"no": false,
	"nothing": null,
	"list": [1, "two", null, false, {"x": [1.5, []]}],
	"emptyList": [],
	"object": {"a": {"b": {"c": "d"}}, "n": -1, "t": true},
	"emptyObject": {},
	"with space": "s",
	"dotted.key": "d",
	"größe": 1.5,
	"名前": "なまえ",
	"a/b:c[0]": true
}`

// TestAttributes: open attributes are stored as sent, declared attributes
// are typed and validated, references stay in the tenant, bodies are
// checked, and passwords never leave the service.
func TestAttributes(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		other := srv.CreateTenant(t, "other")
		c := rsSignIn(t, srv, tn)
		oc := rsSignIn(t, srv, other)

		t.Run("open attributes keep their values", func(t *testing.T) {
			var want rsM
			if err := json.Unmarshal([]byte(rsOpenBody), &want); err != nil {
				t.Fatal(err)
			}
			check := func(what string, got rsM) {
				t.Helper()
				for k, v := range want {
					gv, ok := got[k]
					if !ok || !reflect.DeepEqual(gv, v) {
						t.Errorf("%s: %q = %s (present %v), want %s", what, k, rsJSONText(gv), ok, rsJSONText(v))
					}
				}
			}
			rec := c.create(t, "projects", rsOpenBody)
			id := rsID(t, rec)
			check("POST", rec)
			check("GET", c.get(t, "projects", id))
			listed := c.list(t, fmt.Sprintf("/v1/projects?id=%d", id))
			if len(listed) != 1 {
				t.Fatalf("list by id: %v", listed)
			}
			check("list", listed[0])
			// Names that are not identifiers are filterable like any other.
			for _, q := range []string{
				"where=" + url.QueryEscape(`{"größe":1.5}`),
				"where=" + url.QueryEscape(`{"名前":{"startsWith":"な"}}`),
				"where=" + url.QueryEscape(`{"with space":"s","dotted.key":"d"}`),
				"where=" + url.QueryEscape(`{"a/b:c[0]":true}`),
				url.QueryEscape("größe") + "=1.5",
				url.QueryEscape("with space") + "=s",
			} {
				if got := c.ids(t, "/v1/projects?"+q); !slices.Equal(got, []int64{id}) {
					t.Errorf("GET /v1/projects?%s: %v, want [%d]", q, got, id)
				}
			}
			check("PATCH of another attribute", c.object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), rsM{"other": 1}, http.StatusOK))
			check("GET after PATCH", c.get(t, "projects", id))
			// Large integers keep every digit.
			_, _, raw := c.send(t, http.MethodGet, fmt.Sprintf("/v1/projects/%d", id), nil)
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.UseNumber()
			var exact map[string]any
			if err := dec.Decode(&exact); err != nil {
				t.Fatal(err)
			}
			if exact["big"] != json.Number("9007199254740993") || exact["int"] != json.Number("42") {
				t.Errorf("big = %v, int = %v", exact["big"], exact["int"])
			}
			// An attribute is replaced by whatever kind is sent next, null included.
			p := c.object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), rsM{"int": "now text", "text": nil, "list": rsM{"o": 1}}, http.StatusOK)
			if p["int"] != "now text" || p["list"].(map[string]any)["o"] != 1.0 {
				t.Errorf("PATCH changing kinds: %v", p)
			}
			if v, ok := p["text"]; !ok || v != nil {
				t.Errorf("text after PATCH to null: %v (present %v)", v, ok)
			}
		})

		t.Run("service-owned attributes are ignored", func(t *testing.T) {
			before := time.Now().UTC().Add(-time.Minute)
			rec := c.create(t, "projects", rsM{"id": 424242, "createdAt": "2000-01-01T00:00:00.000Z", "updatedAt": "2000-01-02T00:00:00.000Z", "name": "owned"})
			id := rsID(t, rec)
			if id == 424242 || rec["createdAt"] == "2000-01-01T00:00:00.000Z" || rec["updatedAt"] == "2000-01-02T00:00:00.000Z" {
				t.Errorf("client values taken: %v", rec)
			}
			rsCheckStamps(t, rec)
			if ts, err := time.Parse("2006-01-02T15:04:05.000Z", rec["createdAt"].(string)); err != nil || ts.Before(before) || ts.After(time.Now().Add(time.Minute)) {
				t.Errorf("createdAt %v is not now", rec["createdAt"])
			}
			if id != 424242 {
				c.fail(t, http.MethodGet, "/v1/projects/424242", nil, http.StatusNotFound, "not_found")
			}
			p := c.object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", id), rsM{"id": id + 1000, "createdAt": "2001-01-01T00:00:00.000Z", "updatedAt": "2001-01-01T00:00:00.000Z", "name": "changed"}, http.StatusOK)
			if rsID(t, p) != id || p["createdAt"] != rec["createdAt"] || p["updatedAt"] == "2001-01-01T00:00:00.000Z" || p["name"] != "changed" {
				t.Errorf("PATCH with owned attributes: %v", p)
			}
			// A read-only declared attribute is ignored too.
			te := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1, "validationStatus": "APPROVED"})
			if te["validationStatus"] == "APPROVED" {
				t.Errorf("client set validationStatus: %v", te)
			}
		})

		fx := rsNewFixtures(t, c)
		projectID, taskID := fx.project, fx.task
		const missing = 987654321

		counts := func() map[string]int {
			m := map[string]int{}
			for _, r := range []string{"time-entries", "documents", "tags", "skill-assignments", "tag-assignments", "users", "skill-sets"} {
				m[r] = len(c.list(t, "/v1/"+r))
			}
			return m
		}
		before := counts()

		t.Run("declared attributes are validated", func(t *testing.T) {
			admin := tn.AdminID
			cases := []struct {
				name, res string
				body      any
				field     string
			}{
				{"duration text", "time-entries", rsM{"day": "2026-01-05", "duration": "x"}, "duration"},
				{"duration fraction", "time-entries", rsM{"day": "2026-01-05", "duration": 1.5}, "duration"},
				{"duration bool", "time-entries", rsM{"day": "2026-01-05", "duration": true}, "duration"},
				{"sorting text", "time-entries", rsM{"day": "2026-01-05", "sorting": "1"}, "sorting"},
				{"sorting fraction", "time-entries", rsM{"day": "2026-01-05", "duration": 60, "sorting": 1.5}, "sorting"},
				{"WORK without sorting under DURATION", "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID, "duration": 60}, "sorting"},
				{"BREAK without sorting under DURATION", "time-entries", rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60}, "sorting"},
				{"day month 13", "time-entries", rsM{"day": "2026-13-01"}, "day"},
				{"day 30 February", "time-entries", rsM{"day": "2026-02-30"}, "day"},
				{"day with time", "time-entries", rsM{"day": "2026-01-05T00:00:00.000Z"}, "day"},
				{"day number", "time-entries", rsM{"day": 20260105}, "day"},
				{"day missing", "time-entries", rsM{"duration": 60}, "day"},
				{"day null", "time-entries", rsM{"day": nil}, "day"},
				{"trackingType FUN", "time-entries", rsM{"day": "2026-01-05", "trackingType": "FUN"}, "trackingType"},
				{"trackingType lower case", "time-entries", rsM{"day": "2026-01-05", "trackingType": "work"}, "trackingType"},
				{"startTime without milliseconds", "time-entries", rsM{"day": "2026-01-05", "startTime": "2026-01-05T10:00:00Z"}, "startTime"},
				{"endTime with offset", "time-entries", rsM{"day": "2026-01-05", "endTime": "2026-01-05T10:00:00.000+01:00"}, "endTime"},
				{"project text", "time-entries", rsM{"day": "2026-01-05", "project": "P"}, "project"},
				{"documents category 99", "documents", rsM{"model": "user", "record": admin, "category": 99}, "category"},
				{"documents category 0", "documents", rsM{"model": "user", "record": admin, "category": 0}, "category"},
				{"documents category text", "documents", rsM{"model": "user", "record": admin, "category": "1"}, "category"},
				{"documents model invoice", "documents", rsM{"model": "invoice", "record": admin}, "model"},
				{"documents model missing", "documents", rsM{"record": admin}, "model"},
				{"documents record missing", "documents", rsM{"model": "user"}, "record"},
				{"documents record text", "documents", rsM{"model": "user", "record": "1"}, "record"},
				{"documents visibleToUser text", "documents", rsM{"model": "user", "record": admin, "visibleToUser": "yes"}, "visibleToUser"},
				{"documents date", "documents", rsM{"model": "user", "record": admin, "date": "05.01.2026"}, "date"},
				{"documents name number", "documents", rsM{"model": "user", "record": admin, "name": 5}, "name"},
				{"tags type 7", "tags", rsM{"type": 7}, "type"},
				{"tags type text", "tags", rsM{"type": "skill"}, "type"},
				{"tags type fraction", "tags", rsM{"type": 1.5}, "type"},
				{"skill-assignments status 2", "skill-assignments", rsM{"status": 2}, "status"},
				{"skill-assignments proficiency text", "skill-assignments", rsM{"proficiency": "high"}, "proficiency"},
				{"tag-assignments model unknown", "tag-assignments", rsM{"model": "invoice"}, "model"},
				{"users isAdmin text", "users", rsM{"isAdmin": "yes"}, "isAdmin"},
				{"users email no address", "users", rsM{"email": "not an address"}, "email"},
				{"users email with name", "users", rsM{"email": "Someone <someone@acme.test>"}, "email"},
				{"users email number", "users", rsM{"email": 5}, "email"},
				{"users password empty", "users", rsM{"email": "short@acme.test", "password": ""}, "password"},
				{"users password number", "users", rsM{"email": "num@acme.test", "password": 12345678}, "password"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					m := c.fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid")
					rsWantProblem(t, m, tc.field)
				})
			}
			// A PATCH is validated the same way, and leaves the record alone.
			te := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1})
			id := rsID(t, te)
			for field, v := range map[string]any{"duration": "x", "day": "2026-13-01", "trackingType": "FUN", "sorting": nil} {
				m := c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), rsM{field: v}, http.StatusBadRequest, "invalid")
				rsWantProblem(t, m, field)
			}
			m := c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), rsM{"day": nil}, http.StatusBadRequest, "invalid")
			rsWantProblem(t, m, "day")
			if got := c.get(t, "time-entries", id); !reflect.DeepEqual(got, te) {
				t.Errorf("refused PATCHes changed the record: %v → %v", te, got)
			}
			c.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", id), nil, http.StatusOK)
			// Valid values of every declared kind are accepted and typed.
			ok := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID,
				"duration": 3600, "sorting": 2})
			if ok["duration"] != 3600.0 || ok["sorting"] != 2.0 || ok["project"] != float64(projectID) || ok["task"] != float64(taskID) ||
				ok["user"] != float64(tn.AdminID) || ok["day"] != "2026-01-05" || ok["trackingType"] != "WORK" {
				t.Errorf("valid time entry: %v", ok)
			}
			c.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", rsID(t, ok)), nil, http.StatusOK)
			wt := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORKTIME",
				"startTime": "2026-01-05T08:00:00.000Z", "endTime": "2026-01-05T09:00:00.000Z"})
			if wt["startTime"] != "2026-01-05T08:00:00.000Z" || wt["endTime"] != "2026-01-05T09:00:00.000Z" {
				t.Errorf("valid worktime entry: %v", wt)
			}
			c.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", rsID(t, wt)), nil, http.StatusOK)
		})

		t.Run("references must exist in the tenant", func(t *testing.T) {
			// A record of another tenant whose id names nothing in this one.
			var foreignProject, foreignUser int64
			for i := 0; i < 50 && (foreignProject == 0 || foreignUser == 0); i++ {
				if foreignProject == 0 {
					id := rsID(t, oc.create(t, "projects", rsM{"name": "theirs"}))
					if st, _, _ := c.send(t, http.MethodGet, fmt.Sprintf("/v1/projects/%d", id), nil); st == http.StatusNotFound {
						foreignProject = id
					}
				}
				if foreignUser == 0 {
					id := rsID(t, oc.create(t, "users", rsM{"name": "theirs"}))
					if st, _, _ := c.send(t, http.MethodGet, fmt.Sprintf("/v1/users/%d", id), nil); st == http.StatusNotFound {
						foreignUser = id
					}
				}
			}
			if foreignProject == 0 || foreignUser == 0 {
				t.Fatal("could not find ids of the other tenant unused in this one")
			}
			cases := []struct {
				name, res string
				body      rsM
				field     string
			}{
				{"missing project", "time-entries", rsM{"day": "2026-01-05", "project": missing}, "project"},
				{"missing task", "time-entries", rsM{"day": "2026-01-05", "task": missing}, "task"},
				{"missing user", "time-entries", rsM{"day": "2026-01-05", "user": missing}, "user"},
				{"project that is a task", "time-entries", rsM{"day": "2026-01-05", "project": taskID}, "project"},
				{"task that is a project", "time-entries", rsM{"day": "2026-01-05", "task": projectID}, "task"},
				{"document of a missing project", "documents", rsM{"model": "project", "record": missing}, "record"},
				{"user document about a project", "documents", rsM{"model": "user", "record": projectID}, "record"},
				{"missing tag", "tag-assignments", rsM{"tag": missing, "model": "project", "record": projectID}, "tag"},
				{"tag that is a project", "tag-assignments", rsM{"tag": projectID, "model": "project", "record": projectID}, "tag"},
				{"tagged record missing", "tag-assignments", rsM{"tag": fx.plainTag, "model": "project", "record": missing}, "record"},
				{"tagged record of another model", "tag-assignments", rsM{"tag": fx.plainTag, "model": "client", "record": projectID}, "record"},
				{"missing skill-set category", "skill-sets", rsM{"category": missing}, "category"},
				{"missing tag category", "tags", rsM{"type": 1, "category": missing}, "category"},
				{"missing skill user", "skill-assignments", rsM{"user": missing, "tag": fx.skill}, "user"},
				{"missing skill", "skill-assignments", rsM{"user": tn.AdminID, "tag": missing}, "tag"},
				{"absence request of a missing user", "absence-requests", rsM{"user": missing}, "user"},
				{"expense of a missing user", "expenses", rsM{"user": missing}, "user"},
				{"project of another tenant", "time-entries", rsM{"day": "2026-01-05", "project": foreignProject}, "project"},
				{"user of another tenant", "time-entries", rsM{"day": "2026-01-05", "user": foreignUser}, "user"},
				{"document about another tenant's project", "documents", rsM{"model": "project", "record": foreignProject}, "record"},
				{"document about another tenant's user", "documents", rsM{"model": "user", "record": foreignUser}, "record"},
				{"project category of a user document", "documents", rsM{"model": "user", "record": tn.AdminID, "category": 7}, "category"},
				{"user category of a project document", "documents", rsM{"model": "project", "record": projectID, "category": 1}, "category"},
				{"client category of a project document", "documents", rsM{"model": "project", "record": projectID, "category": 11}, "category"},
			}
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					m := c.fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid")
					rsWantProblem(t, m, tc.field)
				})
			}
			// The messages name the field, the resource and the id, and a
			// category the model it is for.
			for _, tc := range []struct {
				name, res string
				body      rsM
				field     string
				want      string
			}{
				{"missing project", "time-entries", rsM{"day": "2026-01-05", "project": missing},
					"project", fmt.Sprintf("project names no projects record %d in this tenant", missing)},
				{"missing user", "time-entries", rsM{"day": "2026-01-05", "user": missing},
					"user", fmt.Sprintf("user names no users record %d in this tenant", missing)},
				{"task that is a project", "time-entries", rsM{"day": "2026-01-05", "task": projectID},
					"task", fmt.Sprintf("task names no tasks record %d in this tenant", projectID)},
				{"document of a missing project", "documents", rsM{"model": "project", "record": missing},
					"record", fmt.Sprintf("record names no projects record %d in this tenant", missing)},
				{"document about another tenant's user", "documents", rsM{"model": "user", "record": foreignUser},
					"record", fmt.Sprintf("record names no users record %d in this tenant", foreignUser)},
				{"missing tag", "tag-assignments", rsM{"tag": missing, "model": "project", "record": projectID},
					"tag", fmt.Sprintf("tag names no tags record %d in this tenant", missing)},
				{"project category of a user document", "documents", rsM{"model": "user", "record": tn.AdminID, "category": 7},
					"category", "category 7 is for project documents, not user documents"},
				{"user category of a project document", "documents", rsM{"model": "project", "record": projectID, "category": 1},
					"category", "category 1 is for user documents, not project documents"},
				{"client category of a project document", "documents", rsM{"model": "project", "record": projectID, "category": 11},
					"category", "category 11 is for client documents, not project documents"},
			} {
				t.Run("message/"+tc.name, func(t *testing.T) {
					m := c.fail(t, http.MethodPost, "/v1/"+tc.res, tc.body, http.StatusBadRequest, "invalid")
					if got := rsProblemMessage(m, tc.field); got != tc.want {
						t.Errorf("problem on %s: %q, want %q", tc.field, got, tc.want)
					}
				})
			}
			// A PATCH that points a reference elsewhere is checked too.
			te := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORK", "project": projectID, "task": taskID, "duration": 60, "sorting": 1})
			id := rsID(t, te)
			for _, v := range []int64{missing, foreignProject, taskID} {
				m := c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", id), rsM{"project": v}, http.StatusBadRequest, "invalid")
				rsWantProblem(t, m, "project")
			}
			if got := c.get(t, "time-entries", id); got["project"] != float64(projectID) {
				t.Errorf("refused PATCH changed project: %v", got)
			}
			c.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", id), nil, http.StatusOK)
			// Categories of the right model are fine.
			for model, rec := range map[string]int64{"user": tn.AdminID, "project": projectID} {
				cat := map[string]int{"user": 1, "project": 7}[model]
				d := c.create(t, "documents", rsM{"model": model, "record": rec, "category": cat, "name": "doc", "date": "2026-01-05", "visibleToUser": true})
				if d["category"] != float64(cat) || d["record"] != float64(rec) || d["model"] != model {
					t.Errorf("document: %v", d)
				}
				// Switching the model leaves a category of the old model behind.
				newModel := map[string]string{"user": "project", "project": "user"}[model]
				newRec := map[string]int64{"user": tn.AdminID, "project": projectID}[newModel]
				m := c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/documents/%d", rsID(t, d)), rsM{"model": newModel, "record": newRec}, http.StatusBadRequest, "invalid")
				rsWantProblem(t, m, "category")
				if got, want := rsProblemMessage(m, "category"), fmt.Sprintf("category %d is for %s documents, not %s documents", cat, model, newModel); got != want {
					t.Errorf("model switch: category problem %q, want %q", got, want)
				}
				c.object(t, http.MethodDelete, fmt.Sprintf("/v1/documents/%d", rsID(t, d)), nil, http.StatusOK)
			}
		})

		if after := counts(); !reflect.DeepEqual(after, before) {
			t.Errorf("refused writes changed the record counts: %v → %v", before, after)
		}

		t.Run("bodies", func(t *testing.T) {
			n := len(c.list(t, "/v1/projects"))
			for name, body := range map[string]string{
				"truncated":              `{"name":`,
				"not JSON":               `name=x`,
				"empty":                  ``,
				"array":                  `[{"name":"x"}]`,
				"string":                 `"x"`,
				"number":                 `5`,
				"null":                   `null`,
				"two objects":            `{"a":1}{"b":2}`,
				"trailing comma":         `{"a":1,}`,
				"stray brace":            `{"a":1}}`,
				"stray bracket":          `{"a":1}]`,
				"NUL in text":            `{"name":"a\u0000b"}`,
				"NUL in a key":           `{"a\u0000":1}`,
				"NUL deep down":          `{"list":[{"x":["\u0000"]}]}`,
				"huge number":            `{"n":1e400}`,
				"huge negative":          `{"n":[-1e400]}`,
				"number that underflows": `{"n":{"m":1e-400}}`,
			} {
				t.Run(name, func(t *testing.T) {
					got, _, raw := c.send(t, http.MethodPost, "/v1/projects", body)
					if got != http.StatusBadRequest {
						t.Fatalf("status %d: %s", got, raw)
					}
					rsWantError(t, "POST", got, raw, http.StatusBadRequest, "invalid_json")
				})
			}
			nest := func(levels int) string { // an object holding levels-1 nested arrays
				return `{"deep":` + strings.Repeat("[", levels-1) + `1` + strings.Repeat("]", levels-1) + `}`
			}
			rec := c.create(t, "projects", nest(32))
			if rsID(t, rec) == 0 {
				t.Fatal("no id")
			}
			c.fail(t, http.MethodPost, "/v1/projects", nest(33), http.StatusBadRequest, "too_deep")
			c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", rsID(t, rec)), nest(33), http.StatusBadRequest, "too_deep")
			// Brackets inside strings do not count.
			c.create(t, "projects", rsM{"brackets": strings.Repeat("[{", 100)})
			// The extremes of a 64-bit float are numbers like any other.
			ext := c.create(t, "projects", `{"tiny":5e-324,"zero":0e999,"max":1.7976931348623157e308,"min":-1.7976931348623157e308}`)
			if ext["tiny"] != 5e-324 || ext["zero"] != 0.0 || ext["max"] != 1.7976931348623157e308 || ext["min"] != -1.7976931348623157e308 {
				t.Errorf("float extremes: %v", ext)
			}
			if got := c.get(t, "projects", rsID(t, ext)); !reflect.DeepEqual(got, ext) {
				t.Errorf("float extremes read back: %v, want %v", got, ext)
			}

			// 1 MiB is the cap.
			under := `{"big":"` + strings.Repeat("a", 1<<20-100) + `"}`
			big := c.create(t, "projects", under)
			if s, _ := big["big"].(string); len(s) != 1<<20-100 {
				t.Errorf("a body just under 1 MiB was not stored whole (%d bytes)", len(s))
			}
			over := `{"big":"` + strings.Repeat("a", 1<<20) + `"}`
			c.fail(t, http.MethodPost, "/v1/projects", over, http.StatusRequestEntityTooLarge, "body_too_large")
			c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", rsID(t, rec)), over, http.StatusRequestEntityTooLarge, "body_too_large")
			if got := len(c.list(t, "/v1/projects")); got != n+4 {
				t.Errorf("projects: %d, want %d (four accepted bodies)", got, n+4)
			}
		})

		t.Run("unknown and malformed ids", func(t *testing.T) {
			for _, id := range []string{strconv.Itoa(missing), "abc", "0", "-1", "1.5", "1e3", "0x10", "99999999999999999999", "%20",
				"%2B" + strconv.FormatInt(projectID, 10), "0" + strconv.FormatInt(projectID, 10), strconv.FormatInt(projectID, 10) + "%20"} {
				for _, m := range []string{http.MethodGet, http.MethodPatch, http.MethodPut, http.MethodDelete} {
					c.fail(t, m, "/v1/projects/"+id, rsM{"name": "x"}, http.StatusNotFound, "not_found")
				}
			}
			// An id of another resource is not a record of this one.
			c.fail(t, http.MethodGet, fmt.Sprintf("/v1/tasks/%d", projectID), nil, http.StatusNotFound, "not_found")
			c.fail(t, http.MethodDelete, fmt.Sprintf("/v1/tasks/%d", projectID), nil, http.StatusNotFound, "not_found")
			c.get(t, "projects", projectID)
		})

		t.Run("users", func(t *testing.T) {
			secretKeys := func(what string, m rsM) {
				t.Helper()
				for _, k := range []string{"password", "passwordHash", "password_hash"} {
					if _, ok := m[k]; ok {
						t.Errorf("%s leaks %q: %v", what, k, m)
					}
				}
			}
			u := c.create(t, "users", rsM{"email": "Person@acme.test", "password": "person-password", "isAdmin": false, "phone": "123"})
			id := rsID(t, u)
			if u["email"] != "Person@acme.test" || u["isAdmin"] != false || u["phone"] != "123" {
				t.Errorf("created user %v", u)
			}
			secretKeys("POST", u)
			secretKeys("GET", c.get(t, "users", id))
			for _, m := range c.list(t, "/v1/users") {
				secretKeys("list", m)
			}
			for _, m := range c.list(t, "/v1/users?where="+url.QueryEscape(`{"password":{"!=":null}}`)) {
				secretKeys("list where password", m)
			}
			p := c.object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", id), rsM{"password": "changed-password"}, http.StatusOK)
			secretKeys("PATCH", p)
			// A password only has to be non-empty: no minimum length.
			tiny := c.create(t, "users", rsM{"email": "tiny@acme.test", "password": "x"})
			secretKeys("POST short password", tiny)
			tc := rsSignIn(t, srv, testenv.Tenant{Slug: tn.Slug, AdminEmail: "tiny@acme.test", Password: "x"})
			if _, _, tme := me(t, srv, tn.Slug, tc.token); rsNum(tme["id"]) != rsID(t, tiny) {
				t.Errorf("signed in with a one-character password as %v, want user %d", tme, rsID(t, tiny))
			}
			c.object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", rsID(t, tiny)), rsM{"password": "é"}, http.StatusOK)
			rsSignIn(t, srv, testenv.Tenant{Slug: tn.Slug, AdminEmail: "tiny@acme.test", Password: "é"})
			m := c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", rsID(t, tiny)), rsM{"password": ""}, http.StatusBadRequest, "invalid")
			rsWantProblem(t, m, "password")
			c.object(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", rsID(t, tiny)), nil, http.StatusOK)

			// The password works for signing in, in any case of the e-mail address.
			person := testenv.Tenant{Slug: tn.Slug, AdminEmail: "person@ACME.test", Password: "changed-password"}
			pc := rsSignIn(t, srv, person)
			_, _, me := me(t, srv, tn.Slug, pc.token)
			if rsNum(me["id"]) != id {
				t.Errorf("signed in as %v, want user %d", me, id)
			}
			secretKeys("users/me", me)

			n := len(c.list(t, "/v1/users"))
			for _, email := range []string{"person@acme.test", "PERSON@ACME.TEST", strings.ToUpper(tn.AdminEmail)} {
				m := c.fail(t, http.MethodPost, "/v1/users", rsM{"email": email, "password": "another-password"}, http.StatusConflict, "conflict")
				rsWantProblem(t, m, "email")
			}
			second := c.create(t, "users", rsM{"email": "second@acme.test"})
			c.fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", rsID(t, second)), rsM{"email": "PERSON@acme.test"}, http.StatusConflict, "conflict")
			if got := c.get(t, "users", rsID(t, second)); got["email"] != "second@acme.test" {
				t.Errorf("refused e-mail change applied: %v", got)
			}
			if got := len(c.list(t, "/v1/users")); got != n+1 {
				t.Errorf("users: %d, want %d", got, n+1)
			}
			// Admins cannot delete themselves; other users can be deleted.
			c.fail(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", tn.AdminID), nil, http.StatusConflict, "conflict")
			d := c.object(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", rsID(t, second)), nil, http.StatusOK)
			secretKeys("DELETE", d)
		})
	})
}

// rsListCase is one list request and the expected records, by index of creation.
type rsListCase struct {
	name     string
	query    url.Values
	want     []int
	noCross  bool // result depends on timing; not compared across engines
	wantNone bool // want is empty
}

// rsProjectRows are the records of TestListLanguage (grp is added: g0, g1, g2
// by index modulo 3). Some carry attributes whose names are not plain
// identifiers ("größe", "first name", "a.b"): any text of 1 to 128 bytes
// without quotes, backslashes or control characters is a name.
var rsProjectRows = []string{
	0:  `{"name":"Alpha","budget":100,"active":true,"tags":["a","b"],"code":"5","größe":3,"first name":"Ann","a.b":1}`,
	1:  `{"name":"alpha","budget":5,"active":false,"tags":["b"],"code":5,"größe":10,"first name":"Bob"}`,
	2:  `{"name":"Beta","budget":12.5,"active":true,"größe":"3"}`,
	3:  `{"name":"beta","budget":-3,"active":null,"a":{"b":1}}`,
	4:  `{"name":"100%","budget":0,"active":true}`,
	5:  `{"name":"100x","budget":1000}`,
	6:  `{"name":"a_b","budget":7.25,"active":false}`,
	7:  `{"name":"axb","budget":7}`,
	8:  `{"name":"Gamma","budget":null,"active":true,"tags":[]}`,
	9:  `{"name":"gamma","active":false}`,
	10: `{"name":null,"budget":"5"}`,
	11: `{}`,
	12: `{"name":"Delta","budget":50,"active":true,"code":"x"}`,
	13: `{"name":"delta%","budget":50.5}`,
	14: `{"name":"Epsilon","budget":99.99,"active":true}`,
	15: `{"name":"zeta","budget":-100.5,"active":false}`,
	16: `{"name":"Zeta","budget":1e2}`,
	17: `{"name":"ünï","budget":3}`,
	18: `{"name":"","budget":2}`,
	19: `{"name":"Eta","budget":true}`,
	20: `{"name":"theta_","budget":20,"active":true}`,
	21: `{"name":"Iota","budget":21,"active":"true"}`,
	22: `{"name":"kappa","budget":22,"tags":["a"]}`,
	23: `{"name":"Lambda","budget":23,"active":true,"nested":{"x":1}}`,
	24: `{"name":"mu","budget":24,"active":false}`,
	25: `{"name":"Nu","budget":25}`,
	26: `{"name":"xi","budget":26,"active":true}`,
	27: `{"name":"Omicron","budget":27,"active":false}`,
	28: `{"name":"pi","budget":28}`,
	29: `{"name":"Rho","budget":29,"active":true}`,
}

func rsSpan(lo, hi int) []int {
	var out []int
	for i := lo; i <= hi; i++ {
		out = append(out, i)
	}
	return out
}

// rsExcept returns 0..29 without the given indexes.
func rsExcept(skip ...int) []int {
	var out []int
	for i := range rsProjectRows {
		if !slices.Contains(skip, i) {
			out = append(out, i)
		}
	}
	return out
}

func rsSorted(s []int) []int {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

// rsFilterIdx returns the indexes 0..29 that keep accepts.
func rsFilterIdx(keep func(i int) bool) []int {
	var out []int
	for i := range rsProjectRows {
		if keep(i) {
			out = append(out, i)
		}
	}
	return out
}

func rsReversed(s []int) []int {
	out := slices.Clone(s)
	slices.Reverse(out)
	return out
}

func rsWhere(w string) url.Values { return url.Values{"where": {w}} }

// rsQuery builds query values from name, value pairs.
func rsQuery(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Add(kv[i], kv[i+1])
	}
	return v
}

// TestListLanguage runs the list query language over HTTP against a fixed
// set of projects and compares the answers of both engines.
func TestListLanguage(t *testing.T) {
	results := map[string]map[string][]int{}
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := rsSignIn(t, srv, tn)

		ids := make([]int64, len(rsProjectRows))
		index := map[int64]int{}
		created := make([]rsM, len(rsProjectRows))
		for i, row := range rsProjectRows {
			if !json.Valid([]byte(row)) {
				t.Fatalf("row %d is not JSON", i)
			}
			// Keep the literal number forms (12.50, 1e2) of the rows.
			raw := strings.TrimSuffix(strings.TrimSpace(row), "}")
			if raw != "{" {
				raw += ","
			}
			raw += fmt.Sprintf(`"grp":"g%d"}`, i%3)
			created[i] = c.create(t, "projects", raw)
			ids[i] = rsID(t, created[i])
			index[ids[i]] = i
		}
		// Another resource's records never show up in a project list.
		c.create(t, "tasks", rsM{"name": "Alpha", "budget": 100})

		all := rsSpan(0, 29)
		id := func(i int) string { return strconv.FormatInt(ids[i], 10) }
		g0 := []int{0, 3, 6, 9, 12, 15, 18, 21, 24, 27}
		g1 := []int{1, 4, 7, 10, 13, 16, 19, 22, 25, 28}
		g2 := []int{2, 5, 8, 11, 14, 17, 20, 23, 26, 29}
		nameDesc := []int{17, 15, 26, 20, 28, 24, 22, 9, 13, 3, 7, 1, 6, 16, 29, 27, 25, 23, 21, 8, 19, 14, 12, 2, 0, 5, 4, 18, 10, 11}
		nameAsc := []int{10, 11, 18, 4, 5, 0, 2, 12, 14, 19, 8, 21, 23, 25, 27, 29, 16, 6, 1, 7, 3, 13, 9, 22, 24, 28, 20, 26, 15, 17}
		grpDescNameAsc := []int{11, 5, 2, 14, 8, 23, 29, 20, 26, 17, 10, 4, 19, 25, 16, 1, 7, 13, 22, 28, 18, 0, 12, 21, 27, 6, 3, 9, 24, 15}
		budgetAsc := []int{8, 9, 11, 15, 3, 4, 18, 17, 1, 7, 6, 2, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 12, 13, 14, 0, 16, 5, 10, 19}
		activeNull := []int{3, 5, 7, 10, 11, 13, 16, 17, 18, 19, 22, 25, 28}
		activeTrue := []int{0, 2, 4, 8, 12, 14, 20, 23, 26, 29}
		activeFalse := []int{1, 6, 9, 15, 24, 27}

		// The depth of where counts nested criteria objects; the arrays of
		// or, and and in add no level. 31 nested "or" groups around
		// {"name": ["Alpha"]} are 32 levels deep.
		nestedOr := func(levels int, inner string) string {
			return strings.Repeat(`{"or":[`, levels) + inner + strings.Repeat(`]}`, levels)
		}
		nestedAnd := func(levels int, inner string) string {
			return strings.Repeat(`{"and":[`, levels) + inner + strings.Repeat(`]}`, levels)
		}
		// A name of 128 bytes (64 two-byte letters), and one of 130.
		name128, name130 := strings.Repeat("é", 64), strings.Repeat("é", 65)

		cases := []rsListCase{
			// Per-attribute filters.
			{name: "no criteria", query: url.Values{}, want: all},
			{name: "name exact, case-sensitive", query: rsQuery("name", "alpha"), want: []int{1}},
			{name: "name repeated", query: rsQuery("name", "Alpha", "name", "Beta"), want: []int{0, 2}},
			{name: "name bracket form", query: rsQuery("name[]", "Alpha", "name[]", "beta"), want: []int{0, 3}},
			{name: "name plain and bracket mixed", query: rsQuery("name", "Alpha", "name[]", "beta"), want: []int{0, 3}},
			{name: "name empty string", query: rsQuery("name", ""), want: []int{18}},
			{name: "name with percent is literal", query: rsQuery("name", "100%"), want: []int{4}},
			{name: "name no match", query: rsQuery("name", "ALPHA"), wantNone: true},
			{name: "loose 5 matches number and string", query: rsQuery("code", "5"), want: []int{0, 1}},
			{name: "loose budget 5", query: rsQuery("budget", "5"), want: []int{1, 10}},
			{name: "loose budget 1e2", query: rsQuery("budget", "1e2"), want: []int{0, 16}},
			{name: "loose budget 12.50", query: rsQuery("budget", "12.50"), want: []int{2}},
			{name: "loose budget negative", query: rsQuery("budget", "-100.5"), want: []int{15}},
			{name: "loose true matches bool and string", query: rsQuery("active", "true"), want: []int{0, 2, 4, 8, 12, 14, 20, 21, 23, 26, 29}},
			{name: "loose false", query: rsQuery("active", "false"), want: activeFalse},
			{name: "two attributes all apply", query: rsQuery("active", "true", "budget", "100"), want: []int{0}},
			{name: "id filter", query: rsQuery("id", id(5), "id", id(7)), want: []int{5, 7}},
			{name: "id bracket filter", query: rsQuery("id[]", id(29), "id[]", id(0)), want: []int{0, 29}},
			{name: "id of another resource", query: rsQuery("id", strconv.FormatInt(tn.AdminID, 10)), wantNone: true},
			{name: "unknown attribute filter", query: rsQuery("nothere", "x"), wantNone: true},

			// where: equality by JSON kind.
			{name: "where name", query: rsWhere(`{"name":"alpha"}`), want: []int{1}},
			{name: "where number matches numbers only", query: rsWhere(`{"budget":5}`), want: []int{1}},
			{name: "where string matches strings only", query: rsWhere(`{"budget":"5"}`), want: []int{10}},
			{name: "where 1e2 equals 100", query: rsWhere(`{"budget":100}`), want: []int{0, 16}},
			{name: "where 12.50", query: rsWhere(`{"budget":12.50}`), want: []int{2}},
			{name: "where bool", query: rsWhere(`{"active":true}`), want: activeTrue},
			{name: "where false", query: rsWhere(`{"active":false}`), want: activeFalse},
			{name: "where two attributes", query: rsWhere(`{"active":true,"grp":"g2"}`), want: []int{2, 8, 14, 20, 23, 26, 29}},
			{name: "where array means in", query: rsWhere(`{"budget":[5,7]}`), want: []int{1, 7}},
			{name: "where id as text is converted", query: rsWhere(`{"id":"` + id(3) + `"}`), want: []int{3}},
			{name: "where id in", query: rsWhere(`{"id":{"in":[` + id(0) + `,"` + id(29) + `"]}}`), want: []int{0, 29}},

			// Comparisons.
			{name: "< 0", query: rsWhere(`{"budget":{"<":0}}`), want: []int{3, 15}},
			{name: "<= 0", query: rsWhere(`{"budget":{"<=":0}}`), want: []int{3, 4, 15}},
			{name: "> 99.99", query: rsWhere(`{"budget":{">":99.99}}`), want: []int{0, 5, 16}},
			{name: ">= 99.99", query: rsWhere(`{"budget":{">=":99.99}}`), want: []int{0, 5, 14, 16}},
			{name: "range with two modifiers", query: rsWhere(`{"budget":{">":20,"<=":25}}`), want: []int{21, 22, 23, 24, 25}},
			{name: "string range", query: rsWhere(`{"budget":{"<":"6"}}`), want: []int{10}},
			{name: "names byte-wise below a", query: rsWhere(`{"name":{"<":"a"}}`), want: []int{0, 2, 4, 5, 8, 12, 14, 16, 18, 19, 21, 23, 25, 27, 29}},
			{name: "names byte-wise from x", query: rsWhere(`{"name":{">=":"x"}}`), want: []int{15, 17, 26}},
			{name: "!= number matches everything else", query: rsWhere(`{"budget":{"!=":5}}`), want: rsExcept(1)},
			{name: "!= true", query: rsWhere(`{"active":{"!=":true}}`), want: []int{1, 3, 5, 6, 7, 9, 10, 11, 13, 15, 16, 17, 18, 19, 21, 22, 24, 25, 27, 28}},
			{name: "in", query: rsWhere(`{"budget":{"in":[5,7,"5"]}}`), want: []int{1, 7, 10}},
			{name: "nin matches missing", query: rsWhere(`{"budget":{"nin":[5,7,100]}}`), want: rsExcept(0, 1, 7, 16)},
			{name: "nin true false", query: rsWhere(`{"active":{"nin":[true,false]}}`), want: rsSorted(append(slices.Clone(activeNull), 21))},
			{name: "in []", query: rsWhere(`{"budget":{"in":[]}}`), wantNone: true},
			{name: "array []", query: rsWhere(`{"budget":[]}`), wantNone: true},
			{name: "nin []", query: rsWhere(`{"budget":{"nin":[]}}`), want: all},

			// Text modifiers: case-sensitive, % and _ literal.
			{name: "startsWith 100%", query: rsWhere(`{"name":{"startsWith":"100%"}}`), want: []int{4}},
			{name: "startsWith 100", query: rsWhere(`{"name":{"startsWith":"100"}}`), want: []int{4, 5}},
			{name: "startsWith a", query: rsWhere(`{"name":{"startsWith":"a"}}`), want: []int{1, 6, 7}},
			{name: "startsWith a_", query: rsWhere(`{"name":{"startsWith":"a_"}}`), want: []int{6}},
			{name: "startsWith empty", query: rsWhere(`{"name":{"startsWith":""}}`), want: rsExcept(10, 11)},
			{name: "startsWith on numbers matches nothing", query: rsWhere(`{"budget":{"startsWith":"1"}}`), wantNone: true},
			{name: "endsWith _", query: rsWhere(`{"name":{"endsWith":"_"}}`), want: []int{20}},
			{name: "endsWith %", query: rsWhere(`{"name":{"endsWith":"%"}}`), want: []int{4, 13}},
			{name: "endsWith a", query: rsWhere(`{"name":{"endsWith":"a"}}`), want: []int{0, 1, 2, 3, 8, 9, 12, 15, 16, 19, 21, 22, 23}},
			{name: "endsWith non-ASCII", query: rsWhere(`{"name":{"endsWith":"nï"}}`), want: []int{17}},
			{name: "contains %", query: rsWhere(`{"name":{"contains":"%"}}`), want: []int{4, 13}},
			{name: "contains _", query: rsWhere(`{"name":{"contains":"_"}}`), want: []int{6, 20}},
			{name: "contains eta", query: rsWhere(`{"name":{"contains":"eta"}}`), want: []int{2, 3, 15, 16, 20}},
			{name: "startsWith and endsWith", query: rsWhere(`{"name":{"startsWith":"a","endsWith":"b"}}`), want: []int{6, 7}},
			{name: "startsWith on a declared integer", query: rsWhere(`{"id":{"startsWith":"` + id(3) + `"}}`), noCross: true,
				want: rsFilterIdx(func(i int) bool { return strings.HasPrefix(id(i), id(3)) })},

			// null.
			{name: "null or missing", query: rsWhere(`{"active":null}`), want: activeNull},
			{name: "not null", query: rsWhere(`{"active":{"!=":null}}`), want: []int{0, 1, 2, 4, 6, 8, 9, 12, 14, 15, 20, 21, 23, 24, 26, 27, 29}},
			{name: "budget null", query: rsWhere(`{"budget":null}`), want: []int{8, 9, 11}},
			{name: "name null", query: rsWhere(`{"name":null}`), want: []int{10, 11}},
			{name: "attribute nobody has is null", query: rsWhere(`{"nobody":null}`), want: all},
			{name: "attribute nobody has is not non-null", query: rsWhere(`{"nobody":{"!=":null}}`), wantNone: true},
			{name: "in with null", query: rsWhere(`{"active":{"in":[null,false]}}`), want: []int{1, 3, 5, 6, 7, 9, 10, 11, 13, 15, 16, 17, 18, 19, 22, 24, 25, 27, 28}},
			{name: "nin with null", query: rsWhere(`{"active":{"nin":[null,false]}}`), want: append(slices.Clone(activeTrue[:6]), 20, 21, 23, 26, 29)},

			// or / and.
			{name: "or", query: rsWhere(`{"or":[{"name":"Alpha"},{"budget":{">":900}}]}`), want: []int{0, 5}},
			{name: "or []", query: rsWhere(`{"or":[]}`), wantNone: true},
			{name: "and []", query: rsWhere(`{"and":[]}`), want: all},
			{name: "{}", query: rsWhere(`{}`), want: all},
			{name: "and", query: rsWhere(`{"and":[{"budget":{">":20}},{"budget":{"<":24}}]}`), want: []int{21, 22, 23}},
			{name: "nested", query: rsWhere(`{"or":[{"and":[{"active":true},{"budget":{"<":20}}]},{"name":"mu"}]}`), want: []int{2, 4, 24}},
			{name: "or beside attributes", query: rsWhere(`{"grp":"g1","or":[{"active":false},{"budget":{">=":25}}]}`), want: []int{1, 13, 16, 25, 28}},
			{name: "depth 32 is fine", query: rsWhere(nestedOr(31, `{"name":["Alpha"]}`)), want: []int{0}},
			{name: "depth 32 of and is fine", query: rsWhere(nestedAnd(31, `{"name":["Alpha","Beta"]}`)), want: []int{0, 2}},
			{name: "depth 32 with a modifier object is fine", query: rsWhere(nestedAnd(30, `{"name":{"in":["Alpha","Beta"]}}`)), want: []int{0, 2}},

			// Attribute names are any text without quotes, backslashes or
			// control characters: filterable and sortable like any other.
			{name: "unicode attribute", query: rsWhere(`{"größe":3}`), want: []int{0}},
			{name: "unicode attribute range", query: rsWhere(`{"größe":{">=":3}}`), want: []int{0, 1}},
			{name: "unicode attribute string", query: rsWhere(`{"größe":"3"}`), want: []int{2}},
			{name: "unicode attribute null", query: rsWhere(`{"größe":null}`), want: rsExcept(0, 1, 2)},
			{name: "unicode attribute filter", query: rsQuery("größe", "3"), want: []int{0, 2}},
			{name: "unicode attribute in or", query: rsWhere(`{"or":[{"größe":10},{"name":"Beta"}]}`), want: []int{1, 2}},
			{name: "sort by a unicode attribute", query: rsQuery("sort", "größe DESC"), want: append([]int{2, 1, 0}, rsSpan(3, 29)...)},
			{name: "attribute name with a space", query: rsWhere(`{"first name":"Bob"}`), want: []int{1}},
			{name: "attribute name with a space as filter", query: rsQuery("first name", "Ann"), want: []int{0}},
			{name: "attribute name with a space startsWith", query: rsWhere(`{"first name":{"startsWith":"A"}}`), want: []int{0}},
			{name: "sort by a name with a space", query: rsQuery("sort", "first name DESC"), want: append([]int{1, 0}, rsSpan(2, 29)...)},
			{name: "sort by a name with a space in JSON", query: rsQuery("sort", `[{"first name":"DESC"}]`), want: append([]int{1, 0}, rsSpan(2, 29)...)},
			{name: "attribute name with a dot is one name", query: rsWhere(`{"a.b":1}`), want: []int{0}},
			{name: "attribute name with a dot is not a path", query: rsWhere(`{"a.b":{"!=":null}}`), want: []int{0}},
			{name: "attribute name with a dot as filter", query: rsQuery("a.b", "1"), want: []int{0}},
			{name: "sort by a dotted name", query: rsQuery("sort", "a.b"), want: append(rsSpan(1, 29), 0)},
			{name: "attribute name of 128 bytes", query: rsWhere(`{"` + name128 + `":null}`), want: all},

			// populate naming an attribute that is not a reference expands nothing.
			{name: "populate non-reference", query: rsQuery("populate", "name"), want: all},
			{name: "populate unknown attribute", query: rsQuery("populate", "nobody,größe"), want: all},
			{name: "populate JSON non-reference", query: rsQuery("populate", `["name","budget"]`, "where", `{"name":"Alpha"}`), want: []int{0}},

			// where is the entire criteria.
			{name: "where overrides filters", query: rsQuery("name", "Alpha", "where", `{"name":"beta"}`), want: []int{3}},
			{name: "where {} overrides filters", query: rsQuery("name", "Alpha", "where", `{}`), want: all},
			{name: "ignored filters are not checked", query: rsQuery("id", "abc", "where", `{"budget":5}`), want: []int{1}},

			// limit and skip.
			{name: "limit 0", query: rsQuery("limit", "0"), wantNone: true},
			{name: "limit 5", query: rsQuery("limit", "5"), want: rsSpan(0, 4)},
			{name: "limit above the cap", query: rsQuery("limit", "60000"), want: all},
			{name: "limit huge", query: rsQuery("limit", "99999999999999999999"), want: all},
			{name: "skip", query: rsQuery("skip", "28"), want: []int{28, 29}},
			{name: "skip beyond the end", query: rsQuery("skip", "30"), wantNone: true},
			{name: "limit and skip", query: rsQuery("limit", "2", "skip", "3"), want: []int{3, 4}},
			{name: "limit with where", query: rsQuery("where", `{"active":true}`, "limit", "3"), want: activeTrue[:3]},

			// sort.
			{name: "sort name DESC", query: rsQuery("sort", "name DESC"), want: nameDesc},
			{name: "sort name", query: rsQuery("sort", "name"), want: nameAsc},
			{name: "sort name ASC", query: rsQuery("sort", "name ASC"), want: nameAsc},
			{name: "sort budget", query: rsQuery("sort", "budget"), want: budgetAsc},
			{name: "sort budget DESC", query: rsQuery("sort", "budget DESC"), want: []int{19, 10, 5, 0, 16, 14, 13, 12, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 2, 6, 7, 1, 17, 18, 4, 3, 15, 8, 9, 11}},
			{name: "sort mixed kinds", query: rsQuery("sort", "active"), want: slices.Concat(activeNull, []int{21}, activeFalse, activeTrue)},
			{name: "sort id DESC", query: rsQuery("sort", "id DESC"), want: rsReversed(all)},
			{name: "sort ties broken by id", query: rsQuery("sort", "grp"), want: slices.Concat(g0, g1, g2)},
			{name: "sort ties broken by id DESC key", query: rsQuery("sort", "grp DESC"), want: slices.Concat(g2, g1, g0)},
			{name: "multi-key sort", query: rsQuery("sort", "grp DESC,name ASC"), want: grpDescNameAsc},
			{name: "multi-key sort with spaces", query: rsQuery("sort", " grp  DESC , name "), want: grpDescNameAsc},
			{name: "multi-key sort repeated", query: rsQuery("sort", "grp DESC", "sort", "name"), want: grpDescNameAsc},
			{name: "sort JSON strings", query: rsQuery("sort", `["grp DESC","name ASC"]`), want: grpDescNameAsc},
			{name: "sort JSON objects", query: rsQuery("sort", `[{"grp":"DESC"},{"name":"ASC"}]`), want: grpDescNameAsc},
			{name: "sort JSON object", query: rsQuery("sort", `{"grp":"DESC","name":"ASC"}`), want: grpDescNameAsc},
			{name: "sort where limit skip", query: rsQuery("where", `{"active":true}`, "sort", "budget DESC", "limit", "3", "skip", "1"), want: []int{14, 12, 29}},
			{name: "sort by a missing attribute", query: rsQuery("sort", "nobody DESC"), want: all},
		}
		// Paging with skip is stable.
		for _, key := range []string{"name DESC", "grp", "budget"} {
			full := map[string][]int{"name DESC": nameDesc, "grp": slices.Concat(g0, g1, g2), "budget": budgetAsc}[key]
			for skip := 0; skip < 30; skip += 7 {
				cases = append(cases, rsListCase{name: fmt.Sprintf("page %s skip %d", key, skip),
					query: rsQuery("sort", key, "limit", "7", "skip", strconv.Itoa(skip)), want: full[skip:min(skip+7, 30)]})
			}
		}
		// createdAt and updatedAt: expectations derived from the stored stamps.
		stamps := func(field string, keep func(ts string) bool) []int {
			var out []int
			for i, m := range created {
				if keep(m[field].(string)) {
					out = append(out, i)
				}
			}
			return out
		}
		day := created[0]["createdAt"].(string)[:10]
		d, _ := time.Parse(time.DateOnly, day)
		prevDay, nextDay := d.AddDate(0, 0, -1).Format(time.DateOnly), d.AddDate(0, 0, 1).Format(time.DateOnly)
		ts10 := created[10]["createdAt"].(string)
		onDay := stamps("createdAt", func(ts string) bool { return ts[:10] == day })
		cases = append(cases,
			rsListCase{name: "createdAt day", query: rsQuery("createdAt", day), want: onDay, noCross: true},
			rsListCase{name: "createdAt day in where", query: rsWhere(`{"createdAt":"` + day + `"}`), want: onDay, noCross: true},
			rsListCase{name: "updatedAt day", query: rsQuery("updatedAt", day), want: stamps("updatedAt", func(ts string) bool { return ts[:10] == day }), noCross: true},
			rsListCase{name: "createdAt other day", query: rsQuery("createdAt", prevDay), wantNone: true},
			rsListCase{name: "createdAt two days", query: rsQuery("createdAt", prevDay, "createdAt", day), want: onDay, noCross: true},
			rsListCase{name: "createdAt >= day", query: rsWhere(`{"createdAt":{">=":"` + day + `"}}`), want: all},
			rsListCase{name: "createdAt > day is after its first instant", query: rsWhere(`{"createdAt":{">":"` + day + `"}}`),
				want: stamps("createdAt", func(ts string) bool { return ts > day+"T00:00:00.000Z" }), noCross: true},
			rsListCase{name: "createdAt < day", query: rsWhere(`{"createdAt":{"<":"` + day + `"}}`), wantNone: true},
			rsListCase{name: "createdAt < next day", query: rsWhere(`{"createdAt":{"<":"` + nextDay + `"}}`), want: onDay, noCross: true},
			rsListCase{name: "createdAt exact timestamp", query: rsQuery("createdAt", ts10),
				want: stamps("createdAt", func(ts string) bool { return ts == ts10 }), noCross: true},
			rsListCase{name: "createdAt <= timestamp", query: rsWhere(`{"createdAt":{"<=":"` + ts10 + `"}}`),
				want: stamps("createdAt", func(ts string) bool { return ts <= ts10 }), noCross: true},
			rsListCase{name: "createdAt > timestamp", query: rsWhere(`{"createdAt":{">":"` + ts10 + `"}}`),
				want: stamps("createdAt", func(ts string) bool { return ts > ts10 }), noCross: true},
			rsListCase{name: "createdAt != day", query: rsWhere(`{"createdAt":{"!=":"` + prevDay + `"}}`), want: all},
			rsListCase{name: "createdAt startsWith", query: rsWhere(`{"createdAt":{"startsWith":"` + day + `"}}`), want: onDay, noCross: true},
		)

		got := map[string][]int{}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var idx []int
				for _, id := range c.ids(t, "/v1/projects?"+tc.query.Encode()) {
					i, ok := index[id]
					if !ok {
						t.Fatalf("record %d is not one of the projects", id)
					}
					idx = append(idx, i)
				}
				want := tc.want
				if tc.wantNone {
					want = nil
				} else if len(want) == 0 {
					t.Fatal("case without expectation")
				}
				if !slices.Equal(idx, want) {
					t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, want)
				}
				if !tc.noCross {
					got[tc.name] = idx
				}
			})
		}
		// Declared attributes are compared as their types: documents have
		// an integer, a boolean, a date, a string and an enum.
		client := rsID(t, c.create(t, "clients", rsM{"name": "C"}))
		P, C, A := strconv.FormatInt(ids[0], 10), strconv.FormatInt(client, 10), strconv.FormatInt(tn.AdminID, 10)
		docRows := []rsM{
			{"model": "user", "record": tn.AdminID, "category": 1, "visibleToUser": true, "name": "b", "date": "2026-01-03"},
			{"model": "user", "record": tn.AdminID, "category": 2, "visibleToUser": false, "name": "A", "date": "2026-01-01"},
			{"model": "project", "record": ids[0], "category": 7, "name": "c"},
			{"model": "project", "record": ids[0], "category": 10, "visibleToUser": true, "name": "a_", "date": "2026-02-01"},
			{"model": "client", "record": client, "category": 11, "date": "2025-12-31"},
			{"model": "client", "record": client, "category": 14, "visibleToUser": false, "name": "%"},
		}
		docIndex := map[int64]int{}
		for i, d := range docRows {
			docIndex[rsID(t, c.create(t, "documents", d))] = i
		}
		docCases := []struct {
			name  string
			query url.Values
			want  []int
		}{
			{"category", rsQuery("category", "7"), []int{2}},
			{"category repeated", rsQuery("category", "7", "category[]", "11"), []int{2, 4}},
			{"category text in where", rsWhere(`{"category":"11"}`), []int{4}},
			{"category in mixed", rsWhere(`{"category":{"in":["1",2]}}`), []int{0, 1}},
			{"category range", rsWhere(`{"category":{">=":10}}`), []int{3, 4, 5}},
			{"category as text", rsWhere(`{"category":{"startsWith":"1"}}`), []int{0, 3, 4, 5}},
			{"category endsWith", rsWhere(`{"category":{"endsWith":"4"}}`), []int{5}},
			{"visibleToUser true", rsQuery("visibleToUser", "true"), []int{0, 3}},
			{"visibleToUser false", rsQuery("visibleToUser", "false"), []int{1, 5}},
			{"visibleToUser null", rsWhere(`{"visibleToUser":null}`), []int{2, 4}},
			{"visibleToUser != true", rsWhere(`{"visibleToUser":{"!=":true}}`), []int{1, 2, 4, 5}},
			{"visibleToUser nin", rsWhere(`{"visibleToUser":{"nin":[false]}}`), []int{0, 2, 3, 4}},
			{"visibleToUser text is converted", rsWhere(`{"visibleToUser":"true"}`), []int{0, 3}},
			{"visibleToUser as text", rsWhere(`{"visibleToUser":{"startsWith":"t"}}`), []int{0, 3}},
			{"model", rsQuery("model", "project"), []int{2, 3}},
			{"model startsWith", rsWhere(`{"model":{"startsWith":"cl"}}`), []int{4, 5}},
			{"model and visibleToUser", rsWhere(`{"model":"user","visibleToUser":true}`), []int{0}},
			{"record", rsQuery("record", P), []int{2, 3}},
			{"record per model", rsWhere(`{"or":[{"model":"client","record":` + C + `},{"model":"user","record":"` + A + `"}]}`), []int{0, 1, 4, 5}},
			{"date", rsQuery("date", "2025-12-31"), []int{4}},
			{"date range", rsWhere(`{"date":{">=":"2026-01-01","<":"2026-02-01"}}`), []int{0, 1}},
			{"date null", rsWhere(`{"date":null}`), []int{2, 5}},
			{"date startsWith", rsWhere(`{"date":{"startsWith":"2026-0"}}`), []int{0, 1, 3}},
			{"name byte-wise below a", rsWhere(`{"name":{"<":"a"}}`), []int{1, 5}},
			{"name contains _", rsWhere(`{"name":{"contains":"_"}}`), []int{3}},
			{"name contains %", rsWhere(`{"name":{"contains":"%"}}`), []int{5}},
			{"sort category DESC", rsQuery("sort", "category DESC"), []int{5, 4, 3, 2, 1, 0}},
			{"sort date", rsQuery("sort", "date"), []int{2, 5, 4, 1, 0, 3}},
			{"sort date DESC", rsQuery("sort", "date DESC"), []int{3, 0, 1, 4, 2, 5}},
			{"sort visibleToUser", rsQuery("sort", "visibleToUser"), []int{2, 4, 1, 5, 0, 3}},
			{"sort name", rsQuery("sort", "name"), []int{4, 5, 1, 3, 0, 2}},
			{"sort model DESC, category", rsQuery("sort", "model DESC,category"), []int{0, 1, 2, 3, 4, 5}},
		}
		for _, tc := range docCases {
			t.Run("documents/"+tc.name, func(t *testing.T) {
				var idx []int
				for _, id := range c.ids(t, "/v1/documents?"+tc.query.Encode()) {
					i, ok := docIndex[id]
					if !ok {
						t.Fatalf("record %d is not one of the documents", id)
					}
					idx = append(idx, i)
				}
				if !slices.Equal(idx, tc.want) {
					t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, tc.want)
				}
				got["documents/"+tc.name] = idx
			})
		}
		for _, q := range []url.Values{
			rsQuery("category", "x"), rsQuery("category", "1.5"), rsWhere(`{"category":true}`), rsQuery("visibleToUser", "yes"),
			rsWhere(`{"visibleToUser":"yes"}`), rsWhere(`{"visibleToUser":{"<":true}}`), rsQuery("model", "invoice"),
			rsQuery("date", "2026-13-01"), rsWhere(`{"date":{">":5}}`), rsWhere(`{"name":5}`),
		} {
			c.fail(t, http.MethodGet, "/v1/documents?"+q.Encode(), nil, http.StatusBadRequest, "invalid_query")
		}
		results[b.Name] = got

		errCases := []struct {
			name  string
			query url.Values
		}{
			{"where invalid JSON", rsWhere(`{"name":`)},
			{"where not JSON", rsWhere(`name=x`)},
			{"where text after the object", rsWhere(`{} {}`)},
			{"where array", rsWhere(`[{"name":"x"}]`)},
			{"where string", rsWhere(`"x"`)},
			{"where number", rsWhere(`5`)},
			{"where null", rsWhere(`null`)},
			{"where twice", rsQuery("where", `{}`, "where", `{}`)},
			{"unknown modifier", rsWhere(`{"name":{"like":"a%"}}`)},
			{"modifier case", rsWhere(`{"name":{"startswith":"a"}}`)},
			{"empty constraint", rsWhere(`{"a":{}}`)},
			{"in without array", rsWhere(`{"name":{"in":"Alpha"}}`)},
			{"nin without array", rsWhere(`{"name":{"nin":5}}`)},
			{"in with an object", rsWhere(`{"name":{"in":[{"x":1}]}}`)},
			{"array of arrays", rsWhere(`{"name":[["Alpha"]]}`)},
			{"or without array", rsWhere(`{"or":{"name":"Alpha"}}`)},
			{"or of non-objects", rsWhere(`{"or":[1]}`)},
			{"or of strings", rsWhere(`{"or":["name"]}`)},
			{"and without array", rsWhere(`{"and":"x"}`)},
			{"and of arrays", rsWhere(`{"and":[[]]}`)},
			{"depth 33", rsWhere(nestedOr(32, `{"name":"Alpha"}`))},
			{"depth 33 of and", rsWhere(nestedAnd(32, `{"name":"Alpha"}`))},
			{"depth 33 of mixed groups", rsWhere(nestedAnd(16, nestedOr(16, `{"name":"Alpha"}`)))},
			{"in with nested arrays", rsWhere(`{"name":{"in":` + strings.Repeat("[", 32) + strings.Repeat("]", 32) + `}}`)},
			{"range with bool", rsWhere(`{"budget":{"<":true}}`)},
			{"range with null", rsWhere(`{"budget":{">=":null}}`)},
			{"range with array", rsWhere(`{"budget":{">":[1]}}`)},
			{"startsWith number", rsWhere(`{"name":{"startsWith":5}}`)},
			{"value object", rsWhere(`{"name":{"=":"x"}}`)},
			{"id not an integer", rsWhere(`{"id":"abc"}`)},
			{"id fraction", rsWhere(`{"id":1.5}`)},
			{"createdAt not a date", rsWhere(`{"createdAt":"yesterday"}`)},
			{"createdAt without milliseconds", rsQuery("createdAt", "2026-01-05T10:00:00Z")},
			{"createdAt month 13", rsQuery("createdAt", "2026-13-01")},
			{"attribute name with a quote", rsWhere(`{"a\"b":1}`)},
			{"attribute name with a backslash", rsWhere(`{"a\\b":1}`)},
			{"attribute name with a control character", rsWhere(`{"a\u0001b":1}`)},
			{"attribute name with a tab", rsWhere(`{"a\tb":1}`)},
			{"attribute name with DEL", rsWhere(`{"a\u007fb":1}`)},
			{"empty attribute name", rsWhere(`{"":1}`)},
			{"attribute name over 128 bytes", rsWhere(`{"` + name130 + `":1}`)},
			{"attribute name with a quote in or", rsWhere(`{"or":[{"name":"Alpha"},{"a\"b":1}]}`)},
			{"filter name with a quote", rsQuery(`a"b`, "1")},
			{"filter name with a backslash", rsQuery(`a\b`, "1")},
			{"filter name with a control character", rsQuery("a\x01b", "1")},
			{"filter name over 128 bytes", rsQuery(name130, "1")},
			{"id filter not a number", rsQuery("id", "abc")},
			{"limit -1", rsQuery("limit", "-1")},
			{"limit abc", rsQuery("limit", "abc")},
			{"limit fraction", rsQuery("limit", "1.5")},
			{"limit empty", rsQuery("limit", "")},
			{"limit twice", rsQuery("limit", "1", "limit", "2")},
			{"skip x", rsQuery("skip", "x")},
			{"skip -1", rsQuery("skip", "-1")},
			{"sort name UP", rsQuery("sort", "name UP")},
			{"sort three words", rsQuery("sort", "name ASC now")},
			{"sort JSON number", rsQuery("sort", `[1]`)},
			{"sort JSON direction", rsQuery("sort", `[{"name":"UP"}]`)},
			{"sort JSON direction not a string", rsQuery("sort", `{"name":1}`)},
			{"sort JSON broken", rsQuery("sort", `["name"`)},
			{"sort name with a quote", rsQuery("sort", `a"b`)},
			{"sort name with a backslash", rsQuery("sort", `a\b DESC`)},
			{"sort name with a control character", rsQuery("sort", "a\x01b")},
			{"sort JSON name with a quote", rsQuery("sort", `[{"a\"b":"ASC"}]`)},
			{"sort name over 128 bytes", rsQuery("sort", name130)},
			{"populate malformed JSON", rsQuery("populate", `["name"`)},
			{"populate JSON numbers", rsQuery("populate", `[1]`)},
		}
		for _, tc := range errCases {
			t.Run("error/"+tc.name, func(t *testing.T) {
				m := c.fail(t, http.MethodGet, "/v1/projects?"+tc.query.Encode(), nil, http.StatusBadRequest, "invalid_query")
				if len(rsProblemFields(m)) == 0 {
					t.Logf("no problems in %v", m)
				}
			})
		}
		// A malformed query string is refused, not guessed at.
		c.fail(t, http.MethodGet, "/v1/projects?name=%zz", nil, http.StatusBadRequest, "invalid_query")
		// populate of attributes that are not references changes nothing in the records.
		plain := c.list(t, "/v1/projects")
		for _, q := range []string{"populate=name", "populate=" + url.QueryEscape(`["tags","größe"]`), "populate=nobody"} {
			if got := c.list(t, "/v1/projects?"+q); !reflect.DeepEqual(got, plain) {
				t.Errorf("GET /v1/projects?%s changed the records:\n got %v\nwant %v", q, got, plain)
			}
		}
		// Names that are not plain identifiers round-trip unchanged.
		if got := c.get(t, "projects", ids[0]); got["größe"] != 3.0 || got["first name"] != "Ann" || got["a.b"] != 1.0 {
			t.Errorf("project with unusual attribute names: %v", got)
		}
		if got := c.get(t, "projects", ids[3]); !reflect.DeepEqual(got["a"], map[string]any{"b": 1.0}) {
			t.Errorf("project with a nested object: %v", got)
		}
	})

	sq, pg := results["sqlite"], results["postgres"]
	if sq == nil || pg == nil {
		t.Log("one engine did not run: no comparison")
		return
	}
	for name, a := range sq {
		if p, ok := pg[name]; ok && !slices.Equal(a, p) {
			t.Errorf("%s: engines differ: sqlite %v, postgres %v", name, a, p)
		}
	}
}

// rsInsertDirect stores a record of a read-only resource directly, as the
// approval endpoint does for project days, and returns it.
func rsInsertDirect(t *testing.T, srv *testenv.Server, tenantID int64, res *resource.Resource, doc rsM) rsM {
	t.Helper()
	ctx := context.Background()
	db := srv.Service.DB
	id, err := db.NewID(ctx, db, tenantID)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := db.InsertRecord(ctx, db, tenantID, store.Collection{Table: "records", Resource: res.Name}, id, doc)
	if err != nil {
		t.Fatal(err)
	}
	var m rsM
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestProjectDayList: ProjectDay is read-only and has exactly its declared
// attributes.
func TestProjectDayList(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := rsSignIn(t, srv, tn)
		res, ok := srv.Service.Registry.Get("project-days")
		if !ok || !res.ReadOnly || !res.DeclaredOnly {
			t.Fatalf("project-days: %+v", res)
		}
		p1 := rsID(t, c.create(t, "projects", rsM{"name": "one"}))
		p2 := rsID(t, c.create(t, "projects", rsM{"name": "two"}))
		rows := []rsM{
			{"day": "2026-01-01", "project": p1, "validationStatus": "APPROVED"},
			{"day": "2026-01-02", "project": p1, "validationStatus": "NOTAPPROVED"},
			{"day": "2026-01-03", "project": p2, "validationStatus": "APPROVED"},
			{"day": "2026-01-04", "project": p1, "validationStatus": "APPROVED"},
			{"day": "2026-01-05", "project": p2, "validationStatus": "NOTAPPROVED"},
			{"day": "2026-02-01", "project": p2, "validationStatus": "APPROVED"},
		}
		ids := make([]int64, len(rows))
		index := map[int64]int{}
		for i, r := range rows {
			m := rsInsertDirect(t, srv, tn.ID, res, r)
			ids[i] = rsID(t, m)
			index[ids[i]] = i
		}
		// Records of other resources never appear here.
		task := rsID(t, c.create(t, "tasks", rsM{"name": "t"}))
		c.create(t, "time-entries", rsM{"day": "2026-01-03", "trackingType": "WORK", "project": p1, "task": task, "duration": 60, "sorting": 1})

		got := c.get(t, "project-days", ids[2])
		if got["day"] != "2026-01-03" || got["project"] != float64(p2) || got["validationStatus"] != "APPROVED" || rsID(t, got) != ids[2] {
			t.Errorf("GET project-day: %v", got)
		}
		rsCheckStamps(t, got)
		P1, P2 := strconv.FormatInt(p1, 10), strconv.FormatInt(p2, 10)
		cases := []struct {
			name  string
			query url.Values
			want  []int
		}{
			{"all", url.Values{}, rsSpan(0, 5)},
			{"day range", rsWhere(`{"day":{">=":"2026-01-02","<":"2026-01-05"}}`), []int{1, 2, 3}},
			{"day after", rsWhere(`{"day":{">":"2026-01-05"}}`), []int{5}},
			{"day exact", rsQuery("day", "2026-01-03"), []int{2}},
			{"day repeated", rsQuery("day", "2026-01-03", "day", "2026-01-05"), []int{2, 4}},
			{"day bracket form", rsQuery("day[]", "2026-01-01", "day[]", "2026-02-01"), []int{0, 5}},
			{"day in where", rsWhere(`{"day":["2026-01-01","2026-01-04"]}`), []int{0, 3}},
			{"day startsWith", rsWhere(`{"day":{"startsWith":"2026-01"}}`), rsSpan(0, 4)},
			{"day endsWith", rsWhere(`{"day":{"endsWith":"-01"}}`), []int{0, 5}},
			{"project", rsQuery("project", P1), []int{0, 1, 3}},
			{"project repeated", rsQuery("project", P1, "project", P2), rsSpan(0, 5)},
			{"project as text in where", rsWhere(`{"project":"` + P1 + `"}`), []int{0, 1, 3}},
			{"project in", rsWhere(`{"project":{"in":[` + P2 + `]}}`), []int{2, 4, 5}},
			{"project nin", rsWhere(`{"project":{"nin":[` + P2 + `]}}`), []int{0, 1, 3}},
			{"project startsWith", rsWhere(`{"project":{"startsWith":"` + P1 + `"}}`), []int{0, 1, 3}},
			{"validationStatus", rsQuery("validationStatus", "APPROVED"), []int{0, 2, 3, 5}},
			{"validationStatus and project", rsQuery("validationStatus", "APPROVED", "project", P2), []int{2, 5}},
			{"validationStatus !=", rsWhere(`{"validationStatus":{"!=":"APPROVED"}}`), []int{1, 4}},
			{"or", rsWhere(`{"or":[{"day":"2026-01-01"},{"validationStatus":"NOTAPPROVED"}]}`), []int{0, 1, 4}},
			{"id", rsQuery("id", strconv.FormatInt(ids[4], 10)), []int{4}},
			{"sort day DESC", rsQuery("sort", "day DESC"), []int{5, 4, 3, 2, 1, 0}},
			{"sort project then day DESC", rsQuery("sort", "project,day DESC"), []int{3, 1, 0, 5, 4, 2}},
			{"limit skip", rsQuery("sort", "day", "limit", "2", "skip", "2"), []int{2, 3}},
			{"where overrides filters", rsQuery("project", P1, "where", `{"project":`+P2+`}`), []int{2, 4, 5}},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				var idx []int
				for _, id := range c.ids(t, "/v1/project-days?"+tc.query.Encode()) {
					i, ok := index[id]
					if !ok {
						t.Fatalf("record %d is not a project day", id)
					}
					idx = append(idx, i)
				}
				if !slices.Equal(idx, tc.want) {
					t.Errorf("%s\n got %v\nwant %v", tc.query.Encode(), idx, tc.want)
				}
			})
		}
		none := []url.Values{
			rsQuery("day", "2026-03-01"), rsQuery("validationStatus", "NOTAPPROVED", "project", P1, "day", "2026-01-01"),
			rsWhere(`{"day":{"<":"2026-01-01"}}`), rsQuery("createdAt", "2000-01-01"),
		}
		for _, q := range none {
			if got := c.ids(t, "/v1/project-days?"+q.Encode()); len(got) != 0 {
				t.Errorf("%s: %v, want none", q.Encode(), got)
			}
		}
		errs := []struct {
			name  string
			query url.Values
		}{
			{"where on unknown attribute", rsWhere(`{"name":"x"}`)},
			{"where on unknown attribute in or", rsWhere(`{"or":[{"day":"2026-01-01"},{"user":1}]}`)},
			{"where null on unknown attribute", rsWhere(`{"nobody":null}`)},
			{"contains", rsWhere(`{"day":{"contains":"01"}}`)},
			{"contains on project", rsWhere(`{"project":{"contains":"1"}}`)},
			{"filter on unknown attribute", rsQuery("name", "x")},
			{"bracket filter on unknown attribute", rsQuery("user[]", "1")},
			{"validationStatus BAD", rsQuery("validationStatus", "BAD")},
			{"validationStatus lower case", rsQuery("validationStatus", "approved")},
			{"validationStatus BAD in where", rsWhere(`{"validationStatus":"BAD"}`)},
			{"day not a date", rsQuery("day", "2026-13-01")},
			{"day in another format", rsWhere(`{"day":"2026-1-1"}`)},
			{"day number", rsWhere(`{"day":20260101}`)},
			{"project not a number", rsQuery("project", "one")},
			{"sort on unknown attribute", rsQuery("sort", "name")},
			{"populate malformed JSON", rsQuery("populate", `["project"`)},
		}
		for _, tc := range errs {
			t.Run("error/"+tc.name, func(t *testing.T) {
				c.fail(t, http.MethodGet, "/v1/project-days?"+tc.query.Encode(), nil, http.StatusBadRequest, "invalid_query")
			})
		}
		// populate naming no reference (unknown, or not a reference) is
		// accepted and expands nothing.
		plain := c.list(t, "/v1/project-days")
		for _, q := range []string{"populate=user", "populate=day", "populate=" + url.QueryEscape(`["validationStatus","nobody"]`)} {
			if got := c.list(t, "/v1/project-days?"+q); !reflect.DeepEqual(got, plain) {
				t.Errorf("GET /v1/project-days?%s:\n got %v\nwant %v", q, got, plain)
			}
		}
		// populate expands the project.
		pop := c.list(t, "/v1/project-days?populate=project&where="+url.QueryEscape(`{"project":`+P2+`}`))
		if len(pop) != 3 {
			t.Fatalf("populated list: %v", pop)
		}
		for _, m := range pop {
			if p, _ := m["project"].(map[string]any); p == nil || p["name"] != "two" || rsNum(p["id"]) != p2 {
				t.Errorf("populated project day: %v", m)
			}
		}
		// Nothing can be written, and nothing was.
		for _, req := range []struct{ method, path string }{
			{http.MethodPost, "/v1/project-days"},
			{http.MethodPatch, fmt.Sprintf("/v1/project-days/%d", ids[0])},
			{http.MethodPut, fmt.Sprintf("/v1/project-days/%d", ids[0])},
			{http.MethodDelete, fmt.Sprintf("/v1/project-days/%d", ids[0])},
		} {
			c.fail(t, req.method, req.path, rsM{"day": "2026-03-01", "project": p1, "validationStatus": "NOTAPPROVED"}, http.StatusMethodNotAllowed, "method_not_allowed")
		}
		if got := c.get(t, "project-days", ids[0]); got["validationStatus"] != "APPROVED" || got["day"] != "2026-01-01" {
			t.Errorf("project day after refused writes: %v", got)
		}
		if n := len(c.list(t, "/v1/project-days")); n != len(rows) {
			t.Errorf("%d project days, want %d", n, len(rows))
		}
	})
}

// TestPopulate: populate expands references, on lists and single records.
func TestPopulate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		c := rsSignIn(t, srv, tn)
		project := c.create(t, "projects", rsM{"name": "P", "budget": 12.5})
		pid := rsID(t, project)
		other := c.create(t, "projects", rsM{"name": "Q"})
		oid := rsID(t, other)
		task := c.create(t, "tasks", rsM{"name": "T", "project": pid})
		tid := rsID(t, task)
		e1 := c.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORK", "project": pid, "task": tid, "duration": 3600, "sorting": 1})
		e2 := c.create(t, "time-entries", rsM{"day": "2026-01-06", "trackingType": "WORKTIME", "startTime": "2026-01-06T08:00:00.000Z", "endTime": "2026-01-06T16:00:00.000Z"})
		e3 := c.create(t, "time-entries", rsM{"day": "2026-01-07", "trackingType": "WORK", "project": oid, "task": tid, "duration": 60, "sorting": 1})
		id1, id2, id3 := rsID(t, e1), rsID(t, e2), rsID(t, e3)
		admin := c.get(t, "users", tn.AdminID)

		byID := func(list []rsM) map[int64]rsM {
			out := map[int64]rsM{}
			for _, m := range list {
				out[rsID(t, m)] = m
			}
			return out
		}
		// Without populate, references are ids.
		plain := byID(c.list(t, "/v1/time-entries"))
		if plain[id1]["project"] != float64(pid) || plain[id1]["task"] != float64(tid) || plain[id1]["user"] != float64(tn.AdminID) {
			t.Errorf("unpopulated: %v", plain[id1])
		}
		for _, q := range []string{"populate=project", `populate=["project"]`, "populate=project&populate=project", "populate=false&populate=project"} {
			got := byID(c.list(t, "/v1/time-entries?"+strings.ReplaceAll(q, `"`, "%22")))
			if !reflect.DeepEqual(got[id1]["project"], map[string]any(project)) {
				t.Errorf("%s: project = %v, want %v", q, got[id1]["project"], project)
			}
			if got[id1]["task"] != float64(tid) || got[id1]["user"] != float64(tn.AdminID) || got[id1]["duration"] != 3600.0 {
				t.Errorf("%s: other attributes changed: %v", q, got[id1])
			}
			if v, ok := got[id2]["project"]; ok {
				t.Errorf("%s: an entry without project got %v", q, v)
			}
			if p, _ := got[id3]["project"].(map[string]any); p == nil || p["name"] != "Q" {
				t.Errorf("%s: third entry: %v", q, got[id3])
			}
		}
		for _, q := range []string{"populate=project,task,user", "populate=task,project,user", "populate=", "populate=true", `populate=["user","task","project"]`} {
			got := byID(c.list(t, "/v1/time-entries?"+strings.ReplaceAll(q, `"`, "%22")))[id1]
			if !reflect.DeepEqual(got["project"], map[string]any(project)) || !reflect.DeepEqual(got["task"], map[string]any(task)) ||
				!reflect.DeepEqual(got["user"], map[string]any(admin)) {
				t.Errorf("%s: %v", q, got)
			}
		}
		if got := byID(c.list(t, "/v1/time-entries?populate=false"))[id1]; got["project"] != float64(pid) {
			t.Errorf("populate=false: %v", got)
		}
		// populate is unaffected by where, limit and sort; where still sees ids.
		got := c.list(t, "/v1/time-entries?populate=project&where="+url.QueryEscape(fmt.Sprintf(`{"project":%d}`, pid)))
		if len(got) != 1 || rsID(t, got[0]) != id1 || !reflect.DeepEqual(got[0]["project"], map[string]any(project)) {
			t.Errorf("populate with where: %v", got)
		}
		got = c.list(t, "/v1/time-entries?populate=project&sort=day%20DESC&limit=2")
		if len(got) != 2 || rsID(t, got[0]) != id3 || rsID(t, got[1]) != id2 {
			t.Errorf("populate with sort and limit: %v", got)
		}
		// On a single record.
		one := c.object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=project", id1), nil, http.StatusOK)
		if !reflect.DeepEqual(one["project"], map[string]any(project)) || one["task"] != float64(tid) {
			t.Errorf("GET populate=project: %v", one)
		}
		one = c.object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=task,user", id1), nil, http.StatusOK)
		if !reflect.DeepEqual(one["task"], map[string]any(task)) || !reflect.DeepEqual(one["user"], map[string]any(admin)) || one["project"] != float64(pid) {
			t.Errorf("GET populate=task,user: %v", one)
		}
		if u, _ := one["user"].(map[string]any); u != nil {
			if _, leak := u["password"]; leak {
				t.Errorf("populated user leaks the password: %v", u)
			}
		}
		// Populating a polymorphic reference follows the model.
		doc := c.create(t, "documents", rsM{"model": "project", "record": pid, "category": 7})
		udoc := c.create(t, "documents", rsM{"model": "user", "record": tn.AdminID, "category": 1})
		docs := byID(c.list(t, "/v1/documents?populate=record"))
		if !reflect.DeepEqual(docs[rsID(t, doc)]["record"], map[string]any(project)) || !reflect.DeepEqual(docs[rsID(t, udoc)]["record"], map[string]any(admin)) {
			t.Errorf("documents populate=record: %v", docs)
		}
		// Only reference attributes are expanded; other names are ignored
		// (200, nothing expanded for them), but malformed JSON is refused.
		for _, q := range []string{"populate=notARef", "populate=duration", "populate=day", "populate=" + url.QueryEscape(`["notARef","sorting"]`)} {
			if got := byID(c.list(t, "/v1/time-entries?"+q)); !reflect.DeepEqual(got, plain) {
				t.Errorf("%s: %v, want the unpopulated records %v", q, got, plain)
			}
			one := c.object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?%s", id1, q), nil, http.StatusOK)
			if !reflect.DeepEqual(one, plain[id1]) {
				t.Errorf("GET ?%s: %v, want %v", q, one, plain[id1])
			}
		}
		for _, q := range []string{"populate=project,notARef", "populate=" + url.QueryEscape(`["notARef","project"]`)} {
			got := byID(c.list(t, "/v1/time-entries?"+q))[id1]
			if !reflect.DeepEqual(got["project"], map[string]any(project)) || got["task"] != float64(tid) || got["user"] != float64(tn.AdminID) {
				t.Errorf("%s: %v, want only the project expanded", q, got)
			}
		}
		if got, want := c.list(t, "/v1/projects?populate=name"), c.list(t, "/v1/projects"); !reflect.DeepEqual(got, want) {
			t.Errorf("projects?populate=name: %v, want %v", got, want)
		}
		for _, q := range []string{`populate=[1]`, "populate=%5B", "populate=" + url.QueryEscape(`["project"`), "populate=" + url.QueryEscape(`[{"a":1}]`)} {
			c.fail(t, http.MethodGet, "/v1/time-entries?"+q, nil, http.StatusBadRequest, "invalid_query")
			c.fail(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?%s", id1, q), nil, http.StatusBadRequest, "invalid_query")
		}
		// A dangling reference populates to null.
		c.object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", pid), nil, http.StatusOK)
		list := byID(c.list(t, "/v1/time-entries?populate=project,task"))
		if v, ok := list[id1]["project"]; !ok || v != nil {
			t.Errorf("dangling project: %v (present %v)", v, ok)
		}
		if !reflect.DeepEqual(list[id1]["task"], map[string]any(task)) {
			t.Errorf("task beside a dangling project: %v", list[id1]["task"])
		}
		if p, _ := list[id3]["project"].(map[string]any); p == nil || p["name"] != "Q" {
			t.Errorf("live project beside a dangling one: %v", list[id3])
		}
		one = c.object(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d?populate=project", id1), nil, http.StatusOK)
		if v, ok := one["project"]; !ok || v != nil {
			t.Errorf("GET dangling project: %v (present %v)", v, ok)
		}
		// Without populate, the id stays.
		if got := c.get(t, "time-entries", id1); got["project"] != float64(pid) {
			t.Errorf("unpopulated dangling reference: %v", got)
		}
	})
}

// rsFixtures are records that valid bodies of other resources refer to.
type rsFixtures struct {
	admin, project, task, plainTag, tagCategory, skill, skillSetCategory int64
}

func rsNewFixtures(t *testing.T, c *rsClient) rsFixtures {
	t.Helper()
	fx := rsFixtures{admin: c.userID}
	fx.project = rsID(t, c.create(t, "projects", rsM{"name": "fixture project"}))
	fx.task = rsID(t, c.create(t, "tasks", rsM{"name": "fixture task", "project": fx.project}))
	fx.plainTag = rsID(t, c.create(t, "tags", rsM{"name": "fixture tag"}))
	fx.tagCategory = rsID(t, c.create(t, "tag-categories", rsM{"name": "fixture skills"}))
	fx.skill = rsID(t, c.create(t, "tags", rsM{"name": "fixture skill", "type": 1, "category": fx.tagCategory}))
	fx.skillSetCategory = rsID(t, c.create(t, "skill-set-categories", rsM{"name": "fixture sets"}))
	return fx
}

// rsValidBody is a body that creates a record of r: the attributes r
// requires, with values its rules accept, plus extra.
func rsValidBody(t *testing.T, r *resource.Resource, fx rsFixtures, extra rsM) rsM {
	t.Helper()
	var body rsM
	switch r.Name {
	case "documents":
		body = rsM{"model": "user", "record": fx.admin}
	case "time-entries":
		// A break needs no project; under DURATION (the default) it needs
		// duration and sorting.
		body = rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1}
	case "project-days":
		body = rsM{"day": "2026-01-05", "project": fx.project, "validationStatus": "APPROVED"}
	case "skill-assignments":
		body = rsM{"user": fx.admin, "tag": fx.skill}
	case "skill-sets":
		body = rsM{"category": fx.skillSetCategory}
	case "tag-assignments":
		body = rsM{"tag": fx.plainTag, "model": "project", "record": fx.project}
	default:
		body = rsM{}
	}
	for _, a := range r.Attrs {
		if _, ok := body[a.Name]; a.Required && !ok {
			t.Fatalf("no value for the required attribute %s.%s: extend validBody", r.Name, a.Name)
		}
	}
	if !r.DeclaredOnly {
		for k, v := range extra {
			body[k] = v
		}
	}
	return body
}

// TestTenantIsolationAllResources: a record of one tenant is invisible to
// every other tenant, for every resource.
func TestTenantIsolationAllResources(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		ta := srv.CreateTenant(t, "alpha")
		tb := srv.CreateTenant(t, "beta")
		a, bc := rsSignIn(t, srv, ta), rsSignIn(t, srv, tb)
		fx := rsNewFixtures(t, a)

		type made struct {
			res *resource.Resource
			rec rsM
		}
		var recs []made
		for _, r := range srv.Service.Registry.All() {
			body := rsValidBody(t, r, fx, rsM{"label": "secret of A", "amount": 7})
			var rec rsM
			switch {
			case r.Name == "holidays":
				// A holiday is an absence of the tenant's PublicHoliday type.
				types := a.list(t, "/v1/absence-types?name=PublicHoliday")
				if len(types) != 1 {
					t.Fatalf("PublicHoliday absence types: %v", types)
				}
				absence := a.create(t, "absences", rsM{"absenceType": rsID(t, types[0]), "label": "secret of A", "day": "2026-12-25"})
				rec = a.get(t, "holidays", rsID(t, absence))
				if !reflect.DeepEqual(rec, absence) {
					t.Fatalf("holiday %v, want the absence %v", rec, absence)
				}
			case r.ReadOnly:
				rec = rsInsertDirect(t, srv, ta.ID, r, body)
			default:
				rec = a.create(t, r.Name, body)
			}
			recs = append(recs, made{r, rec})
		}
		if len(recs) != 41 {
			t.Fatalf("%d resources", len(recs))
		}
		for _, m := range recs {
			r, rec := m.res, m.rec
			t.Run(r.Name, func(t *testing.T) {
				id := rsID(t, rec)
				path := fmt.Sprintf("%s/%d", r.Path(), id)
				// A sees it.
				if got := a.get(t, r.Name, id); !reflect.DeepEqual(got, rec) {
					t.Fatalf("A's own GET: %v, want %v", got, rec)
				}
				// B does not: not by id, not in lists, not by criteria.
				status, _, raw := bc.send(t, http.MethodGet, path, nil)
				rsWantError(t, "B GET "+path, status, raw, http.StatusNotFound, "not_found")
				if bytes.Contains(raw, []byte("secret")) {
					t.Errorf("404 leaks data: %s", raw)
				}
				writeStatus, writeCode := http.StatusNotFound, "not_found"
				if r.ReadOnly {
					writeStatus, writeCode = http.StatusMethodNotAllowed, "method_not_allowed"
				}
				for _, method := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
					status, _, raw := bc.send(t, method, path, rsM{"label": "changed by B"})
					rsWantError(t, "B "+method+" "+path, status, raw, writeStatus, writeCode)
					if bytes.Contains(raw, []byte("secret")) {
						t.Errorf("%s answer leaks data: %s", method, raw)
					}
				}
				for _, q := range []string{
					"", "?where=" + url.QueryEscape(fmt.Sprintf(`{"id":%d}`, id)), fmt.Sprintf("?id=%d", id),
					"?where=" + url.QueryEscape(`{"createdAt":{">=":"2000-01-01"}}`), "?limit=50000",
				} {
					list := bc.list(t, r.Path()+q)
					if rsContainsID(list, id) {
						t.Errorf("B's list %s holds A's record", q)
					}
					for _, m := range list {
						if m["label"] == "secret of A" {
							t.Errorf("B's list %s holds A's data: %v", q, m)
						}
					}
					if q != "" && !strings.Contains(q, "createdAt") && q != "?limit=50000" && len(list) != 0 {
						t.Errorf("B's list %s = %v, want []", q, list)
					}
				}
				if !r.DeclaredOnly {
					if list := bc.list(t, r.Path()+"?label="+url.QueryEscape("secret of A")); len(list) != 0 {
						t.Errorf("B finds A's record by attribute: %v", list)
					}
				}
				// A's record is unchanged.
				if got := a.get(t, r.Name, id); !reflect.DeepEqual(got, rec) {
					t.Errorf("A's record after B's attempts: %v, want %v", got, rec)
				}
				if !rsContainsID(a.list(t, r.Path()), id) {
					t.Errorf("A's list lacks its record")
				}
			})
		}
	})
}

// TestMemberPolicy: members read everything and write only their own time
// entries, absence requests and expenses.
func TestMemberPolicy(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		admin := rsSignIn(t, srv, tn)
		mu := admin.create(t, "users", rsM{"email": "member@acme.test", "password": "member-password", "isAdmin": false})
		memberID := rsID(t, mu)
		member := rsSignIn(t, srv, testenv.Tenant{Slug: tn.Slug, AdminEmail: "member@acme.test", Password: "member-password"})
		member.userID = memberID
		if _, _, me := me(t, srv, tn.Slug, member.token); rsNum(me["id"]) != memberID || me["isAdmin"] != false {
			t.Fatalf("member's users/me: %v", me)
		}
		project := admin.create(t, "projects", rsM{"name": "P"})
		pid := rsID(t, project)
		task := admin.create(t, "tasks", rsM{"name": "T", "project": pid})
		tid := rsID(t, task)

		t.Run("members read every list", func(t *testing.T) {
			for _, r := range srv.Service.Registry.All() {
				member.list(t, r.Path())
			}
			if got := member.get(t, "projects", pid); !reflect.DeepEqual(got, project) {
				t.Errorf("member GET project: %v", got)
			}
			if !rsContainsID(member.list(t, "/v1/users"), tn.AdminID) {
				t.Error("member does not see the admin user")
			}
		})

		t.Run("members write no shared records", func(t *testing.T) {
			before := len(admin.list(t, "/v1/projects"))
			for _, res := range []string{"projects", "tasks", "clients", "tags", "documents", "users", "skill-assignments", "roles"} {
				body := rsM{"name": "member's"}
				switch res {
				case "documents":
					body = rsM{"model": "user", "record": memberID, "category": 1}
				case "users":
					body = rsM{"email": "sneaky@acme.test", "password": "sneaky-password", "isAdmin": true}
				}
				n := len(admin.list(t, "/v1/"+res))
				member.fail(t, http.MethodPost, "/v1/"+res, body, http.StatusForbidden, "forbidden")
				if got := len(admin.list(t, "/v1/"+res)); got != n {
					t.Errorf("%s: %d records after a refused POST, want %d", res, got, n)
				}
			}
			if got := len(admin.list(t, "/v1/projects")); got != before {
				t.Errorf("projects: %d, want %d", got, before)
			}
			for _, method := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
				member.fail(t, method, fmt.Sprintf("/v1/projects/%d", pid), rsM{"name": "changed"}, http.StatusForbidden, "forbidden")
			}
			if got := admin.get(t, "projects", pid); !reflect.DeepEqual(got, project) {
				t.Errorf("project after refused writes: %v", got)
			}
			// No promoting oneself, no changing others.
			member.fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", memberID), rsM{"isAdmin": true}, http.StatusForbidden, "forbidden")
			member.fail(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", tn.AdminID), rsM{"password": "taken-over-1"}, http.StatusForbidden, "forbidden")
			member.fail(t, http.MethodDelete, fmt.Sprintf("/v1/users/%d", tn.AdminID), nil, http.StatusForbidden, "forbidden")
			if _, _, me := me(t, srv, tn.Slug, member.token); me["isAdmin"] != false {
				t.Errorf("member became admin: %v", me)
			}
			login(t, srv, tn) // the admin's password still works
		})

		t.Run("members write their own time entries", func(t *testing.T) {
			count := func() int { return len(admin.list(t, "/v1/time-entries")) }
			n := count()
			own := member.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "WORK", "project": pid, "task": tid, "duration": 60, "sorting": 1})
			ownID := rsID(t, own)
			if own["user"] != float64(memberID) {
				t.Errorf("member's entry belongs to %v, want %d", own["user"], memberID)
			}
			explicit := member.create(t, "time-entries", rsM{"day": "2026-01-06", "trackingType": "BREAK", "duration": 60, "sorting": 1, "user": memberID})
			if explicit["user"] != float64(memberID) {
				t.Errorf("explicit own user: %v", explicit)
			}
			member.fail(t, http.MethodPost, "/v1/time-entries", rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1, "user": tn.AdminID}, http.StatusForbidden, "forbidden")
			if got := count(); got != n+2 {
				t.Errorf("time entries: %d, want %d", got, n+2)
			}

			adminEntry := admin.create(t, "time-entries", rsM{"day": "2026-01-05", "trackingType": "BREAK", "duration": 30, "sorting": 1})
			aid := rsID(t, adminEntry)
			if adminEntry["user"] != float64(tn.AdminID) {
				t.Errorf("admin's entry: %v", adminEntry)
			}
			for _, method := range []string{http.MethodPatch, http.MethodPut} {
				member.fail(t, method, fmt.Sprintf("/v1/time-entries/%d", aid), rsM{"duration": 1}, http.StatusForbidden, "forbidden")
				member.fail(t, method, fmt.Sprintf("/v1/time-entries/%d", aid), rsM{"user": memberID}, http.StatusForbidden, "forbidden")
			}
			member.fail(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", aid), nil, http.StatusForbidden, "forbidden")
			if got := admin.get(t, "time-entries", aid); !reflect.DeepEqual(got, adminEntry) {
				t.Errorf("admin's entry after refused writes: %v", got)
			}

			p := member.object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), rsM{"duration": 120}, http.StatusOK)
			if p["duration"] != 120.0 || p["user"] != float64(memberID) {
				t.Errorf("member's PATCH of own entry: %v", p)
			}
			// Giving an entry away is a write of someone else's record.
			member.fail(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), rsM{"user": tn.AdminID}, http.StatusForbidden, "forbidden")
			if got := member.get(t, "time-entries", ownID); got["user"] != float64(memberID) || got["duration"] != 120.0 {
				t.Errorf("own entry after refused hand-over: %v", got)
			}
			// The admin may do all of it.
			ap := admin.object(t, http.MethodPatch, fmt.Sprintf("/v1/time-entries/%d", ownID), rsM{"duration": 240}, http.StatusOK)
			if ap["duration"] != 240.0 || ap["user"] != float64(memberID) {
				t.Errorf("admin's PATCH of the member's entry: %v", ap)
			}
			forMember := admin.create(t, "time-entries", rsM{"day": "2026-01-07", "trackingType": "BREAK", "duration": 60, "sorting": 2, "user": memberID})
			if forMember["user"] != float64(memberID) {
				t.Errorf("admin's entry for the member: %v", forMember)
			}
			admin.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", rsID(t, forMember)), nil, http.StatusOK)
			member.object(t, http.MethodDelete, fmt.Sprintf("/v1/time-entries/%d", ownID), nil, http.StatusOK)
			member.fail(t, http.MethodGet, fmt.Sprintf("/v1/time-entries/%d", ownID), nil, http.StatusNotFound, "not_found")
		})

		t.Run("members write their own absence requests and expenses", func(t *testing.T) {
			for _, res := range []string{"absence-requests", "expenses"} {
				own := member.create(t, res, rsM{"note": "mine"})
				if own["user"] != float64(memberID) {
					t.Errorf("%s: %v", res, own)
				}
				member.fail(t, http.MethodPost, "/v1/"+res, rsM{"user": tn.AdminID}, http.StatusForbidden, "forbidden")
				theirs := admin.create(t, res, rsM{"note": "admin's"})
				member.fail(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, rsID(t, theirs)), rsM{"note": "x"}, http.StatusForbidden, "forbidden")
				member.fail(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, rsID(t, theirs)), nil, http.StatusForbidden, "forbidden")
				member.object(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, rsID(t, own)), rsM{"note": "still mine"}, http.StatusOK)
				member.object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, rsID(t, own)), nil, http.StatusOK)
				admin.object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, rsID(t, theirs)), nil, http.StatusOK)
			}
		})

		t.Run("members see only their own visible user documents", func(t *testing.T) {
			// CONTRACT.md "Roles": a member sees a user-model Document only
			// when it is about themselves and visibleToUser is true.
			mine := admin.create(t, "documents", rsM{"model": "user", "record": memberID, "category": 1, "visibleToUser": true})
			hidden := admin.create(t, "documents", rsM{"model": "user", "record": memberID, "category": 3, "visibleToUser": false})
			unset := admin.create(t, "documents", rsM{"model": "user", "record": memberID, "category": 6})
			others := admin.create(t, "documents", rsM{"model": "user", "record": tn.AdminID, "category": 1, "visibleToUser": true})
			proj := admin.create(t, "documents", rsM{"model": "project", "record": pid, "category": 7})
			got := member.ids(t, "/v1/documents")
			if want := []int64{rsID(t, mine), rsID(t, proj)}; !slices.Equal(got, want) {
				t.Errorf("member's documents %v, want %v", got, want)
			}
			for _, d := range []rsM{hidden, unset, others} {
				member.fail(t, http.MethodGet, fmt.Sprintf("/v1/documents/%d", rsID(t, d)), nil, http.StatusNotFound, "not_found")
			}
			if got := member.ids(t, "/v1/documents?where="+url.QueryEscape(`{"visibleToUser":{"!=":true}}`)); len(got) != 1 || got[0] != rsID(t, proj) {
				t.Errorf("member's invisible documents by criteria: %v", got)
			}
			if got := admin.ids(t, "/v1/documents"); len(got) != 5 {
				t.Errorf("admin sees %d documents, want 5", len(got))
			}
		})

		t.Run("admins may do all", func(t *testing.T) {
			for _, res := range []string{"projects", "tags", "roles"} {
				rec := admin.create(t, res, rsM{"name": "admin's"})
				admin.object(t, http.MethodPatch, fmt.Sprintf("/v1/%s/%d", res, rsID(t, rec)), rsM{"name": "changed"}, http.StatusOK)
				admin.object(t, http.MethodDelete, fmt.Sprintf("/v1/%s/%d", res, rsID(t, rec)), nil, http.StatusOK)
			}
			// A promoted member may write everything too.
			admin.object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", memberID), rsM{"isAdmin": true}, http.StatusOK)
			promoted := rsSignIn(t, srv, testenv.Tenant{Slug: tn.Slug, AdminEmail: "member@acme.test", Password: "member-password"})
			rec := promoted.create(t, "projects", rsM{"name": "by a new admin"})
			promoted.object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", rsID(t, rec)), nil, http.StatusOK)
		})
	})
}
