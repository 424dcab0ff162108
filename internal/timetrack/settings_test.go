package timetrack_test

import (
	"net/http"
	"reflect"
	"testing"

	"planwerk/internal/testenv"
)

const settingsPath = "/v1/account/settings"

// TestSettings: the account's timerMode and useWorktime, read by everyone
// of the tenant and changed by admins only.
func TestSettings(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newOffice(t, b)
		check := func(what string, c *testenv.Client, want M) {
			t.Helper()
			if got := c.Object(t, http.MethodGet, settingsPath, nil, http.StatusOK); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: GET settings = %v, want %v", what, got, want)
			}
		}
		set := func(what, method string, body, want M) {
			t.Helper()
			if got := o.admin.Object(t, method, settingsPath, body, http.StatusOK); !reflect.DeepEqual(got, want) {
				t.Errorf("%s: %v, want %v", what, got, want)
			}
		}
		defaults := M{"timerMode": "DURATION", "useWorktime": false}
		check("defaults (admin)", o.admin, defaults)
		check("defaults (member)", o.member, defaults)

		// PATCH changes only what it names.
		want := M{"timerMode": "START_TIME_END_TIME", "useWorktime": false}
		set("PATCH timerMode", http.MethodPatch, M{"timerMode": "START_TIME_END_TIME"}, want)
		check("after PATCH timerMode", o.member, want)
		want = M{"timerMode": "START_TIME_END_TIME", "useWorktime": true}
		set("PATCH useWorktime", http.MethodPatch, M{"useWorktime": true}, want)
		check("after PATCH useWorktime", o.admin, want)

		// PUT does the same as PATCH.
		set("PUT both", http.MethodPut, M{"timerMode": "DURATION", "useWorktime": false}, defaults)
		check("after PUT", o.admin, defaults)
		want = M{"timerMode": "DURATION", "useWorktime": true}
		set("PUT useWorktime", http.MethodPut, M{"useWorktime": true}, want)
		check("after PUT useWorktime", o.admin, want)
		// An empty PATCH changes nothing.
		set("empty PATCH", http.MethodPatch, M{}, want)

		// Bad values and unknown keys: 400 naming the field, nothing changed.
		bad := []struct {
			name   string
			body   M
			fields []string
		}{
			{"unknown timerMode", M{"timerMode": "HOURS"}, []string{"timerMode"}},
			{"lower-case timerMode", M{"timerMode": "duration"}, []string{"timerMode"}},
			{"timerMode not a string", M{"timerMode": 1}, []string{"timerMode"}},
			{"timerMode null", M{"timerMode": nil}, []string{"timerMode"}},
			{"useWorktime a string", M{"useWorktime": "false"}, []string{"useWorktime"}},
			{"useWorktime a number", M{"useWorktime": 0}, []string{"useWorktime"}},
			{"useWorktime null", M{"useWorktime": nil}, []string{"useWorktime"}},
			{"unknown key", M{"timezone": "UTC"}, []string{"timezone"}},
			{"good value beside an unknown key", M{"timerMode": "START_TIME_END_TIME", "colour": "red"}, []string{"colour"}},
			{"good value beside a bad one", M{"timerMode": "START_TIME_END_TIME", "useWorktime": "no"}, []string{"useWorktime"}},
			{"both bad", M{"timerMode": "X", "useWorktime": "no"}, []string{"timerMode", "useWorktime"}},
		}
		for _, c := range bad {
			for _, m := range []string{http.MethodPatch, http.MethodPut} {
				t.Run(m+" "+c.name, func(t *testing.T) {
					o.admin.Invalid(t, m, settingsPath, c.body, c.fields...)
				})
			}
		}
		check("after the refused changes", o.admin, want)
		for _, raw := range []string{`{"timerMode":`, `["DURATION"]`, `"DURATION"`} {
			o.admin.Fail(t, http.MethodPatch, settingsPath, raw, http.StatusBadRequest, "invalid_json")
		}

		// Members may read but not change the settings.
		for _, m := range []string{http.MethodPatch, http.MethodPut} {
			o.member.Fail(t, m, settingsPath, M{"timerMode": "START_TIME_END_TIME"}, http.StatusForbidden, "forbidden")
			o.member.Fail(t, m, settingsPath, M{"bogus": 1}, http.StatusForbidden, "")
		}
		check("after the member's attempts", o.admin, want)

		// Without a token: 401. Settings belong to one tenant.
		if st, _, raw := o.admin.Anonymous().Send(t, http.MethodGet, settingsPath, nil); st != http.StatusUnauthorized {
			t.Errorf("GET settings without a token: %d %s", st, raw)
		}
		check("other tenant's settings", o.stranger(t), defaults)
	})
}
