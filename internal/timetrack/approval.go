package timetrack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/records"
	"planwerk/internal/store"
)

// BulkApprove approves or unapproves many project days at once, all or
// nothing, and returns the resulting ProjectDay records in the order of
// the request (each pair once). Admins only.
//
// Input: {"action": "approve" | "unapprove", "items": [{"project": ID, "day": "YYYY-MM-DD"}, ...]}
func (s *Service) BulkApprove(ctx context.Context, caller auth.Principal, input map[string]any) ([]json.RawMessage, error) {
	if !caller.IsAdmin {
		return nil, errs.Forbid("only admins may approve project days")
	}
	status, pairs, problems := parseBulk(input)
	if len(problems) > 0 {
		return nil, errs.Fields(problems...)
	}
	var out []json.RawMessage
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		out = out[:0]
		if err := s.checkProjects(ctx, tx, caller.TenantID, pairs); err != nil {
			return err
		}
		if err := s.markDays(ctx, s.locks(tx, caller.TenantID), pairs, status); err != nil {
			return err
		}
		for _, p := range pairs {
			rec, err := s.setStatus(ctx, tx, caller.TenantID, p, status)
			if err != nil {
				return err
			}
			out = append(out, json.RawMessage(rec.Doc))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkProjects names every item whose project the tenant does not have.
func (s *Service) checkProjects(ctx context.Context, tx store.Querier, tenantID int64, pairs []pair) error {
	projects := s.db.Records(tx, tenantID, records.Collection(s.projects))
	var problems []errs.Problem
	for i, p := range pairs {
		ok, err := projects.Exists(ctx, p.project)
		if err != nil {
			return err
		}
		if !ok {
			problems = append(problems, errs.Problem{Field: fmt.Sprintf("items[%d].project", i),
				Message: fmt.Sprintf("no project %d in this tenant", p.project)})
		}
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}

// markDays gives the WORK entries of the days the new status and holds
// the days, following the approval's side of dayLocks: when it returns,
// no entry can join or leave the days before the transaction ends.
func (s *Service) markDays(ctx context.Context, l dayLocks, pairs []pair, status string) error {
	sorted := append([]pair(nil), pairs...)
	slices.SortFunc(sorted, comparePairs)
	if err := l.approvals(ctx); err != nil { // step 1
		return err
	}
	entries := s.db.Records(l.tx, l.tenant, records.Collection(s.entries))
	mark := func() error {
		for _, p := range sorted {
			if _, err := entries.Set(ctx, pairWhere(s.entries, p, workEntries(s.entries)), "validationStatus", status); err != nil {
				return err
			}
		}
		return nil
	}
	if err := mark(); err != nil { // step 2
		return err
	}
	for _, p := range sorted { // step 3
		if err := l.join(ctx, p); err != nil {
			return err
		}
	}
	if err := mark(); err != nil { // step 4
		return err
	}
	_, err := l.hold(ctx, sorted) // step 5
	return err
}

// setStatus writes the ProjectDay record of a pair, creating it if needed.
func (s *Service) setStatus(ctx context.Context, tx store.Querier, tenantID int64, p pair, status string) (store.Record, error) {
	cur, rec, err := s.status(ctx, tx, tenantID, p)
	if err != nil {
		return store.Record{}, err
	}
	doc := map[string]any{"project": p.project, "day": p.day, "validationStatus": status}
	days := s.db.Records(tx, tenantID, records.Collection(s.days))
	if rec == nil {
		return days.Insert(ctx, doc)
	}
	if cur == status {
		return *rec, nil
	}
	var old struct {
		CreatedAt string `json:"createdAt"`
	}
	if err := json.Unmarshal(rec.Doc, &old); err != nil {
		return store.Record{}, fmt.Errorf("project day %d: %w", rec.ID, err)
	}
	return days.Update(ctx, rec.ID, old.CreatedAt, doc)
}

func parseBulk(input map[string]any) (string, []pair, []errs.Problem) {
	var problems []errs.Problem
	status := ""
	switch input["action"] {
	case "approve":
		status = Approved
	case "unapprove":
		status = NotApproved
	default:
		problems = append(problems, errs.Problem{Field: "action", Message: "must be approve or unapprove"})
	}
	for k := range input {
		if k != "action" && k != "items" {
			problems = append(problems, errs.Problem{Field: k, Message: "is not a field of a bulk approval (action, items)"})
		}
	}
	items, ok := input["items"].([]any)
	if !ok || len(items) == 0 {
		return status, nil, append(problems, errs.Problem{Field: "items", Message: "must be a non-empty array of {project, day}"})
	}
	if len(items) > maxBulkItems {
		return status, nil, append(problems, errs.Problem{Field: "items", Message: fmt.Sprintf("at most %d items at once", maxBulkItems)})
	}
	seen := map[pair]bool{}
	var pairs []pair
	for i, it := range items {
		obj, ok := it.(map[string]any)
		name := fmt.Sprintf("items[%d]", i)
		if !ok {
			problems = append(problems, errs.Problem{Field: name, Message: "must be an object {project, day}"})
			continue
		}
		project, ok := records.AsID(obj["project"])
		if !ok || project <= 0 {
			problems = append(problems, errs.Problem{Field: name + ".project", Message: "must be a project id"})
		}
		day, dayOK := obj["day"].(string)
		if _, err := time.Parse(time.DateOnly, day); !dayOK || err != nil || len(day) != 10 {
			problems = append(problems, errs.Problem{Field: name + ".day", Message: "must be a date YYYY-MM-DD"})
			dayOK = false
		}
		if ok && project > 0 && dayOK {
			p := pair{project, day}
			if !seen[p] {
				seen[p] = true
				pairs = append(pairs, p)
			}
		}
	}
	return status, pairs, problems
}
