// Package jobs runs the service's background work. Every job is named in
// one Registry, which starts them all, stops them all and waits for them:
// nothing the service does in the background runs outside it.
//
// A job is either periodic (Every: it runs after FirstDelay, then again
// Every after each run ends) or lifelong (Lifelong: its Run is called
// once and works until the registry closes, as a dispatcher with workers
// of its own does). Either may be run early by a trigger: a receive from
// the job's Trigger channel, or Registry.Trigger with its name.
//
// The registry guarantees:
//   - runs of one job never overlap (one goroutine runs them in turn, and
//     after a restart it begins only once the previous one has ended);
//   - a run's panic is recovered, logged with its stack and counted as a
//     failed run; it never ends the process;
//   - Close cancels every job's context and waits for the jobs to return,
//     until its own context ends; it names the jobs that did not stop;
//   - each run is reported to Metrics: that it started, and when it
//     ended, how long it took and whether it failed.
//
// A lifelong job that returns (or panics) before Close is a failed run;
// it is called again after a second, or at once when triggered. An error
// a run returns after Close has cancelled it is not a failure: the run was
// cut.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"planwerk/internal/tracing"
)

// restartPause is how long a lifelong job that ended early waits before
// it is called again: long enough not to spin on a job that fails at
// once, short enough that its work barely waits.
const restartPause = time.Second

// Job is one piece of background work.
type Job struct {
	// Name names the job in logs and metrics (label job); unique in a
	// registry.
	Name string
	// Every is the time from the end of one run to the start of the next.
	// Exactly one of Every and Lifelong is given.
	Every time.Duration
	// Lifelong makes Run work for the life of the registry: it returns
	// only when its context ends.
	Lifelong bool
	// FirstDelay is how long after Start the first run begins (zero: at
	// once).
	FirstDelay time.Duration
	// Trigger, if not nil, runs the job early: after each receive from it
	// the job runs (after the run in flight, if any), and its interval
	// counts again from that run's end. A closed Trigger is ignored.
	Trigger <-chan struct{}
	// Run does the work. Its context ends when the registry closes.
	Run func(ctx context.Context) error
}

// Metrics learns about the jobs and their runs.
type Metrics interface {
	// JobAdded is told each job's name when it is added, before any run.
	JobAdded(job string)
	// JobStarted is told that a run begins.
	JobStarted(job string)
	// JobRan is told of every finished run: when it ended, how long it
	// took, and whether it failed (an error or a panic).
	JobRan(job string, end time.Time, took time.Duration, failed bool)
}

type noMetrics struct{}

func (noMetrics) JobAdded(string)                               {}
func (noMetrics) JobStarted(string)                             {}
func (noMetrics) JobRan(string, time.Time, time.Duration, bool) {}

// Registry holds the jobs and runs them between Start and Close.
type Registry struct {
	log     *slog.Logger
	metrics Metrics

	mu     sync.Mutex
	jobs   []*entry
	ctx    context.Context    // the running jobs' context; nil while stopped
	cancel context.CancelFunc // ends ctx
	loops  []loop             // of the running jobs
}

// entry is a job and what the registry keeps of it across restarts.
type entry struct {
	Job
	wake chan struct{} // Registry.Trigger; holds at most one run to come
	// free holds a token while no goroutine runs the job: a restart after
	// a Close that gave up on the job waits for the old goroutine to end.
	free chan struct{}
}

// loop is the goroutine running one job between a Start and a Close.
type loop struct {
	name string
	done chan struct{} // closed when it returns
}

// New returns an empty registry logging to log and reporting to m (nil:
// to nothing).
func New(log *slog.Logger, m Metrics) *Registry {
	if m == nil {
		m = noMetrics{}
	}
	return &Registry{log: log, metrics: m}
}

// Add adds a job. A registry that has been started starts it at once.
func (r *Registry) Add(j Job) error {
	if err := j.check(); err != nil {
		return fmt.Errorf("add job %q: %w", j.Name, err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.jobs {
		if e.Name == j.Name {
			return fmt.Errorf("add job %q: the name is taken", j.Name)
		}
	}
	e := &entry{Job: j, wake: make(chan struct{}, 1), free: make(chan struct{}, 1)}
	e.free <- struct{}{}
	r.jobs = append(r.jobs, e)
	r.metrics.JobAdded(j.Name)
	if r.ctx != nil {
		r.startLocked(e)
	}
	return nil
}

func (j Job) check() error {
	switch {
	case j.Name == "":
		return errors.New("no name")
	case j.Run == nil:
		return errors.New("no Run")
	case j.Lifelong == (j.Every > 0):
		return errors.New("give either a positive Every or Lifelong")
	case j.FirstDelay < 0:
		return errors.New("negative FirstDelay")
	}
	return nil
}

// Start starts every job. Starting a started registry does nothing; after
// Close, Start starts the jobs again.
func (r *Registry) Start() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ctx != nil {
		return
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	for _, e := range r.jobs {
		r.startLocked(e)
	}
}

func (r *Registry) startLocked(e *entry) {
	l := loop{name: e.Name, done: make(chan struct{})}
	r.loops = append(r.loops, l)
	go r.loop(r.ctx, e, l.done)
}

// Trigger runs the named job early, as a receive from its Trigger
// channel would; a trigger arriving while one waits is the same run. It
// reports whether the registry has such a job.
func (r *Registry) Trigger(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, e := range r.jobs {
		if e.Name == name {
			select {
			case e.wake <- struct{}{}:
			default:
			}
			return true
		}
	}
	return false
}

// Close cancels the jobs' context and waits until every job has returned
// or ctx ends. A job still running then is logged and named in the
// error; it goes on in the background, and a later Start does not run it
// beside itself.
func (r *Registry) Close(ctx context.Context) error {
	r.mu.Lock()
	cancel, loops := r.cancel, r.loops
	r.ctx, r.cancel, r.loops = nil, nil, nil
	r.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	var stuck []string
	for _, l := range loops {
		select {
		case <-l.done:
			continue
		case <-ctx.Done():
		}
		select {
		case <-l.done:
		default:
			r.log.Error("job did not stop in time", "job", l.name)
			stuck = append(stuck, l.name)
		}
	}
	if len(stuck) > 0 {
		return fmt.Errorf("stop jobs: still running: %s: %w", strings.Join(stuck, ", "), ctx.Err())
	}
	return nil
}

// loop runs e's job, one run at a time, until ctx ends.
func (r *Registry) loop(ctx context.Context, e *entry, done chan<- struct{}) {
	defer close(done)
	select {
	case <-e.free:
	case <-ctx.Done():
		return
	}
	defer func() { e.free <- struct{}{} }()
	next := time.NewTimer(e.FirstDelay)
	defer next.Stop()
	trigger := e.Trigger
	for {
		select {
		case <-ctx.Done():
			return
		case <-next.C:
		case <-e.wake:
		case _, ok := <-trigger:
			if !ok {
				trigger = nil // closed: it would fire forever
				continue
			}
		}
		if ctx.Err() != nil {
			return
		}
		r.run(ctx, e)
		if e.Lifelong {
			next.Reset(restartPause)
		} else {
			next.Reset(e.Every)
		}
	}
}

// run runs e's job once, logs how it failed if it did, and reports the
// run to the metrics.
func (r *Registry) run(ctx context.Context, e *entry) {
	r.metrics.JobStarted(e.Name)
	start := time.Now()
	var span trace.Span
	if !e.Lifelong {
		// A lifelong job (the dispatcher, the export worker) makes spans
		// of its own, one for each piece of work.
		ctx, span = tracing.Start(ctx, "job "+e.Name, trace.SpanKindInternal, attribute.String("planwerk.job", e.Name))
	}
	err := call(ctx, e.Run)
	if span != nil {
		defer func() { tracing.End(span, err) }()
	}
	end := time.Now()
	var p *panicError
	panicked := errors.As(err, &p)
	switch {
	case ctx.Err() != nil && !panicked:
		err = nil // cut by Close
	case panicked:
		r.log.Error("job panicked", "job", e.Name, "panic", fmt.Sprint(p.value), "stack", string(p.stack))
	case err != nil:
		r.log.Warn("job failed", "job", e.Name, "err", err)
	case e.Lifelong:
		err = errors.New("returned before the registry closed")
		r.log.Warn("job failed", "job", e.Name, "err", err)
	}
	r.metrics.JobRan(e.Name, end, end.Sub(start), err != nil)
}

// panicError is a run's recovered panic.
type panicError struct {
	value any
	stack []byte
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// call calls fn, turning a panic into a *panicError.
func call(ctx context.Context, fn func(context.Context) error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v, stack: debug.Stack()}
		}
	}()
	return fn(ctx)
}
