package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/tracing"
	"planwerk/internal/users"
)

// runLoad drives Planwerk with vegeta at a fixed number of concurrent
// clients: single-record GETs and a mixed workload on SQLite and
// PostgreSQL, and a bare net/http handler as the machine's ceiling. With
// withTLS, the single GETs also go to the same service over HTTPS
// (certificate files as --tls-cert and --tls-key serve them), with
// HTTP/1.1 and with HTTP/2. traced: the rows again with tracing on, every
// request sampled.
func runLoad(ctx context.Context, pgURL string, d time.Duration, clients int, withTLS, traced bool) error {
	dir, err := os.MkdirTemp("", "planwerk-bench-load-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)

	bare := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_, _ = w.Write([]byte(`{"createdAt":"2026-01-01T00:00:00.000Z","day":"2026-01-01","id":7,"project":2,"updatedAt":"2026-01-01T00:00:00.000Z","validationStatus":"APPROVED"}` + "\n"))
	}))
	defer bare.Close()
	type row struct {
		name string
		m    *vegeta.Metrics
	}
	var rows []row
	ceiling := attack(nil, nil, func(t *vegeta.Target) error {
		t.Method, t.URL = http.MethodGet, bare.URL+"/v1/project-days/7"
		return nil
	}, d, clients)
	rows = append(rows, row{"bare net/http handler", ceiling})

	dsns, cleanup, err := databases(ctx, pgURL)
	if err != nil {
		return err
	}
	defer cleanup()
	var byKind []struct {
		name string
		lat  map[string][]time.Duration
	}
	type tlsRow struct {
		engine            string
		plain, http1, h2c *vegeta.Metrics
	}
	var tlsRows []tlsRow
	run := func(suffix string) error {
		if suffix != "" {
			// Fresh databases: the bench's tenant exists in the others.
			fresh, cleanup, err := databases(ctx, pgURL)
			if err != nil {
				return err
			}
			defer cleanup()
			dsns = fresh
		}
		for _, dsn := range dsns {
			env, err := newLoadEnv(ctx, dsn, filepath.Join(dir, fmt.Sprint(len(rows))))
			if err != nil {
				return err
			}
			getAt := func(base string) vegeta.Targeter {
				return func(t *vegeta.Target) error {
					t.Method, t.URL = http.MethodGet, base+"/v1/project-days/"+env.dayID
					return nil
				}
			}
			if !withTLS || suffix != "" {
				get := attack(nil, env.header, getAt(env.url), d, clients)
				rows = append(rows, row{env.engine + ": GET /v1/project-days/{id}" + suffix, get})
			} else {
				https, roots, stop, err := serveTLS(env.svc, filepath.Join(dir, fmt.Sprint(len(rows), "-tls")))
				if err != nil {
					return err
				}
				client := &tls.Config{RootCAs: roots, ServerName: "bench.localhost"}
				m := inTurns(env.header, d, clients, []turn{
					{tr: getAt(env.url)},
					{tr: getAt(https), opts: []func(*vegeta.Attacker){vegeta.TLSConfig(client.Clone()), vegeta.HTTP2(false)}},
					{tr: getAt(https), opts: []func(*vegeta.Attacker){vegeta.TLSConfig(client.Clone()), vegeta.HTTP2(true)}},
				})
				stop()
				rows = append(rows, row{env.engine + ": GET /v1/project-days/{id}", m[0]},
					row{env.engine + ": GET /v1/project-days/{id} over HTTPS, HTTP/1.1", m[1]},
					row{env.engine + ": GET /v1/project-days/{id} over HTTPS, HTTP/2", m[2]})
				tlsRows = append(tlsRows, tlsRow{env.engine, m[0], m[1], m[2]})
			}
			kinds := map[string][]time.Duration{}
			mixed := attack(kinds, env.header, env.mixed(), d, clients)
			rows = append(rows, row{env.engine + ": mixed workload" + suffix, mixed})
			byKind = append(byKind, struct {
				name string
				lat  map[string][]time.Duration
			}{env.engine + ": mixed workload" + suffix, kinds})
			env.close()
		}
		return nil
	}
	if err := run(""); err != nil {
		return err
	}
	if traced {
		// The same rows with every request traced and its spans sent to an
		// OTLP receiver on loopback (which reads and drops them).
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/x-protobuf")
		}))
		defer receiver.Close()
		os.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.URL)
		os.Setenv("OTEL_TRACES_SAMPLER", "always_on")
		stop, err := tracing.Setup(ctx, "bench")
		if err != nil {
			return err
		}
		defer stop(context.Background())
		if err := run(" (traced)"); err != nil {
			return err
		}
	}

	fmt.Printf("\nPlanwerk load benchmark: %d concurrent clients, %s per row, %s, %d cores, %s\n\n",
		clients, d, runtime.Version(), runtime.NumCPU(), time.Now().UTC().Format(time.DateOnly))
	fmt.Println("| workload | requests/s | p50 | p99 | errors | ratio to bare handler |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, r := range rows {
		fmt.Printf("| %s | %.0f | %s | %s | %d | %.2f |\n", r.name, r.m.Throughput,
			ms(r.m.Latencies.P50), ms(r.m.Latencies.P99), failures(r.m), r.m.Throughput/ceiling.Throughput)
	}
	if traced {
		fmt.Println("\n| workload | requests/s untraced | traced | traced / untraced |")
		fmt.Println("|---|---|---|---|")
		for _, r := range rows {
			base, ok := strings.CutSuffix(r.name, " (traced)")
			if !ok {
				continue
			}
			for _, u := range rows {
				if u.name == base {
					fmt.Printf("| %s | %.0f | %.0f | %.2f |\n", base, u.m.Throughput, r.m.Throughput, r.m.Throughput/u.m.Throughput)
				}
			}
		}
	}
	if len(tlsRows) > 0 {
		fmt.Printf("\nGET /v1/project-days/{id} over HTTPS beside plain HTTP, the same service in the same run, in %d turns each:\n", turns)
		fmt.Println("\n| engine | plain HTTP req/s | HTTPS HTTP/1.1 req/s | ratio | HTTPS HTTP/2 req/s | ratio |")
		fmt.Println("|---|---|---|---|---|---|")
		for _, r := range tlsRows {
			fmt.Printf("| %s | %.0f | %.0f | %.2f | %.0f | %.2f |\n", r.engine, r.plain.Throughput,
				r.http1.Throughput, r.http1.Throughput/r.plain.Throughput, r.h2c.Throughput, r.h2c.Throughput/r.plain.Throughput)
		}
	}
	for _, k := range byKind {
		printKinds(k.name, k.lat)
	}
	fmt.Println("\nmixed workload: 50% single GETs, 20% lists with where, 20% time entry creation, 5% uploads, 4% download URLs, 1% password grants")
	return nil
}

// attack runs clients workers as fast as they go for d; kinds, when not
// nil, collects the latencies by kind of request.
func attack(kinds map[string][]time.Duration, header http.Header, tr vegeta.Targeter, d time.Duration, clients int) *vegeta.Metrics {
	return attackUntil(kinds, header, tr, d, nil, clients)
}

// attackUntil is attack for d, or, when d is 0, until stop is closed.
func attackUntil(kinds map[string][]time.Duration, header http.Header, tr vegeta.Targeter, d time.Duration, stop <-chan struct{}, clients int) *vegeta.Metrics {
	var m vegeta.Metrics
	attackInto(&m, kinds, header, tr, d, stop, clients)
	m.Close()
	return &m
}

// attackInto is attackUntil adding the results to m, which it leaves
// open; opts change the attacker after the common options.
func attackInto(m *vegeta.Metrics, kinds map[string][]time.Duration, header http.Header, tr vegeta.Targeter, d time.Duration, stop <-chan struct{}, clients int,
	opts ...func(*vegeta.Attacker)) {
	wrapped := func(t *vegeta.Target) error {
		if err := tr(t); err != nil {
			return err
		}
		if t.Header == nil {
			t.Header = http.Header{}
		}
		for k, v := range header {
			if t.Header.Get(k) == "" {
				t.Header[k] = v
			}
		}
		return nil
	}
	attacker := vegeta.NewAttacker(append([]func(*vegeta.Attacker){vegeta.Workers(uint64(clients)), vegeta.MaxWorkers(uint64(clients)),
		vegeta.Connections(clients), vegeta.KeepAlive(true), vegeta.Timeout(30 * time.Second)}, opts...)...)
	if stop != nil {
		go func() {
			<-stop
			attacker.Stop()
		}()
	}
	for res := range attacker.Attack(wrapped, vegeta.Rate{Freq: 0}, d, "load") {
		m.Add(res)
		if kinds != nil {
			k := kindOf(res.Method, res.URL)
			kinds[k] = append(kinds[k], res.Latency)
			if res.Code < 200 || res.Code >= 400 {
				fmt.Fprintf(os.Stderr, "%s: %d %s %s\n", k, res.Code, res.Error, res.Body)
			}
		}
	}
}

// kindOf names the kind of a mixed workload's request.
func kindOf(method, u string) string {
	path := u
	if p, err := url.Parse(u); err == nil {
		path = p.Path
		if p.RawQuery != "" && method == http.MethodGet {
			path += "?where"
		}
	}
	for _, prefix := range []string{"/v1/files/upload/", "/v1/files/download/", "/v1/project-days/"} {
		if strings.HasPrefix(path, prefix) {
			path = prefix + "{id}"
		}
	}
	return method + " " + path
}

// printKinds prints count, p50 and p99 of each kind of request.
func printKinds(name string, lat map[string][]time.Duration) {
	fmt.Printf("\n%s by kind of request:\n\n| request | count | p50 | p99 | max |\n|---|---|---|---|---|\n", name)
	names := make([]string, 0, len(lat))
	for k := range lat {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		ls := lat[k]
		slices.Sort(ls)
		fmt.Printf("| %s | %d | %s | %s | %s |\n", k, len(ls), ms(ls[len(ls)/2]), ms(ls[len(ls)*99/100]), ms(ls[len(ls)-1]))
	}
}

type loadEnv struct {
	engine, url, dayID, project, task, doc, upload string
	dsn                                            string
	tenantID                                       int64
	header                                         http.Header
	svc                                            *app.Service
	close                                          func()
}

func newLoadEnv(ctx context.Context, dsn, filesDir string) (*loadEnv, error) {
	cfg := config.Default()
	cfg.Database = dsn
	cfg.Files = filesDir
	cfg.FileRate = 1 << 30 // the benchmark measures throughput, not the limit
	cfg.LoginFailuresPerAddress = 1 << 30
	// The brake holds an attempt's place while it waits for the hasher, so
	// that guesses cannot run in parallel: the workload's sign-ins of one
	// account from one address would wait for each other's places.
	cfg.LoginFailuresPerAccount = 1 << 30
	opts := store.DefaultOptions()
	opts.Trace = tracing.Enabled()
	db, err := store.OpenWith(ctx, dsn, opts)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		return nil, err
	}
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, err
	}
	tn, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"})
	if err != nil {
		return nil, err
	}
	srv := serve(svc)
	client := &http.Client{}
	token, err := login(client, srv.URL)
	if err != nil {
		return nil, err
	}
	e := &loadEnv{engine: db.Engine(), url: srv.URL, svc: svc, dsn: dsn, tenantID: tn.ID,
		header: http.Header{"Companyurl": {"bench"}, "Authorization": {"Bearer " + token}, "Content-Type": {"application/json"}},
		close: func() {
			srv.Close()
			svc.Close()
			db.Close()
		}}
	post := func(path, body string) (string, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header = e.header.Clone()
		resp, err := client.Do(req)
		if err != nil {
			return "", err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return "", fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
		}
		return idOf(string(b)), nil
	}
	if e.project, err = post("/v1/projects", `{"name":"Load"}`); err != nil {
		return nil, err
	}
	if e.task, err = post("/v1/tasks", `{"name":"Load"}`); err != nil {
		return nil, err
	}
	// ProjectDays are made by approving days; approve a month of them.
	var items []string
	for i := 0; i < 30; i++ {
		items = append(items, fmt.Sprintf(`{"project":%s,"day":"2025-06-%02d"}`, e.project, i+1))
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/approval/bulk-approve",
		strings.NewReader(`{"action":"approve","items":[`+strings.Join(items, ",")+`]}`))
	req.Header = e.header.Clone()
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	e.dayID = idOf(string(b))
	if e.doc, err = post("/v1/documents", `{"model":"project","record":`+e.project+`,"category":7}`); err != nil {
		return nil, err
	}
	// A second document keeps one file for the download-URL requests.
	fixed, err := post("/v1/documents", `{"model":"project","record":`+e.project+`,"category":8}`)
	if err != nil {
		return nil, err
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "fixed.bin")
	_, _ = part.Write([]byte("fixed"))
	_ = mw.Close()
	req, _ = http.NewRequest(http.MethodPost, srv.URL+"/v1/files/upload/document/"+fixed, &body)
	req.Header = e.header.Clone()
	req.Header.Set("Content-Type", mw.FormDataContentType())
	if resp, err = client.Do(req); err != nil {
		return nil, err
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	e.upload = idOf(string(b))
	return e, nil
}

// mixed returns the targeter of the mixed workload.
func (e *loadEnv) mixed() vegeta.Targeter {
	var n atomic.Int64
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreateFormFile("file", "load.bin")
	_, _ = part.Write(bytes.Repeat([]byte{'x'}, 64<<10))
	_ = mw.Close()
	uploadBody, uploadType := body.Bytes(), mw.FormDataContentType()
	where := url.QueryEscape(`{"day":{">=":"2025-06-10","<":"2025-06-20"}}`)
	grant := url.Values{"grant_type": {"password"}, "username": {"admin@bench.test"}, "password": {"bench-password"},
		"client_id": {"bench"}, "client_secret": {"bench"}}.Encode()
	return func(t *vegeta.Target) error {
		i := n.Add(1)
		t.Header = http.Header{}
		switch k := i % 100; {
		case k < 50:
			t.Method, t.URL = http.MethodGet, e.url+"/v1/project-days/"+e.dayID
		case k < 70:
			t.Method, t.URL = http.MethodGet, e.url+"/v1/project-days?where="+where
		case k < 90:
			day := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(i%300)).Format(time.DateOnly)
			t.Method, t.URL = http.MethodPost, e.url+"/v1/time-entries"
			t.Body = []byte(fmt.Sprintf(`{"project":%s,"task":%s,"day":"%s","duration":1800,"sorting":1}`, e.project, e.task, day))
		case k < 95:
			t.Method, t.URL = http.MethodPost, e.url+"/v1/files/upload/document/"+e.doc+"?delete_others=1"
			t.Body = uploadBody
			t.Header.Set("Content-Type", uploadType)
		case k < 99:
			t.Method, t.URL = http.MethodGet, e.url+"/v1/files/download/"+e.upload
		default:
			t.Method, t.URL = http.MethodPost, e.url+"/oauth2/token"
			t.Body = []byte(grant)
			t.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			t.Header.Set("Authorization", "")
		}
		return nil
	}
}
