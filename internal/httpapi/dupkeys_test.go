package httpapi_test

import (
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestDuplicateKeys: a JSON body naming a key twice in one object, at the
// top or nested in objects and arrays, is refused with 400 invalid_json
// naming the key, whichever endpoint takes it, and nothing is written.
// The same key in different objects, and keys differing only in case,
// are no duplicates.
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.WebhookAllowPrivate = true })
		a := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		project := testenv.ID(t, a.Create(t, "projects", M{"name": "Kept"}))
		projectPath := fmt.Sprintf("/v1/projects/%d", project)
		category := testenv.ID(t, a.Create(t, "skill-set-categories", M{"name": "Roles"}))
		set := testenv.ID(t, a.Create(t, "skill-sets", M{"name": "Backend", "category": category}))
		user := testenv.ID(t, a.Create(t, "users", M{"email": "u@acme.test"}))

		// state is everything the requests below could change.
		state := func() M {
			return M{
				"projects":          a.List(t, "/v1/projects"),
				"api clients":       a.List(t, "/v1/api-clients"),
				"webhooks":          a.List(t, "/v1/webhooks"),
				"project days":      a.List(t, "/v1/project-days"),
				"settings":          a.Object(t, http.MethodGet, "/v1/account/settings", nil, http.StatusOK),
				"skill assignments": a.List(t, "/v1/skill-assignments"),
				"time entries":      a.List(t, "/v1/time-entries"),
			}
		}
		before := state()

		for _, c := range []struct {
			name, method, path, body, field string
		}{
			{"record create", http.MethodPost, "/v1/projects", `{"name": "A", "name": "B"}`, "name"},
			{"escaped duplicate", http.MethodPost, "/v1/projects", `{"name": "A", "n\u0061me": "B"}`, "name"},
			{"nested object", http.MethodPost, "/v1/projects", `{"name": "A", "meta": {"x": 1, "y": {"z": 1, "z": 2}}}`, "meta.y.z"},
			{"object in an array", http.MethodPost, "/v1/projects", `{"name": "A", "list": [{"a": 1}, {"a": 1, "a": 1}]}`, "list[1].a"},
			{"record update", http.MethodPatch, projectPath, `{"name": "C", "name": "D"}`, "name"},
			{"record replace", http.MethodPut, projectPath, `{"name": "C", "budget": 1, "budget": 2}`, "budget"},
			{"time entry", http.MethodPost, "/v1/time-entries", `{"day": "2026-03-02", "user": 1, "user": 2}`, "user"},
			{"api client", http.MethodPost, "/v1/api-clients",
				fmt.Sprintf(`{"name": "c", "user": %d, "scope": "read", "scope": "read write"}`, user), "scope"},
			{"webhook", http.MethodPost, "/v1/webhooks", `{"url": "http://127.0.0.1:9/a", "url": "http://127.0.0.1:9/b"}`, "url"},
			{"approval", http.MethodPost, "/v1/approval/bulk-approve",
				fmt.Sprintf(`{"action": "approve", "items": [{"project": %d, "day": "2026-03-02", "day": "2026-03-03"}]}`, project), "items[0].day"},
			{"settings", http.MethodPatch, "/v1/account/settings", `{"timerMode": "DURATION", "timerMode": "START_TIME_END_TIME"}`, "timerMode"},
			{"skill set apply", http.MethodPost, fmt.Sprintf("/v1/skill-sets/%d/apply", set),
				fmt.Sprintf(`{"users": [%d], "users": [%d]}`, user, a.UserID), "users"},
		} {
			t.Run(c.name, func(t *testing.T) {
				status, _, raw := a.Send(t, c.method, c.path, c.body)
				e := testenv.WantError(t, c.name, status, raw, http.StatusBadRequest, "invalid_json")
				testenv.WantProblem(t, e, c.field)
				if msg, _ := e["message"].(string); !strings.Contains(msg, `"`+c.field+`"`) {
					t.Errorf("message %q does not name %q", msg, c.field)
				}
				// A key of an Idempotency-Key request is refused alike.
				status, _, raw = keyed(a, "dup-"+c.name).Send(t, c.method, c.path, c.body)
				testenv.WantError(t, c.name+" with an Idempotency-Key", status, raw, http.StatusBadRequest, "invalid_json")
			})
		}
		if after := state(); !reflect.DeepEqual(after, before) {
			t.Errorf("bodies with duplicate keys changed something:\nbefore %v\nafter  %v", before, after)
		}

		// No duplicates: the same key in sibling objects, keys differing in case.
		got := a.Object(t, http.MethodPost, "/v1/projects",
			`{"name": "Fine", "Name": "Other", "a": {"x": 1}, "b": {"x": 1}, "list": [{"x": 1}, {"x": 2}]}`, http.StatusCreated)
		if got["name"] != "Fine" || got["Name"] != "Other" {
			t.Errorf("created %v", got)
		}
	})
}
