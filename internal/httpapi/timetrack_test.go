package httpapi_test

// Black-box tests of time tracking: account settings, the field rules of
// time entries, who may write them, the approval of project days and the
// time totals report. Every test runs on SQLite and on PostgreSQL.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// ttHTTP is the client of these tests: enough idle connections for the
// concurrent ones.
var ttHTTP = &http.Client{
	Timeout: 60 * time.Second,
	Transport: &http.Transport{
		MaxIdleConns:        128,
		MaxIdleConnsPerHost: 128,
		IdleConnTimeout:     30 * time.Second,
	},
}

// ttEnv is a running service with one tenant, its admin, a member, two
// projects and a task of each.
type ttEnv struct {
	t        *testing.T
	srv      *testenv.Server
	tn       testenv.Tenant
	admin    string // bearer token
	member   string // bearer token
	adminID  float64
	memberID float64
	p1, p2   float64 // projects
	t1, t2   float64 // tasks of p1 and p2
}

// ttSend sends one request and returns the status and raw body. It does
// not touch t, so goroutines may call it.
func ttSend(c *http.Client, base, slug, token, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("companyurl", slug)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	return resp.StatusCode, raw, err
}

// raw sends a request as the holder of token.
func (e *ttEnv) raw(token, method, path string, body any) (int, []byte) {
	e.t.Helper()
	status, raw, err := ttSend(ttHTTP, e.srv.URL, e.tn.Slug, token, method, path, body)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	return status, raw
}

// do sends a request whose answer is a JSON object.
func (e *ttEnv) do(token, method, path string, body any) (int, map[string]any) {
	e.t.Helper()
	status, raw := e.raw(token, method, path, body)
	return status, ttObj(e.t, raw)
}

// list GETs a list and fails unless it is a 200 JSON array.
func (e *ttEnv) list(token, path string) []map[string]any {
	e.t.Helper()
	status, raw := e.raw(token, http.MethodGet, path, nil)
	if status != 200 {
		e.t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	return ttArr(e.t, raw)
}

// entries lists the time entries a where criteria selects.
func (e *ttEnv) entries(where map[string]any) []map[string]any {
	e.t.Helper()
	w, err := json.Marshal(where)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.list(e.admin, "/v1/time-entries?where="+url.QueryEscape(string(w)))
}

// create POSTs a record as the holder of token and returns it; any other
// answer than 201 fails the test.
func (e *ttEnv) create(token, resource string, body map[string]any) map[string]any {
	e.t.Helper()
	status, rec := e.do(token, http.MethodPost, "/v1/"+resource, body)
	if status != 201 {
		e.t.Fatalf("POST /v1/%s %v: %d %v", resource, body, status, rec)
	}
	if _, ok := rec["id"].(float64); !ok {
		e.t.Fatalf("POST /v1/%s: no id in %v", resource, rec)
	}
	return rec
}

// get GETs one record and fails unless it is there.
func (e *ttEnv) get(path string) map[string]any {
	e.t.Helper()
	status, rec := e.do(e.admin, http.MethodGet, path, nil)
	if status != 200 {
		e.t.Fatalf("GET %s: %d %v", path, status, rec)
	}
	return rec
}

// settings sets the account settings as the admin.
func (e *ttEnv) settings(mode string, worktime bool) {
	e.t.Helper()
	status, body := e.do(e.admin, http.MethodPatch, "/v1/account/settings", map[string]any{"timerMode": mode, "useWorktime": worktime})
	if status != 200 || body["timerMode"] != mode || body["useWorktime"] != worktime {
		e.t.Fatalf("set settings %s/%v: %d %v", mode, worktime, status, body)
	}
}

// approve POSTs a bulk approval as the admin and returns its records.
func (e *ttEnv) approve(action string, items ...map[string]any) []map[string]any {
	e.t.Helper()
	status, raw := e.raw(e.admin, http.MethodPost, "/v1/approval/bulk-approve", map[string]any{"action": action, "items": items})
	if status != 200 {
		e.t.Fatalf("bulk %s %v: %d %s", action, items, status, raw)
	}
	return ttArr(e.t, raw)
}

func ttItem(project float64, day string) map[string]any {
	return map[string]any{"project": project, "day": day}
}

func ttObj(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body is not a JSON object: %q", raw)
	}
	return m
}

func ttArr(t *testing.T, raw []byte) []map[string]any {
	t.Helper()
	var a []map[string]any
	if err := json.Unmarshal(raw, &a); err != nil || a == nil {
		t.Fatalf("body is not a JSON array of objects: %q", raw)
	}
	return a
}

// ttFields returns the sorted field names of an error's problems.
func ttFields(body map[string]any) []string {
	ps, _ := body["problems"].([]any)
	out := []string{}
	for _, p := range ps {
		if m, ok := p.(map[string]any); ok {
			f, _ := m["field"].(string)
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// ttInvalid checks a 400 "invalid" answer naming exactly the fields.
func ttInvalid(t *testing.T, what string, status int, body map[string]any, fields ...string) {
	t.Helper()
	want := append([]string{}, fields...)
	sort.Strings(want)
	if status != 400 || body["code"] != "invalid" || !slices.Equal(ttFields(body), want) {
		t.Errorf("%s: %d %v, want 400 invalid naming %v", what, status, body, want)
		return
	}
	for _, p := range body["problems"].([]any) {
		if m, _ := p.(map[string]any)["message"].(string); m == "" {
			t.Errorf("%s: problem without message: %v", what, p)
		}
	}
}

// ttRefused checks a 403 answer with its code and message.
func ttRefused(t *testing.T, what string, status int, body map[string]any, code string) {
	t.Helper()
	if status != 403 || body["code"] != code || body["message"] == "" || body["message"] == nil {
		t.Errorf("%s: %d %v, want 403 %s", what, status, body, code)
	}
}

func ttIsTimestamp(v any) bool {
	s, ok := v.(string)
	if !ok || len(s) != len("2006-01-02T15:04:05.000Z") {
		return false
	}
	_, err := time.Parse("2006-01-02T15:04:05.000Z", s)
	return err == nil
}

func ttID(rec map[string]any) string { return fmt.Sprint(rec["id"]) }

// ttLoginAs signs in with e-mail and password and returns the access token.
func ttLoginAs(t *testing.T, srv *testenv.Server, slug, email, password string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {email}, "password": {password},
		"client_id": {"app"}, "client_secret": {"secret"}}
	status, _, body := tokenRequest(t, srv, map[string]string{"companyurl": slug}, form)
	tok, _ := body["access_token"].(string)
	if status != 200 || tok == "" {
		t.Fatalf("sign in %s: %d %v", email, status, body)
	}
	return tok
}

// ttSetup starts the service on the backend and prepares a tenant.
func ttSetup(t *testing.T, b testenv.Backend) *ttEnv {
	t.Helper()
	srv := testenv.Start(t, b)
	t.Cleanup(ttHTTP.CloseIdleConnections)
	tn := srv.CreateTenant(t, "ttco")
	e := &ttEnv{t: t, srv: srv, tn: tn, admin: login(t, srv, tn).AccessToken, adminID: float64(tn.AdminID)}
	const memberPassword = "member-password"
	u := e.create(e.admin, "users", map[string]any{"email": "member@ttco.test", "password": memberPassword})
	if u["isAdmin"] != false {
		t.Fatalf("member is an admin: %v", u)
	}
	e.memberID = u["id"].(float64)
	e.member = ttLoginAs(t, srv, tn.Slug, "member@ttco.test", memberPassword)
	e.p1 = e.create(e.admin, "projects", map[string]any{"name": "Alpha"})["id"].(float64)
	e.p2 = e.create(e.admin, "projects", map[string]any{"name": "Beta"})["id"].(float64)
	e.t1 = e.create(e.admin, "tasks", map[string]any{"name": "Build", "project": e.p1})["id"].(float64)
	e.t2 = e.create(e.admin, "tasks", map[string]any{"name": "Test", "project": e.p2})["id"].(float64)
	return e
}

// otherTenantProject creates a second tenant with a project and returns
// that project's id.
func (e *ttEnv) otherTenantProject() float64 {
	e.t.Helper()
	other := e.srv.CreateTenant(e.t, "ttother")
	tok := login(e.t, e.srv, other).AccessToken
	status, raw, err := ttSend(ttHTTP, e.srv.URL, other.Slug, tok, http.MethodPost, "/v1/projects", map[string]any{"name": "Foreign"})
	if err != nil || status != 201 {
		e.t.Fatalf("project in the other tenant: %d %s %v", status, raw, err)
	}
	return ttObj(e.t, raw)["id"].(float64)
}

// --- 1. Settings ---------------------------------------------------------

func TestTTSettings(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		check := func(what string, token string, want map[string]any) {
			t.Helper()
			status, body := e.do(token, http.MethodGet, "/v1/account/settings", nil)
			if status != 200 || !reflect.DeepEqual(body, want) {
				t.Errorf("%s: GET settings = %d %v, want %v", what, status, body, want)
			}
		}
		defaults := map[string]any{"timerMode": "DURATION", "useWorktime": false}
		check("defaults (admin)", e.admin, defaults)
		check("defaults (member)", e.member, defaults)

		// PATCH changes only what it names.
		status, body := e.do(e.admin, http.MethodPatch, "/v1/account/settings", map[string]any{"timerMode": "START_TIME_END_TIME"})
		want := map[string]any{"timerMode": "START_TIME_END_TIME", "useWorktime": false}
		if status != 200 || !reflect.DeepEqual(body, want) {
			t.Errorf("PATCH timerMode: %d %v", status, body)
		}
		check("after PATCH timerMode", e.member, want)
		status, body = e.do(e.admin, http.MethodPatch, "/v1/account/settings", map[string]any{"useWorktime": true})
		want = map[string]any{"timerMode": "START_TIME_END_TIME", "useWorktime": true}
		if status != 200 || !reflect.DeepEqual(body, want) {
			t.Errorf("PATCH useWorktime: %d %v", status, body)
		}
		check("after PATCH useWorktime", e.admin, want)

		// PUT does the same as PATCH.
		status, body = e.do(e.admin, http.MethodPut, "/v1/account/settings", map[string]any{"timerMode": "DURATION", "useWorktime": false})
		if status != 200 || !reflect.DeepEqual(body, defaults) {
			t.Errorf("PUT both: %d %v", status, body)
		}
		check("after PUT", e.admin, defaults)
		status, body = e.do(e.admin, http.MethodPut, "/v1/account/settings", map[string]any{"useWorktime": true})
		want = map[string]any{"timerMode": "DURATION", "useWorktime": true}
		if status != 200 || !reflect.DeepEqual(body, want) {
			t.Errorf("PUT useWorktime: %d %v", status, body)
		}
		check("after PUT useWorktime", e.admin, want)
		// An empty PATCH changes nothing.
		if status, body = e.do(e.admin, http.MethodPatch, "/v1/account/settings", map[string]any{}); status != 200 || !reflect.DeepEqual(body, want) {
			t.Errorf("empty PATCH: %d %v", status, body)
		}

		// Bad values and unknown keys: 400 naming the field, nothing changed.
		bad := []struct {
			name   string
			body   any
			fields []string
		}{
			{"unknown timerMode", map[string]any{"timerMode": "HOURS"}, []string{"timerMode"}},
			{"lower-case timerMode", map[string]any{"timerMode": "duration"}, []string{"timerMode"}},
			{"timerMode not a string", map[string]any{"timerMode": 1}, []string{"timerMode"}},
			{"timerMode null", map[string]any{"timerMode": nil}, []string{"timerMode"}},
			{"useWorktime a string", map[string]any{"useWorktime": "false"}, []string{"useWorktime"}},
			{"useWorktime a number", map[string]any{"useWorktime": 0}, []string{"useWorktime"}},
			{"useWorktime null", map[string]any{"useWorktime": nil}, []string{"useWorktime"}},
			{"unknown key", map[string]any{"timezone": "UTC"}, []string{"timezone"}},
			{"good value beside an unknown key", map[string]any{"timerMode": "START_TIME_END_TIME", "colour": "red"}, []string{"colour"}},
			{"good value beside a bad one", map[string]any{"timerMode": "START_TIME_END_TIME", "useWorktime": "no"}, []string{"useWorktime"}},
			{"both bad", map[string]any{"timerMode": "X", "useWorktime": "no"}, []string{"timerMode", "useWorktime"}},
		}
		for _, c := range bad {
			for _, m := range []string{http.MethodPatch, http.MethodPut} {
				status, body := e.do(e.admin, m, "/v1/account/settings", c.body)
				ttInvalid(t, m+" "+c.name, status, body, c.fields...)
			}
		}
		check("after the refused changes", e.admin, want)
		for _, raw := range []string{`{"timerMode":`, `["DURATION"]`, `"DURATION"`} {
			status, body := e.do(e.admin, http.MethodPatch, "/v1/account/settings", raw)
			if status != 400 || body["code"] != "invalid_json" {
				t.Errorf("PATCH %s: %d %v, want 400 invalid_json", raw, status, body)
			}
		}

		// Members may read but not change the settings.
		for _, m := range []string{http.MethodPatch, http.MethodPut} {
			status, body := e.do(e.member, m, "/v1/account/settings", map[string]any{"timerMode": "START_TIME_END_TIME"})
			ttRefused(t, "member "+m, status, body, "forbidden")
			status, body = e.do(e.member, m, "/v1/account/settings", map[string]any{"bogus": 1})
			if status != 403 {
				t.Errorf("member %s with a bad body: %d %v, want 403", m, status, body)
			}
		}
		check("after the member's attempts", e.admin, want)

		// Without a token: 401. Settings belong to one tenant.
		if status, _, err := ttSend(ttHTTP, e.srv.URL, e.tn.Slug, "", http.MethodGet, "/v1/account/settings", nil); err != nil || status != 401 {
			t.Errorf("GET settings without a token: %d %v", status, err)
		}
		other := e.srv.CreateTenant(t, "ttother")
		otherTok := login(t, e.srv, other).AccessToken
		status, raw, err := ttSend(ttHTTP, e.srv.URL, other.Slug, otherTok, http.MethodGet, "/v1/account/settings", nil)
		if err != nil || status != 200 || !reflect.DeepEqual(ttObj(t, raw), defaults) {
			t.Errorf("other tenant's settings: %d %s %v", status, raw, err)
		}
	})
}

// --- 2. Field rules --------------------------------------------------------

// ttCombo is one setting of timerMode and useWorktime.
type ttCombo struct {
	key      string
	mode     string
	worktime bool
}

var ttCombos = []ttCombo{
	{"D", "DURATION", false},
	{"DW", "DURATION", true},
	{"S", "START_TIME_END_TIME", false},
	{"SW", "START_TIME_END_TIME", true},
}

// ttOK marks an expected success in a field rules table.
var ttOK = []string{}

func ttAll(fields ...string) map[string][]string {
	return map[string][]string{"D": fields, "DW": fields, "S": fields, "SW": fields}
}

// ttModes gives the same expectation for both worktime settings of each timerMode.
func ttModes(duration, startEnd []string) map[string][]string {
	return map[string][]string{"D": duration, "DW": duration, "S": startEnd, "SW": startEnd}
}

func TestTTEntryFieldRules(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		foreign := e.otherTenantProject()
		const day = "2026-03-02"
		const start, end = "2026-03-02T08:00:00.000Z", "2026-03-02T09:30:00.000Z"
		// m builds an entry of day with the given fields.
		m := func(kv ...any) map[string]any {
			out := map[string]any{"day": day}
			for i := 0; i < len(kv); i += 2 {
				out[kv[i].(string)] = kv[i+1]
			}
			return out
		}
		work := func(kv ...any) map[string]any {
			return m(append([]any{"trackingType", "WORK", "project", e.p1, "task", e.t1}, kv...)...)
		}
		cases := []struct {
			name string
			body map[string]any
			want map[string][]string // by combo; ttOK: 201; absent: not tried
		}{
			// WORK: project and task, time fields by timerMode. DURATION
			// wants duration and sorting (SPEC.md: "duration and sorting; no
			// start or end times"), START_TIME_END_TIME startTime and
			// endTime without sorting.
			{"WORK duration without sorting", work("duration", 3600), ttModes([]string{"sorting"}, []string{"startTime", "duration"})},
			{"WORK sorting without duration", work("sorting", 1), ttModes([]string{"duration"}, []string{"startTime", "sorting"})},
			{"WORK trackingType omitted", m("project", e.p1, "task", e.t1, "duration", 60, "sorting", 1), ttModes(ttOK, []string{"startTime", "duration", "sorting"})},
			{"WORK trackingType null", m("trackingType", nil, "project", e.p1, "task", e.t1, "duration", 60, "sorting", 1), ttModes(ttOK, []string{"startTime", "duration", "sorting"})},
			{"WORK duration and sorting", work("duration", 3600, "sorting", 2), ttModes(ttOK, []string{"startTime", "duration", "sorting"})},
			{"WORK zero duration", work("duration", 0, "sorting", 0), ttModes(ttOK, []string{"startTime", "duration", "sorting"})},
			{"WORK negative sorting", work("duration", 60, "sorting", -3), ttModes(ttOK, []string{"startTime", "duration", "sorting"})},
			{"WORK sorting null", work("duration", 60, "sorting", nil), ttModes([]string{"sorting"}, []string{"startTime", "duration"})},
			{"WORK startTime and endTime", work("startTime", start, "endTime", end), ttModes([]string{"duration", "sorting", "startTime", "endTime"}, ttOK)},
			{"WORK running (startTime only)", work("startTime", start), ttModes([]string{"duration", "sorting", "startTime"}, ttOK)},
			{"WORK start, end and duration", work("startTime", start, "endTime", end, "duration", 5400), ttModes([]string{"sorting", "startTime", "endTime"}, []string{"duration"})},
			{"WORK start, end, duration and sorting", work("startTime", start, "endTime", end, "duration", 5400, "sorting", 1), ttModes([]string{"startTime", "endTime"}, []string{"duration", "sorting"})},
			{"WORK start, end and sorting", work("startTime", start, "endTime", end, "sorting", 1), ttModes([]string{"duration", "startTime", "endTime"}, []string{"sorting"})},
			{"WORK duration and endTime", work("duration", 60, "sorting", 1, "endTime", end), ttModes([]string{"endTime"}, []string{"startTime", "duration", "sorting"})},
			{"WORK endTime only", work("endTime", end), ttModes([]string{"duration", "sorting", "endTime"}, []string{"startTime"})},
			{"WORK no time fields", work(), ttModes([]string{"duration", "sorting"}, []string{"startTime"})},
			{"WORK without project (duration)", m("trackingType", "WORK", "task", e.t1, "duration", 60, "sorting", 1), map[string][]string{"D": {"project"}, "DW": {"project"}}},
			{"WORK without project (times)", m("trackingType", "WORK", "task", e.t1, "startTime", start, "endTime", end), map[string][]string{"S": {"project"}, "SW": {"project"}}},
			{"WORK without task (duration)", m("trackingType", "WORK", "project", e.p1, "duration", 60, "sorting", 1), map[string][]string{"D": {"task"}, "DW": {"task"}}},
			{"WORK without task (times)", m("trackingType", "WORK", "project", e.p1, "startTime", start), map[string][]string{"S": {"task"}, "SW": {"task"}}},
			{"WORK without project and task", m("trackingType", "WORK", "duration", 60, "sorting", 1), map[string][]string{"D": {"project", "task"}, "DW": {"project", "task"}}},
			{"WORK without project, task and sorting", m("trackingType", "WORK", "duration", 60), map[string][]string{"D": {"project", "task", "sorting"}, "DW": {"project", "task", "sorting"}}},
			{"WORK project null", work("project", nil, "duration", 60, "sorting", 1), map[string][]string{"D": {"project"}}},
			{"WORK endTime before startTime", work("startTime", end, "endTime", start), map[string][]string{"S": {"endTime"}, "SW": {"endTime"}}},
			{"WORK negative duration", work("duration", -60, "sorting", 1), ttModes([]string{"duration"}, []string{"startTime", "duration", "sorting"})},
			{"WORK negative duration without sorting", work("duration", -60), map[string][]string{"D": {"duration", "sorting"}, "DW": {"duration", "sorting"}}},
			// One problem per field, even when a field breaks two rules.
			{"WORK reversed times under DURATION", work("startTime", end, "endTime", start), map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}}},

			// WORKTIME: no project or task; always startTime and endTime.
			{"WORKTIME start and end", m("trackingType", "WORKTIME", "startTime", start, "endTime", end), ttAll()},
			{"WORKTIME with project", m("trackingType", "WORKTIME", "project", e.p1, "startTime", start, "endTime", end), ttAll("project")},
			{"WORKTIME with task", m("trackingType", "WORKTIME", "task", e.t1, "startTime", start, "endTime", end), ttAll("task")},
			{"WORKTIME with project and task", m("trackingType", "WORKTIME", "project", e.p1, "task", e.t1, "startTime", start, "endTime", end), ttAll("project", "task")},
			{"WORKTIME startTime only", m("trackingType", "WORKTIME", "startTime", start), ttAll("endTime")},
			{"WORKTIME endTime only", m("trackingType", "WORKTIME", "endTime", end), ttAll("startTime")},
			{"WORKTIME duration", m("trackingType", "WORKTIME", "duration", 3600), ttAll("startTime", "endTime", "duration")},
			{"WORKTIME start, end and duration", m("trackingType", "WORKTIME", "startTime", start, "endTime", end, "duration", 5400), ttAll("duration")},
			{"WORKTIME start, end and sorting", m("trackingType", "WORKTIME", "startTime", start, "endTime", end, "sorting", 1), ttAll("sorting")},
			{"WORKTIME endTime equals startTime", m("trackingType", "WORKTIME", "startTime", start, "endTime", start), ttAll("endTime")},
			{"WORKTIME endTime before startTime", m("trackingType", "WORKTIME", "startTime", end, "endTime", start), ttAll("endTime")},

			// BREAK: no project or task; with worktime startTime and endTime
			// (sorting allowed, not required), else as timerMode says
			// (under DURATION: duration and sorting).
			{"BREAK duration without sorting", m("trackingType", "BREAK", "duration", 900),
				map[string][]string{"D": {"sorting"}, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK duration and sorting", m("trackingType", "BREAK", "duration", 900, "sorting", 3),
				map[string][]string{"D": ttOK, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration", "sorting"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK start and end", m("trackingType", "BREAK", "startTime", start, "endTime", end),
				map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}, "DW": ttOK, "S": ttOK, "SW": ttOK}},
			{"BREAK start, end and sorting", m("trackingType", "BREAK", "startTime", start, "endTime", end, "sorting", 1),
				map[string][]string{"D": {"duration", "startTime", "endTime"}, "DW": ttOK, "S": {"sorting"}, "SW": ttOK}},
			{"BREAK startTime only", m("trackingType", "BREAK", "startTime", start),
				map[string][]string{"D": {"duration", "sorting", "startTime"}, "DW": {"endTime"}, "S": ttOK, "SW": {"endTime"}}},
			{"BREAK no time fields", m("trackingType", "BREAK"),
				map[string][]string{"D": {"duration", "sorting"}, "DW": {"startTime", "endTime"}, "S": {"startTime"}, "SW": {"startTime", "endTime"}}},
			{"BREAK sorting only", m("trackingType", "BREAK", "sorting", 1),
				map[string][]string{"D": {"duration"}, "DW": {"startTime", "endTime"}, "S": {"startTime", "sorting"}, "SW": {"startTime", "endTime"}}},
			{"BREAK with project", m("trackingType", "BREAK", "project", e.p1, "startTime", start, "endTime", end),
				map[string][]string{"D": {"project", "duration", "sorting", "startTime", "endTime"}, "DW": {"project"}, "S": {"project"}, "SW": {"project"}}},
			{"BREAK with task", m("trackingType", "BREAK", "task", e.t1, "duration", 900, "sorting", 1),
				map[string][]string{"D": {"task"}, "DW": {"task", "startTime", "endTime", "duration"}}},
			{"BREAK negative duration", m("trackingType", "BREAK", "duration", -1, "sorting", 1),
				map[string][]string{"D": {"duration"}, "DW": {"startTime", "endTime", "duration"}, "S": {"startTime", "duration", "sorting"}, "SW": {"startTime", "endTime", "duration"}}},
			{"BREAK reversed times", m("trackingType", "BREAK", "startTime", end, "endTime", start),
				map[string][]string{"D": {"duration", "sorting", "startTime", "endTime"}}},
			{"WORKTIME reversed times with duration", m("trackingType", "WORKTIME", "startTime", end, "endTime", start, "duration", -5), ttAll("endTime", "duration")},
			{"BREAK endTime before startTime", m("trackingType", "BREAK", "startTime", end, "endTime", start), map[string][]string{"DW": {"endTime"}, "S": {"endTime"}, "SW": {"endTime"}}},

			// Attribute types, the required day and references.
			{"day missing", map[string]any{"trackingType": "WORK", "project": e.p1, "task": e.t1, "duration": 60}, ttAll("day")},
			{"day null", work("day", nil, "duration", 60), ttAll("day")},
			{"day not a date", work("day", "2026-02-30", "duration", 60), ttAll("day")},
			{"day with a time", work("day", "2026-03-02T00:00:00.000Z", "duration", 60), ttAll("day")},
			{"unknown trackingType", m("trackingType", "OVERTIME", "duration", 60), ttAll("trackingType")},
			{"duration not an integer", work("duration", 1.5), ttAll("duration")},
			{"duration a string", work("duration", "3600"), ttAll("duration")},
			{"sorting a string", work("duration", 60, "sorting", "1"), ttAll("sorting")},
			{"startTime without milliseconds", m("trackingType", "WORKTIME", "startTime", "2026-03-02T08:00:00Z", "endTime", end), ttAll("startTime")},
			{"endTime not UTC", m("trackingType", "WORKTIME", "startTime", start, "endTime", "2026-03-02T09:30:00.000+01:00"), ttAll("endTime")},
			{"unknown project", work("project", 999999, "duration", 60), ttAll("project")},
			{"unknown task", work("task", 999999, "duration", 60), ttAll("task")},
			{"another tenant's project", work("project", foreign, "duration", 60), ttAll("project")},
			{"a task as project", work("project", e.t1, "duration", 60), ttAll("project")},
			{"a project as task", work("task", e.p2, "duration", 60), ttAll("task")},
			{"unknown user", work("user", 999999, "duration", 60), ttAll("user")},
			{"project not an id", work("project", "Alpha", "duration", 60), ttAll("project")},
		}
		created := 0
		for _, combo := range ttCombos {
			e.settings(combo.mode, combo.worktime)
			for _, c := range cases {
				want, tried := c.want[combo.key]
				if !tried {
					continue
				}
				what := combo.key + ": " + c.name
				status, body := e.do(e.admin, http.MethodPost, "/v1/time-entries", c.body)
				if len(want) > 0 {
					ttInvalid(t, what, status, body, want...)
					continue
				}
				if status != 201 {
					t.Errorf("%s: %d %v, want 201", what, status, body)
					continue
				}
				created++
				tt, _ := c.body["trackingType"].(string)
				if tt == "" {
					tt = "WORK"
				}
				if body["trackingType"] != tt || body["user"] != e.adminID || body["day"] != day {
					t.Errorf("%s: created %v, want trackingType %s, user %v (the caller)", what, body, tt, e.adminID)
				}
				for _, f := range []string{"project", "task", "duration", "sorting", "startTime", "endTime"} {
					if v, sent := c.body[f]; sent && fmt.Sprint(body[f]) != fmt.Sprint(v) {
						t.Errorf("%s: %s = %v, sent %v", what, f, body[f], v)
					}
				}
				if tt == "WORK" && body["validationStatus"] != "NOTAPPROVED" {
					t.Errorf("%s: validationStatus = %v, want NOTAPPROVED", what, body["validationStatus"])
				}
				if tt != "WORK" && body["validationStatus"] != nil {
					t.Errorf("%s: a %s entry has validationStatus %v", what, tt, body["validationStatus"])
				}
				if !ttIsTimestamp(body["createdAt"]) || !ttIsTimestamp(body["updatedAt"]) {
					t.Errorf("%s: timestamps %v %v", what, body["createdAt"], body["updatedAt"])
				}
				if got := e.get("/v1/time-entries/" + ttID(body)); !reflect.DeepEqual(got, body) {
					t.Errorf("%s: GET = %v, POST answered %v", what, got, body)
				}
			}
			// Refused writes stored nothing.
			if n := len(e.list(e.admin, "/v1/time-entries")); n != created {
				t.Errorf("after %s: %d entries stored, %d creates succeeded", combo.key, n, created)
			}
		}

		// The problem of a missing sorting says what is wanted.
		e.settings("DURATION", false)
		for _, body := range []map[string]any{work("duration", 60), m("trackingType", "BREAK", "duration", 60)} {
			status, got := e.do(e.admin, http.MethodPost, "/v1/time-entries", body)
			ttInvalid(t, "DURATION entry without sorting", status, got, "sorting")
			ps, _ := got["problems"].([]any)
			if len(ps) == 1 {
				if msg, _ := ps[0].(map[string]any)["message"].(string); !strings.Contains(msg, "sorting") || !strings.Contains(msg, "DURATION") {
					t.Errorf("DURATION entry without sorting: message %q names neither sorting nor DURATION", msg)
				}
			}
		}

		// validationStatus is the service's: a value sent is ignored.
		status, body := e.do(e.admin, http.MethodPost, "/v1/time-entries", work("duration", 60, "sorting", 1, "validationStatus", "APPROVED"))
		if status != 201 || body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("WORK sent as APPROVED: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPost, "/v1/time-entries", m("trackingType", "BREAK", "duration", 60, "sorting", 1, "validationStatus", "APPROVED"))
		if status != 201 || body["validationStatus"] != nil {
			t.Errorf("BREAK sent as APPROVED: %d %v", status, body)
		}
	})
}

// TestTTEntryRulesOnUpdate: changes are checked against the settings in
// force when they are made, on the merged record.
func TestTTEntryRulesOnUpdate(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		const day = "2026-03-03"
		const start, end = "2026-03-03T08:00:00.000Z", "2026-03-03T10:00:00.000Z"
		w := e.create(e.admin, "time-entries", map[string]any{"project": e.p1, "task": e.t1, "day": day, "duration": 3600, "sorting": 1})
		path := "/v1/time-entries/" + ttID(w)
		wt := e.create(e.admin, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": day, "startTime": start, "endTime": end})
		wtPath := "/v1/time-entries/" + ttID(wt)
		br := e.create(e.admin, "time-entries", map[string]any{"trackingType": "BREAK", "day": day, "duration": 600, "sorting": 1})
		brPath := "/v1/time-entries/" + ttID(br)

		// Valid and invalid changes under DURATION.
		status, body := e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": 1800, "sorting": 4})
		if status != 200 || body["duration"] != float64(1800) || body["sorting"] != float64(4) || body["project"] != e.p1 || body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("PATCH duration: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": -1})
		ttInvalid(t, "PATCH negative duration", status, body, "duration")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"startTime": start})
		ttInvalid(t, "PATCH startTime under DURATION", status, body, "startTime")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": nil})
		ttInvalid(t, "PATCH duration null", status, body, "duration")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"sorting": nil})
		ttInvalid(t, "PATCH sorting null under DURATION", status, body, "sorting")
		status, body = e.do(e.admin, http.MethodPatch, brPath, map[string]any{"sorting": nil})
		ttInvalid(t, "PATCH BREAK sorting null under DURATION", status, body, "sorting")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"task": nil})
		ttInvalid(t, "PATCH task null", status, body, "task")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"task": 999999})
		ttInvalid(t, "PATCH unknown task", status, body, "task")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"day": "03.03.2026"})
		ttInvalid(t, "PATCH bad day", status, body, "day")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"trackingType": "WORKTIME"})
		ttInvalid(t, "PATCH into WORKTIME keeping project, task and duration", status, body, "project", "task", "startTime", "endTime", "duration", "sorting")
		status, body = e.do(e.admin, http.MethodPatch, wtPath, map[string]any{"endTime": "2026-03-03T07:00:00.000Z"})
		ttInvalid(t, "PATCH WORKTIME endTime before startTime", status, body, "endTime")
		status, body = e.do(e.admin, http.MethodPatch, wtPath, map[string]any{"endTime": nil})
		ttInvalid(t, "PATCH WORKTIME endTime null", status, body, "endTime")
		if got := e.get(path); got["duration"] != float64(1800) || got["sorting"] != float64(4) || got["task"] != e.t1 || got["day"] != day || got["startTime"] != nil {
			t.Errorf("after refused PATCHes: %v", got)
		}

		// Turning the WORK entry into a WORKTIME entry: WORK fields go, times come.
		status, body = e.do(e.admin, http.MethodPut, path, map[string]any{"trackingType": "WORKTIME", "project": nil, "task": nil, "duration": nil, "sorting": nil, "startTime": start, "endTime": end})
		if status != 200 || body["trackingType"] != "WORKTIME" || body["validationStatus"] != nil || body["startTime"] != start {
			t.Errorf("PUT into WORKTIME: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPut, path, map[string]any{"trackingType": "WORK", "project": e.p2, "task": e.t2, "duration": 60, "startTime": nil, "endTime": nil})
		ttInvalid(t, "PUT back into WORK without sorting", status, body, "sorting")
		status, body = e.do(e.admin, http.MethodPut, path, map[string]any{"trackingType": "WORK", "project": e.p2, "task": e.t2, "duration": 60, "sorting": 3, "startTime": nil, "endTime": nil})
		if status != 200 || body["trackingType"] != "WORK" || body["validationStatus"] != "NOTAPPROVED" || body["project"] != e.p2 || body["sorting"] != float64(3) {
			t.Errorf("PUT back into WORK: %d %v", status, body)
		}

		// The settings change: the stored entries stay, but a change must
		// satisfy the new rules.
		e.settings("START_TIME_END_TIME", false)
		if got := e.get(path); got["duration"] != float64(60) {
			t.Errorf("entry after the settings change: %v", got)
		}
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"sorting": 2})
		ttInvalid(t, "PATCH a DURATION-style entry under START_TIME_END_TIME", status, body, "startTime", "duration", "sorting")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": nil, "startTime": start})
		ttInvalid(t, "PATCH to a running entry keeping sorting", status, body, "sorting")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": nil, "sorting": nil, "startTime": start})
		if status != 200 || body["duration"] != nil || body["sorting"] != nil || body["startTime"] != start || body["endTime"] != nil {
			t.Errorf("PATCH to a running entry: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"endTime": "2026-03-03T07:59:59.999Z"})
		ttInvalid(t, "PATCH endTime before startTime", status, body, "endTime")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"endTime": end})
		if status != 200 || body["endTime"] != end {
			t.Errorf("PATCH stopping the entry: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"duration": 7200})
		ttInvalid(t, "PATCH duration under START_TIME_END_TIME", status, body, "duration")
		// The DURATION-style BREAK cannot be changed without its times now.
		status, body = e.do(e.admin, http.MethodPatch, brPath, map[string]any{"duration": 300})
		ttInvalid(t, "PATCH BREAK duration under START_TIME_END_TIME", status, body, "startTime", "duration", "sorting")

		e.settings("START_TIME_END_TIME", true)
		status, body = e.do(e.admin, http.MethodPatch, brPath, map[string]any{"duration": nil, "startTime": start, "sorting": 1})
		ttInvalid(t, "PATCH BREAK without endTime under worktime", status, body, "endTime")
		status, body = e.do(e.admin, http.MethodPatch, brPath, map[string]any{"duration": nil, "startTime": start, "endTime": end, "sorting": 1})
		if status != 200 || body["sorting"] != float64(1) || body["duration"] != nil {
			t.Errorf("PATCH BREAK into times under worktime: %d %v", status, body)
		}

		e.settings("DURATION", false)
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"sorting": 1})
		ttInvalid(t, "PATCH a START_TIME_END_TIME-style entry under DURATION", status, body, "duration", "startTime", "endTime")
		status, body = e.do(e.admin, http.MethodPatch, brPath, map[string]any{"sorting": 2})
		ttInvalid(t, "PATCH a BREAK with times under DURATION", status, body, "duration", "startTime", "endTime")
		// WORKTIME ignores the timerMode.
		status, body = e.do(e.admin, http.MethodPatch, wtPath, map[string]any{"endTime": "2026-03-03T11:00:00.000Z"})
		if status != 200 || body["endTime"] != "2026-03-03T11:00:00.000Z" {
			t.Errorf("PATCH WORKTIME under DURATION: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"startTime": nil, "endTime": nil, "duration": 900})
		ttInvalid(t, "PATCH back to a duration without sorting", status, body, "sorting")
		status, body = e.do(e.admin, http.MethodPatch, path, map[string]any{"startTime": nil, "endTime": nil, "duration": 900, "sorting": 5})
		if status != 200 || body["duration"] != float64(900) || body["sorting"] != float64(5) || body["startTime"] != nil {
			t.Errorf("PATCH back to a duration: %d %v", status, body)
		}
	})
}

// --- 3. Who writes whose entries -----------------------------------------------

func TestTTEntryOwnership(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		const day = "2026-03-04"
		entry := func(kv ...any) map[string]any {
			out := map[string]any{"project": e.p1, "task": e.t1, "day": day, "duration": 600, "sorting": 1}
			for i := 0; i < len(kv); i += 2 {
				out[kv[i].(string)] = kv[i+1]
			}
			return out
		}
		count := func() int { return len(e.list(e.admin, "/v1/time-entries")) }

		own := e.create(e.member, "time-entries", entry())
		if own["user"] != e.memberID {
			t.Errorf("member's entry: user = %v, want the member %v", own["user"], e.memberID)
		}
		if rec := e.create(e.member, "time-entries", entry("user", e.memberID)); rec["user"] != e.memberID {
			t.Errorf("member's entry naming themselves: %v", rec)
		}
		if rec := e.create(e.admin, "time-entries", entry()); rec["user"] != e.adminID {
			t.Errorf("admin's entry: user = %v, want the admin %v", rec["user"], e.adminID)
		}
		forMember := e.create(e.admin, "time-entries", entry("user", e.memberID))
		if forMember["user"] != e.memberID {
			t.Errorf("admin's entry for the member: %v", forMember)
		}
		adminEntry := e.create(e.admin, "time-entries", entry("duration", 1200))
		adminPath := "/v1/time-entries/" + ttID(adminEntry)
		ownPath := "/v1/time-entries/" + ttID(own)

		before := count()
		status, body := e.do(e.member, http.MethodPost, "/v1/time-entries", entry("user", e.adminID))
		ttRefused(t, "member creates an entry for the admin", status, body, "forbidden")
		status, body = e.do(e.member, http.MethodPost, "/v1/time-entries", entry("user", 999999))
		if status != 403 && status != 400 {
			t.Errorf("member creates an entry for an unknown user: %d %v", status, body)
		}
		if n := count(); n != before {
			t.Errorf("refused creates stored entries: %d → %d", before, n)
		}
		status, body = e.do(e.member, http.MethodPatch, adminPath, map[string]any{"duration": 1})
		ttRefused(t, "member changes the admin's entry", status, body, "forbidden")
		status, body = e.do(e.member, http.MethodPut, adminPath, map[string]any{"user": e.memberID})
		ttRefused(t, "member takes over the admin's entry", status, body, "forbidden")
		status, body = e.do(e.member, http.MethodDelete, adminPath, nil)
		ttRefused(t, "member deletes the admin's entry", status, body, "forbidden")
		if got := e.get(adminPath); got["duration"] != float64(1200) || got["user"] != e.adminID {
			t.Errorf("admin's entry after the member's attempts: %v", got)
		}
		status, body = e.do(e.member, http.MethodPatch, ownPath, map[string]any{"user": e.adminID})
		ttRefused(t, "member gives their entry to the admin", status, body, "forbidden")
		if got := e.get(ownPath); got["user"] != e.memberID {
			t.Errorf("member's entry after the refused hand-over: %v", got)
		}

		// Members change and delete their own entries.
		status, body = e.do(e.member, http.MethodPatch, ownPath, map[string]any{"duration": 900})
		if status != 200 || body["duration"] != float64(900) || body["user"] != e.memberID {
			t.Errorf("member changes their entry: %d %v", status, body)
		}
		status, body = e.do(e.member, http.MethodDelete, ownPath, nil)
		if status != 200 || body["id"] != own["id"] {
			t.Errorf("member deletes their entry: %d %v", status, body)
		}
		if status, _ := e.do(e.admin, http.MethodGet, ownPath, nil); status != 404 {
			t.Errorf("deleted entry: GET %d", status)
		}

		// Admins write anyone's entries.
		memberPath := "/v1/time-entries/" + ttID(forMember)
		status, body = e.do(e.admin, http.MethodPatch, memberPath, map[string]any{"duration": 42})
		if status != 200 || body["duration"] != float64(42) || body["user"] != e.memberID {
			t.Errorf("admin changes the member's entry: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, memberPath, map[string]any{"user": e.adminID})
		if status != 200 || body["user"] != e.adminID {
			t.Errorf("admin moves the member's entry to themselves: %d %v", status, body)
		}
		status, body = e.do(e.admin, http.MethodPatch, memberPath, map[string]any{"user": 999999})
		ttInvalid(t, "admin moves an entry to an unknown user", status, body, "user")
		status, body = e.do(e.admin, http.MethodDelete, memberPath, nil)
		if status != 200 {
			t.Errorf("admin deletes the entry: %d %v", status, body)
		}
		// Members read the tenant's entries.
		if n := len(e.list(e.member, "/v1/time-entries")); n != count() {
			t.Errorf("member lists %d entries, the tenant has %d", n, count())
		}
	})
}

// --- 4. Approval ---------------------------------------------------------------

func TestTTApproval(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		const day, day2, day3 = "2026-04-06", "2026-04-07", "2026-04-08"
		work := func(project, task float64, d string, secs int) map[string]any {
			return map[string]any{"project": project, "task": task, "day": d, "duration": secs, "sorting": 1}
		}
		status := func(path string) any { return e.get(path)["validationStatus"] }
		if days := e.list(e.admin, "/v1/project-days"); len(days) != 0 {
			t.Fatalf("project days before any approval: %v", days)
		}
		e1 := e.create(e.admin, "time-entries", work(e.p1, e.t1, day, 3600))
		e2 := e.create(e.member, "time-entries", work(e.p1, e.t1, day, 1800))
		e3 := e.create(e.admin, "time-entries", work(e.p2, e.t2, day, 600))
		e4 := e.create(e.admin, "time-entries", work(e.p1, e.t1, day2, 60))
		w1 := e.create(e.admin, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": day, "startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T16:00:00.000Z"})
		b1 := e.create(e.admin, "time-entries", map[string]any{"trackingType": "BREAK", "day": day, "duration": 900, "sorting": 1})
		p := func(rec map[string]any) string { return "/v1/time-entries/" + ttID(rec) }
		for _, rec := range []map[string]any{e1, e2, e3, e4} {
			if got := status(p(rec)); got != "NOTAPPROVED" {
				t.Errorf("entry %s before approval: validationStatus %v", ttID(rec), got)
			}
		}

		// Members may not approve.
		st, body := e.do(e.member, http.MethodPost, "/v1/approval/bulk-approve", map[string]any{"action": "approve", "items": []any{ttItem(e.p1, day)}})
		ttRefused(t, "member approves", st, body, "forbidden")
		if days := e.list(e.admin, "/v1/project-days"); len(days) != 0 {
			t.Fatalf("project days after the member's approval: %v", days)
		}
		if got := status(p(e1)); got != "NOTAPPROVED" {
			t.Errorf("entry after the member's approval: %v", got)
		}

		// Approve (p1, day).
		res := e.approve("approve", ttItem(e.p1, day))
		if len(res) != 1 {
			t.Fatalf("approve answered %v", res)
		}
		pd := res[0]
		if _, ok := pd["id"].(float64); !ok || pd["project"] != e.p1 || pd["day"] != day || pd["validationStatus"] != "APPROVED" ||
			!ttIsTimestamp(pd["createdAt"]) || !ttIsTimestamp(pd["updatedAt"]) || len(pd) != 6 {
			t.Errorf("approved project day: %v", pd)
		}
		if days := e.list(e.member, "/v1/project-days"); len(days) != 1 || !reflect.DeepEqual(days[0], pd) {
			t.Errorf("project days after approval: %v, want [%v]", days, pd)
		}
		if got := e.get("/v1/project-days/" + ttID(pd)); !reflect.DeepEqual(got, pd) {
			t.Errorf("GET project day: %v, want %v", got, pd)
		}
		q := fmt.Sprintf("/v1/project-days?project=%v&day=%s&validationStatus=APPROVED", e.p1, day)
		if days := e.list(e.admin, q); len(days) != 1 || days[0]["id"] != pd["id"] {
			t.Errorf("GET %s: %v", q, days)
		}
		if days := e.list(e.admin, fmt.Sprintf("/v1/project-days?project=%v", e.p2)); len(days) != 0 {
			t.Errorf("project days of p2: %v", days)
		}
		// WORK entries of the pair are APPROVED; others keep their state.
		for _, rec := range []map[string]any{e1, e2} {
			if got := status(p(rec)); got != "APPROVED" {
				t.Errorf("entry %s on the approved day: %v", ttID(rec), got)
			}
		}
		for _, rec := range []map[string]any{e3, e4} {
			if got := status(p(rec)); got != "NOTAPPROVED" {
				t.Errorf("entry %s of another pair: %v", ttID(rec), got)
			}
		}
		for _, rec := range []map[string]any{w1, b1} {
			if got := status(p(rec)); got != nil {
				t.Errorf("%s entry got validationStatus %v", rec["trackingType"], got)
			}
		}
		approved := e.entries(map[string]any{"validationStatus": "APPROVED"})
		if len(approved) != 2 || ttID(approved[0]) != ttID(e1) || ttID(approved[1]) != ttID(e2) {
			t.Errorf("APPROVED entries: %v", approved)
		}

		// The approved pair is closed to WORK writes: 403 day_approved, nothing written.
		pairWhere := map[string]any{"project": e.p1, "day": day, "trackingType": "WORK"}
		before := len(e.entries(map[string]any{}))
		for _, tok := range []string{e.admin, e.member} {
			st, body = e.do(tok, http.MethodPost, "/v1/time-entries", work(e.p1, e.t1, day, 60))
			ttRefused(t, "create WORK on the approved day", st, body, "day_approved")
		}
		st, body = e.do(e.admin, http.MethodPost, "/v1/time-entries", map[string]any{"project": e.p1, "task": e.t2, "day": day, "duration": 60, "sorting": 1, "user": e.memberID})
		ttRefused(t, "create WORK for the member on the approved day", st, body, "day_approved")
		if n := len(e.entries(map[string]any{})); n != before {
			t.Errorf("refused creates stored entries: %d → %d", before, n)
		}
		if n := len(e.entries(pairWhere)); n != 2 {
			t.Errorf("WORK entries on the approved pair: %d, want 2", n)
		}
		refusedChanges := []struct {
			name  string
			token string
			path  string
			body  map[string]any
		}{
			{"change duration", e.admin, p(e1), map[string]any{"duration": 10}},
			{"member changes their approved entry", e.member, p(e2), map[string]any{"duration": 10}},
			{"move out to another day", e.admin, p(e1), map[string]any{"day": day2}},
			{"move out to another project", e.admin, p(e1), map[string]any{"project": e.p2, "task": e.t2}},
			{"change trackingType away", e.admin, p(e1), map[string]any{"trackingType": "WORKTIME", "project": nil, "task": nil, "duration": nil, "sorting": nil,
				"startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T09:00:00.000Z"}},
			{"move in from another day", e.admin, p(e4), map[string]any{"day": day}},
			{"move in from another project", e.admin, p(e3), map[string]any{"project": e.p1, "task": e.t1}},
			{"turn a WORKTIME entry into WORK there", e.admin, p(w1), map[string]any{"trackingType": "WORK", "project": e.p1, "task": e.t1,
				"startTime": nil, "endTime": nil, "duration": 60, "sorting": 1}},
			{"turn a BREAK entry into WORK there", e.admin, p(b1), map[string]any{"trackingType": "WORK", "project": e.p1, "task": e.t1}},
		}
		snapshot := e.list(e.admin, "/v1/time-entries")
		for _, c := range refusedChanges {
			for _, m := range []string{http.MethodPatch, http.MethodPut} {
				st, body := e.do(c.token, m, c.path, c.body)
				ttRefused(t, m+" "+c.name, st, body, "day_approved")
			}
		}
		for _, tok := range []string{e.admin, e.member} {
			path := p(e1)
			if tok == e.member {
				path = p(e2)
			}
			st, body := e.do(tok, http.MethodDelete, path, nil)
			ttRefused(t, "delete an approved entry", st, body, "day_approved")
		}
		if after := e.list(e.admin, "/v1/time-entries"); !reflect.DeepEqual(after, snapshot) {
			t.Errorf("refused changes wrote something:\nbefore %v\nafter  %v", snapshot, after)
		}

		// WORKTIME and BREAK entries on that day stay free.
		st, body = e.do(e.admin, http.MethodPatch, p(w1), map[string]any{"endTime": "2026-04-06T17:00:00.000Z"})
		if st != 200 || body["endTime"] != "2026-04-06T17:00:00.000Z" || body["validationStatus"] != nil {
			t.Errorf("change WORKTIME on the approved day: %d %v", st, body)
		}
		w2 := e.create(e.member, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": day, "startTime": "2026-04-06T08:00:00.000Z", "endTime": "2026-04-06T12:00:00.000Z"})
		b2 := e.create(e.member, "time-entries", map[string]any{"trackingType": "BREAK", "day": day, "duration": 300, "sorting": 2})
		if st, body := e.do(e.admin, http.MethodPatch, p(b1), map[string]any{"duration": 1200}); st != 200 || body["duration"] != float64(1200) {
			t.Errorf("change BREAK on the approved day: %d %v", st, body)
		}
		for _, rec := range []map[string]any{w2, b2} {
			if st, body := e.do(e.member, http.MethodDelete, p(rec), nil); st != 200 {
				t.Errorf("delete %s on the approved day: %d %v", rec["trackingType"], st, body)
			}
		}
		// Another project on the same day, and the same project on another day, are free.
		e5 := e.create(e.member, "time-entries", work(e.p2, e.t2, day, 120))
		if e5["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("entry of p2 on the day: %v", e5)
		}
		if st, body := e.do(e.admin, http.MethodPatch, p(e3), map[string]any{"duration": 700}); st != 200 || body["duration"] != float64(700) {
			t.Errorf("change p2's entry on the day: %d %v", st, body)
		}
		if st, body := e.do(e.admin, http.MethodPatch, p(e4), map[string]any{"duration": 70}); st != 200 {
			t.Errorf("change p1's entry on another day: %d %v", st, body)
		}
		if st, body := e.do(e.member, http.MethodDelete, p(e5), nil); st != 200 {
			t.Errorf("delete p2's entry on the day: %d %v", st, body)
		}

		// Re-approving is idempotent; duplicates collapse; the answer keeps the request's order.
		res = e.approve("approve", ttItem(e.p1, day))
		if len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "APPROVED" || res[0]["createdAt"] != pd["createdAt"] {
			t.Errorf("re-approve: %v, want the same record %v", res, pd)
		}
		res = e.approve("approve", ttItem(e.p2, day3), ttItem(e.p2, day3), ttItem(e.p1, day), ttItem(e.p2, day3))
		if len(res) != 2 || res[0]["project"] != e.p2 || res[0]["day"] != day3 || res[0]["validationStatus"] != "APPROVED" ||
			res[1]["id"] != pd["id"] {
			t.Errorf("approve with duplicates: %v", res)
		}
		if days := e.list(e.admin, "/v1/project-days"); len(days) != 2 {
			t.Errorf("project days after the duplicates: %v", days)
		}
		// A day without entries can be approved too; it is closed all the same.
		st, body = e.do(e.admin, http.MethodPost, "/v1/time-entries", work(e.p2, e.t2, day3, 60))
		ttRefused(t, "create WORK on an approved empty day", st, body, "day_approved")

		// Unapprove: the record stays, NOTAPPROVED; the entries are NOTAPPROVED and writable again.
		res = e.approve("unapprove", ttItem(e.p1, day))
		if len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "NOTAPPROVED" || res[0]["createdAt"] != pd["createdAt"] ||
			!ttIsTimestamp(res[0]["updatedAt"]) || res[0]["updatedAt"].(string) < pd["updatedAt"].(string) {
			t.Errorf("unapprove: %v (approved was %v)", res, pd)
		}
		if got := e.get("/v1/project-days/" + ttID(pd)); got["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("project day after unapprove: %v", got)
		}
		for _, rec := range []map[string]any{e1, e2} {
			if got := status(p(rec)); got != "NOTAPPROVED" {
				t.Errorf("entry %s after unapprove: %v", ttID(rec), got)
			}
		}
		if n := len(e.entries(map[string]any{"validationStatus": "APPROVED"})); n != 0 {
			t.Errorf("%d APPROVED entries after unapprove", n)
		}
		if st, body := e.do(e.member, http.MethodPatch, p(e2), map[string]any{"duration": 1700}); st != 200 || body["duration"] != float64(1700) || body["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("member changes their entry after unapprove: %d %v", st, body)
		}
		e6 := e.create(e.member, "time-entries", work(e.p1, e.t1, day, 60))
		if e6["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("new entry after unapprove: %v", e6)
		}
		if st, body := e.do(e.admin, http.MethodPatch, p(e4), map[string]any{"day": day}); st != 200 || body["day"] != day {
			t.Errorf("move an entry into the unapproved day: %d %v", st, body)
		}
		if st, body := e.do(e.admin, http.MethodDelete, p(e1), nil); st != 200 {
			t.Errorf("delete after unapprove: %d %v", st, body)
		}
		// Unapproving twice is idempotent as well.
		if res := e.approve("unapprove", ttItem(e.p1, day)); len(res) != 1 || res[0]["id"] != pd["id"] || res[0]["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("second unapprove: %v", res)
		}
		// Approving again closes the pair again and catches the entries written meanwhile.
		e.approve("approve", ttItem(e.p1, day))
		for _, rec := range []map[string]any{e2, e4, e6} {
			if got := status(p(rec)); got != "APPROVED" {
				t.Errorf("entry %s after the second approval: %v", ttID(rec), got)
			}
		}
		if n := len(e.entries(pairWhere)); n != 3 {
			t.Errorf("WORK entries on the pair: %d, want 3", n)
		}
		// Another tenant sees none of it.
		other := e.srv.CreateTenant(t, "ttother")
		tok := login(t, e.srv, other).AccessToken
		st2, raw, err := ttSend(ttHTTP, e.srv.URL, other.Slug, tok, http.MethodGet, "/v1/project-days", nil)
		if err != nil || st2 != 200 || len(ttArr(t, raw)) != 0 {
			t.Errorf("other tenant's project days: %d %s %v", st2, raw, err)
		}
		st2, raw, err = ttSend(ttHTTP, e.srv.URL, other.Slug, tok, http.MethodGet, "/v1/project-days/"+ttID(pd), nil)
		if err != nil || st2 != 404 {
			t.Errorf("other tenant GETs the project day: %d %s %v", st2, raw, err)
		}
		// ProjectDays are read-only.
		for _, m := range []string{http.MethodPost, http.MethodPatch, http.MethodDelete} {
			path := "/v1/project-days"
			if m != http.MethodPost {
				path += "/" + ttID(pd)
			}
			if st, _ := e.raw(e.admin, m, path, map[string]any{"validationStatus": "NOTAPPROVED"}); st != 405 {
				t.Errorf("%s %s: %d, want 405", m, path, st)
			}
		}
	})
}

func TestTTBulkApproveValidation(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		foreign := e.otherTenantProject()
		const day, day2 = "2026-04-13", "2026-04-14"
		e.create(e.admin, "time-entries", map[string]any{"project": e.p1, "task": e.t1, "day": day, "duration": 60, "sorting": 1})
		e.create(e.member, "time-entries", map[string]any{"project": e.p2, "task": e.t2, "day": day, "duration": 60, "sorting": 1})
		e.create(e.admin, "time-entries", map[string]any{"project": e.p2, "task": e.t2, "day": day2, "duration": 60, "sorting": 1})
		e.approve("approve", ttItem(e.p2, day2))
		state := func() string {
			_, d := e.raw(e.admin, http.MethodGet, "/v1/project-days", nil)
			_, te := e.raw(e.admin, http.MethodGet, "/v1/time-entries", nil)
			return string(d) + "\n" + string(te)
		}
		before := state()
		good := ttItem(e.p1, day)
		many := make([]any, 1001)
		for i := range many {
			many[i] = ttItem(e.p1, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i).Format(time.DateOnly))
		}
		cases := []struct {
			name   string
			body   any
			fields []string
		}{
			{"unknown action", map[string]any{"action": "close", "items": []any{good}}, []string{"action"}},
			{"upper-case action", map[string]any{"action": "APPROVE", "items": []any{good}}, []string{"action"}},
			{"action missing", map[string]any{"items": []any{good}}, []string{"action"}},
			{"items missing", map[string]any{"action": "approve"}, []string{"items"}},
			{"items empty", map[string]any{"action": "approve", "items": []any{}}, []string{"items"}},
			{"items not an array", map[string]any{"action": "approve", "items": good}, []string{"items"}},
			{"too many items", map[string]any{"action": "approve", "items": many}, []string{"items"}},
			{"item not an object", map[string]any{"action": "approve", "items": []any{"p1"}}, []string{"items[0]"}},
			{"day not a date", map[string]any{"action": "approve", "items": []any{ttItem(e.p1, "2026-02-30")}}, []string{"items[0].day"}},
			{"day in another format", map[string]any{"action": "approve", "items": []any{ttItem(e.p1, "13.04.2026")}}, []string{"items[0].day"}},
			{"day missing", map[string]any{"action": "approve", "items": []any{map[string]any{"project": e.p1}}}, []string{"items[0].day"}},
			{"day a number", map[string]any{"action": "approve", "items": []any{map[string]any{"project": e.p1, "day": 20260413}}}, []string{"items[0].day"}},
			{"project missing", map[string]any{"action": "approve", "items": []any{map[string]any{"day": day}}}, []string{"items[0].project"}},
			{"project a string", map[string]any{"action": "approve", "items": []any{map[string]any{"project": fmt.Sprint(e.p1), "day": day}}}, []string{"items[0].project"}},
			{"project zero", map[string]any{"action": "approve", "items": []any{ttItem(0, day)}}, []string{"items[0].project"}},
			{"project fractional", map[string]any{"action": "approve", "items": []any{ttItem(e.p1+0.5, day)}}, []string{"items[0].project"}},
			{"unknown project", map[string]any{"action": "approve", "items": []any{ttItem(999999, day)}}, []string{"items[0].project"}},
			{"another tenant's project", map[string]any{"action": "approve", "items": []any{ttItem(foreign, day)}}, []string{"items[0].project"}},
			{"a task as project", map[string]any{"action": "approve", "items": []any{ttItem(e.t1, day)}}, []string{"items[0].project"}},
			{"unknown key", map[string]any{"action": "approve", "items": []any{good}, "force": true}, []string{"force"}},
			{"one unknown project among good ones", map[string]any{"action": "approve", "items": []any{good, ttItem(e.p2, day), ttItem(999999, day)}}, []string{"items[2].project"}},
			{"one bad day among good ones", map[string]any{"action": "approve", "items": []any{good, ttItem(e.p1, "x"), ttItem(e.p2, day)}}, []string{"items[1].day"}},
			{"one foreign project among good ones", map[string]any{"action": "approve", "items": []any{ttItem(foreign, day), good}}, []string{"items[0].project"}},
			{"unapprove with a bad item", map[string]any{"action": "unapprove", "items": []any{ttItem(e.p2, day2), ttItem(999999, day2)}}, []string{"items[1].project"}},
			{"several problems", map[string]any{"action": "x", "items": []any{map[string]any{}, ttItem(e.p1, day)}}, []string{"action", "items[0].day", "items[0].project"}},
		}
		for _, c := range cases {
			st, body := e.do(e.admin, http.MethodPost, "/v1/approval/bulk-approve", c.body)
			ttInvalid(t, c.name, st, body, c.fields...)
			if after := state(); after != before {
				t.Fatalf("%s changed the data:\nbefore %s\nafter  %s", c.name, before, after)
			}
		}
		for _, raw := range []string{`{"action":"approve"`, `[{"project":1,"day":"2026-04-13"}]`, ``} {
			st, body := e.do(e.admin, http.MethodPost, "/v1/approval/bulk-approve", raw)
			if st != 400 || body["code"] != "invalid_json" {
				t.Errorf("body %q: %d %v, want 400 invalid_json", raw, st, body)
			}
		}
		// Members are refused whatever they send.
		for _, action := range []string{"approve", "unapprove"} {
			st, body := e.do(e.member, http.MethodPost, "/v1/approval/bulk-approve", map[string]any{"action": action, "items": []any{good, ttItem(e.p2, day2)}})
			ttRefused(t, "member "+action, st, body, "forbidden")
		}
		if after := state(); after != before {
			t.Fatalf("refused requests changed the data:\nbefore %s\nafter  %s", before, after)
		}
		// Without a token: 401. Other methods: 405.
		if st, _, err := ttSend(ttHTTP, e.srv.URL, e.tn.Slug, "", http.MethodPost, "/v1/approval/bulk-approve", map[string]any{"action": "approve", "items": []any{good}}); err != nil || st != 401 {
			t.Errorf("bulk approve without a token: %d %v", st, err)
		}
		if st, _ := e.raw(e.admin, http.MethodGet, "/v1/approval/bulk-approve", nil); st != 405 {
			t.Errorf("GET bulk-approve: %d, want 405", st)
		}
		// The good items alone go through, all of them.
		res := e.approve("approve", good, ttItem(e.p2, day))
		if len(res) != 2 || res[0]["project"] != e.p1 || res[1]["project"] != e.p2 {
			t.Errorf("good items: %v", res)
		}
		if n := len(e.entries(map[string]any{"day": day, "validationStatus": "APPROVED"})); n != 2 {
			t.Errorf("APPROVED entries on %s: %d, want 2", day, n)
		}
	})
}

// --- 5. Time totals --------------------------------------------------------------

type ttTotalsAnswer struct {
	From    string             `json:"from"`
	To      string             `json:"to"`
	GroupBy string             `json:"groupBy"`
	Groups  []map[string]any   `json:"groups"`
	Totals  map[string]float64 `json:"totals"`
}

func TestTTTimeTotals(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		const d0, d1, d2, d3, d4 = "2026-05-03", "2026-05-04", "2026-05-05", "2026-05-06", "2026-05-07"
		ts := func(day, clock string) string { return day + "T" + clock + ".000Z" }
		work := func(project, task float64, day string, kv ...any) map[string]any {
			out := map[string]any{"project": project, "task": task, "day": day}
			for i := 0; i < len(kv); i += 2 {
				out[kv[i].(string)] = kv[i+1]
			}
			return out
		}
		// DURATION entries.
		e.create(e.admin, "time-entries", work(e.p1, e.t1, d1, "duration", 3600, "sorting", 1))
		e.create(e.member, "time-entries", work(e.p1, e.t1, d1, "duration", 1800, "sorting", 2))
		e.create(e.admin, "time-entries", work(e.p2, e.t2, d2, "duration", 600, "sorting", 1))
		e.create(e.admin, "time-entries", map[string]any{"trackingType": "BREAK", "day": d1, "duration": 900, "sorting": 2})
		e.create(e.admin, "time-entries", work(e.p1, e.t1, d0, "duration", 99999, "sorting", 1)) // outside
		e.create(e.admin, "time-entries", work(e.p2, e.t2, d4, "duration", 77777, "sorting", 1)) // outside
		// START_TIME_END_TIME entries, with worktime.
		e.settings("START_TIME_END_TIME", true)
		e.create(e.member, "time-entries", work(e.p2, e.t2, d3, "startTime", ts(d3, "10:00:00"), "endTime", ts(d3, "12:15:00")))                                  // 8100
		e.create(e.member, "time-entries", work(e.p1, e.t1, d3, "startTime", ts(d3, "13:00:00")))                                                                 // running: 0
		e.create(e.admin, "time-entries", work(e.p1, e.t1, d3, "startTime", ts(d3, "07:00:00"), "endTime", ts(d3, "07:00:30")))                                   // 30
		e.create(e.admin, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": d2, "startTime": ts(d2, "08:00:00"), "endTime": ts(d2, "16:00:00")})  // 28800
		e.create(e.member, "time-entries", map[string]any{"trackingType": "BREAK", "day": d3, "startTime": ts(d3, "12:15:00"), "endTime": ts(d3, "12:45:00")})    // 1800
		e.create(e.member, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": d4, "startTime": ts(d4, "08:00:00"), "endTime": ts(d4, "09:00:00")}) // outside
		e.create(e.member, "time-entries", map[string]any{"trackingType": "WORKTIME", "day": d0, "startTime": ts(d0, "08:00:00"), "endTime": ts(d0, "09:00:00")}) // outside
		// The settings in force do not change what stored entries count.
		e.settings("DURATION", false)

		type secs = map[string]float64
		get := func(from, to, groupBy string) ttTotalsAnswer {
			t.Helper()
			path := "/v1/analytics/time-totals?from=" + from + "&to=" + to + "&groupBy=" + groupBy
			st, raw := e.raw(e.member, http.MethodGet, path, nil)
			if st != 200 {
				t.Fatalf("GET %s: %d %s", path, st, raw)
			}
			var ans ttTotalsAnswer
			if err := json.Unmarshal(raw, &ans); err != nil || ans.Groups == nil {
				t.Fatalf("GET %s: %s (%v)", path, raw, err)
			}
			if ans.From != from || ans.To != to || ans.GroupBy != groupBy {
				t.Errorf("GET %s: echoes %q %q %q", path, ans.From, ans.To, ans.GroupBy)
			}
			return ans
		}
		// byKey turns the groups into key → seconds, checking each group's shape.
		byKey := func(ans ttTotalsAnswer) map[string]secs {
			t.Helper()
			out := map[string]secs{}
			for _, g := range ans.Groups {
				key, ok := g[ans.GroupBy]
				s, _ := g["seconds"].(map[string]any)
				if !ok || s == nil || len(g) != 2 {
					t.Errorf("group %v: want {%q: KEY, \"seconds\": {...}}", g, ans.GroupBy)
					continue
				}
				m := secs{}
				for k, v := range s {
					m[k], _ = v.(float64)
				}
				k := fmt.Sprint(key)
				if _, dup := out[k]; dup {
					t.Errorf("group %v appears twice", k)
				}
				out[k] = m
			}
			return out
		}
		k := func(id float64) string { return fmt.Sprint(id) }
		total := secs{"WORK": 3600 + 1800 + 600 + 8100 + 0 + 30, "WORKTIME": 28800, "BREAK": 900 + 1800}
		wantBy := map[string]map[string]secs{
			"user": {
				k(e.adminID):  {"WORK": 3600 + 600 + 30, "WORKTIME": 28800, "BREAK": 900},
				k(e.memberID): {"WORK": 1800 + 8100 + 0, "WORKTIME": 0, "BREAK": 1800},
			},
			"project": {
				k(e.p1): {"WORK": 3600 + 1800 + 0 + 30, "WORKTIME": 0, "BREAK": 0},
				k(e.p2): {"WORK": 600 + 8100, "WORKTIME": 0, "BREAK": 0},
				"<nil>": {"WORK": 0, "WORKTIME": 28800, "BREAK": 2700},
			},
			"day": {
				d1: {"WORK": 5400, "WORKTIME": 0, "BREAK": 900},
				d2: {"WORK": 600, "WORKTIME": 28800, "BREAK": 0},
				d3: {"WORK": 8130, "WORKTIME": 0, "BREAK": 1800},
			},
		}
		for _, groupBy := range []string{"user", "project", "day"} {
			ans := get(d1, d3, groupBy)
			if got := byKey(ans); !reflect.DeepEqual(got, wantBy[groupBy]) {
				t.Errorf("groupBy=%s: %v, want %v", groupBy, got, wantBy[groupBy])
			}
			if !reflect.DeepEqual(secs(ans.Totals), total) {
				t.Errorf("groupBy=%s totals: %v, want %v", groupBy, ans.Totals, total)
			}
			if groupBy == "day" {
				var days []string
				for _, g := range ans.Groups {
					days = append(days, fmt.Sprint(g["day"]))
				}
				if !slices.Equal(days, []string{d1, d2, d3}) {
					t.Errorf("day groups in order %v", days)
				}
			}
		}
		// Inclusive bounds: one day, and the wider range that takes in d0 and d4.
		one := get(d1, d1, "day")
		if got := byKey(one); !reflect.DeepEqual(got, map[string]secs{d1: {"WORK": 5400, "WORKTIME": 0, "BREAK": 900}}) ||
			!reflect.DeepEqual(secs(one.Totals), secs{"WORK": 5400, "WORKTIME": 0, "BREAK": 900}) {
			t.Errorf("from=to=%s: %v totals %v", d1, got, one.Totals)
		}
		last := get(d3, d3, "project")
		if got := byKey(last); !reflect.DeepEqual(got, map[string]secs{
			k(e.p1): {"WORK": 30, "WORKTIME": 0, "BREAK": 0}, k(e.p2): {"WORK": 8100, "WORKTIME": 0, "BREAK": 0}, "<nil>": {"WORK": 0, "WORKTIME": 0, "BREAK": 1800}}) {
			t.Errorf("from=to=%s by project: %v", d3, got)
		}
		wide := get(d0, d4, "user")
		if !reflect.DeepEqual(secs(wide.Totals), secs{"WORK": total["WORK"] + 99999 + 77777, "WORKTIME": 28800 + 3600 + 3600, "BREAK": 2700}) {
			t.Errorf("from %s to %s totals: %v", d0, d4, wide.Totals)
		}
		if got := byKey(wide); got[k(e.adminID)]["WORK"] != 3600+600+30+99999+77777 || got[k(e.memberID)]["WORKTIME"] != 7200 {
			t.Errorf("from %s to %s by user: %v", d0, d4, got)
		}
		// A range without entries: no groups, zero totals.
		empty := get("2027-01-01", "2027-12-31", "project")
		if len(empty.Groups) != 0 || !reflect.DeepEqual(secs(empty.Totals), secs{"WORK": 0, "WORKTIME": 0, "BREAK": 0}) {
			t.Errorf("empty range: %+v", empty)
		}
		// Approval does not change the totals.
		e.approve("approve", ttItem(e.p1, d1))
		if got := get(d1, d3, "project"); !reflect.DeepEqual(byKey(got), wantBy["project"]) {
			t.Errorf("after approval: %v", byKey(got))
		}

		// Bad parameters: 400 naming them.
		bad := []struct {
			query  string
			fields []string
		}{
			{"to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&groupBy=user", []string{"to"}},
			{"from=" + d1 + "&to=" + d3, []string{"groupBy"}},
			{"", []string{"from", "to", "groupBy"}},
			{"from=2026-5-4&to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&to=2026-05-32&groupBy=user", []string{"to"}},
			{"from=" + d1 + "T00:00:00.000Z&to=" + d3 + "&groupBy=user", []string{"from"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=team", []string{"groupBy"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=USER", []string{"groupBy"}},
			{"from=" + d1 + "&to=" + d3 + "&groupBy=trackingType", []string{"groupBy"}},
			{"from=" + d3 + "&to=" + d1 + "&groupBy=day", []string{"to"}},
			{"from=2020-01-01&to=2030-01-01&groupBy=day", []string{"to"}},
		}
		for _, c := range bad {
			st, body := e.do(e.admin, http.MethodGet, "/v1/analytics/time-totals?"+c.query, nil)
			ttInvalid(t, "time-totals?"+c.query, st, body, c.fields...)
		}
		if st, _, err := ttSend(ttHTTP, e.srv.URL, e.tn.Slug, "", http.MethodGet, "/v1/analytics/time-totals?from="+d1+"&to="+d3+"&groupBy=day", nil); err != nil || st != 401 {
			t.Errorf("time totals without a token: %d %v", st, err)
		}
		// Another tenant's totals are its own.
		other := e.srv.CreateTenant(t, "ttother")
		tok := login(t, e.srv, other).AccessToken
		st, raw, err := ttSend(ttHTTP, e.srv.URL, other.Slug, tok, http.MethodGet, "/v1/analytics/time-totals?from="+d0+"&to="+d4+"&groupBy=user", nil)
		var ans ttTotalsAnswer
		if err != nil || st != 200 || json.Unmarshal(raw, &ans) != nil || len(ans.Groups) != 0 || ans.Totals["WORK"] != 0 {
			t.Errorf("other tenant's totals: %d %s %v", st, raw, err)
		}
	})
}

// --- 6. Approval against concurrent writers --------------------------------------

// TestApprovalRace: writers POST WORK entries to one (project, day) while
// an admin approves it. Every write either committed before the approval
// (and is APPROVED now) or was refused with day_approved; none slips past.
func TestApprovalRace(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
		defer client.CloseIdleConnections()
		const writers, rounds, maxPerWriter = 16, 5, 400
		for round := 0; round < rounds; round++ {
			day := fmt.Sprintf("2026-06-%02d", round+1)
			project, task := e.p1, e.t1
			if round%2 == 1 {
				project, task = e.p2, e.t2
			}
			var (
				mu        sync.Mutex
				created   = map[string]bool{}
				statuses  = map[int]int{}
				failures  []string
				approveSt int
				approveRs []byte
				wg        sync.WaitGroup
			)
			fail := func(format string, args ...any) {
				mu.Lock()
				failures = append(failures, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			start := make(chan struct{})
			for g := 0; g < writers; g++ {
				token := e.admin
				if g%2 == 1 {
					token = e.member
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					body := map[string]any{"project": project, "task": task, "day": day, "duration": 60, "sorting": g}
					for i := 0; i < maxPerWriter; i++ {
						st, raw, err := ttSend(client, e.srv.URL, e.tn.Slug, token, http.MethodPost, "/v1/time-entries", body)
						if err != nil {
							fail("writer %d: %v", g, err)
							return
						}
						mu.Lock()
						statuses[st]++
						mu.Unlock()
						var rec map[string]any
						_ = json.Unmarshal(raw, &rec)
						switch {
						case st == 201:
							if rec["validationStatus"] != "NOTAPPROVED" {
								fail("writer %d: created %s", g, raw)
							}
							mu.Lock()
							created[ttID(rec)] = true
							mu.Unlock()
						case st == 403 && rec["code"] == "day_approved":
							return // approved: every later write is refused too
						default:
							fail("writer %d: %d %s", g, st, raw)
							return
						}
					}
					fail("writer %d: %d writes, never refused", g, maxPerWriter)
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				time.Sleep(time.Duration(1+rand.IntN(25)) * time.Millisecond)
				st, raw, err := ttSend(client, e.srv.URL, e.tn.Slug, e.admin, http.MethodPost, "/v1/approval/bulk-approve",
					map[string]any{"action": "approve", "items": []any{ttItem(project, day)}})
				if err != nil {
					fail("approver: %v", err)
				}
				mu.Lock()
				approveSt, approveRs = st, raw
				mu.Unlock()
			}()
			close(start)
			wg.Wait()

			for _, f := range failures {
				t.Error(f)
			}
			for st, n := range statuses {
				if st >= 500 || (st != 201 && st != 403) {
					t.Errorf("round %d: %d answers with status %d", round, n, st)
				}
			}
			if approveSt != 200 {
				t.Fatalf("round %d: approve %d %s", round, approveSt, approveRs)
			}
			res := ttArr(t, approveRs)
			if len(res) != 1 || res[0]["validationStatus"] != "APPROVED" || res[0]["project"] != project || res[0]["day"] != day {
				t.Errorf("round %d: approve answered %s", round, approveRs)
			}
			stored := e.entries(map[string]any{"project": project, "day": day, "trackingType": "WORK"})
			if len(stored) != statuses[201] || len(stored) != len(created) {
				t.Errorf("round %d: %d entries stored, %d answered 201 (%d distinct ids)", round, len(stored), statuses[201], len(created))
			}
			for _, rec := range stored {
				if !created[ttID(rec)] {
					t.Errorf("round %d: stored entry %s was never answered 201", round, ttID(rec))
				}
				if rec["validationStatus"] != "APPROVED" {
					t.Errorf("round %d: entry %s slipped past the approval: %v", round, ttID(rec), rec)
				}
			}
			if statuses[403] < writers {
				t.Errorf("round %d: %d refusals, want one per writer (%d)", round, statuses[403], writers)
			}
			// The pair stays closed.
			st, body := e.do(e.member, http.MethodPost, "/v1/time-entries", map[string]any{"project": project, "task": task, "day": day, "duration": 60, "sorting": 1})
			ttRefused(t, "create after the race", st, body, "day_approved")
			t.Logf("%s round %d: %d created, %d refused", b.Name, round, statuses[201], statuses[403])
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
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := ttSetup(t, b)
		client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64, MaxConnsPerHost: 64}}
		defer client.CloseIdleConnections()
		const editors, movers, rounds, maxPerWriter = 12, 4, 3, 400
		for round := 0; round < rounds; round++ {
			day := fmt.Sprintf("2026-07-%02d", 2*round+1)
			other := fmt.Sprintf("2026-07-%02d", 2*round+2)
			type final struct {
				day      string
				duration float64
			}
			ids := make([]string, editors+movers)
			last := make([]final, editors+movers)
			for i := range ids {
				d := day
				if i >= editors {
					d = other
				}
				ids[i] = ttID(e.create(e.admin, "time-entries", map[string]any{"project": e.p1, "task": e.t1, "day": d, "duration": 1, "sorting": i}))
				last[i] = final{d, 1}
			}
			var (
				mu        sync.Mutex
				statuses  = map[int]int{}
				failures  []string
				approveSt int
				approveRs []byte
				took      time.Duration
				wg        sync.WaitGroup
			)
			fail := func(format string, args ...any) {
				mu.Lock()
				failures = append(failures, fmt.Sprintf(format, args...))
				mu.Unlock()
			}
			start := make(chan struct{})
			for g := range ids {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					for i := 0; i < maxPerWriter; i++ {
						next := final{last[g].day, float64(2 + i)}
						if g >= editors { // movers go back and forth between the days
							next.day = day
							if last[g].day == day {
								next.day = other
							}
						}
						st, raw, err := ttSend(client, e.srv.URL, e.tn.Slug, e.admin, http.MethodPatch, "/v1/time-entries/"+ids[g],
							map[string]any{"day": next.day, "duration": next.duration})
						if err != nil {
							fail("writer %d: %v", g, err)
							return
						}
						mu.Lock()
						statuses[st]++
						mu.Unlock()
						var rec map[string]any
						_ = json.Unmarshal(raw, &rec)
						switch {
						case st == 200:
							last[g] = next
						case st == 403 && rec["code"] == "day_approved":
							return
						default:
							fail("writer %d: %d %s", g, st, raw)
							return
						}
					}
					fail("writer %d: %d changes, never refused", g, maxPerWriter)
				}()
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				time.Sleep(time.Duration(1+rand.IntN(25)) * time.Millisecond)
				t0 := time.Now()
				st, raw, err := ttSend(client, e.srv.URL, e.tn.Slug, e.admin, http.MethodPost, "/v1/approval/bulk-approve",
					map[string]any{"action": "approve", "items": []any{ttItem(e.p1, day)}})
				if err != nil {
					fail("approver: %v", err)
				}
				mu.Lock()
				approveSt, approveRs, took = st, raw, time.Since(t0)
				mu.Unlock()
			}()
			close(start)
			wg.Wait()

			for _, f := range failures {
				t.Error(f)
			}
			for st, n := range statuses {
				if st != 200 && st != 403 {
					t.Errorf("round %d: %d answers with status %d", round, n, st)
				}
			}
			if approveSt != 200 {
				t.Fatalf("round %d: approve %d %s after %v", round, approveSt, approveRs, took)
			}
			if took > 5*time.Second {
				t.Errorf("round %d: the approval took %v", round, took)
			}
			for g, id := range ids {
				rec := e.get("/v1/time-entries/" + id)
				want := "NOTAPPROVED"
				if last[g].day == day {
					want = "APPROVED"
				}
				if rec["day"] != last[g].day || rec["duration"] != last[g].duration || rec["validationStatus"] != want {
					t.Errorf("round %d: entry %s is %v, want day %s, duration %v (its last accepted change), %s",
						round, id, rec, last[g].day, last[g].duration, want)
				}
			}
			if n := len(e.entries(map[string]any{"project": e.p1, "day": day, "validationStatus": "NOTAPPROVED"})); n != 0 {
				t.Errorf("round %d: %d NOTAPPROVED entries on the approved day", round, n)
			}
			t.Logf("%s round %d: %d changes accepted, %d refused; approval took %v", b.Name, round, statuses[200], statuses[403], took)
			if t.Failed() {
				return
			}
		}
	})
}
