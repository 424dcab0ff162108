// Package timetrack holds the rules of time tracking: the account's timer
// settings, the field rules of time entries, the approval of project days
// and the time totals report.
package timetrack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"planwerk/internal/auth"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Tracking types and approval states.
const (
	Work     = "WORK"
	Worktime = "WORKTIME"
	Break    = "BREAK"

	Approved    = "APPROVED"
	NotApproved = "NOTAPPROVED"

	Duration      = "DURATION"
	StartTimeEnd  = "START_TIME_END_TIME"
	timeEntries   = "time-entries"
	projectDays   = "project-days"
	maxBulkItems  = 1000
	maxTotalsDays = 366 * 5
)

// Service applies the time tracking rules.
type Service struct {
	db  *store.DB
	reg *resource.Registry
}

// New returns a Service.
func New(db *store.DB, reg *resource.Registry) *Service {
	return &Service{db: db, reg: reg}
}

func (s *Service) res(name string) *resource.Resource {
	r, ok := s.reg.Get(name)
	if !ok {
		panic("timetrack: registry has no " + name)
	}
	return r
}

func field(r *resource.Resource, name string) query.Field {
	return r.Schema().Fields[name]
}

func invalid(problems ...resource.Problem) error {
	return &records.Error{Kind: records.Invalid, Code: "invalid", Message: "the request is not valid", Problems: problems}
}

func forbidden(msg string) error {
	return &records.Error{Kind: records.Forbidden, Code: "forbidden", Message: msg}
}

// Settings returns the tenant's account settings.
func (s *Service) Settings(ctx context.Context, tenantID int64) (store.Settings, error) {
	return s.db.TenantSettings(ctx, nil, tenantID)
}

// UpdateSettings changes the account settings the input names. Admins only.
func (s *Service) UpdateSettings(ctx context.Context, caller auth.Principal, input map[string]any) (store.Settings, error) {
	if !caller.IsAdmin {
		return store.Settings{}, forbidden("only admins may change the account settings")
	}
	var out store.Settings
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		cur, err := s.db.TenantSettings(ctx, tx, caller.TenantID)
		if err != nil {
			return err
		}
		var problems []resource.Problem
		keys := make([]string, 0, len(input))
		for k := range input {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			switch v := input[k]; k {
			case "timerMode":
				mode, ok := v.(string)
				if !ok || (mode != Duration && mode != StartTimeEnd) {
					problems = append(problems, resource.Problem{Field: k, Message: "must be DURATION or START_TIME_END_TIME"})
					continue
				}
				cur.TimerMode = mode
			case "useWorktime":
				b, ok := v.(bool)
				if !ok {
					problems = append(problems, resource.Problem{Field: k, Message: "must be true or false"})
					continue
				}
				cur.UseWorktime = b
			default:
				problems = append(problems, resource.Problem{Field: k, Message: "is not an account setting (timerMode, useWorktime)"})
			}
		}
		if len(problems) > 0 {
			return invalid(problems...)
		}
		out = cur
		return s.db.SetTenantSettings(ctx, tx, caller.TenantID, cur)
	})
	return out, err
}

// pair is one (project, day).
type pair struct {
	project int64
	day     string
}

func (p pair) lockKey(tenantID int64) string {
	return "project-day:" + strconv.FormatInt(tenantID, 10) + ":" + strconv.FormatInt(p.project, 10) + ":" + p.day
}

// joinKey is the lock a write takes before it brings a WORK entry into
// the project day (creates it there or moves it in), and that an approval
// of the day holds from before it locks the day's entries.
func (p pair) joinKey(tenantID int64) string {
	return "project-day-join:" + strconv.FormatInt(tenantID, 10) + ":" + strconv.FormatInt(p.project, 10) + ":" + p.day
}

func comparePairs(a, b pair) int {
	if a.project != b.project {
		if a.project < b.project {
			return -1
		}
		return 1
	}
	switch {
	case a.day < b.day:
		return -1
	case a.day > b.day:
		return 1
	}
	return 0
}

// lockPairs serialises the writers of the given project days for the rest
// of the transaction. Keys are taken in a fixed order, so two transactions
// never wait for each other in a circle.
func (s *Service) lockPairs(ctx context.Context, tx store.Querier, tenantID int64, pairs []pair) ([]pair, error) {
	slices.SortFunc(pairs, comparePairs)
	pairs = slices.Compact(pairs)
	for _, p := range pairs {
		if err := s.db.Lock(ctx, tx, p.lockKey(tenantID)); err != nil {
			return nil, err
		}
	}
	return pairs, nil
}

// pairWhere selects the records of one (project, day).
func (s *Service) pairWhere(r *resource.Resource, p pair, extra ...query.Node) query.Node {
	terms := []query.Node{
		&query.Cond{Field: field(r, "project"), Op: query.Eq, Values: []query.Value{{Kind: query.KindNumber, Int: p.project, Num: float64(p.project), IsInt: true}}},
		&query.Cond{Field: field(r, "day"), Op: query.Eq, Values: []query.Value{{Kind: query.KindString, Str: p.day}}},
	}
	return &query.And{Terms: append(terms, extra...)}
}

// status returns the approval state of one project day (absent: NOTAPPROVED)
// and its record, if any.
func (s *Service) status(ctx context.Context, tx store.Querier, tenantID int64, p pair) (string, *store.Record, error) {
	r := s.res(projectDays)
	recs, err := s.db.FindRecords(ctx, tx, tenantID, records.Collection(r), s.pairWhere(r, p), 1)
	if err != nil || len(recs) == 0 {
		return NotApproved, nil, err
	}
	var doc struct {
		ValidationStatus string `json:"validationStatus"`
	}
	if err := json.Unmarshal(recs[0].Doc, &doc); err != nil {
		return "", nil, fmt.Errorf("project day %d: %w", recs[0].ID, err)
	}
	return doc.ValidationStatus, &recs[0], nil
}
