package timetrack

import (
	"cmp"
	"context"
	"encoding/json"
	"math"
	"slices"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
)

// Totals is the answer of GET /v1/analytics/time-totals.
type Totals struct {
	From    string           `json:"from"`
	To      string           `json:"to"`
	GroupBy string           `json:"groupBy"`
	Groups  []Group          `json:"groups"`
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
	return json.Marshal(map[string]any{g.groupBy: g.Key, "seconds": g.Seconds})
}

func zeroSeconds() map[string]int64 { return map[string]int64{Work: 0, Worktime: 0, Break: 0} }

// TimeTotals sums the time entries of the days from..to (inclusive) per
// group and trackingType. WORK totals never include WORKTIME or BREAK.
func (s *Service) TimeTotals(ctx context.Context, caller auth.Principal, from, to, groupBy string) (Totals, error) {
	if err := checkTotals(from, to, groupBy); err != nil {
		return Totals{}, err
	}
	te := s.entries
	day := field(te, "day")
	q := &query.Query{
		Where: &query.And{Terms: []query.Node{
			&query.Cond{Field: day, Op: query.Ge, Values: []query.Value{{Kind: query.KindString, Str: from}}},
			&query.Cond{Field: day, Op: query.Le, Values: []query.Value{{Kind: query.KindString, Str: to}}},
		}},
		Limit: math.MaxInt32,
	}
	out := Totals{From: from, To: to, GroupBy: groupBy, Totals: zeroSeconds()}
	groups := map[any]*Group{}
	err := s.db.ListRecords(ctx, caller.TenantID, records.Collection(te), q, func(b []byte) error {
		var doc records.Doc
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
		tt, _ := doc.String("trackingType")
		if tt != Work && tt != Worktime && tt != Break {
			return nil
		}
		key := doc[groupBy]
		if f, ok := key.(float64); ok {
			key = int64(f)
		}
		g := groups[key]
		if g == nil {
			g = &Group{Key: key, Seconds: zeroSeconds(), groupBy: groupBy}
			groups[key] = g
		}
		secs := seconds(doc)
		g.Seconds[tt] += secs
		out.Totals[tt] += secs
		return nil
	})
	if err != nil {
		return Totals{}, err
	}
	out.Groups = make([]Group, 0, len(groups))
	for _, g := range groups {
		out.Groups = append(out.Groups, *g)
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
	if groupBy != "user" && groupBy != "project" && groupBy != "day" {
		problems = append(problems, errs.Problem{Field: "groupBy", Message: "must be user, project or day"})
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}
