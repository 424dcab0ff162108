package app_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"testing"
	"time"

	"planwerk/internal/jobs"
	"planwerk/internal/testenv"
)

// sample returns the value of a sample (name and labels, as exposed) in
// metrics text, and whether it is there.
func sample(t *testing.T, text, name string) (float64, bool) {
	t.Helper()
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindStringSubmatch(text)
	if m == nil {
		return 0, false
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		t.Fatalf("sample %s: %v", name, err)
	}
	return v, true
}

// scrapeMetrics returns the text of the server's GET /metrics.
func scrapeMetrics(t *testing.T, srv *testenv.Server) string {
	t.Helper()
	status, _, body := testenv.Do(t, srv.Public().Request(t, http.MethodGet, "/metrics", nil))
	if status != http.StatusOK {
		t.Fatalf("GET /metrics: %d", status)
	}
	return string(body)
}

// waitSample scrapes the server's /metrics until the sample is there and
// ok says its value will do, and returns the text scraped last.
func waitSample(t *testing.T, srv *testenv.Server, name string, ok func(v float64) bool) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		m := scrapeMetrics(t, srv)
		if v, there := sample(t, m, name); there && ok(v) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never came; last scraped:\n%s", name, m)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func isOne(v float64) bool { return v == 1 }

// TestJobMetrics: a served instance names each of its jobs in /metrics
// from the start (no errors), the webhook dispatcher as running, and a
// triggered run of the purge and the file sweep shows as their last run
// and duration.
func TestJobMetrics(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		m := scrapeMetrics(t, srv)
		for _, job := range []string{"purge", "file-sweep", "statistics", "webhook-dispatcher", "account-exports", "export-purge", "export-sweep"} {
			if v, ok := sample(t, m, `planwerk_job_errors_total{job="`+job+`"}`); !ok || v != 0 {
				t.Errorf("errors of job %s: %v (shown: %v), want 0", job, v, ok)
			}
		}
		// The housekeeping waits an hour after start-up: no test sees it
		// run unless it triggers it.
		if _, ok := sample(t, m, `planwerk_job_last_run_timestamp_seconds{job="purge"}`); ok {
			t.Fatal("the purge ran at start-up")
		}

		waitSample(t, srv, `planwerk_job_running{job="webhook-dispatcher"}`, isOne)
		waitSample(t, srv, `planwerk_job_running{job="account-exports"}`, isOne)

		before := float64(time.Now().Unix())
		for _, job := range []string{"purge", "file-sweep", "statistics", "export-purge", "export-sweep"} {
			if !srv.Service.Jobs.Trigger(job) {
				t.Fatalf("no job %s", job)
			}
		}
		for _, job := range []string{"purge", "file-sweep", "statistics", "export-purge", "export-sweep"} {
			m = waitSample(t, srv, `planwerk_job_last_run_timestamp_seconds{job="`+job+`"}`, func(v float64) bool { return v >= before })
			if v, _ := sample(t, m, `planwerk_job_running{job="`+job+`"}`); v != 0 {
				t.Errorf("%s still running after its run: %v", job, v)
			}
			if n, _ := sample(t, m, `planwerk_job_duration_seconds_count{job="`+job+`"}`); n != 1 {
				t.Errorf("runs of %s: %v, want 1", job, n)
			}
			if v, _ := sample(t, m, `planwerk_job_errors_total{job="`+job+`"}`); v != 0 {
				t.Errorf("errors of %s: %v, want 0", job, v)
			}
		}
	})
}

// TestCloseWaitsForJobs: stopping a served instance cancels its jobs and
// waits for them, a job cleaning up after the cancellation included,
// before it closes the database they use.
func TestCloseWaitsForJobs(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		running, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
		cleanedUp := make(chan error, 1)
		err := srv.Service.Jobs.Add(jobs.Job{Name: "test-cleanup", Lifelong: true, Run: func(ctx context.Context) error {
			close(running)
			<-ctx.Done()
			close(cancelled)
			<-release
			// The database is still open while the job cleans up.
			cleanedUp <- srv.Service.DB.Ping(context.WithoutCancel(ctx))
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		<-running // added to a started service, it started at once
		// The dispatcher is running too: stopping waits for it.
		waitSample(t, srv, `planwerk_job_running{job="webhook-dispatcher"}`, isOne)

		stopped := make(chan struct{})
		go func() {
			srv.Stop()
			close(stopped)
		}()
		<-cancelled
		select {
		case <-stopped:
			t.Fatal("the service stopped while a job was running")
		default:
		}
		close(release)
		<-stopped
		select {
		case err := <-cleanedUp:
			if err != nil {
				t.Errorf("the job's clean-up found the database closed: %v", err)
			}
		default:
			t.Fatal("the service stopped before the job returned")
		}

		// The dispatcher, too, had returned: its one run is recorded.
		rec := httptest.NewRecorder()
		srv.Service.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if n, _ := sample(t, rec.Body.String(), `planwerk_job_duration_seconds_count{job="webhook-dispatcher"}`); n != 1 {
			t.Errorf("runs of the webhook dispatcher: %v, want 1", n)
		}
		if v, _ := sample(t, rec.Body.String(), `planwerk_job_errors_total{job="webhook-dispatcher"}`); v != 0 {
			t.Errorf("errors of the webhook dispatcher: %v, want 0", v)
		}
	})
}
