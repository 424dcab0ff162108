package timetrack

import (
	"context"
	"fmt"
	"strings"

	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/store"
)

// conflictsShown is how many conflicting entries a refused change of a
// task's project names.
const conflictsShown = 3

// workTask returns the task and project of a WORK entry that has both.
func workTask(doc records.DocView) (task, project int64, ok bool) {
	if tt, _ := doc.String("trackingType"); tt != Work {
		return 0, 0, false
	}
	task, taskOK := doc.Ref("task")
	project, projectOK := doc.Ref("project")
	return task, project, taskOK && projectOK
}

// checkEntryTask refuses a WORK entry whose task belongs to another
// project than the entry; a task without project fits every project. It
// applies to the entry as the write leaves it, so an entry stored before
// the rule that disagrees is refused every change until its task or
// project is set right (as the field rules apply the current settings).
// A write that brings the entry to its (task, project) — a create, or a
// change of its task, its project or its trackingType — joins the task
// (readTask).
func (s *Service) checkEntryTask(ctx context.Context, c records.Change) error {
	task, project, ok := workTask(c.New)
	if !ok {
		return nil
	}
	oldTask, oldProject, wasWork := workTask(c.Old)
	join := !wasWork || oldTask != task || oldProject != project
	doc, found, err := s.readTask(ctx, c, task, join)
	if err != nil || !found {
		return err // a deleted task the entry still names has nothing to agree with
	}
	if of, ok := doc.Ref("project"); ok && of != project {
		return errs.Fields(errs.Problem{Field: "task",
			Message: fmt.Sprintf("%d belongs to project %d, not to the entry's project %d: choose a task of project %d or one without project", task, of, project, project)})
	}
	return nil
}

// CheckTask (Check) refuses to give a task a project while WORK entries
// of another project name it. Taking the project away, or keeping it, is
// always allowed. A new task is named by no entry yet: ids are never
// reused, and a task's id is drawn after its checks.
//
// The task's row is locked FOR UPDATE before this runs (records locks the
// row an update changes), and entries that join the task hold it FOR
// SHARE (readTask): the entries read here are all there are until the
// change commits.
func (s *Service) CheckTask(ctx context.Context, c records.Change) error {
	project, ok := c.New.Ref("project")
	if !ok || c.ID == 0 {
		return nil
	}
	if old, had := c.Old.Ref("project"); had && old == project {
		return nil
	}
	where := query.All(
		query.Equal(field(s.entries, "task"), query.Int(c.ID)),
		workEntries(s.entries),
		query.NotEqual(field(s.entries, "project"), query.Int(project)),
		query.NotEqual(field(s.entries, "project"), query.Null()),
	)
	recs, err := s.db.Records(c.Tx, c.Caller.TenantID, records.Collection(s.entries)).Find(ctx, where, conflictsShown+1)
	if err != nil || len(recs) == 0 {
		return err
	}
	return errs.Fields(errs.Problem{Field: "project", Message: conflicts(recs, project)})
}

// conflicts says which WORK entries keep a task from moving to project.
func conflicts(recs []store.Record, project int64) string {
	var named []string
	for _, rec := range recs[:min(len(recs), conflictsShown)] {
		doc, err := records.Decode(rec.Doc)
		of, ok := doc.Ref("project")
		if err != nil || !ok {
			named = append(named, itoa(rec.ID))
			continue
		}
		named = append(named, fmt.Sprintf("%d (project %d)", rec.ID, of))
	}
	more := ""
	if len(recs) > conflictsShown {
		more = " and more"
	}
	return fmt.Sprintf("%d cannot be the task's project while WORK time entries of other projects name the task: %s%s; move them to project %d or to another task first, or leave the task without project",
		project, strings.Join(named, ", "), more, project)
}
