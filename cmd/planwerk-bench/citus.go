package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"
)

// runCitus measures Planwerk on a Citus cluster beside plain PostgreSQL,
// in the same run: single GETs and the mixed workload of the load mode on
// each. With addWorker (host:port of a Citus node that is not yet in the
// cluster), it then drives the mixed workload on Citus while it adds that
// worker and rebalances the shards onto it, counts the errors the
// clients saw, and drains and removes the worker again afterwards.
func runCitus(ctx context.Context, pgURL, citusURL, addWorker string, d time.Duration, clients int) error {
	if citusURL == "" {
		return errors.New("citus: --citus names no coordinator")
	}
	dir, err := os.MkdirTemp("", "planwerk-bench-citus-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	type row struct {
		name string
		m    *vegeta.Metrics
	}
	var rows []row
	var byKind []func()
	var citusEnv *loadEnv
	for _, server := range []struct{ name, url string }{{"PostgreSQL", pgURL}, {"Citus", citusURL}} {
		if server.url == "" {
			continue
		}
		dsn, drop, err := freshSchema(ctx, server.url)
		if err != nil {
			return fmt.Errorf("%s: %w", server.name, err)
		}
		defer drop()
		env, err := newLoadEnv(ctx, dsn, filepath.Join(dir, server.name))
		if err != nil {
			return fmt.Errorf("%s: %w", server.name, err)
		}
		get := attack(nil, env.header, func(t *vegeta.Target) error {
			t.Method, t.URL = "GET", env.url+"/v1/project-days/"+env.dayID
			return nil
		}, d, clients)
		rows = append(rows, row{server.name + ": GET /v1/project-days/{id}", get})
		kinds := map[string][]time.Duration{}
		rows = append(rows, row{server.name + ": mixed workload", attack(kinds, env.header, env.mixed(), d, clients)})
		byKind = append(byKind, func() { printKinds(server.name+": mixed workload", kinds) })
		if server.name == "Citus" {
			citusEnv = env
			defer env.close()
		} else {
			env.close()
		}
	}

	fmt.Printf("\nPlanwerk on Citus beside plain PostgreSQL: %d concurrent clients, %s per row, %s, %d cores, %s\n\n",
		clients, d, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| workload | requests/s | p50 | p99 | errors |")
	fmt.Println("|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %.0f | %s | %s | %d |\n", r.name, r.m.Throughput, ms(r.m.Latencies.P50), ms(r.m.Latencies.P99), failures(r.m))
	}
	for _, print := range byKind {
		print()
	}
	if len(rows) == 4 {
		fmt.Printf("\nCitus / PostgreSQL: GET p50 %.2f×, mixed p50 %.2f×, mixed p99 %.2f×, mixed requests/s %.2f×\n",
			ratio(rows[2].m.Latencies.P50, rows[0].m.Latencies.P50), ratio(rows[3].m.Latencies.P50, rows[1].m.Latencies.P50),
			ratio(rows[3].m.Latencies.P99, rows[1].m.Latencies.P99), rows[3].m.Throughput/rows[1].m.Throughput)
	}
	if addWorker == "" {
		return nil
	}
	return rebalanceUnderLoad(ctx, citusURL, addWorker, citusEnv, clients)
}

// rebalanceUnderLoad adds the worker at addr to the cluster and moves
// shards onto it while env serves the mixed workload, then reports what
// the clients saw; the worker is drained and removed after.
func rebalanceUnderLoad(ctx context.Context, citusURL, addr string, env *loadEnv, clients int) error {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--add-worker: %w", err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil {
		return fmt.Errorf("--add-worker: %w", err)
	}
	admin, err := sql.Open("pgx", citusURL)
	if err != nil {
		return err
	}
	defer admin.Close()
	placements := func() (string, error) {
		var s string
		err := admin.QueryRowContext(ctx, `SELECT string_agg(n || ' on ' || p, ', ' ORDER BY p) FROM (
			SELECT nodeport AS p, count(*) AS n FROM pg_dist_shard_placement GROUP BY nodeport) x`).Scan(&s)
		return s, err
	}
	before, err := placements()
	if err != nil {
		return err
	}

	stop := make(chan struct{})
	type outcome struct {
		added, moved time.Duration
		err          error
	}
	done := make(chan outcome, 1)
	go func() {
		var o outcome
		defer func() { done <- o; close(stop) }()
		time.Sleep(2 * time.Second) // the load first runs on two workers
		start := time.Now()
		if _, o.err = admin.ExecContext(ctx, `SELECT citus_add_node($1, $2)`, host, port); o.err != nil {
			return
		}
		o.added = time.Since(start)
		if _, o.err = admin.ExecContext(ctx, `SELECT citus_rebalance_start()`); o.err != nil {
			return
		}
		if _, o.err = admin.ExecContext(ctx, `SELECT citus_rebalance_wait()`); o.err != nil {
			return
		}
		o.moved = time.Since(start)
		time.Sleep(2 * time.Second) // and then on three
	}()
	kinds := map[string][]time.Duration{}
	m := attackUntil(kinds, env.header, env.mixed(), 0, stop, clients)
	o := <-done
	after, perr := placements()
	fmt.Printf("\nAdding worker %s and rebalancing while the mixed workload runs (%d clients):\n\n", addr, clients)
	fmt.Printf("- shard placements by port before: %s; after: %s\n", before, after)
	fmt.Printf("- worker added in %s, shards moved in %s (from the add)\n", o.added.Round(time.Millisecond), o.moved.Round(time.Millisecond))
	fmt.Printf("- requests: %d at %.0f/s, p50 %s, p99 %s, max %s, errors %d\n",
		m.Requests, m.Throughput, ms(m.Latencies.P50), ms(m.Latencies.P99), ms(m.Latencies.Max), failures(m))
	printKinds("mixed workload during the rebalance", kinds)

	// Leave the cluster as it was found: the shards go back, the worker goes.
	if _, err := admin.ExecContext(ctx, `SELECT citus_drain_node($1, $2)`, host, port); err != nil {
		return errors.Join(o.err, perr, fmt.Errorf("drain %s: %w", addr, err))
	}
	if _, err := admin.ExecContext(ctx, `SELECT citus_remove_node($1, $2)`, host, port); err != nil {
		return errors.Join(o.err, perr, fmt.Errorf("remove %s: %w", addr, err))
	}
	return errors.Join(o.err, perr)
}

// failures counts the requests that did not succeed.
func failures(m *vegeta.Metrics) uint64 {
	return m.Requests - uint64(float64(m.Requests)*m.Success+0.5)
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }
