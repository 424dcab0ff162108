package httpapi_test

// The audit log's write paths (docs/api.md "Audit log"): every write
// makes one entry per record it changed, and so do the writes the change
// feed does not show (account settings, API clients, webhooks), each
// with the request's actor, id and Change-Reason, its before and after
// as GET showed them; no secret or password is in any entry; a
// malformed Change-Reason writes nothing; and the tenant's chain
// verifies with a canonicaliser of the test's own.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
	"planwerk/internal/testenv/canonical"
)

// auditReq is a write whose entries a row checks.
type auditReq struct {
	c            *testenv.Client
	method, path string
	body         any    // as testenv.Client.Request takes it
	contentType  string // "" for JSON
	reason       *string
}

// auditCall is the answer to a write.
type auditCall struct {
	status    int
	body      []byte
	requestID string
}

func (c auditCall) object(t *testing.T) testenv.M {
	t.Helper()
	return testenv.Decode(t, c.body)
}

// auditWant is an entry a write must make: its before and after are what
// GET showed (nil for none); extra names changed attributes no document
// shows.
type auditWant struct {
	resource      string
	record        int64 // 0: record null
	op            string
	before, after any
	extra         []string
}

// auditRun reads a tenant's audit log for the rows: seen is the seq of
// the newest entry accounted for.
type auditRun struct {
	admin *testenv.Client
	seen  int64
}

func reasonOf(s string) *string { return &s }

func (r *auditRun) send(t *testing.T, q auditReq) auditCall {
	t.Helper()
	req := q.c.Request(t, q.method, q.path, q.body)
	if q.contentType != "" {
		req.Header.Set("Content-Type", q.contentType)
	}
	if q.reason != nil {
		req.Header["Change-Reason"] = []string{*q.reason}
	}
	status, h, raw := testenv.Do(t, req)
	call := auditCall{status: status, body: raw, requestID: h.Get("X-Request-Id")}
	if call.requestID == "" {
		t.Fatalf("%s %s: no X-Request-Id", q.method, q.path)
	}
	return call
}

// write sends a write that must answer want.
func (r *auditRun) write(t *testing.T, q auditReq, want int) auditCall {
	t.Helper()
	call := r.send(t, q)
	if call.status != want {
		t.Fatalf("%s %s: %d %s, want %d", q.method, q.path, call.status, call.body, want)
	}
	return call
}

// raw returns the tenant's entries after seq as the API shows them, all
// pages of them.
func (r *auditRun) raw(t *testing.T, after int64) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for {
		var page struct {
			Entries []json.RawMessage `json:"entries"`
			Next    string            `json:"next"`
		}
		status, _, raw := r.admin.Send(t, http.MethodGet, fmt.Sprintf("/v1/audit-log?after=%d&limit=50", after), nil)
		if status != http.StatusOK {
			t.Fatalf("GET /v1/audit-log: %d %s", status, raw)
		}
		testenv.DecodeInto(t, raw, &page)
		if len(page.Entries) == 0 {
			return out
		}
		out = append(out, page.Entries...)
		next, err := strconv.ParseInt(page.Next, 10, 64)
		if err != nil || next <= after {
			t.Fatalf("audit log after %d: next %q", after, page.Next)
		}
		after = next
	}
}

// entries returns the entries after r.seen, decoded.
func (r *auditRun) entries(t *testing.T) []testenv.M {
	t.Helper()
	var out []testenv.M
	for _, e := range r.raw(t, r.seen) {
		out = append(out, testenv.Decode(t, e))
	}
	return out
}

// sync accounts for the entries of a row's set-up, which other rows check.
func (r *auditRun) sync(t *testing.T) {
	t.Helper()
	if es := r.entries(t); len(es) > 0 {
		r.seen = testenv.Num(es[len(es)-1]["seq"])
	}
}

// none checks that nothing was written to the audit log since r.seen.
func (r *auditRun) none(t *testing.T) {
	t.Helper()
	if es := r.entries(t); len(es) > 0 {
		t.Errorf("%d entries written, want none: %v", len(es), es)
	}
}

// expect checks that the entries after r.seen are exactly wants (in any
// order), made by call of actor with reason (nil: none).
func (r *auditRun) expect(t *testing.T, call auditCall, actor testenv.M, reason any, wants ...auditWant) {
	t.Helper()
	es := r.entries(t)
	if len(es) > 0 {
		r.seen = testenv.Num(es[len(es)-1]["seq"])
	}
	if len(es) != len(wants) {
		t.Fatalf("%d entries, want %d: %v", len(es), len(wants), es)
	}
	used := make([]bool, len(es))
	for _, w := range wants {
		i := slices.IndexFunc(es, func(e testenv.M) bool {
			return e["resource"] == w.resource && e["op"] == w.op && recordOf(e) == w.record
		})
		if i < 0 || used[i] {
			t.Errorf("no entry %s %s %d among %v", w.op, w.resource, w.record, es)
			continue
		}
		used[i] = true
		e := es[i]
		what := fmt.Sprintf("entry %v (%s %s %d)", e["seq"], w.op, w.resource, w.record)
		if !reflect.DeepEqual(e["actor"], any(actor)) {
			t.Errorf("%s: actor %v, want %v", what, e["actor"], actor)
		}
		if e["requestId"] != call.requestID {
			t.Errorf("%s: requestId %v, want %s (X-Request-Id)", what, e["requestId"], call.requestID)
		}
		if !reflect.DeepEqual(e["reason"], reason) {
			t.Errorf("%s: reason %q, want %q", what, e["reason"], reason)
		}
		if got, want := changedOf(e), auditChanged(w.before, w.after, w.extra); !slices.Equal(got, want) {
			t.Errorf("%s: changed %q, want %q", what, got, want)
		}
		if !reflect.DeepEqual(e["before"], w.before) {
			t.Errorf("%s: before\n %v\nwant what GET showed\n %v", what, e["before"], w.before)
		}
		if !reflect.DeepEqual(e["after"], w.after) {
			t.Errorf("%s: after\n %v\nwant what GET showed\n %v", what, e["after"], w.after)
		}
		if at, _ := e["at"].(string); at == "" {
			t.Errorf("%s: no at", what)
		}
	}
}

// recordOf is an entry's record, 0 for null.
func recordOf(e testenv.M) int64 {
	if e["record"] == nil {
		return 0
	}
	return testenv.Num(e["record"])
}

func changedOf(e testenv.M) []string {
	list, _ := e["changed"].([]any)
	out := []string{}
	for _, v := range list {
		s, _ := v.(string)
		out = append(out, s)
	}
	return out
}

// auditChanged is what an entry's changed must be: the top-level names
// whose values differ between before and after (all of the one there
// is on a create or delete) and extra, sorted byte-wise.
func auditChanged(before, after any, extra []string) []string {
	b, _ := before.(testenv.M)
	a, _ := after.(testenv.M)
	out := slices.Clone(extra)
	for k, v := range a {
		if w, ok := b[k]; !ok || !reflect.DeepEqual(v, w) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return append([]string{}, slices.Compact(out)...)
}

// actorOf is the actor of a user's writes (client 0: not through an API
// client).
func actorOf(user, client int64) testenv.M {
	a := testenv.M{"user": float64(user), "apiClient": nil, "via": "api"}
	if client != 0 {
		a["apiClient"] = float64(client)
	}
	return a
}

// TestAuditWritePaths: each write path makes its entries, with the
// request's actor, id and reason and its record as GET showed it before
// and after; a malformed Change-Reason writes nothing; no secret or
// password is in the log; and the tenant's chain recomputes.
func TestAuditWritePaths(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.WebhookAllowPrivate = true })
		// A webhook's URL; it is subscribed to vacation budgets and
		// colors, which no row writes, so that no delivery changes what
		// GET shows of it.
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
		t.Cleanup(hook.Close)
		tn := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, tn)
		r := &auditRun{admin: admin}
		me := actorOf(tn.AdminID, 0)
		r.sync(t)

		// What the log must never hold: secrets, passwords (testenv's
		// members have "member-password").
		secrets := []string{tn.Password, "member-password"}
		var project, task, member int64

		// record makes an admin's write of one record and checks its one
		// entry: GET before (id 0: none, a create), the write, GET after
		// (unless deleted). It returns the record's id.
		record := func(t *testing.T, res string, id int64, q auditReq, status int, op string, reason any) int64 {
			t.Helper()
			var before any
			if id != 0 {
				before = admin.Get(t, res, id)
			}
			call := r.write(t, q, status)
			if id == 0 {
				id = testenv.ID(t, call.object(t))
			}
			var after any
			if op != "delete" {
				after = admin.Get(t, res, id)
			}
			r.expect(t, call, me, reason, auditWant{resource: res, record: id, op: op, before: before, after: after})
			return id
		}
		getSettings := func(t *testing.T) testenv.M {
			return admin.Object(t, http.MethodGet, "/v1/account/settings", nil, http.StatusOK)
		}
		get := func(t *testing.T, path string) testenv.M {
			return admin.Object(t, http.MethodGet, path, nil, http.StatusOK)
		}
		projectNames := func(t *testing.T) []string {
			var out []string
			for _, p := range admin.List(t, "/v1/projects") {
				s, _ := p["name"].(string)
				out = append(out, s)
			}
			return out
		}

		rows := []struct {
			name string
			run  func(t *testing.T)
		}{
			{"project create, with a reason", func(t *testing.T) {
				// Not ASCII, a "&" and a "+": percent-encoded, decoded.
				project = record(t, "projects", 0, auditReq{c: admin, method: http.MethodPost, path: "/v1/projects",
					body: testenv.M{"name": "Alpha", "budget": 12.5}, reason: reasonOf("Auftrag f%C3%BCr M%C3%BCller & S%C3%B6hne, 1+1")},
					http.StatusCreated, "create", "Auftrag für Müller & Söhne, 1+1")
			}},
			{"project update", func(t *testing.T) {
				record(t, "projects", project, auditReq{c: admin, method: http.MethodPatch, path: fmt.Sprintf("/v1/projects/%d", project),
					body: testenv.M{"name": "Beta", "budget": 0.000001}}, http.StatusOK, "update", nil)
			}},
			{"project delete", func(t *testing.T) {
				gone := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": "Gamma"}))
				r.sync(t)
				record(t, "projects", gone, auditReq{c: admin, method: http.MethodDelete, path: fmt.Sprintf("/v1/projects/%d", gone)},
					http.StatusOK, "delete", nil)
			}},
			{"time entry create, update, delete", func(t *testing.T) {
				task = testenv.ID(t, admin.Create(t, "tasks", testenv.M{"name": "T", "project": project}))
				r.sync(t)
				id := record(t, "time-entries", 0, auditReq{c: admin, method: http.MethodPost, path: "/v1/time-entries",
					body: testenv.M{"day": "2026-01-05", "trackingType": "WORK", "project": project, "task": task, "duration": 3600, "sorting": 1}},
					http.StatusCreated, "create", nil)
				path := fmt.Sprintf("/v1/time-entries/%d", id)
				record(t, "time-entries", id, auditReq{c: admin, method: http.MethodPatch, path: path, body: testenv.M{"duration": 5400},
					reason: reasonOf("Korrektur nach R%C3%BCckfrage")}, http.StatusOK, "update", "Korrektur nach Rückfrage")
				record(t, "time-entries", id, auditReq{c: admin, method: http.MethodDelete, path: path}, http.StatusOK, "delete", nil)
			}},
			{"users: create, update, password, delete", func(t *testing.T) {
				const first, second = "first-Passw0rd-of-u", "second-Passw0rd-of-u"
				secrets = append(secrets, first, second)
				id := record(t, "users", 0, auditReq{c: admin, method: http.MethodPost, path: "/v1/users",
					body: testenv.M{"email": "u@acme.test", "password": first, "isAdmin": false}}, http.StatusCreated, "create", nil)
				path := fmt.Sprintf("/v1/users/%d", id)
				record(t, "users", id, auditReq{c: admin, method: http.MethodPatch, path: path, body: testenv.M{"name": "Ute"}},
					http.StatusOK, "update", nil)
				before := admin.Get(t, "users", id)
				call := r.write(t, auditReq{c: admin, method: http.MethodPatch, path: path, body: testenv.M{"password": second}}, http.StatusOK)
				r.expect(t, call, me, nil, auditWant{resource: "users", record: id, op: "update", before: before,
					after: admin.Get(t, "users", id), extra: []string{"password"}})
				srv.Token(t, tn.Slug, "u@acme.test", second) // the change took
				record(t, "users", id, auditReq{c: admin, method: http.MethodDelete, path: path}, http.StatusOK, "delete", nil)
			}},
			{"account settings", func(t *testing.T) {
				before := getSettings(t)
				call := r.write(t, auditReq{c: admin, method: http.MethodPatch, path: "/v1/account/settings",
					body: testenv.M{"useWorktime": true}, reason: reasonOf("Arbeitszeit wird erfasst")}, http.StatusOK)
				after := getSettings(t)
				if after["useWorktime"] != true {
					t.Fatalf("settings after the write: %v", after)
				}
				r.expect(t, call, me, "Arbeitszeit wird erfasst", auditWant{resource: "settings", op: "update", before: before, after: after})
			}},
			{"approval: each WORK entry on behalf of the approving admin", func(t *testing.T) {
				m := admin.Member(t, "m@acme.test")
				member = m.UserID
				day := "2026-03-02"
				theirs := testenv.ID(t, m.Create(t, "time-entries", testenv.M{"day": day, "trackingType": "WORK", "project": project, "task": task, "duration": 600, "sorting": 1}))
				mine := testenv.ID(t, admin.Create(t, "time-entries", testenv.M{"day": day, "trackingType": "WORK", "project": project, "task": task, "duration": 900, "sorting": 2}))
				clock := testenv.ID(t, admin.Create(t, "time-entries", testenv.M{"day": day, "trackingType": "WORKTIME",
					"startTime": day + "T08:00:00.000Z", "endTime": day + "T16:00:00.000Z"}))
				r.sync(t)
				before := map[int64]testenv.M{theirs: admin.Get(t, "time-entries", theirs), mine: admin.Get(t, "time-entries", mine)}
				clockBefore := admin.Get(t, "time-entries", clock)
				call := r.write(t, auditReq{c: admin, method: http.MethodPost, path: "/v1/approval/bulk-approve",
					body: testenv.M{"action": "approve", "items": []testenv.M{{"project": project, "day": day}}}, reason: reasonOf("Monatsabschluss")}, http.StatusOK)
				var days []testenv.M
				testenv.DecodeInto(t, call.body, &days)
				if len(days) != 1 {
					t.Fatalf("approval answered %s", call.body)
				}
				pd := testenv.ID(t, days[0])
				wants := []auditWant{{resource: "project-days", record: pd, op: "create", after: admin.Get(t, "project-days", pd)}}
				for _, id := range []int64{theirs, mine} {
					after := admin.Get(t, "time-entries", id)
					if after["validationStatus"] != "APPROVED" {
						t.Fatalf("entry %d after approval: %v", id, after)
					}
					wants = append(wants, auditWant{resource: "time-entries", record: id, op: "update", before: before[id], after: after})
				}
				r.expect(t, call, me, "Monatsabschluss", wants...)
				if got := admin.Get(t, "time-entries", clock); !reflect.DeepEqual(got, clockBefore) {
					t.Errorf("the WORKTIME entry changed: %v, was %v", got, clockBefore)
				}
			}},
			{"skill archiving", func(t *testing.T) {
				cat := testenv.ID(t, admin.Create(t, "tag-categories", testenv.M{"name": "Sprachen"}))
				skill := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "Go", "type": 1, "category": cat}))
				held := testenv.ID(t, admin.Create(t, "skill-assignments", testenv.M{"user": member, "tag": skill, "proficiency": 3}))
				r.sync(t)
				before := admin.Get(t, "skill-assignments", held)
				call := r.write(t, auditReq{c: admin, method: http.MethodDelete, path: fmt.Sprintf("/v1/skill-assignments/%d", held)}, http.StatusOK)
				after := admin.Get(t, "skill-assignments", held)
				if testenv.Num(after["status"]) != 0 {
					t.Fatalf("assignment after removal: %v", after)
				}
				r.expect(t, call, me, nil, auditWant{resource: "skill-assignments", record: held, op: "update", before: before, after: after})
			}},
			{"upload and file delete", func(t *testing.T) {
				_, doc := admin.Document(t)
				r.sync(t)
				listed := func() []testenv.M { return admin.List(t, fmt.Sprintf("/v1/files/document/%d", doc)) }
				docBefore := admin.Get(t, "documents", doc)
				ct, body := testenv.Multipart(t, testenv.Part{Filename: "Übersicht.txt", ContentType: "text/plain", Data: []byte("hallo")})
				call := r.write(t, auditReq{c: admin, method: http.MethodPost, path: testenv.UploadPath("document", doc, true),
					body: body, contentType: ct, reason: reasonOf("Beleg")}, http.StatusCreated)
				up := testenv.ID(t, call.object(t))
				files := listed()
				if len(files) != 1 {
					t.Fatalf("uploads of the document: %v", files)
				}
				docAfter := admin.Get(t, "documents", doc)
				r.expect(t, call, me, "Beleg",
					auditWant{resource: "uploads", record: up, op: "create", after: files[0]},
					auditWant{resource: "documents", record: doc, op: "update", before: docBefore, after: docAfter})
				call = r.write(t, auditReq{c: admin, method: http.MethodDelete, path: fmt.Sprintf("/v1/files/%d", up)}, http.StatusOK)
				r.expect(t, call, me, nil,
					auditWant{resource: "uploads", record: up, op: "delete", before: files[0]},
					auditWant{resource: "documents", record: doc, op: "update", before: docAfter, after: admin.Get(t, "documents", doc)})
			}},
			{"API client create, a write with its token, delete", func(t *testing.T) {
				call := r.write(t, auditReq{c: admin, method: http.MethodPost, path: "/v1/api-clients",
					body: testenv.M{"name": "Lohnexport", "user": tn.AdminID, "scope": "read write"}, reason: reasonOf("Anbindung")}, http.StatusCreated)
				client := call.object(t)
				secret, _ := client["clientSecret"].(string)
				if secret == "" {
					t.Fatalf("no secret: %v", client)
				}
				secrets = append(secrets, secret)
				id := testenv.ID(t, client)
				path := fmt.Sprintf("/v1/api-clients/%d", id)
				shown := get(t, path)
				r.expect(t, call, me, "Anbindung", auditWant{resource: "api-clients", record: id, op: "create", after: shown})

				cc := admin.ClientSignIn(t, client)
				r.none(t) // a token is no change
				via := r.write(t, auditReq{c: cc, method: http.MethodPost, path: "/v1/projects", body: testenv.M{"name": "Per Schnittstelle"}}, http.StatusCreated)
				made := testenv.ID(t, via.object(t))
				r.expect(t, via, actorOf(tn.AdminID, id), nil, auditWant{resource: "projects", record: made, op: "create", after: admin.Get(t, "projects", made)})

				call = r.write(t, auditReq{c: admin, method: http.MethodDelete, path: path}, http.StatusOK)
				r.expect(t, call, me, nil, auditWant{resource: "api-clients", record: id, op: "delete", before: shown})
			}},
			{"API clients of an admin who loses admin rights, deleted on behalf", func(t *testing.T) {
				const password = "second-admin-password"
				secrets = append(secrets, password)
				other := testenv.ID(t, admin.Create(t, "users", testenv.M{"email": "a2@acme.test", "password": password, "isAdmin": true}))
				r.sync(t)
				admin2 := &testenv.Client{Srv: srv, Slug: tn.Slug, UserID: other, Token: srv.Token(t, tn.Slug, "a2@acme.test", password)}
				call := r.write(t, auditReq{c: admin2, method: http.MethodPost, path: "/v1/api-clients",
					body: testenv.M{"name": "Zweiter", "user": other, "scope": "read"}}, http.StatusCreated)
				client := call.object(t)
				secret, _ := client["clientSecret"].(string)
				secrets = append(secrets, secret)
				id := testenv.ID(t, client)
				shown := get(t, fmt.Sprintf("/v1/api-clients/%d", id))
				r.expect(t, call, actorOf(other, 0), nil, auditWant{resource: "api-clients", record: id, op: "create", after: shown})

				before := admin.Get(t, "users", other)
				call = r.write(t, auditReq{c: admin, method: http.MethodPatch, path: fmt.Sprintf("/v1/users/%d", other),
					body: testenv.M{"isAdmin": false}, reason: reasonOf("Rolle gewechselt")}, http.StatusOK)
				admin.Fail(t, http.MethodGet, fmt.Sprintf("/v1/api-clients/%d", id), nil, http.StatusNotFound, "")
				r.expect(t, call, me, "Rolle gewechselt",
					auditWant{resource: "users", record: other, op: "update", before: before, after: admin.Get(t, "users", other)},
					auditWant{resource: "api-clients", record: id, op: "delete", before: shown})
			}},
			{"webhook create, update, delete", func(t *testing.T) {
				call := r.write(t, auditReq{c: admin, method: http.MethodPost, path: "/v1/webhooks",
					body: testenv.M{"url": hook.URL + "/hook", "resources": []string{"vacation-budgets"}}, reason: reasonOf("Buchhaltung")}, http.StatusCreated)
				created := call.object(t)
				secret, _ := created["secret"].(string)
				if !strings.HasPrefix(secret, "whsec_") {
					t.Fatalf("no secret: %v", created)
				}
				secrets = append(secrets, secret)
				id := testenv.ID(t, created)
				path := fmt.Sprintf("/v1/webhooks/%d", id)
				before := get(t, path)
				r.expect(t, call, me, "Buchhaltung", auditWant{resource: "webhooks", record: id, op: "create", after: before})

				call = r.write(t, auditReq{c: admin, method: http.MethodPatch, path: path,
					body: testenv.M{"enabled": false, "resources": []string{"vacation-budgets", "colors"}}}, http.StatusOK)
				after := get(t, path)
				r.expect(t, call, me, nil, auditWant{resource: "webhooks", record: id, op: "update", before: before, after: after})
				if got := auditChanged(before, after, nil); !slices.Equal(got, []string{"enabled", "resources"}) {
					t.Errorf("the update changed %v, want enabled and resources", got)
				}

				call = r.write(t, auditReq{c: admin, method: http.MethodDelete, path: path}, http.StatusOK)
				r.expect(t, call, me, nil, auditWant{resource: "webhooks", record: id, op: "delete", before: after})
			}},
			{"Change-Reason: what is accepted", func(t *testing.T) {
				for _, c := range []struct {
					name, header string
					want         any
				}{
					{"an empty header is none", "", nil},
					{"500 characters of two bytes each", strings.Repeat("%C3%A4", 500), strings.Repeat("ä", 500)},
					{"500 characters of four bytes each", strings.Repeat("%F0%9F%98%80", 500), strings.Repeat("😀", 500)},
					{"a stray percent stays", "100% sicher, 50%-Anteil, %zz, %G1 und 7%", "100% sicher, 50%-Anteil, %zz, %G1 und 7%"},
					{"a percent at the end stays", "Rest %4", "Rest %4"},
					{"an encoded percent", "%2541 bleibt", "%41 bleibt"},
				} {
					t.Run(c.name, func(t *testing.T) {
						record(t, "projects", 0, auditReq{c: admin, method: http.MethodPost, path: "/v1/projects",
							body: testenv.M{"name": c.name}, reason: reasonOf(c.header)}, http.StatusCreated, "create", c.want)
					})
				}
			}},
			{"Change-Reason: what is refused, writing nothing", func(t *testing.T) {
				settings := getSettings(t)
				for _, c := range []struct{ name, header string }{
					{"501 characters", strings.Repeat("a", 501)},
					{"501 characters of two bytes each", strings.Repeat("%C3%A4", 501)},
					{"not UTF-8 once decoded", "Grund %FF"},
					{"a sequence cut short", "Grund %C3"},
					{"an encoded surrogate", "%ED%A0%80"},
					{"NUL once decoded", "%00"},
					{"NUL inside", "Grund%00mehr"},
				} {
					t.Run(c.name, func(t *testing.T) {
						for _, q := range []auditReq{
							{c: admin, method: http.MethodPost, path: "/v1/projects", body: testenv.M{"name": "Refused"}},
							{c: admin, method: http.MethodPatch, path: "/v1/account/settings", body: testenv.M{"timerMode": "START_TIME_END_TIME"}},
							{c: admin, method: http.MethodPost, path: "/v1/webhooks", body: testenv.M{"url": hook.URL + "/refused"}},
							{c: admin, method: http.MethodDelete, path: fmt.Sprintf("/v1/projects/%d", project)},
						} {
							q.reason = reasonOf(c.header)
							call := r.send(t, q)
							testenv.WantError(t, q.method+" "+q.path, call.status, call.body, http.StatusBadRequest, "invalid_reason")
						}
						r.none(t)
						if slices.Contains(projectNames(t), "Refused") {
							t.Error("a project was created")
						}
						if got := getSettings(t); !reflect.DeepEqual(got, settings) {
							t.Errorf("settings %v, were %v", got, settings)
						}
						if hooks := admin.List(t, "/v1/webhooks"); len(hooks) != 0 {
							t.Errorf("webhooks %v", hooks)
						}
						admin.Get(t, "projects", project) // not deleted
					})
				}
			}},
		}
		for _, row := range rows {
			t.Run(row.name, row.run)
		}

		t.Run("no secret or password in the log", func(t *testing.T) {
			var all bytes.Buffer
			for _, e := range r.raw(t, 0) {
				all.Write(e)
				all.WriteByte('\n')
			}
			for _, s := range append(secrets, "passwordHash", "$argon2", "secretHash", "clientSecret") {
				if bytes.Contains(all.Bytes(), []byte(s)) {
					t.Errorf("the audit log holds %q", s)
				}
			}
			if len(secrets) != 8 {
				t.Errorf("%d secrets looked for, want 8: a row did not run", len(secrets))
			}
		})
		t.Run("the chain recomputes", func(t *testing.T) {
			entries := r.raw(t, 0)
			checkChain(t, entries)
			if int64(len(entries)) != r.seen {
				t.Errorf("%d entries, and the rows accounted for %d", len(entries), r.seen)
			}
		})
	})
}

// checkChain recomputes every entry's hash from the API's JSON, with
// testenv's canonicaliser, and checks seq 1, 2, 3… and the prevHash
// links; a copy with one character of a reason changed must not
// recompute to its hash.
func checkChain(t *testing.T, entries []json.RawMessage) {
	t.Helper()
	for i, e := range canonical.CheckAuditChain(t, entries) {
		r, ok := e["reason"].(string)
		if !ok {
			continue
		}
		hash := e["hash"]
		e["reason"] = r + "."
		if got, err := canonical.AuditHash(e); err != nil || got == hash {
			t.Errorf("entry %d: a changed reason recomputes to the same hash (%v)", i+1, err)
		}
		return
	}
	t.Error("no entry with a reason to tamper with")
}
