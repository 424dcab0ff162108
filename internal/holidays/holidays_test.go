// Black-box tests of the PublicHoliday absence type and the holidays
// (docs/api.md "Absences and holidays"; docs/decisions.md "PublicHoliday
// and holidays") over
// HTTP on both database engines.
package holidays_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"testing"

	"planwerk/internal/testenv"
)

func where(w string) string { return "where=" + url.QueryEscape(w) }

// TestPublicHoliday: every tenant has one fixed PublicHoliday absence
// type; /v1/holidays shows the absences of that type, read-only.
func TestPublicHoliday(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		ta := srv.CreateTenant(t, "acme")
		tb := srv.CreateTenant(t, "beta")
		a, bc := srv.SignIn(t, ta), srv.SignIn(t, tb)
		member := a.Member(t, "member@acme.test")

		typesA := a.List(t, "/v1/absence-types")
		typesB := bc.List(t, "/v1/absence-types")
		if len(typesA) != 1 || typesA[0]["name"] != "PublicHoliday" || len(typesB) != 1 || typesB[0]["name"] != "PublicHoliday" {
			t.Fatalf("absence types of new tenants: %v / %v", typesA, typesB)
		}
		ph, phB := testenv.ID(t, typesA[0]), testenv.ID(t, typesB[0])
		if ph == phB && b.Name == "postgres" {
			t.Errorf("tenants share the PublicHoliday type %d", ph)
		}
		if got := a.IDs(t, "/v1/absence-types?name=PublicHoliday"); !slices.Equal(got, []int64{ph}) {
			t.Errorf("PublicHoliday by name: %v", got)
		}
		phRec := typesA[0]
		typePath := fmt.Sprintf("/v1/absence-types/%d", ph)

		t.Run("PublicHoliday is fixed", func(t *testing.T) {
			a.Fail(t, http.MethodDelete, typePath, nil, http.StatusConflict, "conflict")
			a.Fail(t, http.MethodPatch, typePath, testenv.M{"name": "Holiday"}, http.StatusBadRequest, "invalid", "name")
			a.Fail(t, http.MethodPut, typePath, testenv.M{"name": "publicholiday"}, http.StatusBadRequest, "invalid", "name")
			a.Fail(t, http.MethodPatch, typePath, testenv.M{"name": nil}, http.StatusBadRequest, "invalid", "name")
			a.Fail(t, http.MethodPatch, typePath, testenv.M{"name": 5}, http.StatusBadRequest, "invalid", "name")
			member.Fail(t, http.MethodDelete, typePath, nil, http.StatusForbidden, "forbidden")
			if got := a.Get(t, "absence-types", ph); !reflect.DeepEqual(got, phRec) {
				t.Errorf("PublicHoliday after refused writes: %v, want %v", got, phRec)
			}
			a.Fail(t, http.MethodPost, "/v1/absence-types", testenv.M{"name": "PublicHoliday"}, http.StatusConflict, "conflict")
			a.Fail(t, http.MethodPost, "/v1/absence-types", testenv.M{"name": "PublicHoliday", "color": "red"}, http.StatusConflict, "conflict")
			vac := a.Create(t, "absence-types", testenv.M{"name": "Vacation"})
			a.Fail(t, http.MethodPatch, fmt.Sprintf("/v1/absence-types/%d", testenv.ID(t, vac)), testenv.M{"name": "PublicHoliday"}, http.StatusConflict, "conflict")
			if got := a.Get(t, "absence-types", testenv.ID(t, vac)); !reflect.DeepEqual(got, vac) {
				t.Errorf("Vacation after a refused rename: %v", got)
			}
			if got := a.IDs(t, "/v1/absence-types?name=PublicHoliday"); !slices.Equal(got, []int64{ph}) {
				t.Errorf("PublicHoliday types: %v", got)
			}
			// Its other attributes may change; the name stays.
			up := a.Object(t, http.MethodPatch, typePath, testenv.M{"color": "#ff0000", "name": "PublicHoliday"}, http.StatusOK)
			if up["name"] != "PublicHoliday" || up["color"] != "#ff0000" {
				t.Errorf("PATCH color: %v", up)
			}
			phRec = up
			// Another tenant's type is its own.
			if got := bc.List(t, "/v1/absence-types"); len(got) != 1 || testenv.ID(t, got[0]) != phB || got[0]["color"] != nil {
				t.Errorf("beta's types after acme's changes: %v", got)
			}
			if b.Name == "postgres" {
				bc.Fail(t, http.MethodGet, typePath, nil, http.StatusNotFound, "not_found")
				bc.Fail(t, http.MethodDelete, typePath, nil, http.StatusNotFound, "not_found")
			}
		})

		vacation := testenv.ID(t, a.Create(t, "absence-types", testenv.M{"name": "Sick"}))
		xmas := a.Create(t, "absences", testenv.M{"absenceType": ph, "name": "Christmas", "day": "2026-12-25", "region": "all"})
		newYear := a.Create(t, "absences", testenv.M{"absenceType": ph, "name": "New Year", "day": "2026-01-01"})
		sick := a.Create(t, "absences", testenv.M{"absenceType": vacation, "name": "flu", "day": "2026-02-02", "user": member.UserID})
		untyped := a.Create(t, "absences", testenv.M{"name": "untyped", "day": "2026-03-03"})
		bHoliday := bc.Create(t, "absences", testenv.M{"absenceType": phB, "name": "beta's holiday", "day": "2026-05-01"})
		holidayIDs := []int64{testenv.ID(t, xmas), testenv.ID(t, newYear)}

		t.Run("holidays are absences of the PublicHoliday type", func(t *testing.T) {
			for _, c := range []*testenv.Client{a, member} {
				status, hdr, raw := c.Send(t, http.MethodGet, "/v1/holidays", nil)
				if status != 200 || hdr.Get("Deprecation") == "" {
					t.Fatalf("GET /v1/holidays: %d, Deprecation %q: %s", status, hdr.Get("Deprecation"), raw)
				}
				var got []testenv.M
				if err := json.Unmarshal(raw, &got); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, []testenv.M{xmas, newYear}) {
					t.Errorf("holidays %v, want %v", got, []testenv.M{xmas, newYear})
				}
			}
			status, hdr, raw := a.Send(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", testenv.ID(t, xmas)), nil)
			var got testenv.M
			_ = json.Unmarshal(raw, &got)
			if status != 200 || hdr.Get("Deprecation") == "" || !reflect.DeepEqual(got, xmas) {
				t.Errorf("GET holiday: %d, Deprecation %q, %s", status, hdr.Get("Deprecation"), raw)
			}
			for _, id := range []int64{testenv.ID(t, sick), testenv.ID(t, untyped), ph, testenv.ID(t, bHoliday), 999999} {
				if id == testenv.ID(t, xmas) || id == testenv.ID(t, newYear) {
					continue // the per-tenant counter of SQLite may repeat ids in beta
				}
				a.Fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", id), nil, http.StatusNotFound, "not_found")
				if status, hdr, _ := a.Send(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", id), nil); status != http.StatusNotFound || hdr.Get("Deprecation") == "" {
					t.Errorf("GET /v1/holidays/%d: %d, Deprecation %q", id, status, hdr.Get("Deprecation"))
				}
			}
			// Without a valid token: 401, still marked deprecated.
			anon := &testenv.Client{Srv: a.Srv, Slug: a.Slug, Token: "expired-or-unknown"}
			for _, p := range []string{"/v1/holidays", fmt.Sprintf("/v1/holidays/%d", testenv.ID(t, xmas))} {
				if status, hdr, raw := anon.Send(t, http.MethodGet, p, nil); status != http.StatusUnauthorized || hdr.Get("Deprecation") == "" {
					t.Errorf("GET %s without a valid token: %d, Deprecation %q: %s", p, status, hdr.Get("Deprecation"), raw)
				}
			}
			// Other resources are not deprecated.
			if _, hdr, _ := anon.Send(t, http.MethodGet, "/v1/absences", nil); hdr.Get("Deprecation") != "" {
				t.Errorf("GET /v1/absences: Deprecation %q", hdr.Get("Deprecation"))
			}
			// The absences are still absences.
			if got := a.IDs(t, "/v1/absences"); len(got) != 4 {
				t.Errorf("absences %v", got)
			}
			// Each tenant sees its own holidays.
			if got := bc.IDs(t, "/v1/holidays"); !slices.Equal(got, []int64{testenv.ID(t, bHoliday)}) {
				t.Errorf("beta's holidays %v", got)
			}
			if b.Name == "postgres" {
				bc.Fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", testenv.ID(t, xmas)), nil, http.StatusNotFound, "not_found")
			}
		})

		t.Run("holidays are read-only", func(t *testing.T) {
			hp := fmt.Sprintf("/v1/holidays/%d", testenv.ID(t, xmas))
			n := len(a.List(t, "/v1/absences"))
			a.Fail(t, http.MethodPost, "/v1/holidays", testenv.M{"absenceType": ph, "name": "new", "day": "2026-10-03"}, http.StatusMethodNotAllowed, "method_not_allowed")
			// The 405 answers are answers of a deprecated resource too.
			if status, hdr, raw := a.Send(t, http.MethodPost, "/v1/holidays", testenv.M{"name": "new"}); status != http.StatusMethodNotAllowed || hdr.Get("Deprecation") == "" {
				t.Errorf("POST /v1/holidays: %d, Deprecation %q: %s", status, hdr.Get("Deprecation"), raw)
			}
			for _, m := range []string{http.MethodPatch, http.MethodPut, http.MethodDelete} {
				status, hdr, raw := a.Send(t, m, hp, testenv.M{"name": "changed"})
				if status != http.StatusMethodNotAllowed || hdr.Get("Allow") == "" || hdr.Get("Deprecation") == "" {
					t.Errorf("%s %s: %d, Allow %q, Deprecation %q: %s", m, hp, status, hdr.Get("Allow"), hdr.Get("Deprecation"), raw)
				}
			}
			if got := a.Get(t, "absences", testenv.ID(t, xmas)); !reflect.DeepEqual(got, xmas) {
				t.Errorf("holiday after refused writes: %v", got)
			}
			if got := len(a.List(t, "/v1/absences")); got != n {
				t.Errorf("%d absences, want %d", got, n)
			}
		})

		t.Run("the list language works on holidays", func(t *testing.T) {
			x, ny := testenv.ID(t, xmas), testenv.ID(t, newYear)
			cases := []struct {
				query string
				want  []int64
			}{
				{"?" + where(`{"day":{">=":"2026-06-01"}}`), []int64{x}},
				{"?" + where(`{"day":{"<":"2026-06-01"}}`), []int64{ny}},
				{"?" + where(`{"name":{"startsWith":"New"}}`), []int64{ny}},
				{"?" + where(`{"name":{"contains":"flu"}}`), nil},
				{"?" + where(`{"region":"all"}`), []int64{x}},
				{"?" + where(`{"region":null}`), []int64{ny}},
				{"?" + where(fmt.Sprintf(`{"absenceType":%d}`, vacation)), nil},
				{"?" + where(fmt.Sprintf(`{"absenceType":%d}`, ph)), holidayIDs},
				{"?" + where(`{"day":"2026-02-02"}`), nil},
				{"?" + where(fmt.Sprintf(`{"or":[{"id":%d},{"id":%d}]}`, testenv.ID(t, sick), x)), []int64{x}},
				{"?name=Christmas", []int64{x}},
				{"?name=flu", nil},
				{"?day=2026-01-01", []int64{ny}},
				{"?sort=day%20ASC", []int64{ny, x}},
				{"?sort=day%20DESC", []int64{x, ny}},
				{"?sort=name%20DESC&limit=1", []int64{ny}},
				{"?sort=name%20ASC&skip=1", []int64{ny}},
				{"?limit=0", nil},
				{"?" + where(`{}`), holidayIDs},
			}
			for _, c := range cases {
				got := a.IDs(t, "/v1/holidays"+c.query)
				if !slices.Equal(got, c.want) && !(len(got) == 0 && len(c.want) == 0) {
					t.Errorf("GET /v1/holidays%s = %v, want %v", c.query, got, c.want)
				}
			}
			a.Fail(t, http.MethodGet, "/v1/holidays?"+where(`{"day":{"like":"x"}}`), nil, http.StatusBadRequest, "invalid_query")
			a.Fail(t, http.MethodGet, "/v1/holidays?limit=-1", nil, http.StatusBadRequest, "invalid_query")
			// populate expands the type.
			got := a.List(t, "/v1/holidays?populate=absenceType&"+where(fmt.Sprintf(`{"id":%d}`, x)))
			if len(got) != 1 {
				t.Fatalf("populated holidays: %v", got)
			}
			if pt, _ := got[0]["absenceType"].(map[string]any); pt == nil || pt["name"] != "PublicHoliday" {
				t.Errorf("populated absenceType: %v", got[0]["absenceType"])
			}
		})

		t.Run("an absence leaves the holidays when its type changes", func(t *testing.T) {
			a.Object(t, http.MethodPatch, fmt.Sprintf("/v1/absences/%d", testenv.ID(t, newYear)), testenv.M{"absenceType": vacation}, http.StatusOK)
			if got := a.IDs(t, "/v1/holidays"); !slices.Equal(got, []int64{testenv.ID(t, xmas)}) {
				t.Errorf("holidays %v after the type change", got)
			}
			a.Fail(t, http.MethodGet, fmt.Sprintf("/v1/holidays/%d", testenv.ID(t, newYear)), nil, http.StatusNotFound, "not_found")
			a.Object(t, http.MethodPatch, fmt.Sprintf("/v1/absences/%d", testenv.ID(t, sick)), testenv.M{"absenceType": ph}, http.StatusOK)
			if got := a.IDs(t, "/v1/holidays"); !slices.Equal(got, slices.Sorted(slices.Values([]int64{testenv.ID(t, xmas), testenv.ID(t, sick)}))) {
				t.Errorf("holidays %v after the type change", got)
			}
			a.Fail(t, http.MethodPost, "/v1/absences", testenv.M{"absenceType": 999999, "day": "2026-01-01"}, http.StatusBadRequest, "invalid", "absenceType")
			a.Fail(t, http.MethodPost, "/v1/absences", testenv.M{"absenceType": "PublicHoliday"}, http.StatusBadRequest, "invalid", "absenceType")
		})
	})
}
