package timetrack

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"planwerk/internal/auth"
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
		return nil, forbidden("only admins may approve project days")
	}
	status, pairs, problems := parseBulk(input)
	if len(problems) > 0 {
		return nil, invalid(problems...)
	}
	pd := s.res(projectDays)
	te := s.res(timeEntries)
	projects, _ := s.reg.Get("projects")
	var out []json.RawMessage
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		out = out[:0]
		var problems []resource.Problem
		for i, p := range pairs {
			ok, err := s.db.RecordExists(ctx, tx, caller.TenantID, records.Collection(projects), p.project)
			if err != nil {
				return err
			}
			if !ok {
				problems = append(problems, resource.Problem{Field: fmt.Sprintf("items[%d].project", i),
					Message: fmt.Sprintf("no project %d in this tenant", p.project)})
			}
		}
		if len(problems) > 0 {
			return invalid(problems...)
		}
		// Lock order (PostgreSQL; SQLite runs one writer at a time). A
		// writer that changes, moves or deletes an entry holds the entry's
		// row (records.Update reads it FOR UPDATE) before it takes the
		// project-day locks in guardApprovedDays. If the approval held a
		// project day while waiting for the rows of its entries, it would
		// deadlock with such writers: PostgreSQL aborts one side, and under
		// steady edits the approval failed with a 500 after its retries.
		// So the approval locks the rows before the project days:
		//  1. one approval of the tenant at a time (writers never take it);
		//  2. the rows of the days' WORK entries, by writing their new
		//     state; holding no lock a writer wants, we wait for nobody
		//     who waits for us;
		//  3. the join locks of the days: from here on no WORK entry joins
		//     them (is created there or moved in), as joiners take the join
		//     lock before the project-day locks;
		//  4. the rows again, to hold those of entries that joined during
		//     step 2; from here on no entry joins or leaves the days;
		//  5. the project days: writers holding them hold no row of ours.
		// An entry that joins, leaves and rejoins a day within the few
		// milliseconds between steps 2 and 4 can still close a cycle;
		// PostgreSQL breaks it and the transaction is retried.
		sorted := append([]pair(nil), pairs...)
		slices.SortFunc(sorted, comparePairs)
		if err := s.db.Lock(ctx, tx, "approval:"+itoa(caller.TenantID)); err != nil {
			return err
		}
		markEntries := func() error {
			for _, p := range sorted {
				if _, err := s.db.SetAttribute(ctx, tx, caller.TenantID, records.Collection(te),
					s.pairWhere(te, p, workEntries(te)), "validationStatus", status); err != nil {
					return err
				}
			}
			return nil
		}
		if err := markEntries(); err != nil {
			return err
		}
		for _, p := range sorted {
			if err := s.db.Lock(ctx, tx, p.joinKey(caller.TenantID)); err != nil {
				return err
			}
		}
		if err := markEntries(); err != nil {
			return err
		}
		if _, err := s.lockPairs(ctx, tx, caller.TenantID, sorted); err != nil {
			return err
		}
		// The entries of the days are marked (steps 2 and 4), and none can
		// join or leave them before we commit.
		for _, p := range pairs {
			doc, err := s.setStatus(ctx, tx, caller.TenantID, pd, p, status)
			if err != nil {
				return err
			}
			out = append(out, json.RawMessage(doc))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// setStatus writes the ProjectDay record of a pair, creating it if needed.
func (s *Service) setStatus(ctx context.Context, tx store.Querier, tenantID int64, pd *resource.Resource, p pair, status string) (store.Doc, error) {
	cur, rec, err := s.status(ctx, tx, tenantID, p)
	if err != nil {
		return nil, err
	}
	doc := map[string]any{"project": p.project, "day": p.day, "validationStatus": status}
	if rec == nil {
		id, err := s.db.NewID(ctx, tx, tenantID)
		if err != nil {
			return nil, err
		}
		return s.db.InsertRecord(ctx, tx, tenantID, records.Collection(pd), id, doc)
	}
	if cur == status {
		return rec.Doc, nil
	}
	var old struct {
		CreatedAt string `json:"createdAt"`
	}
	if err := json.Unmarshal(rec.Doc, &old); err != nil {
		return nil, fmt.Errorf("project day %d: %w", rec.ID, err)
	}
	return s.db.UpdateRecord(ctx, tx, tenantID, records.Collection(pd), rec.ID, old.CreatedAt, doc)
}

func parseBulk(input map[string]any) (string, []pair, []resource.Problem) {
	var problems []resource.Problem
	status := ""
	switch input["action"] {
	case "approve":
		status = Approved
	case "unapprove":
		status = NotApproved
	default:
		problems = append(problems, resource.Problem{Field: "action", Message: "must be approve or unapprove"})
	}
	for k := range input {
		if k != "action" && k != "items" {
			problems = append(problems, resource.Problem{Field: k, Message: "is not a field of a bulk approval (action, items)"})
		}
	}
	items, ok := input["items"].([]any)
	if !ok || len(items) == 0 {
		return status, nil, append(problems, resource.Problem{Field: "items", Message: "must be a non-empty array of {project, day}"})
	}
	if len(items) > maxBulkItems {
		return status, nil, append(problems, resource.Problem{Field: "items", Message: fmt.Sprintf("at most %d items at once", maxBulkItems)})
	}
	seen := map[pair]bool{}
	var pairs []pair
	for i, it := range items {
		obj, ok := it.(map[string]any)
		name := fmt.Sprintf("items[%d]", i)
		if !ok {
			problems = append(problems, resource.Problem{Field: name, Message: "must be an object {project, day}"})
			continue
		}
		project, ok := asInt(obj["project"])
		if !ok || project <= 0 {
			problems = append(problems, resource.Problem{Field: name + ".project", Message: "must be a project id"})
		}
		day, dayOK := obj["day"].(string)
		if _, err := time.Parse(time.DateOnly, day); !dayOK || err != nil || len(day) != 10 {
			problems = append(problems, resource.Problem{Field: name + ".day", Message: "must be a date YYYY-MM-DD"})
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
