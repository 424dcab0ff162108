package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// keyedCall is one keyed request: a JSON body, or an upload when part is set.
type keyedCall struct {
	name   string
	method string
	path   string
	body   any
	part   *testenv.Part
	// secret is a field of the first answer that must never reach a
	// caller who may no longer make the request.
	secret string
}

// send makes the request as c, with the Idempotency-Key key when it is
// not empty.
func (k keyedCall) send(t *testing.T, c *testenv.Client, key string) (int, http.Header, []byte) {
	t.Helper()
	if key != "" {
		c = keyed(c, key)
	}
	if k.part != nil {
		return c.Upload(t, k.path, *k.part)
	}
	return c.Send(t, k.method, k.path, k.body)
}

// answered is a kept answer: what the first keyed request got.
type answered struct {
	status int
	header http.Header
	body   []byte
}

// wantRefusedAsNew checks that a replay is no replay but the refusal the
// same request without the key gets (fresh), and shows nothing of the
// kept answer's secret.
func wantRefusedAsNew(t *testing.T, what string, first answered, status int, h http.Header, raw []byte, freshStatus int, freshRaw []byte, secret string) {
	t.Helper()
	if status < 400 || h.Get(replayed) != "" {
		t.Errorf("%s: %d %s=%q %.300s, want a refusal, not the kept answer", what, status, replayed, h.Get(replayed), raw)
		return
	}
	got, fresh := testenv.Decode(t, raw), testenv.Decode(t, freshRaw)
	if status != freshStatus || got["code"] != fresh["code"] || got["message"] != fresh["message"] {
		t.Errorf("%s: %d %v, want the refusal of a new request: %d %v", what, status, got, freshStatus, fresh)
	}
	if secret != "" {
		kept, _ := testenv.Decode(t, first.body)[secret].(string)
		if kept == "" || bytes.Contains(raw, []byte(kept)) {
			t.Errorf("%s: the answer shows the kept %s (%q): %s", what, secret, kept, raw)
		}
	}
}

// waitAdmin waits until c's token acts with the role admin (true) or
// member: until an admin-only read answers as it should.
func waitAdmin(t *testing.T, c *testenv.Client, admin bool) {
	t.Helper()
	want := http.StatusForbidden
	if admin {
		want = http.StatusOK
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status, _, _ := c.Send(t, http.MethodGet, "/v1/api-clients", nil)
		if status == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /v1/api-clients still answers %d, want %d, 10 s after the role change", status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReplayAuthorization: a kept answer is replayed only while the
// caller may still make its request: after a demotion, with a token of
// read scope, once the caller may no longer write or see the record, the
// replay is the refusal the same request gets without the key, never the
// kept answer (nor its secret). While allowed, the replay is the kept
// answer, marked as such.
func TestReplayAuthorization(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		// Webhooks to loopback: nothing leaves the machine.
		srv := testenv.Start(t, b, func(c *config.Config) { c.WebhookAllowPrivate = true })
		tn := srv.CreateTenant(t, "acme")
		owner := srv.SignIn(t, tn)

		t.Run("demoted admin", func(t *testing.T) {
			second := secondAdmin(t, owner, "second@acme.test")
			project := testenv.ID(t, owner.Create(t, "projects", M{"name": "Approvals"}))
			category := testenv.ID(t, owner.Create(t, "skill-set-categories", M{"name": "Roles"}))
			set := testenv.ID(t, owner.Create(t, "skill-sets", M{"name": "Backend", "category": category}))
			_, doc := owner.Document(t)
			entry := func(day string, user int64) M {
				m := M{"day": day, "trackingType": "WORKTIME", "startTime": day + "T08:00:00.000Z", "endTime": day + "T16:00:00.000Z"}
				if user != 0 {
					m["user"] = user
				}
				return m
			}
			refused := []keyedCall{
				{name: "api client", method: http.MethodPost, path: "/v1/api-clients",
					body: M{"name": "replayed", "user": second.UserID, "scope": "read write"}, secret: "clientSecret"},
				{name: "webhook", method: http.MethodPost, path: "/v1/webhooks", body: M{"url": "http://127.0.0.1:9/replayed"}, secret: "secret"},
				{name: "admin-only record", method: http.MethodPost, path: "/v1/projects", body: M{"name": "Replayed"}},
				{name: "another user's time entry", method: http.MethodPost, path: "/v1/time-entries", body: entry("2026-03-02", owner.UserID)},
				{name: "approval", method: http.MethodPost, path: "/v1/approval/bulk-approve",
					body: M{"action": "approve", "items": []M{{"project": project, "day": "2026-03-02"}}}},
				{name: "skill set apply", method: http.MethodPost, path: fmt.Sprintf("/v1/skill-sets/%d/apply", set), body: M{"users": []int64{second.UserID}}},
				{name: "upload to an admin-only record", path: testenv.UploadPath("document", doc, false),
					part: &testenv.Part{Filename: "a.txt", Data: []byte("replayed")}},
			}
			own := keyedCall{name: "own time entry", method: http.MethodPost, path: "/v1/time-entries", body: entry("2026-03-03", 0)}
			all := append(append([]keyedCall(nil), refused...), own)
			first := map[string]answered{}
			for _, k := range all {
				s1, h1, b1 := k.send(t, second, "demoted-"+k.name)
				if s1 >= 300 {
					t.Fatalf("%s as admin: %d %s", k.name, s1, b1)
				}
				first[k.name] = answered{s1, h1, b1}
				// While the caller may make the request, it is replayed.
				s2, h2, b2 := k.send(t, second, "demoted-"+k.name)
				wantReplay(t, k.name+" replayed while admin", s1, h1, b1, s2, h2, b2)
			}

			owner.Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", second.UserID), M{"isAdmin": false}, http.StatusOK)
			waitAdmin(t, second, false)

			for _, k := range refused {
				status, h, raw := k.send(t, second, "demoted-"+k.name)
				freshStatus, _, freshRaw := k.send(t, second, "")
				if freshStatus != http.StatusForbidden {
					t.Fatalf("%s as member without a key: %d %s, want 403", k.name, freshStatus, freshRaw)
				}
				wantRefusedAsNew(t, k.name+" replayed after the demotion", first[k.name], status, h, raw, freshStatus, freshRaw, k.secret)
			}
			a := first[own.name]
			s2, h2, b2 := own.send(t, second, "demoted-"+own.name)
			wantReplay(t, "own time entry replayed after the demotion", a.status, a.header, a.body, s2, h2, b2)
		})

		t.Run("record gone", func(t *testing.T) {
			// The caller may still make the request, but the record the
			// kept answer shows is gone: the replay is the 404 of reading it.
			_, doc := owner.Document(t)
			for _, k := range []keyedCall{
				{name: "api client", method: http.MethodPost, path: "/v1/api-clients",
					body: M{"name": "gone", "user": owner.UserID, "scope": "read"}, secret: "clientSecret"},
				{name: "webhook", method: http.MethodPost, path: "/v1/webhooks", body: M{"url": "http://127.0.0.1:9/gone"}, secret: "secret"},
				{name: "project", method: http.MethodPost, path: "/v1/projects", body: M{"name": "Gone"}},
				{name: "upload", path: testenv.UploadPath("document", doc, false), part: &testenv.Part{Filename: "gone.txt", Data: []byte("gone")}},
			} {
				s1, _, b1 := k.send(t, owner, "gone-"+k.name)
				if s1 != http.StatusCreated {
					t.Fatalf("%s: %d %s", k.name, s1, b1)
				}
				id := testenv.ID(t, testenv.Decode(t, b1))
				path := fmt.Sprintf("%s/%d", k.path, id)
				if k.part != nil {
					path = fmt.Sprintf("/v1/files/%d", id)
				}
				owner.Object(t, http.MethodDelete, path, nil, http.StatusOK)
				status, h, raw := k.send(t, owner, "gone-"+k.name)
				if status != http.StatusNotFound || h.Get(replayed) != "" {
					t.Errorf("%s replayed once deleted: %d %s=%q %s, want 404", k.name, status, replayed, h.Get(replayed), raw)
				}
				testenv.WantError(t, k.name+" replayed once deleted", status, raw, http.StatusNotFound, "not_found")
				if k.secret != "" && bytes.Contains(raw, []byte(testenv.Decode(t, b1)[k.secret].(string))) {
					t.Errorf("%s: the refusal shows the %s", k.name, k.secret)
				}
			}
		})

		t.Run("read scope", func(t *testing.T) {
			reader := owner.ClientSignIn(t, owner.APIClient(t, "reader", owner.UserID, "read"))
			call := keyedCall{name: "project", method: http.MethodPost, path: "/v1/projects", body: M{"name": "Scoped replay"}}
			s1, h1, b1 := call.send(t, owner, "scoped")
			if s1 != http.StatusCreated {
				t.Fatalf("create: %d %s", s1, b1)
			}
			status, h, raw := call.send(t, reader, "scoped")
			freshStatus, _, freshRaw := call.send(t, reader, "")
			testenv.WantError(t, "the same request with a read token", freshStatus, freshRaw, http.StatusForbidden, "insufficient_scope")
			wantRefusedAsNew(t, "replay with a read token", answered{s1, h1, b1}, status, h, raw, freshStatus, freshRaw, "")
			s2, h2, b2 := call.send(t, owner, "scoped")
			wantReplay(t, "replay with the read-write token", s1, h1, b1, s2, h2, b2)
		})

		t.Run("member loses the record", func(t *testing.T) {
			member := owner.Member(t, "member@acme.test")
			expense := testenv.ID(t, member.Create(t, "expenses", M{"amount": 12}))
			upload := keyedCall{name: "upload", path: testenv.UploadPath("expense", expense, false),
				part: &testenv.Part{Filename: "receipt.txt", Data: []byte("receipt")}}
			day := "2026-03-04"
			entryCall := keyedCall{name: "time entry", method: http.MethodPost, path: "/v1/time-entries",
				body: M{"day": day, "trackingType": "WORKTIME", "startTime": day + "T08:00:00.000Z", "endTime": day + "T16:00:00.000Z"}}
			var kept = map[string]answered{}
			for _, k := range []keyedCall{upload, entryCall} {
				s1, h1, b1 := k.send(t, member, "member-"+k.name)
				if s1 != http.StatusCreated {
					t.Fatalf("%s: %d %s", k.name, s1, b1)
				}
				kept[k.name] = answered{s1, h1, b1}
				s2, h2, b2 := k.send(t, member, "member-"+k.name)
				wantReplay(t, k.name+" replayed while the member may", s1, h1, b1, s2, h2, b2)
			}

			// The expense becomes another user's: the member may no
			// longer attach its file.
			expensePath := fmt.Sprintf("/v1/expenses/%d", expense)
			owner.Object(t, http.MethodPatch, expensePath, M{"user": owner.UserID}, http.StatusOK)
			status, h, raw := upload.send(t, member, "member-upload")
			freshStatus, _, freshRaw := upload.send(t, member, "")
			testenv.WantError(t, "a new upload to another user's expense", freshStatus, freshRaw, http.StatusForbidden, "forbidden")
			wantRefusedAsNew(t, "upload replayed once the expense is another user's", kept["upload"], status, h, raw, freshStatus, freshRaw, "")

			// The expense is gone: the member cannot see it.
			owner.Object(t, http.MethodDelete, expensePath, nil, http.StatusOK)
			status, h, raw = upload.send(t, member, "member-upload")
			freshStatus, _, freshRaw = upload.send(t, member, "")
			testenv.WantError(t, "a new upload to a deleted expense", freshStatus, freshRaw, http.StatusNotFound, "not_found")
			wantRefusedAsNew(t, "upload replayed once the expense is gone", kept["upload"], status, h, raw, freshStatus, freshRaw, "")

			// The time entry is gone: its replay is what reading it gets.
			entryPath := "/v1/time-entries/" + fmt.Sprint(testenv.ID(t, testenv.Decode(t, kept["time entry"].body)))
			owner.Object(t, http.MethodDelete, entryPath, nil, http.StatusOK)
			status, h, raw = entryCall.send(t, member, "member-time entry")
			freshStatus, _, freshRaw = member.Send(t, http.MethodGet, entryPath, nil)
			testenv.WantError(t, "reading the deleted time entry", freshStatus, freshRaw, http.StatusNotFound, "not_found")
			wantRefusedAsNew(t, "time entry replayed once it is gone", kept["time entry"], status, h, raw, freshStatus, freshRaw, "")
		})
	})
}
