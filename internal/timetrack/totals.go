package timetrack

import (
	"context"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/query"
	"planwerk/internal/tally"
)

// Totals is the answer of GET /v1/analytics/time-totals: without a
// grouping, the totals alone.
type Totals struct {
	From    string           `json:"from"`
	To      string           `json:"to"`
	GroupBy string           `json:"groupBy,omitzero"`
	Groups  []Group          `json:"groups,omitzero"`
	Totals  map[string]int64 `json:"totals"`
}

// Group is the time of one user, project or day, in seconds per trackingType.
type Group struct {
	Key     any              `json:"-"`
	Seconds map[string]int64 `json:"seconds"`
	groupBy string
}

// MarshalJSON names the key after the grouping: {"project": 5, "seconds": {...}}.
func (g Group) MarshalJSON() ([]byte, error) {
	return jsontext.Marshal(map[string]any{g.groupBy: g.Key, "seconds": g.Seconds})
}

// TimeTotals sums the time entries of the days from..to (inclusive) that
// the caller's list of time entries shows (only: at most those; nil:
// every entry) per trackingType, and per group when groupBy names one
// ("": the totals alone). WORK totals never include WORKTIME or BREAK.
// It is the report of GET /v1/reports/time grouped by one level, in the
// shape of its own.
func (s *Service) TimeTotals(ctx context.Context, caller auth.Principal, from, to, groupBy string, only query.Node) (Totals, error) {
	if err := checkTotals(from, to, groupBy); err != nil {
		return Totals{}, err
	}
	p := reportPlan{from: from, to: to, only: only}
	if groupBy != "" {
		var err error
		if p.levels, err = s.parseGroupBy(groupBy); err != nil {
			return Totals{}, err
		}
	}
	rep, err := s.runReport(ctx, caller, p)
	if err != nil {
		return Totals{}, err
	}
	out := Totals{From: from, To: to, GroupBy: groupBy, Totals: rep.Totals.Seconds.byType()}
	if groupBy == "" {
		return out, nil
	}
	out.Groups = make([]Group, len(rep.Groups))
	for i, g := range rep.Groups {
		out.Groups[i] = Group{Key: g.Key, Seconds: g.Seconds.byType(), groupBy: groupBy}
	}
	return out, nil
}

// byType is the seconds per trackingType.
func (s Seconds) byType() map[string]int64 {
	out := make(map[string]int64, len(tally.Types))
	for i, t := range tally.Types {
		out[t] = s[i]
	}
	return out
}

// checkTotals names every problem of a totals request.
func checkTotals(from, to, groupBy string) error {
	var problems []errs.Problem
	fromDay, err1 := time.Parse(time.DateOnly, from)
	toDay, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || len(from) != 10 {
		problems = append(problems, errs.Problem{Field: "from", Message: "must be a date YYYY-MM-DD"})
	}
	if err2 != nil || len(to) != 10 {
		problems = append(problems, errs.Problem{Field: "to", Message: "must be a date YYYY-MM-DD"})
	}
	if err1 == nil && err2 == nil && toDay.Before(fromDay) {
		problems = append(problems, errs.Problem{Field: "to", Message: "must not be before from"})
	}
	if err1 == nil && err2 == nil && toDay.Sub(fromDay) > maxTotalsDays*24*time.Hour {
		problems = append(problems, errs.Problem{Field: "to", Message: "the range may span at most five years"})
	}
	if groupBy != "" && groupBy != "user" && groupBy != "project" && groupBy != "day" {
		problems = append(problems, errs.Problem{Field: "groupBy", Message: "must be user, project or day, or left out for the totals alone"})
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}
