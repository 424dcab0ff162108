package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/auth"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// Shape of the tenant the "lifecycle" benchmark moves.
const (
	lifecycleFileSize = 16 << 20 // bytes of each file, but the last
	lifecyclePerTx    = 1000     // records one transaction of the seed writes
)

// lifecycleStep is one command's numbers.
type lifecycleStep struct {
	name    string
	took    time.Duration
	records int64 // rows of the records table
	rows    int64 // rows of every table
	files   int64
	bytes   int64  // of the archive
	peakRSS int64  // KiB
	out     string // what it printed
}

// runLifecycle seeds a tenant of n records and about fileBytes of files
// (in files of 16 MiB) into a fresh SQLite database and folder, then runs
// planwerk tenant export and import as commands of their own (this
// program, run again as "planwerk-bench planwerk ..."): SQLite to an
// archive, the archive into a fresh PostgreSQL schema, PostgreSQL to a
// second archive, and that into a fresh SQLite database. Each prints its
// time, records and megabytes of archive per second, and its process's
// peak resident memory.
//
// Then it deletes the tenant from the PostgreSQL schema and the second
// SQLite database, each while a service serves another tenant there
// (deleteBeside), and prints that tenant's latencies before and during
// the delete.
//
// With keep the folder (databases, archives, the source's files) and the
// PostgreSQL schema stay, and are named; the tenant is left in the source
// database and the archives.
func runLifecycle(ctx context.Context, pgURL string, n int, fileBytes int64, d time.Duration, clients int, keep bool) error {
	if pgURL == "" {
		return fmt.Errorf("lifecycle: needs --postgres")
	}
	dir, err := os.MkdirTemp("", "planwerk-lifecycle-")
	if err != nil {
		return err
	}
	pg, drop, err := freshSchema(ctx, pgURL)
	if err != nil {
		os.RemoveAll(dir)
		return err
	}
	if keep {
		fmt.Fprintf(os.Stderr, "kept: folder %s, database %s\n", dir, pg)
	} else {
		defer os.RemoveAll(dir)
		defer drop()
	}
	src, back := "sqlite:"+filepath.Join(dir, "source.db"), "sqlite:"+filepath.Join(dir, "back.db")
	start := time.Now()
	if err := seedLifecycle(ctx, src, filepath.Join(dir, "source-files"), n, fileBytes); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "seeded %d records and %d MiB of files in %s\n", n, fileBytes>>20, time.Since(start).Round(time.Millisecond))
	if err := migrateDSNs(ctx, pg, back); err != nil {
		return err
	}
	a, b := filepath.Join(dir, "sqlite.tar.zst"), filepath.Join(dir, "postgres.tar.zst")
	var steps []lifecycleStep
	for _, s := range []struct {
		name string
		args []string
	}{
		{"export SQLite", []string{"tenant", "export", "--database", src, "--files", filepath.Join(dir, "source-files"), "--slug", benchSlug, "--out", a}},
		{"import into PostgreSQL", []string{"tenant", "import", "--database", pg, "--files", filepath.Join(dir, "pg-files"), "--in", a}},
		{"export PostgreSQL", []string{"tenant", "export", "--database", pg, "--files", filepath.Join(dir, "pg-files"), "--slug", benchSlug, "--out", b}},
		{"import into SQLite", []string{"tenant", "import", "--database", back, "--files", filepath.Join(dir, "back-files"), "--in", b}},
	} {
		step, err := runStep(ctx, s.name, s.args)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%s: %s\n", s.name, step.took.Round(time.Millisecond))
		steps = append(steps, step)
	}
	for _, s := range steps[1:] {
		if s.rows < steps[0].rows || s.files != steps[0].files || s.records != steps[0].records {
			return fmt.Errorf("%s moved %d rows, %d records and %d files; the export had %d, %d and %d",
				s.name, s.rows, s.records, s.files, steps[0].rows, steps[0].records, steps[0].files)
		}
	}
	fmt.Printf("\nPlanwerk tenant export and import: %d records, %d files of %d MiB in all, %s, %d cores, %s\n\n",
		steps[0].records, steps[0].files, fileBytes>>20, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| step | time | records/s | rows/s | archive | MB/s | peak RSS |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, s := range steps {
		sec := s.took.Seconds()
		fmt.Printf("| %s | %.1f s | %.0f | %.0f | %.0f MiB | %.0f | %.0f MiB |\n", s.name, sec, float64(s.records)/sec, float64(s.rows)/sec,
			float64(s.bytes)/(1<<20), float64(s.bytes)/1e6/sec, float64(s.peakRSS)/1024)
	}
	var deletes []deleteResult
	for _, e := range []struct{ dsn, files string }{{back, filepath.Join(dir, "back-files")}, {pg, filepath.Join(dir, "pg-files")}} {
		r, err := deleteBeside(ctx, e.dsn, e.files, d, clients)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "delete %s: %s\n", r.engine, r.took.Round(time.Millisecond))
		deletes = append(deletes, r)
	}
	printDeletes(deletes, d, clients)
	return nil
}

// migrateDSNs brings each database to the current schema.
func migrateDSNs(ctx context.Context, dsns ...string) error {
	for _, dsn := range dsns {
		db, err := store.Open(ctx, dsn)
		if err != nil {
			return err
		}
		_, err = db.Migrate(ctx)
		db.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// seedLifecycle makes the tenant: its admin, n time entries of ten
// projects (each a change and an audit entry, as the service writes
// them), and fileBytes of random bytes in files, each attached to a
// Document of its own.
func seedLifecycle(ctx context.Context, dsn, folder string, n int, fileBytes int64) error {
	db, err := store.Open(ctx, dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	tn, admin, err := users.NewTables(db, auth.NewTables(db)).CreateTenant(ctx, benchSlug, "Bench",
		users.NewAdmin{Email: "admin@bench.test", PasswordHash: "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$a2V5"})
	if err != nil {
		return err
	}
	projects, err := insertDocs(ctx, db, tn.ID, "projects", 10, func(i int) map[string]any {
		return map[string]any{"name": fmt.Sprint("Project ", i)}
	})
	if err != nil {
		return err
	}
	for done := 0; done < n; done += lifecyclePerTx {
		_, err := insertDocs(ctx, db, tn.ID, "time-entries", min(lifecyclePerTx, n-done), func(i int) map[string]any {
			k := done + i
			return map[string]any{"trackingType": "WORK", "project": projects[k%len(projects)], "user": admin.ID,
				"day":      time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, k%365).Format(time.DateOnly),
				"duration": 900 * (1 + k%16), "sorting": 1 + k%8, "notes": fmt.Sprintf("entry %d: worked on the thing, reviewed, wrote it down", k)}
		})
		if err != nil {
			return err
		}
	}
	return seedFiles(ctx, db, tn.ID, folder, fileBytes)
}

// insertDocs stores count records of the resource, made by doc, in one
// transaction, and returns their ids.
func insertDocs(ctx context.Context, db *store.DB, tenantID int64, resource string, count int, doc func(i int) map[string]any) ([]int64, error) {
	docs := make([]map[string]any, count)
	for i := range docs {
		docs[i] = doc(i)
	}
	var ids []int64
	err := db.Tx(ctx, func(q store.Querier) error {
		var err error
		ids, err = db.InsertRecords(ctx, q, tenantID, store.Collection{Table: "records", Resource: resource}, docs)
		return err
	})
	return ids, err
}

// seedFiles stores fileBytes of random bytes in files of
// lifecycleFileSize, each the upload of a Document of its own.
func seedFiles(ctx context.Context, db *store.DB, tenantID int64, folder string, fileBytes int64) error {
	fs, err := filestore.Open(ctx, folder)
	if err != nil {
		return err
	}
	uploads := files.NewTables(db)
	for i := 0; int64(i)*lifecycleFileSize < fileBytes; i++ {
		size := min(lifecycleFileSize, fileBytes-int64(i)*lifecycleFileSize)
		docs, err := insertDocs(ctx, db, tenantID, "documents", 1, func(int) map[string]any {
			return map[string]any{"model": "project", "record": 1, "category": 7, "name": fmt.Sprint("scan ", i)}
		})
		if err != nil {
			return err
		}
		id, err := db.NewID(ctx, db, tenantID)
		if err != nil {
			return err
		}
		up := &files.Upload{ID: id, Model: "document", Record: docs[0], Filename: fmt.Sprintf("scan-%d.pdf", i), ContentType: "application/pdf",
			Size: size, StorageKey: fmt.Sprintf("t%d/u%d-bench", tenantID, id)}
		if _, err := fs.Put(ctx, up.StorageKey, io.LimitReader(rand.NewChaCha8([32]byte{byte(i), byte(i >> 8)}), size)); err != nil {
			return err
		}
		if err := db.Tx(ctx, func(q store.Querier) error { return uploads.InsertUpload(ctx, q, tenantID, up) }); err != nil {
			return err
		}
	}
	return nil
}

var (
	stepRows    = regexp.MustCompile(`\b([a-z_]+) (\d+)`)
	stepArchive = regexp.MustCompile(`; (\d+) bytes\n$`)
	stepRSS     = regexp.MustCompile(`peak resident memory: (\d+) kB`)
)

// runStep runs planwerk with args as a process of its own (this program
// as "planwerk-bench planwerk ...") and reads its summary line, time and
// peak resident memory.
func runStep(ctx context.Context, name string, args []string) (lifecycleStep, error) {
	step := lifecycleStep{name: name}
	cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"planwerk"}, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return step, fmt.Errorf("%s: %v\n%s", name, err, stderr.String())
	}
	step.took = time.Since(start)
	// The process reports its own peak: the rusage of a child counts the
	// memory of the parent it was started from too.
	if m := stepRSS.FindStringSubmatch(stderr.String()); m != nil {
		step.peakRSS, _ = strconv.ParseInt(m[1], 10, 64)
	}
	out := stdout.String()
	step.out = out
	for _, m := range stepRows.FindAllStringSubmatch(out, -1) {
		v, _ := strconv.ParseInt(m[2], 10, 64)
		switch m[1] {
		case "files":
			step.files = v
		case "records":
			step.records = v
			step.rows += v
		case "tenant", "tenant_settings", "users", "uploads", "api_clients", "webhooks", "audit_log":
			step.rows += v
		}
	}
	if m := stepArchive.FindStringSubmatch(out); m != nil {
		step.bytes, _ = strconv.ParseInt(m[1], 10, 64)
	}
	return step, nil
}

// runPlanwerk runs the planwerk command of args, reports its peak
// resident memory on standard error, and exits as planwerk does.
func runPlanwerk(ctx context.Context, args []string) {
	err := app.Run(ctx, args, app.IO{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv})
	fmt.Fprintf(os.Stderr, "planwerk-bench: peak resident memory: %s\n", peakRSS())
	switch {
	case err == nil:
	case errors.Is(err, app.ErrUsage):
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "planwerk:", err)
		os.Exit(1)
	}
}
