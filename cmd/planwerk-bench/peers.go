package main

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// peerRecords is how many ProjectDay records each system holds: one
// project, consecutive days up to 2025-06-30, all approved.
const peerRecords = 2000

// peerTarget is one system under the peers load: its name and the
// requests of each row, with its member's headers.
type peerTarget struct {
	name   string
	engine string // a database ceiling's engine
	get    func(t *vegeta.Target)
	list   func(t *vegeta.Target)
	// create makes a time entry; i numbers the requests.
	create func(t *vegeta.Target, i int64)
}

// runPeers measures Planwerk beside PocketBase (pocketBaseVersion, its
// example server, which runs on SQLite only): the same client (vegeta),
// the same concurrency and the same records for both, each signed in as
// a member with a token. Planwerk runs on SQLite and, with pgURL, on
// PostgreSQL too. Each row drives the systems in turns (turns of d/turns
// each, d in all per system) so that the machine's drift falls on all
// alike: single GETs of one ProjectDay by id (clients), lists of 1000 of
// them (clients/4), plain and with gzip asked for, and time entry
// creation (clients). The single GETs' turns also drive each engine's
// database ceiling (dbceiling.go). With cpuprofile, each engine's single
// GETs and then its ceiling's run once more alone, for d, each profiled
// into PREFIX-ENGINE-planwerk-get.pprof and PREFIX-ENGINE-ceiling-get.pprof.
func runPeers(ctx context.Context, pgURL string, d time.Duration, clients int, cpuprofile string) error {
	bin, err := pocketBaseBinary(ctx)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "planwerk-bench-peers-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	days := make([]string, peerRecords)
	last := time.Date(2025, 6, 30, 0, 0, 0, 0, time.UTC)
	for i := range days {
		days[i] = last.AddDate(0, 0, i-peerRecords+1).Format(time.DateOnly)
	}
	dayOf := func(i int64) string {
		return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i%300)).Format(time.DateOnly)
	}

	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var targets []peerTarget
	// ceilings are the database ceilings of single GETs, one per engine:
	// a bare handler reading the same record through the same driver and
	// pool (dbceiling.go), measured in the GET row's turns beside the rest.
	var ceilings []peerTarget
	for i, dsn := range dsns {
		env, err := newLoadEnv(ctx, dsn, filepath.Join(dir, fmt.Sprint("files-", i)))
		if err != nil {
			return err
		}
		defer env.close()
		if err := approveDays(env, days[:peerRecords-30]); err != nil {
			return err
		}
		if err := analyzeSchema(ctx, dsn); err != nil {
			return err
		}
		if err := checkList(env.url+"/v1/project-days?limit=1000", env.header); err != nil {
			return err
		}
		dbc, err := openDBCeiling(ctx, env.dsn, env.tenantID)
		if err != nil {
			return err
		}
		defer dbc.Close()
		ceilings = append(ceilings, peerTarget{
			name: "database ceiling " + env.engine, engine: env.engine,
			get: func(t *vegeta.Target) {
				t.Method, t.URL, t.Header = http.MethodGet, dbc.URL+"/v1/project-days/"+env.dayID, env.header
			},
		})
		targets = append(targets, peerTarget{
			name: "Planwerk " + env.engine,
			get: func(t *vegeta.Target) {
				t.Method, t.URL, t.Header = http.MethodGet, env.url+"/v1/project-days/"+env.dayID, env.header
			},
			list: func(t *vegeta.Target) {
				t.Method, t.URL, t.Header = http.MethodGet, env.url+"/v1/project-days?limit=1000", env.header
			},
			create: func(t *vegeta.Target, i int64) {
				t.Method, t.URL, t.Header = http.MethodPost, env.url+"/v1/time-entries", env.header
				t.Body = fmt.Appendf(nil, `{"project":%s,"task":%s,"day":"%s","duration":1800,"sorting":1}`, env.project, env.task, dayOf(i))
			},
		})
	}

	pb, err := startPocketBase(ctx, bin, filepath.Join(dir, "pocketbase"))
	if err != nil {
		return err
	}
	defer pb.stop()
	if err := pb.setUp(); err != nil {
		return err
	}
	ids, err := pb.seedDays(days)
	if err != nil {
		return err
	}
	pb.dayID = ids[peerRecords-30] // 2025-06-01, as Planwerk's
	const pbDays = "/api/collections/project_days/records"
	if err := checkList(pb.url+pbDays+"?perPage=1000&skipTotal=1", pb.header); err != nil {
		return err
	}
	targets = append(targets, peerTarget{
		name: "PocketBase",
		get: func(t *vegeta.Target) {
			t.Method, t.URL, t.Header = http.MethodGet, pb.url+pbDays+"/"+pb.dayID, pb.header
		},
		list: func(t *vegeta.Target) {
			t.Method, t.URL, t.Header = http.MethodGet, pb.url+pbDays+"?perPage=1000&skipTotal=1", pb.header
		},
		create: func(t *vegeta.Target, i int64) {
			t.Method, t.URL, t.Header = http.MethodPost, pb.url+"/api/collections/time_entries/records", pb.header
			t.Body = fmt.Appendf(nil, `{"user":"%s","trackingType":"WORK","project":"%s","task":"%s","day":"%s","duration":1800,"sorting":1,"validationStatus":"NOTAPPROVED"}`,
				pb.userID, pb.project, pb.task, dayOf(i))
		},
	})

	// The plain list asks for identity: both send the same JSON as it is.
	// With gzip asked for (as Go's client does by itself), Planwerk
	// compresses the list; PocketBase sends it as it is.
	plain := func(t *vegeta.Target) {
		h := t.Header.Clone()
		h.Set("Accept-Encoding", "identity")
		t.Header = h
	}
	type peerRow struct {
		name    string
		clients int
		target  float64 // Planwerk's req/s over PocketBase's, at least; 0: none
		tr      func(p peerTarget) vegeta.Targeter
	}
	rows := []peerRow{
		{"GET one ProjectDay by id", clients, 5, func(p peerTarget) vegeta.Targeter {
			return func(t *vegeta.Target) error { p.get(t); return nil }
		}},
		{"list of 1000 ProjectDays, plain", max(1, clients/4), 6, func(p peerTarget) vegeta.Targeter {
			return func(t *vegeta.Target) error { p.list(t); plain(t); return nil }
		}},
		{"list of 1000 ProjectDays, gzip asked for", max(1, clients/4), 6, func(p peerTarget) vegeta.Targeter {
			return func(t *vegeta.Target) error { p.list(t); return nil }
		}},
		{"create one time entry", clients, 0, func(p peerTarget) vegeta.Targeter {
			var n atomic.Int64
			return func(t *vegeta.Target) error { p.create(t, n.Add(1)); return nil }
		}},
	}
	// getRow is the single GETs' row, whose turns also drive the database
	// ceilings; driven names what a row drives, in the order of its
	// results.
	const getRow = 0
	driven := append(slices.Clip(targets), ceilings...)
	results := make([][]*vegeta.Metrics, len(rows))
	for i, r := range rows {
		var loads []turn
		for _, p := range targets {
			loads = append(loads, turn{tr: r.tr(p)})
		}
		if i == getRow {
			for _, c := range ceilings {
				loads = append(loads, turn{tr: r.tr(c)})
			}
		}
		fmt.Fprintf(os.Stderr, "%s: %d clients\n", r.name, r.clients)
		results[i] = inTurns(nil, d, r.clients, loads)
		for j, m := range results[i] {
			if f := failures(m); f > 0 {
				fmt.Fprintf(os.Stderr, "%s, %s: %d failures: %v\n", r.name, driven[j].name, f, m.Errors)
			}
		}
	}

	pbAt := len(targets) - 1
	fmt.Printf("\nPlanwerk beside PocketBase %s (examples/base, SQLite, request log off): the same client (vegeta), %d ProjectDays in each, "+
		"member tokens; %s per row and system, in %d turns; %s, %d cores, %s\n\n",
		pocketBaseVersion, peerRecords, d, turns, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	head := "| row | clients |"
	rule := "|---|---|"
	for j, p := range targets {
		head += fmt.Sprintf(" %s req/s | p50 |", p.name)
		rule += "---|---|"
		if j < pbAt {
			head += fmt.Sprintf(" %s / PocketBase |", p.name)
			rule += "---|"
		}
	}
	fmt.Println(head + " target |")
	fmt.Println(rule + "---|")
	for i, r := range rows {
		line := fmt.Sprintf("| %s | %d |", r.name, r.clients)
		ms0 := results[i][:len(targets)]
		for j, m := range ms0 {
			line += fmt.Sprintf(" %.0f | %s |", m.Throughput, ms(m.Latencies.P50))
			if j < pbAt {
				line += fmt.Sprintf(" %.2f |", m.Throughput/ms0[pbAt].Throughput)
			}
		}
		target := "–"
		if r.target > 0 {
			var verdicts []string
			for j, m := range ms0[:pbAt] {
				verdict := "met"
				if m.Throughput/ms0[pbAt].Throughput < r.target {
					verdict = "not met"
				}
				verdicts = append(verdicts, strings.TrimPrefix(targets[j].name, "Planwerk ")+" "+verdict)
			}
			target = fmt.Sprintf("≥ %.0f×: %s", r.target, strings.Join(verdicts, ", "))
		}
		fmt.Println(line + " " + target + " |")
	}
	fmt.Println("\nsingle GETs beside the database ceilings, in the same turns (a bare handler: one prepared primary-key " +
		"SELECT of the stored document through the same driver and pool, its bytes written; no tenant, token, share or tag):")
	fmt.Println("\n| engine | ceiling req/s | ceiling / PocketBase | Planwerk / ceiling |")
	fmt.Println("|---|---|---|---|")
	for j, c := range ceilings {
		m := results[getRow][len(targets)+j]
		fmt.Printf("| %s | %.0f | %.2f | %.2f |\n", c.engine, m.Throughput,
			m.Throughput/results[getRow][pbAt].Throughput, results[getRow][j].Throughput/m.Throughput)
	}
	if cpuprofile != "" {
		// Each engine's single GETs alone, then its ceiling's, each
		// profiled: what the service spends beside the bare read, frame
		// by frame (go tool pprof -top -cum).
		for j, c := range ceilings {
			for _, p := range []struct {
				name string
				tr   vegeta.Targeter
			}{{"planwerk", rows[getRow].tr(targets[j])}, {"ceiling", rows[getRow].tr(c)}} {
				path := fmt.Sprintf("%s-%s-%s-get.pprof", cpuprofile, c.engine, p.name)
				var m *vegeta.Metrics
				if err := profile(path, func() error { m = attack(nil, nil, p.tr, d, rows[getRow].clients); return nil }); err != nil {
					return err
				}
				fmt.Printf("\nprofiled into %s: %.0f single GETs/s\n", path, m.Throughput)
			}
		}
	}
	fmt.Println("\nbytes of one list of 1000 as received (decoded):")
	for j, p := range targets {
		fmt.Printf("  %s: %.0f\n", p.name, float64(results[1][j].BytesIn.Total)/float64(max(1, results[1][j].Requests)))
	}
	fmt.Println("\ncreates: Planwerk POST /v1/time-entries (a WORK entry; checks the day is not approved), " +
		"PocketBase POST /api/collections/time_entries/records (the same fields; the rule requires the member's own user)")
	return nil
}

// approveDays approves the bench project's days in Planwerk, 500 to a
// request, making their ProjectDay records.
func approveDays(env *loadEnv, days []string) error {
	for len(days) > 0 {
		n := min(500, len(days))
		items := make([]string, n)
		for i, day := range days[:n] {
			items[i] = fmt.Sprintf(`{"project":%s,"day":"%s"}`, env.project, day)
		}
		days = days[n:]
		req, _ := http.NewRequest(http.MethodPost, env.url+"/v1/approval/bulk-approve",
			strings.NewReader(`{"action":"approve","items":[`+strings.Join(items, ",")+`]}`))
		req.Header = env.header.Clone()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("bulk approve: %d %s", resp.StatusCode, b)
		}
	}
	return nil
}

// analyzeSchema gathers PostgreSQL's statistics of the tables of dsn's
// schema after seeding, as an operator should after a bulk load:
// autovacuum would only get to it later, and until then single GETs
// run at half their rate or less. SQLite: nothing.
func analyzeSchema(ctx context.Context, dsn string) error {
	if !strings.HasPrefix(dsn, "postgres") {
		return nil
	}
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT format('%I', tablename) FROM pg_tables WHERE schemaname = current_schema()")
	if err != nil {
		return err
	}
	var tables []string
	for rows.Next() {
		var t string
		if err := rows.Scan(&t); err != nil {
			rows.Close()
			return err
		}
		tables = append(tables, t)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, t := range tables {
		if _, err := db.ExecContext(ctx, "ANALYZE "+t); err != nil {
			return fmt.Errorf("analyze %s: %w", t, err)
		}
	}
	return nil
}

// checkList fetches a list and makes sure it holds 1000 records: a JSON
// array, or an object with an array of them.
func checkList(u string, header http.Header) error {
	var v any
	if err := callJSON(http.DefaultClient, http.MethodGet, u, header, nil, &v); err != nil {
		return err
	}
	n := -1
	switch v := v.(type) {
	case []any:
		n = len(v)
	case map[string]any:
		for _, x := range v {
			if a, ok := x.([]any); ok {
				n = len(a)
			}
		}
	}
	if n != 1000 {
		return fmt.Errorf("GET %s: %d records, not 1000", u, n)
	}
	return nil
}
