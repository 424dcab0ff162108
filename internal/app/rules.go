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

// rules is the one table binding resources to their special rules; every
// resource not named here follows the registry's generic rules alone.
// records.New checks each name against the registry at start-up.
func (d domains) rules() records.Rules {
	return records.Rules{
		"users":             d.users.Hooks(),
		"documents":         documents.Hooks(),
		"time-entries":      d.time.EntryHooks(),
		"tags":              d.skills.TagHooks(),
		"tag-assignments":   d.skills.TagAssignmentHooks(),
		"skill-assignments": d.skills.AssignmentHooks(),
		"absence-types":     d.holidays.TypeHooks(),
		"holidays":          d.holidays.HolidayHooks(),
	}
}
