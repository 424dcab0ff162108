package httpapi

import (
	"net/http"

	"planwerk/internal/query"
)

// timeRoutes registers the account settings, approval, analytics and
// report endpoints.
func (s *Server) timeRoutes() {
	s.data("GET /v1/account/settings", s.getSettings)
	s.data("PATCH /v1/account/settings", s.updateSettings)
	s.data("PUT /v1/account/settings", s.updateSettings)
	s.data("POST /v1/approval/bulk-approve", s.bulkApprove)
	s.data("GET /v1/analytics/time-totals", s.timeTotals)
	s.data("GET /v1/reports/time", s.timeReport)
}

func (s *Server) getSettings(w http.ResponseWriter, r *http.Request) error {
	st, err := s.time.Settings(r.Context(), principalOf(r).TenantID)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, st)
	return nil
}

func (s *Server) updateSettings(w http.ResponseWriter, r *http.Request) error {
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	st, err := s.time.UpdateSettings(r.Context(), principalOf(r), input, r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, st)
	return nil
}

func (s *Server) bulkApprove(w http.ResponseWriter, r *http.Request) error {
	input, err := decodeBody(r)
	if err != nil {
		return err
	}
	days, err := s.time.BulkApprove(r.Context(), principalOf(r), input)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, days)
	return nil
}

func (s *Server) timeTotals(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	caller := principalOf(r)
	only, err := s.records.Restriction(r.Context(), caller, s.reg.Must("time-entries"), &query.Query{Params: q})
	if err != nil {
		return err
	}
	totals, err := s.time.TimeTotals(r.Context(), caller, q.Get("from"), q.Get("to"), q.Get("groupBy"), only)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, totals)
	return nil
}
