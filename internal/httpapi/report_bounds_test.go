//go:build system

package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestReportBounds: a report of more than 100,000 groups at its deepest
// level, and a PDF of more than 20,000 groups, are refused naming
// groupBy; a report of exactly as many is answered.
func TestReportBounds(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "repbounds")
		admin := srv.SignIn(t, tn)
		db, ctx := srv.Service.DB, context.Background()
		const n = 100_001 // tickets 0 … 100000, one entry each
		for start := 0; start < n; start += 10_000 {
			err := db.Tx(ctx, func(q store.Querier) error {
				for i := start; i < min(n, start+10_000); i++ {
					id, err := db.NewID(ctx, q, tn.ID)
					if err != nil {
						return err
					}
					doc := map[string]any{"trackingType": "WORK", "day": "2026-01-05", "user": admin.UserID,
						"duration": 60, "sorting": 1, "ticket": i}
					if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, id, doc); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		path := func(where string) string {
			return "/v1/reports/time?from=2026-01-01&to=2026-01-31&groupBy=ticket&where=" + url.QueryEscape(where)
		}
		admin.Fail(t, http.MethodGet, path(`{}`), nil, http.StatusBadRequest, "invalid", "groupBy")
		ans := admin.Object(t, http.MethodGet, path(`{"ticket":{"<":100000}}`), nil, http.StatusOK)
		if groups := ans["groups"].([]any); len(groups) != 100_000 {
			t.Errorf("report of 100000 tickets: %d groups", len(groups))
		}
		pdf := admin.With("Accept", "application/pdf")
		st, _, raw := testenv.Do(t, pdf.Request(t, http.MethodGet, path(`{"ticket":{"<":20001}}`), nil))
		testenv.WantProblem(t, testenv.WantError(t, "PDF of 20001 groups", st, raw, http.StatusBadRequest, "invalid"), "groupBy")
		st, h, raw := testenv.Do(t, pdf.Request(t, http.MethodGet, path(`{"ticket":{"<":20000}}`), nil))
		if st != http.StatusOK || h.Get("Content-Type") != "application/pdf" {
			t.Errorf("PDF of 20000 groups: %d %s %.200s", st, h.Get("Content-Type"), raw)
		}
		t.Logf("PDF of 20000 groups: %d bytes", len(raw))
	})
}
