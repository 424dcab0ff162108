package timetrack

import (
	"cmp"
	"context"
	"slices"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/store"
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

func zeroSeconds() map[string]int64 { return map[string]int64{Work: 0, Worktime: 0, Break: 0} }

// TimeTotals sums the time entries of the days from..to (inclusive) per
// trackingType, and per group when groupBy names one ("": the totals
// alone). WORK totals never include WORKTIME or BREAK. The sums are the
// database's (internal/tally): the totals every write of an entry keeps,
// whole months from the monthly rows.
func (s *Service) TimeTotals(ctx context.Context, caller auth.Principal, from, to, groupBy string) (Totals, error) {
	if err := checkTotals(from, to, groupBy); err != nil {
		return Totals{}, err
	}
	var rows []tally.Row
	err := s.db.Scan(ctx, func(q store.Querier) error {
		var err error
		rows, err = tally.Sum(ctx, q, caller.TenantID, from, to, groupBy)
		return err
	})
	if err != nil {
		return Totals{}, err
	}
	out := Totals{From: from, To: to, GroupBy: groupBy, Totals: zeroSeconds()}
	groups := map[any]*Group{}
	entries := map[any]int64{}
	for _, r := range rows {
		out.Totals[r.Type] += r.Seconds
		if groupBy == "" {
			continue
		}
		g := groups[r.Key]
		if g == nil {
			g = &Group{Key: r.Key, Seconds: zeroSeconds(), groupBy: groupBy}
			groups[r.Key] = g
		}
		g.Seconds[r.Type] += r.Seconds
		entries[r.Key] += r.Entries
	}
	if groupBy == "" {
		return out, nil
	}
	out.Groups = make([]Group, 0, len(groups))
	for k, g := range groups {
		if entries[k] > 0 { // a group whose entries are all gone
			out.Groups = append(out.Groups, *g)
		}
	}
	slices.SortFunc(out.Groups, func(a, b Group) int { return compareKeys(a.Key, b.Key) })
	return out, nil
}

// compareKeys orders group keys: numbers, then strings, then null.
func compareKeys(a, b any) int {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
		return -1
	case string:
		switch y := b.(type) {
		case string:
			return cmp.Compare(x, y)
		case int64:
			return 1
		}
		return -1
	}
	if b == nil {
		return 0
	}
	return 1
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
