// Package timetrack holds the rules of time tracking: the account's timer
// settings, the field rules of time entries, the agreement of a WORK
// entry's task and project, the approval of project days and the time
// totals report.
package timetrack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/etag"
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
	// maxDuration is the longest duration an entry may have: 366 days,
	// so that no sum of a tenant's entries can leave 64 bits.
	maxDuration = 366 * 24 * 3600
)

// Store is what the rules need of the database.
type Store interface {
	Records(q store.Querier, tenantID int64, c store.Collection) store.Records
	// Scan runs long reads with a slot of the tenant's share of them.
	Scan(ctx context.Context, fn func(q store.Querier) error) error
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	// LockAll is Lock of each key in the order given, in one statement.
	LockAll(ctx context.Context, q store.Querier, tenantID int64, keys []string) error
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
	// SumTimeEntries sums time entries in one grouped read (reports).
	SumTimeEntries(ctx context.Context, q store.Querier, tenantID int64, rep store.TimeReport, row func(store.ReportRow) error) error
}

// Service applies the time tracking rules.
type Service struct {
	db       Store
	settings SettingsStore
	reg      *resource.Registry
	// The resources the rules read and write.
	entries, days, projects, tasks *resource.Resource
}

// New returns a Service; the tenants' account settings are in settings.
func New(db Store, settings SettingsStore, reg *resource.Registry) *Service {
	return &Service{db: db, settings: settings, reg: reg, entries: reg.Must(timeEntries), days: reg.Must(projectDays),
		projects: reg.Must("projects"), tasks: reg.Must("tasks")}
}

func field(r *resource.Resource, name string) query.Field {
	return r.Schema().Fields[name]
}

// Settings returns the tenant's account settings.
func (s *Service) Settings(ctx context.Context, tenantID int64) (Settings, error) {
	return s.settings.TenantSettings(ctx, nil, tenantID)
}

// UpdateSettings changes the account settings the input names. Admins
// only. ifMatch is the request's If-Match header ("" for none), checked
// under the settings' lock so that of two writers that read the same
// version only one wins.
func (s *Service) UpdateSettings(ctx context.Context, caller auth.Principal, input map[string]any, ifMatch string) (Settings, error) {
	if !caller.IsAdmin {
		return Settings{}, errs.Forbid("only admins may change the account settings")
	}
	var out Settings
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		if err := s.db.Lock(ctx, tx, caller.TenantID, "settings"); err != nil {
			return err
		}
		cur, err := s.settings.TenantSettings(ctx, tx, caller.TenantID)
		if err != nil {
			return err
		}
		before := cur
		if !etag.Match(ifMatch, etag.OfValue(cur)) {
			return errs.New(errs.PreconditionFailed, "precondition_failed",
				"the settings changed since the version If-Match names; read them again and resend the change")
		}
		var problems []errs.Problem
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
					problems = append(problems, errs.Problem{Field: k, Message: "must be DURATION or START_TIME_END_TIME"})
					continue
				}
				cur.TimerMode = mode
			case "useWorktime":
				b, ok := v.(bool)
				if !ok {
					problems = append(problems, errs.Problem{Field: k, Message: "must be true or false"})
					continue
				}
				cur.UseWorktime = b
			default:
				problems = append(problems, errs.Problem{Field: k, Message: "is not an account setting (timerMode, useWorktime)"})
			}
		}
		if len(problems) > 0 {
			return errs.Fields(problems...)
		}
		out = cur
		if err := s.settings.SetTenantSettings(ctx, tx, caller.TenantID, cur); err != nil {
			return err
		}
		return s.auditSettings(ctx, tx, caller.TenantID, before, cur)
	})
	return out, err
}

// auditSettings notes a change of the account settings in tx: settings
// make no change-feed change, and are no record (the entry's record is
// null). Before and after are the settings as GET shows them.
func (s *Service) auditSettings(ctx context.Context, tx store.Querier, tenantID int64, before, after Settings) error {
	b, err := json.Marshal(before)
	if err != nil {
		return fmt.Errorf("account settings: %w", err)
	}
	a, err := json.Marshal(after)
	if err != nil {
		return fmt.Errorf("account settings: %w", err)
	}
	return s.db.Audit(ctx, tx, tenantID, store.AuditNote{Resource: "settings", Op: store.OpUpdate, Before: b, After: a})
}

// pair is one (project, day).
type pair struct {
	project int64
	day     string
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

// pairWhere selects the records of one (project, day).
func pairWhere(r *resource.Resource, p pair, extra ...query.Node) query.Node {
	terms := []query.Node{
		query.Equal(field(r, "project"), query.Int(p.project)),
		query.Equal(field(r, "day"), query.Str(p.day)),
	}
	return &query.And{Terms: append(terms, extra...)}
}

// status returns the approval state of one project day (absent: NOTAPPROVED)
// and its record, if any.
func (s *Service) status(ctx context.Context, tx store.Querier, tenantID int64, p pair) (string, *store.Record, error) {
	recs, err := s.db.Records(tx, tenantID, records.Collection(s.days)).Find(ctx, pairWhere(s.days, p), 1)
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
