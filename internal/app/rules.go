package app

import (
	"planwerk/internal/documents"
	"planwerk/internal/holidays"
	"planwerk/internal/records"
	"planwerk/internal/skills"
	"planwerk/internal/timetrack"
	"planwerk/internal/users"
)

// domains are the services that hold the special rules of resources.
type domains struct {
	time     *timetrack.Service
	skills   *skills.Service
	holidays *holidays.Service
	users    *users.Service
}

// rules is the one table binding resources to their special rules, each
// under its kind (records.Hooks says what a kind may do: a Normalize fills
// in values, a Check only refuses); every resource not named here follows
// the registry's generic rules alone. records.New checks each name against
// the registry at start-up.
func (d domains) rules() records.Rules {
	return records.Rules{
		"users": {
			Prepare:   d.users.HashPassword,
			Normalize: users.NormalizeUser,
			Check:     users.CheckUser,
			Insert:    d.users.InsertUser,
			Update:    d.users.UpdateUser,
			Delete:    d.users.DeleteUser,
		},
		"documents": {
			Check:      documents.CheckDocument,
			Visible:    documents.VisibleDocument,
			ReadFilter: documents.FilterDocuments,
		},
		"time-entries": {
			Normalize:   timetrack.NormalizeEntry,
			Check:       d.time.CheckEntry,
			CheckDelete: d.time.CheckEntryDelete,
			Stored:      timetrack.KeepTotals,
		},
		"tasks": {
			Check: d.time.CheckTask,
		},
		"tags": {
			Check:      skills.CheckTag,
			ReadFilter: skills.FilterTags,
		},
		"tag-assignments": {
			Check: d.skills.CheckTagAssignment,
		},
		"skill-assignments": {
			Normalize: skills.NormalizeSkillAssignment,
			Check:     d.skills.CheckSkillAssignment,
			Insert:    d.skills.InsertSkillAssignment,
			Delete:    d.skills.ArchiveSkillAssignment,
		},
		"absence-types": {
			Check:       d.holidays.CheckAbsenceType,
			CheckDelete: holidays.CheckAbsenceTypeDelete,
		},
		"holidays": {
			Visible:    d.holidays.VisibleHoliday,
			ReadFilter: d.holidays.FilterHolidays,
		},
	}
}
