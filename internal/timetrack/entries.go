package timetrack

import (
	"context"
	"fmt"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/tally"
)

// NormalizeEntry (Normalize): an entry is WORK unless it says otherwise; a
// WORK entry that is written is not approved (CheckEntry refuses writes
// to approved days), and other entries have no validationStatus.
func NormalizeEntry(_ context.Context, w *records.Write) error {
	if !w.New.Has("trackingType") {
		w.New["trackingType"] = Work
	}
	if tt, _ := w.New.String("trackingType"); tt == Work {
		w.New["validationStatus"] = NotApproved
	} else {
		delete(w.New, "validationStatus")
	}
	return nil
}

// CheckEntry (Check) applies the field rules of the tenant's current
// settings, keeps WORK entries off approved days and keeps a WORK entry's
// task and project in agreement. The task comes last: its lock is the last
// an entry write takes (readTask).
func (s *Service) CheckEntry(ctx context.Context, c records.Change) error {
	settings, err := s.settings.TenantSettings(ctx, c.Tx, c.Caller.TenantID)
	if err != nil {
		return err
	}
	if problems := fieldRules(c.New, settings); len(problems) > 0 {
		return errs.Fields(problems...)
	}
	if err := s.guardApprovedDays(ctx, c); err != nil {
		return err
	}
	return s.checkEntryTask(ctx, c)
}

// CheckEntryDelete (CheckDelete) keeps WORK entries of approved days.
func (s *Service) CheckEntryDelete(ctx context.Context, c records.Change) error {
	return s.guardApprovedDays(ctx, c)
}

// workPair returns the (project, day) of a WORK entry.
func workPair(doc records.DocView) (pair, bool) {
	if tt, _ := doc.String("trackingType"); tt != Work {
		return pair{}, false
	}
	project, ok := doc.Ref("project")
	day, dayOK := doc.String("day")
	return pair{project, day}, ok && dayOK
}

// guardApprovedDays holds the project days a write leaves and enters, and
// refuses it when one of them is approved: the writer's side of dayLocks.
// The days stay held until the write commits, and approvals take the same
// locks: no WORK entry reaches a day after its approval has committed.
func (s *Service) guardApprovedDays(ctx context.Context, c records.Change) error {
	l := s.locks(c.Tx, c.Caller.TenantID)
	var pairs []pair
	oldPair, wasWork := workPair(c.Old)
	if wasWork {
		pairs = append(pairs, oldPair)
	}
	if p, ok := workPair(c.New); ok {
		if !wasWork || p != oldPair {
			if err := l.join(ctx, p); err != nil {
				return err
			}
		}
		pairs = append(pairs, p)
	}
	pairs, err := l.hold(ctx, pairs)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		status, _, err := s.status(ctx, c.Tx, c.Caller.TenantID, p)
		if err != nil {
			return err
		}
		if status == Approved {
			return errs.New(errs.Forbidden, "day_approved",
				"project "+itoa(p.project)+" is approved on "+p.day+": its WORK entries cannot be created, changed or deleted "+
					"until an admin unapproves the day (POST /v1/approval/bulk-approve "+
					`{"action": "unapprove", "items": [{"project": `+itoa(p.project)+`, "day": "`+p.day+`"}]})`)
		}
	}
	return nil
}

// fieldRules checks a time entry against the tables of docs/api.md
// "Time entry fields" for its
// trackingType and the account's timerMode and useWorktime.
func fieldRules(doc records.DocView, st Settings) []errs.Problem {
	var problems []errs.Problem
	has := doc.Has
	need := func(k, why string) {
		if !has(k) {
			problems = append(problems, errs.Problem{Field: k, Message: "is required " + why})
		}
	}
	refuse := func(k, why string) {
		if has(k) {
			problems = append(problems, errs.Problem{Field: k, Message: "must be omitted " + why})
		}
	}
	timeFields := func(tt string) {
		switch st.TimerMode {
		case StartTimeEnd:
			why := "for " + tt + " entries when timerMode is START_TIME_END_TIME"
			need("startTime", why) // endTime stays omitted while the entry runs
			refuse("duration", why)
			refuse("sorting", why)
		default:
			why := "for " + tt + " entries when timerMode is DURATION"
			need("duration", why)
			need("sorting", why)
			refuse("startTime", why)
			refuse("endTime", why)
		}
	}
	switch tt, _ := doc.String("trackingType"); tt {
	case Work:
		need("project", "for WORK entries")
		need("task", "for WORK entries")
		timeFields(tt)
	case Worktime:
		why := "for WORKTIME entries"
		refuse("project", why)
		refuse("task", why)
		need("startTime", why)
		need("endTime", why)
		refuse("duration", why)
		refuse("sorting", why)
	case Break:
		refuse("project", "for BREAK entries")
		refuse("task", "for BREAK entries")
		if st.UseWorktime {
			why := "for BREAK entries when the account uses worktime"
			need("startTime", why)
			need("endTime", why)
			refuse("duration", why)
		} else {
			timeFields(tt)
		}
	}
	// One problem per field: a field that must be omitted is not also
	// told what value it should have.
	named := func(k string) bool {
		for _, p := range problems {
			if p.Field == k {
				return true
			}
		}
		return false
	}
	if d, ok := doc.Int("duration"); ok && d < 0 && !named("duration") {
		problems = append(problems, errs.Problem{Field: "duration", Message: "must not be negative"})
	} else if ok && d > maxDuration && !named("duration") {
		problems = append(problems, errs.Problem{Field: "duration", Message: fmt.Sprintf("must be at most %d seconds (366 days)", maxDuration)})
	}
	if start, end, ok := times(doc); ok && !end.After(start) && !named("endTime") {
		problems = append(problems, errs.Problem{Field: "endTime", Message: "must be after startTime"})
	}
	return problems
}

// times returns an entry's start and end when it has both.
func times(doc records.DocView) (time.Time, time.Time, bool) {
	start, ok1 := doc.Time("startTime")
	end, ok2 := doc.Time("endTime")
	return start, end, ok1 && ok2
}

// KeepTotals (Stored) moves the tenant's time totals from what the entry
// counted before the write to what it counts after, in the write's
// transaction.
func KeepTotals(ctx context.Context, w *records.Write) error {
	before, after := counted(w.Old), counted(w.New)
	if before == nil && after == nil {
		return nil
	}
	return tally.Move(ctx, w.Tx, w.Caller.TenantID, before, after)
}

// counted is what a document counts toward the totals (nil: nothing).
func counted(doc records.Doc) *tally.Entry {
	if doc == nil {
		return nil
	}
	e, ok := tally.Of(doc)
	if !ok {
		return nil
	}
	return &e
}

func workEntries(r *resource.Resource) query.Node {
	return query.Equal(field(r, "trackingType"), query.Str(Work))
}
