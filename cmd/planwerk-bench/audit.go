package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/store"
)

// Shape of the audit log the "audit" benchmark fills.
const (
	auditPerTx    = 1000  // entries one transaction of the fill writes
	auditRecords  = 20000 // records the entries are about
	auditFillers  = 2     // transactions filling side by side
	auditDocBytes = 400   // about the size of a record's document
)

// auditResult is one engine's numbers.
type auditResult struct {
	engine        string
	fill          time.Duration
	verify        time.Duration
	verified      int64
	peakHeap      uint64
	purge         time.Duration
	purged        int64
	verifyAfter   time.Duration
	verifiedAfter int64
	peakHeapAfter uint64
}

// runAudit fills one tenant's audit log with n entries, in bulk, on
// SQLite and PostgreSQL, then times planwerk audit verify over it (entries
// per second and the peak heap growth of the process), a purge of the
// older half through store.PurgeAudit, and verify again.
//
// With keep the databases stay, for a look at them, and are named.
func runAudit(ctx context.Context, pgURL string, n int, keep bool) error {
	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "databases kept: %q\n", dsns)
	} else {
		defer cleanup()
	}
	var results []auditResult
	for _, dsn := range dsns {
		r, err := auditEngine(ctx, dsn, n)
		if err != nil {
			return err
		}
		results = append(results, r)
	}
	fmt.Printf("\nPlanwerk audit log benchmark: %d entries of one tenant (~%d-byte documents), %s, %d cores, %s\n\n",
		n, auditDocBytes, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| engine | fill | audit verify | entries/s | peak heap growth | purge of the older half | entries/s | verify after | entries/s | peak heap growth |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Printf("| %s | %.1f s | %.1f s (%d) | %.0f | %.1f MiB | %.1f s (%d) | %.0f | %.1f s (%d) | %.0f | %.1f MiB |\n",
			r.engine, r.fill.Seconds(), r.verify.Seconds(), r.verified, float64(r.verified)/r.verify.Seconds(), float64(r.peakHeap)/(1<<20),
			r.purge.Seconds(), r.purged, float64(r.purged)/r.purge.Seconds(),
			r.verifyAfter.Seconds(), r.verifiedAfter, float64(r.verifiedAfter)/r.verifyAfter.Seconds(), float64(r.peakHeapAfter)/(1<<20))
	}
	return nil
}

func auditEngine(ctx context.Context, dsn string, n int) (auditResult, error) {
	var r auditResult
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return r, err
	}
	defer db.Close()
	r.engine = db.Engine()
	if _, err := db.Migrate(ctx); err != nil {
		return r, err
	}
	var tenant store.Tenant
	if err := db.Tx(ctx, func(q store.Querier) error {
		tenant, err = db.InsertTenant(ctx, q, benchSlug, "Bench")
		return err
	}); err != nil {
		return r, err
	}
	start := time.Now()
	half, err := fillAudit(ctx, db, tenant.ID, n)
	if err != nil {
		return r, err
	}
	r.fill = time.Since(start)
	fmt.Fprintf(os.Stderr, "%s: %d entries filled in %s\n", r.engine, n, r.fill.Round(time.Millisecond))
	if r.verify, r.verified, r.peakHeap, err = timeVerify(ctx, dsn); err != nil {
		return r, err
	}
	start = time.Now()
	if r.purged, err = db.PurgeAudit(ctx, tenant.ID, store.Timestamp(half)); err != nil {
		return r, err
	}
	r.purge = time.Since(start)
	if r.verifyAfter, r.verifiedAfter, r.peakHeapAfter, err = timeVerify(ctx, dsn); err != nil {
		return r, err
	}
	if r.verifiedAfter != r.verified-r.purged {
		return r, fmt.Errorf("%s: %d entries verified after the purge of %d, want %d", r.engine, r.verifiedAfter, r.purged, r.verified-r.purged)
	}
	return r, nil
}

// fillAudit writes n entries about auditRecords records (each record's
// first a create, then updates whose before is the record's previous
// after), auditPerTx a transaction, auditFillers transactions at a time.
// It returns a time by which about half of them were written.
func fillAudit(ctx context.Context, db *store.DB, tenantID int64, n int) (time.Time, error) {
	var done atomic.Int64
	var half atomic.Value
	errs := make(chan error, auditFillers)
	var wg sync.WaitGroup
	for w := range auditFillers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- fillShare(ctx, db, tenantID, w, n/auditFillers, &done, &half, n)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return time.Time{}, err
		}
	}
	return half.Load().(time.Time), nil
}

// fillShare is one filler's part: the records whose number modulo
// auditFillers is w.
func fillShare(ctx context.Context, db *store.DB, tenantID int64, w, count int, done *atomic.Int64, half *atomic.Value, n int) error {
	last := map[int64][]byte{}
	version := map[int64]int{}
	for written := 0; written < count; {
		k := min(auditPerTx, count-written)
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range k {
				id := int64((written+i)%(auditRecords/auditFillers)*auditFillers + w + 1)
				version[id]++
				after := auditDoc(id, version[id])
				note := store.AuditNote{Resource: "time-entries", Record: id, Op: "update", Before: last[id], After: after}
				if last[id] == nil {
					note.Op = "create"
				}
				if err := db.Audit(ctx, q, tenantID, note); err != nil {
					return err
				}
				last[id] = after
			}
			return nil
		})
		if err != nil {
			return err
		}
		written += k
		if d := done.Add(int64(k)); d >= int64(n/2) && d-int64(k) < int64(n/2) {
			half.Store(time.Now())
		}
		if d := done.Load(); d%100000 < int64(k) {
			fmt.Fprintf(os.Stderr, "  %d entries\n", d)
		}
	}
	return nil
}

// auditDoc is version v of a time entry's document, about auditDocBytes
// long.
func auditDoc(id int64, v int) []byte {
	day := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(id%365))
	words := strings.Repeat("Meeting notes and follow-up on the rollout plan; ", 3)
	return fmt.Appendf(nil, `{"id":%d,"project":%d,"user":%d,"day":"%s","startTime":"08:%02d","endTime":"16:%02d","pause":30,`+
		`"description":"%s(v%d)","validationStatus":"OPEN","tags":["billable","onsite"],`+
		`"createdAt":"2024-01-01T08:00:00.000Z","updatedAt":"2024-01-01T08:%02d:%02d.000Z"}`,
		id, id%50+1, id%200+1, day.Format(time.DateOnly), v%60, v%60, words, v, v%60, (v/60)%60)
}

// timeVerify runs planwerk audit verify on the bench tenant of dsn as
// the command would, and returns how long it took, how many entries it
// verified, and the peak heap growth of the process meanwhile.
func timeVerify(ctx context.Context, dsn string) (time.Duration, int64, uint64, error) {
	var stdout, stderr bytes.Buffer
	stop := sampleHeap()
	start := time.Now()
	err := app.Run(ctx, []string{"audit", "verify", "--database", dsn, "--tenant", benchSlug}, app.IO{
		Stdout: &stdout, Stderr: &stderr, Getenv: func(string) string { return "" }})
	took := time.Since(start)
	peak := stop()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("audit verify: %w: %s", err, stderr.String())
	}
	var slug string
	var count int64
	if _, err := fmt.Sscanf(stdout.String(), "tenant %s %d entries verified", &slug, &count); err != nil {
		return 0, 0, 0, fmt.Errorf("audit verify said %q: %w", stdout.String(), err)
	}
	fmt.Fprintf(os.Stderr, "  %s", stdout.String())
	return took, count, peak, nil
}
