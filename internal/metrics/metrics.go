// Package metrics holds the service's Prometheus metrics.
package metrics

import (
	"database/sql"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/puzpuzpuz/xsync/v4"
)

// Metrics are the service's instruments, on a registry of their own.
type Metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	// series keeps each (route, method, status)'s two series once found,
	// so that a request does not hash its labels into the vectors again.
	series        *xsync.Map[seriesKey, requestSeries]
	uploadBytes   prometheus.Counter
	rateLimited   *prometheus.CounterVec
	loginFailures prometheus.Counter
	grants        *prometheus.CounterVec
	brakeRefusals *prometheus.CounterVec
	// The change feed and webhooks.
	changes        prometheus.Counter
	batches        prometheus.Histogram
	feedLag        prometheus.Histogram
	feedReads      prometheus.Counter
	feedWaiting    prometheus.Gauge
	deliveries     *prometheus.CounterVec
	oldestDelivery prometheus.Gauge
	// redisUp has no labels; as a vector it is exported only once set,
	// so that a service without Redis does not report it as down.
	redisUp           *prometheus.GaugeVec
	rateLimitFallback *prometheus.CounterVec
	overloaded        *prometheus.CounterVec
	// Background jobs, by job.
	jobRunning  *prometheus.GaugeVec
	jobLastRun  *prometheus.GaugeVec
	jobDuration *prometheus.HistogramVec
	jobErrors   *prometheus.CounterVec
}

// New returns the metrics, with Go runtime and process collectors and a
// collector for each named database pool.
func New(pools map[string]*sql.DB) *Metrics {
	m := &Metrics{series: xsync.NewMap[seriesKey, requestSeries](),
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_http_requests_total",
			Help: "HTTP requests by route pattern, method and status.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "planwerk_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method"}),
		uploadBytes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "planwerk_upload_bytes_total",
			Help: "Bytes of files stored by uploads.",
		}),
		rateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_rate_limited_total",
			Help: "Requests refused with 429, by limit.",
		}, []string{"limit"}),
		loginFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "planwerk_login_failures_total",
			Help: "Password grants refused for a wrong e-mail address or password.",
		}),
		grants: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_oauth_grants_total",
			Help: "Token requests by grant type and outcome (ok, invalid_grant, invalid_client, invalid_scope, throttled, error).",
		}, []string{"grant_type", "outcome"}),
		brakeRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_login_brake_refusals_total",
			Help: "Sign-ins refused by the login brake, by the bucket that was empty (account_address, address, account).",
		}, []string{"reason"}),
		changes: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "planwerk_changes_total",
			Help: "Changes recorded in the change feed (one per record a committed write created, changed or deleted).",
		}),
		batches: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "planwerk_db_commit_batch_writes",
			Help:    "Writes that shared one commit and its sync to disk (SQLite group commit).",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		feedLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "planwerk_feed_lag_seconds",
			Help:    "Time from a change's commit to a feed read or webhook delivery handing it out.",
			Buckets: []float64{.01, .05, .1, .5, 1, 5, 30, 60, 300, 3600, 86400},
		}),
		feedReads: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "planwerk_feed_reads_total",
			Help: "Reads of changes from the database by change feed requests (a waiting request reads again when its tenant commits).",
		}),
		feedWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "planwerk_feed_waiting",
			Help: "Change feed requests waiting for a change (wait).",
		}),
		deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_webhook_deliveries_total",
			Help: "Webhook delivery attempts by outcome (delivered, retry, failed, disabled).",
		}, []string{"outcome"}),
		oldestDelivery: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "planwerk_webhook_oldest_pending_seconds",
			Help: "Age of the oldest change an enabled webhook has not yet been delivered.",
		}),
		redisUp: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "planwerk_redis_up",
			Help: "1 while Redis answers rate-limit calls in time, 0 while limits count per instance.",
		}, nil),
		rateLimitFallback: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_ratelimit_fallback_total",
			Help: "Rate-limit events counted in this process because Redis was unavailable, by limit.",
		}, []string{"limit"}),
		overloaded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_overloaded_total",
			Help: "Requests that got no slot of a fair share, by share and reason: the tenant's queue was full (queue_full) or the wait ended (timeout).",
		}, []string{"gate", "reason"}),
		jobRunning: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "planwerk_job_running",
			Help: "1 while a run of the background job is in flight (a lifelong job's, as long as it works), else 0.",
		}, []string{"job"}),
		jobLastRun: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "planwerk_job_last_run_timestamp_seconds",
			Help: "Unix time at which the background job's last run ended.",
		}, []string{"job"}),
		jobDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "planwerk_job_duration_seconds",
			Help:    "Duration of background job runs (a lifelong job's run lasts until shutdown or failure).",
			Buckets: []float64{.01, .1, 1, 10, 60, 300, 1800, 3600},
		}, []string{"job"}),
		jobErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "planwerk_job_errors_total",
			Help: "Background job runs that failed: returned an error or panicked.",
		}, []string{"job"}),
	}
	m.registry.MustRegister(m.requests, m.duration, m.uploadBytes, m.rateLimited, m.loginFailures, m.grants, m.brakeRefusals,
		m.changes, m.batches, m.feedLag, m.feedReads, m.feedWaiting, m.deliveries, m.oldestDelivery,
		m.redisUp, m.rateLimitFallback, m.overloaded, m.jobRunning, m.jobLastRun, m.jobDuration, m.jobErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for name, pool := range pools {
		m.registry.MustRegister(collectors.NewDBStatsCollector(pool, name))
	}
	return m
}

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// Request records one answered request. route is the mux pattern ("" for
// unknown paths, recorded as "unmatched" so that clients cannot grow the
// label set).
func (m *Metrics) Request(route, method string, status int, seconds float64) {
	if m == nil {
		return
	}
	k := seriesKey{route, knownMethod(method), status}
	rs, ok := m.series.Load(k)
	if !ok {
		if route == "" {
			route = "unmatched"
		}
		rs = requestSeries{m.requests.WithLabelValues(route, k.method, statusText(status)), m.duration.WithLabelValues(route, k.method)}
		m.series.Store(k, rs)
	}
	rs.count.Inc()
	rs.seconds.Observe(seconds)
}

// seriesKey names a request's series: the route is a mux pattern of the
// service's, the method one of knownMethod's, the status one the service
// answers, so the keys are few.
type seriesKey struct {
	route, method string
	status        int
}

type requestSeries struct {
	count   prometheus.Counter
	seconds prometheus.Observer
}

// Uploaded records the bytes of a stored upload.
func (m *Metrics) Uploaded(n int64) {
	if m != nil {
		m.uploadBytes.Add(float64(n))
	}
}

// RateLimited records a 429 of the named limit.
func (m *Metrics) RateLimited(limit string) {
	if m != nil {
		m.rateLimited.WithLabelValues(limit).Inc()
	}
}

// LoginFailed records a refused password grant.
func (m *Metrics) LoginFailed() {
	if m != nil {
		m.loginFailures.Inc()
	}
}

// Grant records a token request's outcome.
func (m *Metrics) Grant(grantType, outcome string) {
	if m != nil {
		m.grants.WithLabelValues(grantType, outcome).Inc()
	}
}

// BrakeRefused records a sign-in refused by the login brake.
func (m *Metrics) BrakeRefused(reason string) {
	if m != nil {
		m.brakeRefusals.WithLabelValues(reason).Inc()
	}
}

// ChangesRecorded counts changes a commit recorded.
func (m *Metrics) ChangesRecorded(n int) {
	if m != nil {
		m.changes.Add(float64(n))
	}
}

// CommitBatch records how many writes shared one commit.
func (m *Metrics) CommitBatch(writes int) {
	if m != nil {
		m.batches.Observe(float64(writes))
	}
}

// FeedLag records how long after its commit a change was handed out.
func (m *Metrics) FeedLag(d time.Duration) {
	if m != nil {
		m.feedLag.Observe(d.Seconds())
	}
}

// FeedRead counts a read of changes by a change feed request.
func (m *Metrics) FeedRead() {
	if m != nil {
		m.feedReads.Inc()
	}
}

// FeedWaiting adds delta to the change feed requests waiting.
func (m *Metrics) FeedWaiting(delta int) {
	if m != nil {
		m.feedWaiting.Add(float64(delta))
	}
}

// Delivery counts a webhook delivery attempt's outcome.
func (m *Metrics) Delivery(outcome string) {
	if m != nil {
		m.deliveries.WithLabelValues(outcome).Inc()
	}
}

// OldestPendingDelivery sets the age of the oldest undelivered change.
func (m *Metrics) OldestPendingDelivery(d time.Duration) {
	if m != nil {
		m.oldestDelivery.Set(d.Seconds())
	}
}

// RedisUp records whether Redis answers rate-limit calls in time.
func (m *Metrics) RedisUp(up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.redisUp.WithLabelValues().Set(v)
}

// RateLimitFallback records one event of the named limit counted in this
// process because Redis was unavailable.
func (m *Metrics) RateLimitFallback(limit string) {
	if m != nil {
		m.rateLimitFallback.WithLabelValues(limit).Inc()
	}
}

// Share is a fair share of slots (a gate): its name, the slots in use and
// the requests waiting.
type Share interface {
	Name() string
	Stats() (inUse, waiting int)
}

// Watch exports the state of fair shares as planwerk_share_in_use and
// planwerk_share_waiting, labelled with their names.
func (m *Metrics) Watch(shares ...Share) {
	if m == nil {
		return
	}
	for _, sh := range shares {
		labels := prometheus.Labels{"gate": sh.Name()}
		m.registry.MustRegister(
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "planwerk_share_in_use", ConstLabels: labels,
				Help: "Slots of a fair share in use."}, func() float64 { n, _ := sh.Stats(); return float64(n) }),
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "planwerk_share_waiting", ConstLabels: labels,
				Help: "Requests waiting for a slot of a fair share."}, func() float64 { _, n := sh.Stats(); return float64(n) }))
	}
}

// Overloaded records a request that got no slot of the fair share named
// gate: refused because its tenant's queue was full, or its wait ended.
func (m *Metrics) Overloaded(gate string, queueFull bool) {
	if m == nil {
		return
	}
	reason := "timeout"
	if queueFull {
		reason = "queue_full"
	}
	m.overloaded.WithLabelValues(gate, reason).Inc()
}

// JobAdded makes the background job known before its first run: not
// running, no errors (so that its first failure shows as an increase).
func (m *Metrics) JobAdded(job string) {
	if m != nil {
		m.jobRunning.WithLabelValues(job).Set(0)
		m.jobErrors.WithLabelValues(job)
	}
}

// JobStarted records that a run of the background job began.
func (m *Metrics) JobStarted(job string) {
	if m != nil {
		m.jobRunning.WithLabelValues(job).Set(1)
	}
}

// JobRan records a finished run of a background job: when it ended, how
// long it took, and whether it failed.
func (m *Metrics) JobRan(job string, end time.Time, took time.Duration, failed bool) {
	if m == nil {
		return
	}
	m.jobRunning.WithLabelValues(job).Set(0)
	m.jobLastRun.WithLabelValues(job).Set(float64(end.UnixNano()) / 1e9)
	m.jobDuration.WithLabelValues(job).Observe(took.Seconds())
	if failed {
		m.jobErrors.WithLabelValues(job).Inc()
	}
}

// knownMethod keeps client-chosen method names out of label values.
func knownMethod(m string) string {
	switch m {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS":
		return m
	}
	return "other"
}

func statusText(code int) string {
	const digits = "0123456789"
	if code < 100 || code > 999 {
		return "other"
	}
	return string([]byte{digits[code/100], digits[code/10%10], digits[code%10]})
}
