package timetrack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
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
		if err := s.checkProjects(ctx, tx, caller.TenantID, pairs); err != nil {
			return err
		}
		if err := s.markDays(ctx, s.locks(tx, caller.TenantID), pairs, status); err != nil {
			return err
		}
		var err error
		out, err = s.setStatuses(ctx, tx, caller.TenantID, pairs, status)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// checkProjects names every item whose project the tenant does not have;
// it asks for each project once, all in one statement.
func (s *Service) checkProjects(ctx context.Context, tx store.Querier, tenantID int64, pairs []pair) error {
	var ids []int64
	for _, p := range pairs {
		if !slices.Contains(ids, p.project) {
			ids = append(ids, p.project)
		}
	}
	have, err := s.db.Records(tx, tenantID, records.Collection(s.projects)).Existing(ctx, ids)
	if err != nil {
		return err
	}
	var problems []errs.Problem
	for i, p := range pairs {
		if !have[p.project] {
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
// no entry can join or leave the days before the transaction ends. Each
// step is one statement for all the days (the rows: one for each group
// of groupPairs).
func (s *Service) markDays(ctx context.Context, l dayLocks, pairs []pair, status string) error {
	sorted := append([]pair(nil), pairs...)
	slices.SortFunc(sorted, comparePairs)
	if err := l.approvals(ctx); err != nil { // step 1
		return err
	}
	entries := s.db.Records(l.tx, l.tenant, records.Collection(s.entries))
	groups := groupPairs(sorted)
	mark := func() error {
		for _, g := range groups {
			if _, err := entries.Set(ctx, g.where(s.entries, workEntries(s.entries)), "validationStatus", status); err != nil {
				return err
			}
		}
		return nil
	}
	if err := mark(); err != nil { // step 2
		return err
	}
	if err := l.join(ctx, sorted...); err != nil { // step 3
		return err
	}
	if err := mark(); err != nil { // step 4
		return err
	}
	_, err := l.hold(ctx, sorted) // step 5
	return err
}

// setStatuses writes the ProjectDay records of the pairs, creating those
// not stored yet, and returns them in the order of pairs. It reads the
// records of each group of groupPairs in one statement and writes the
// changed ones together.
func (s *Service) setStatuses(ctx context.Context, tx store.Querier, tenantID int64, pairs []pair, status string) ([]json.RawMessage, error) {
	days := s.db.Records(tx, tenantID, records.Collection(s.days))
	type current struct {
		rec       store.Record
		status    string
		createdAt string
	}
	stored := map[pair]current{}
	sorted := append([]pair(nil), pairs...)
	slices.SortFunc(sorted, comparePairs)
	for _, g := range groupPairs(sorted) {
		// A pair has one record at most (the key project_days_key). The
		// rows are locked as read, for the writes below.
		recs, err := days.FindLocked(ctx, g.where(s.days), len(g.projects)*len(g.days))
		if err != nil {
			return nil, err
		}
		for _, rec := range recs {
			doc, err := records.Decode(rec.Doc)
			if err != nil {
				return nil, fmt.Errorf("project day %d: %w", rec.ID, err)
			}
			project, _ := doc.Ref("project")
			day, _ := doc.String("day")
			p := pair{project, day}
			if _, seen := stored[p]; !seen {
				cur, _ := doc.String("validationStatus")
				createdAt, _ := doc.String("createdAt")
				stored[p] = current{rec: rec, status: cur, createdAt: createdAt}
			}
		}
	}
	out := make([]json.RawMessage, len(pairs))
	var puts []store.Put
	var at []int // the index in out of each put
	for i, p := range pairs {
		cur, ok := stored[p]
		if ok && cur.status == status {
			out[i] = json.RawMessage(cur.rec.Doc)
			continue
		}
		put := store.Put{Doc: map[string]any{"project": p.project, "day": p.day, "validationStatus": status}}
		if ok {
			put.ID, put.CreatedAt = cur.rec.ID, cur.createdAt
		}
		puts = append(puts, put)
		at = append(at, i)
	}
	recs, err := days.PutAll(ctx, puts)
	if err != nil {
		return nil, err
	}
	for k, rec := range recs {
		out[at[k]] = json.RawMessage(rec.Doc)
	}
	return out, nil
}

// pairGroup is the pairs of some projects on some days: each of the
// projects on each of the days.
type pairGroup struct {
	projects []int64
	days     []string
}

// groupPairs covers pairs, sorted and without repeats, with groups that
// hold no other pair and no pair twice: the projects of a group have the
// same days. A month of one project is one group, and so is a day of
// many projects.
func groupPairs(sorted []pair) []pairGroup {
	var groups []pairGroup
	byDays := map[string]int{}
	for i := 0; i < len(sorted); {
		project := sorted[i].project
		var days []string
		for ; i < len(sorted) && sorted[i].project == project; i++ {
			days = append(days, sorted[i].day)
		}
		k := strings.Join(days, ",")
		if g, ok := byDays[k]; ok {
			groups[g].projects = append(groups[g].projects, project)
			continue
		}
		byDays[k] = len(groups)
		groups = append(groups, pairGroup{projects: []int64{project}, days: days})
	}
	return groups
}

// where selects the records of the group's pairs; its days are sorted.
func (g pairGroup) where(r *resource.Resource, extra ...query.Node) query.Node {
	projects := make([]query.Value, len(g.projects))
	for i, p := range g.projects {
		projects[i] = query.Int(p)
	}
	days := make([]query.Value, len(g.days))
	for i, d := range g.days {
		days[i] = query.Str(d)
	}
	day := field(r, "day")
	terms := []query.Node{&query.Cond{Field: field(r, "project"), Op: query.In, Values: projects}}
	if len(days) > 1 {
		// The days' range bounds the read of the (project, day) index
		// whatever the engine's estimates: PostgreSQL would otherwise
		// read all of a project's days in key order, testing each
		// against the list.
		terms = append(terms, &query.Cond{Field: day, Op: query.Ge, Values: days[:1]},
			&query.Cond{Field: day, Op: query.Le, Values: days[len(days)-1:]})
	}
	terms = append(terms, &query.Cond{Field: day, Op: query.In, Values: days})
	return &query.And{Terms: append(terms, extra...)}
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
