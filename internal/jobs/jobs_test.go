package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"planwerk/internal/jobs"
)

// never is an interval no test outlives: a job with it runs only when
// started (FirstDelay zero) or triggered.
const never = time.Hour

// wait bounds every wait for something the registry must do; it only
// ends a test that would hang.
const wait = time.Minute

// ran is one run as the metrics learnt of it.
type ran struct {
	job    string
	failed bool
}

// recorder is the registry's Metrics: every finished run is sent on
// runs; started counts the runs begun.
type recorder struct {
	mu      sync.Mutex
	added   []string
	started atomic.Int32
	runs    chan ran
}

// newRecorder returns a recorder holding up to 1,000 runs not yet waited for.
func newRecorder() *recorder { return &recorder{runs: make(chan ran, 1000)} }

func (r *recorder) JobAdded(job string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.added = append(r.added, job)
}

func (r *recorder) JobStarted(string) { r.started.Add(1) }

func (r *recorder) JobRan(job string, end time.Time, took time.Duration, failed bool) {
	if end.IsZero() || took < 0 {
		panic("a run without its end or duration")
	}
	r.runs <- ran{job, failed}
}

// next waits for the next finished run.
func (r *recorder) next(t *testing.T) ran {
	t.Helper()
	select {
	case got := <-r.runs:
		return got
	case <-time.After(wait):
		t.Fatal("no run finished")
		return ran{}
	}
}

// none checks that no run has finished that was not waited for.
func (r *recorder) none(t *testing.T) {
	t.Helper()
	select {
	case got := <-r.runs:
		t.Fatalf("unexpected run %+v", got)
	default:
	}
}

// logBuffer is a log the test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// start returns a started registry holding js, closed at the test's end.
func start(t *testing.T, js ...jobs.Job) (*jobs.Registry, *recorder, *logBuffer) {
	t.Helper()
	m, log := newRecorder(), &logBuffer{}
	r := jobs.New(slog.New(slog.NewTextHandler(log, nil)), m)
	for _, j := range js {
		if err := r.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	r.Start()
	t.Cleanup(func() {
		if err := r.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return r, m, log
}

func ok(context.Context) error { return nil }

func closeNow(t *testing.T, r *jobs.Registry) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	if err := r.Close(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestStartRunsAtOnce: a job without a first delay runs at start; one
// with a first delay does not run before it, and Close ends its wait.
func TestStartRunsAtOnce(t *testing.T) {
	t.Parallel()
	var delayed atomic.Int32
	r, m, _ := start(t,
		jobs.Job{Name: "now", Every: never, Run: ok},
		jobs.Job{Name: "later", Every: never, FirstDelay: never, Run: func(context.Context) error { delayed.Add(1); return nil }})
	if got := m.next(t); got != (ran{"now", false}) {
		t.Fatalf("ran %+v", got)
	}
	closeNow(t, r)
	m.none(t)
	if m.started.Load() != 1 {
		t.Errorf("%d runs started, want 1", m.started.Load())
	}
	if delayed.Load() != 0 {
		t.Error("the delayed job ran")
	}
	if strings.Join(m.added, ",") != "now,later" {
		t.Errorf("metrics learnt of %v", m.added)
	}
}

// TestIntervalRuns: a job runs again every interval.
func TestIntervalRuns(t *testing.T) {
	t.Parallel()
	_, m, _ := start(t, jobs.Job{Name: "tick", Every: time.Millisecond, FirstDelay: time.Millisecond, Run: ok})
	for range 3 {
		if got := m.next(t); got.job != "tick" || got.failed {
			t.Fatalf("ran %+v", got)
		}
	}
}

// TestTrigger: a job waiting for its interval runs when its Trigger
// channel is sent to or Registry.Trigger names it, once per trigger.
func TestTrigger(t *testing.T) {
	t.Parallel()
	trigger := make(chan struct{})
	r, m, _ := start(t, jobs.Job{Name: "held", Every: never, FirstDelay: never, Trigger: trigger, Run: ok})
	trigger <- struct{}{}
	if got := m.next(t); got.job != "held" {
		t.Fatalf("ran %+v", got)
	}
	if !r.Trigger("held") {
		t.Fatal("Trigger does not know the job")
	}
	m.next(t)
	if r.Trigger("no-such-job") {
		t.Error("Trigger knows a job that was never added")
	}
	closeNow(t, r)
	m.none(t)
}

// TestClosedTriggerIgnored: a closed Trigger channel does not run the job
// (it would, endlessly).
func TestClosedTriggerIgnored(t *testing.T) {
	t.Parallel()
	trigger := make(chan struct{})
	close(trigger)
	r, m, _ := start(t, jobs.Job{Name: "held", Every: never, FirstDelay: never, Trigger: trigger, Run: ok})
	r.Trigger("held") // runs after the closed channel was seen, or before: once either way
	m.next(t)
	closeNow(t, r)
	m.none(t)
}

// TestCloseWaitsForRunningJob: Close cancels a running job's context and
// returns only after the job has returned.
func TestCloseWaitsForRunningJob(t *testing.T) {
	t.Parallel()
	running, cancelled, release := make(chan struct{}), make(chan struct{}), make(chan struct{})
	var finished atomic.Bool
	r, m, _ := start(t, jobs.Job{Name: "slow", Lifelong: true, Run: func(ctx context.Context) error {
		close(running)
		<-ctx.Done()
		close(cancelled)
		<-release // cleaning up after the cancellation
		finished.Store(true)
		return ctx.Err()
	}})
	<-running
	closed := make(chan error)
	go func() { closed <- r.Close(context.Background()) }()
	<-cancelled
	select {
	case <-closed:
		t.Fatal("Close returned while the job was running")
	default:
	}
	close(release)
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if !finished.Load() {
		t.Fatal("Close returned before the job did")
	}
	if got := m.next(t); got != (ran{"slow", false}) {
		t.Errorf("ran %+v, want a run cut by Close and not counted as failed", got)
	}
}

// TestCloseGivesUp: Close waits no longer than its context; it names the
// job that did not stop, and a new Start does not run that job beside
// the one still running.
func TestCloseGivesUp(t *testing.T) {
	t.Parallel()
	running, release := make(chan struct{}), make(chan struct{})
	var runs, inFlight, most atomic.Int32
	r, m, log := start(t, jobs.Job{Name: "stubborn", Every: never, Run: func(ctx context.Context) error {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		if n > most.Load() {
			most.Store(n)
		}
		if runs.Add(1) == 1 {
			close(running)
			<-release // ignores its context
		}
		return nil
	}})
	<-running
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := r.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "stubborn") || !errors.Is(err, context.Canceled) {
		t.Fatalf("Close: %v, want an error naming the job", err)
	}
	if !strings.Contains(log.String(), "job did not stop in time") || !strings.Contains(log.String(), "job=stubborn") {
		t.Errorf("log: %s", log)
	}
	r.Start() // its first run would begin at once, but the old one still runs
	r.Trigger("stubborn")
	if runs.Load() != 1 {
		t.Error("a second run began beside the first")
	}
	close(release)
	m.next(t)
	m.next(t)
	if most.Load() != 1 {
		t.Errorf("%d runs at once", most.Load())
	}
}

// TestPanicCounted: a panicking run is logged with its stack and counted
// as failed; the job runs again, and so does a lifelong one.
func TestPanicCounted(t *testing.T) {
	t.Parallel()
	var calls, lifelongCalls atomic.Int32
	restarted := make(chan struct{})
	r, m, log := start(t,
		jobs.Job{Name: "boom", Every: never, Run: func(context.Context) error {
			if calls.Add(1) == 1 {
				panic("first run")
			}
			return nil
		}},
		jobs.Job{Name: "worker", Lifelong: true, FirstDelay: never, Run: func(ctx context.Context) error {
			if lifelongCalls.Add(1) == 1 {
				panic("lifelong")
			}
			close(restarted)
			<-ctx.Done()
			return nil
		}})
	if got := m.next(t); got != (ran{"boom", true}) {
		t.Fatalf("ran %+v, want a failed run", got)
	}
	if !strings.Contains(log.String(), "job panicked") || !strings.Contains(log.String(), "first run") ||
		!strings.Contains(log.String(), "jobs_test.go") {
		t.Errorf("log: %s", log)
	}
	r.Trigger("boom")
	if got := m.next(t); got != (ran{"boom", false}) {
		t.Fatalf("ran %+v after the panic", got)
	}

	r.Trigger("worker")
	if got := m.next(t); got != (ran{"worker", true}) {
		t.Fatalf("ran %+v, want a failed run", got)
	}
	r.Trigger("worker") // restarts it without the pause
	<-restarted
	closeNow(t, r)
	if got := m.next(t); got != (ran{"worker", false}) {
		t.Fatalf("ran %+v, want the restarted run ended by Close", got)
	}
}

// TestErrorsCounted: a run's error is logged and counted; a lifelong
// job returning before Close failed even without an error.
func TestErrorsCounted(t *testing.T) {
	t.Parallel()
	var workerCalls atomic.Int32
	restarted := make(chan struct{})
	_, m, log := start(t,
		jobs.Job{Name: "failing", Every: never, Run: func(context.Context) error { return errors.New("disk on fire") }})
	if got := m.next(t); got != (ran{"failing", true}) {
		t.Fatalf("ran %+v", got)
	}
	if !strings.Contains(log.String(), "disk on fire") {
		t.Errorf("log: %s", log)
	}

	r2, m2, _ := start(t, jobs.Job{Name: "quitter", Lifelong: true, Run: func(ctx context.Context) error {
		if workerCalls.Add(1) == 1 {
			return nil
		}
		close(restarted)
		<-ctx.Done()
		return ctx.Err()
	}})
	if got := m2.next(t); got != (ran{"quitter", true}) {
		t.Fatalf("ran %+v, want a failed run", got)
	}
	r2.Trigger("quitter")
	<-restarted
	closeNow(t, r2)
	if got := m2.next(t); got != (ran{"quitter", false}) {
		t.Fatalf("ran %+v, want a run cut by Close", got)
	}
}

// TestNoOverlap: however often a job is triggered, its runs follow one
// another.
func TestNoOverlap(t *testing.T) {
	t.Parallel()
	trigger := make(chan struct{})
	var inFlight, most, runs atomic.Int32
	r, _, _ := start(t, jobs.Job{Name: "busy", Every: never, Trigger: trigger, Run: func(context.Context) error {
		n := inFlight.Add(1)
		if n > most.Load() {
			most.Store(n)
		}
		time.Sleep(100 * time.Microsecond)
		inFlight.Add(-1)
		runs.Add(1)
		return nil
	}})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				select {
				case trigger <- struct{}{}:
				case <-time.After(wait):
				}
				r.Trigger("busy")
			}
		})
	}
	wg.Wait()
	closeNow(t, r)
	if most.Load() != 1 || runs.Load() < 80 {
		t.Errorf("%d runs, at most %d at once", runs.Load(), most.Load())
	}
}

// TestAddChecks: a job needs a unique name, a Run and one schedule; a job
// added to a running registry starts at once.
func TestAddChecks(t *testing.T) {
	t.Parallel()
	r, m, _ := start(t, jobs.Job{Name: "a", Every: never, FirstDelay: never, Run: ok})
	for _, j := range []jobs.Job{
		{Name: "a", Every: never, Run: ok},
		{Name: "", Every: never, Run: ok},
		{Name: "b", Every: never},
		{Name: "b", Run: ok},
		{Name: "b", Every: never, Lifelong: true, Run: ok},
		{Name: "b", Every: never, FirstDelay: -time.Second, Run: ok},
	} {
		if err := r.Add(j); err == nil {
			t.Errorf("added %+v", j)
		}
	}
	if err := r.Add(jobs.Job{Name: "b", Every: never, Run: ok}); err != nil {
		t.Fatal(err)
	}
	if got := m.next(t); got.job != "b" {
		t.Fatalf("ran %+v", got)
	}
}
