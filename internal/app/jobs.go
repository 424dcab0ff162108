package app

import (
	"context"
	"time"

	"planwerk/internal/jobs"
)

// housekeepingEvery is how often the purges and the file sweep run. Neither
// runs at start-up: starting costs the same however many tenants and files
// there are, and instances restarted together do not all sweep at once. A
// file left by a crash waits an hour longer; it takes no request's space.
const housekeepingEvery = time.Hour

// statisticsEvery is how often the planner's statistics are looked at:
// SQLite renews those of the tables that have grown or shrunk tenfold
// since (a look at the tables' sizes, milliseconds of the write lock,
// when none has), PostgreSQL's autovacuum keeps its own. The database
// renews them when it is opened and migrated too. Every minute, so that
// a database made empty and filled through the API (a company's year
// loaded in its first minutes) is planned by statistics of its rows
// within a minute, and again after each tenfold growth.
const statisticsEvery = time.Minute

// exportPurgeEvery is how often the exports whose day is up are removed,
// with their archives.
const exportPurgeEvery = 5 * time.Minute

// stopJobsWithin bounds how long Close waits for the jobs to stop. The
// dispatcher's deliveries in flight are cut at once; giving their leases
// up takes at most a few seconds.
const stopJobsWithin = 30 * time.Second

// jobs is the one table of the service's background work: Start starts
// each and Close stops and waits for each. Nothing runs in the
// background outside it.
func (s *Service) jobs() []jobs.Job {
	js := []jobs.Job{
		{Name: "purge", Every: housekeepingEvery, FirstDelay: housekeepingEvery, Run: func(ctx context.Context) error {
			return purgeExpired(ctx, s, s.Config.ChangeRetention, s.log)
		}},
		{Name: "file-sweep", Every: housekeepingEvery, FirstDelay: housekeepingEvery, Run: func(ctx context.Context) error {
			return sweepFiles(ctx, s, s.log)
		}},
		{Name: "statistics", Every: statisticsEvery, FirstDelay: statisticsEvery, Run: s.DB.RefreshStatistics},
		{Name: "webhook-dispatcher", Lifelong: true, Run: s.Webhooks.Run},
		// One export at a time per instance, oldest first across tenants.
		{Name: "account-exports", Lifelong: true, Run: s.Exports.Run},
		{Name: "export-purge", Every: exportPurgeEvery, FirstDelay: exportPurgeEvery, Run: func(ctx context.Context) error {
			_, err := s.Exports.Purge(ctx, time.Now())
			return err
		}},
		// Archives no export names, left by an instance that stopped
		// between writing one and recording it.
		{Name: "export-sweep", Every: housekeepingEvery, FirstDelay: housekeepingEvery, Run: func(ctx context.Context) error {
			_, err := s.Exports.Sweep(ctx, time.Now().Add(-housekeepingEvery))
			return err
		}},
	}
	// The audit log is kept for ever unless a retention is set: then its
	// entries older than that go, tenant by tenant.
	if keep := s.Config.AuditRetention; keep > 0 {
		var next int64
		js = append(js, jobs.Job{Name: "audit-purge", Every: housekeepingEvery, FirstDelay: housekeepingEvery, Run: func(ctx context.Context) error {
			return purgeAudit(ctx, s.DB, time.Now().Add(-keep), &next, s.log)
		}})
	}
	return js
}

// newJobs returns the registry holding the jobs table.
func (s *Service) newJobs() (*jobs.Registry, error) {
	r := jobs.New(s.log, s.Metrics)
	for _, j := range s.jobs() {
		if err := r.Add(j); err != nil {
			return nil, err
		}
	}
	return r, nil
}
