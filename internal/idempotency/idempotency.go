// Package idempotency lets a POST be retried safely with an
// Idempotency-Key: the first request with a key runs and its answer is
// kept; the same request again gets that answer replayed, another
// request with the key 422, and any request while the first runs 409.
// The keys live in the idempotency_keys table (Keys), so that they hold
// across instances and restarts. See docs/decisions.md "Idempotency keys".
package idempotency

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// Header is the request header that names a key.
const Header = "Idempotency-Key"

// Bounds of keys and their answers.
const (
	// keep is how long a key and its answer are kept.
	keep = 24 * time.Hour
	// lease is how long a running request holds its key without renewing
	// it: a key whose holder died is free after this.
	lease = time.Minute
	// renewEvery is how often a running request renews its lease.
	renewEvery = lease / 3
	// cleanup bounds storing or releasing a key after a request without
	// a deadline (afterAnswer).
	cleanup = 10 * time.Second
	// maxKeptAnswer is the largest answer body kept for replay; a request
	// with a larger answer releases its key.
	maxKeptAnswer = 4 << 20
	// maxKeyLength is the longest Idempotency-Key.
	maxKeyLength = 255
	// statusClientClosed is the edge's status of a request whose client
	// went away (errs.Canceled): only logged, never sent.
	statusClientClosed = 499
)

// replayedHeaders are the headers of an answer a replay repeats.
var replayedHeaders = []string{"Content-Type", "Location", "ETag", "Cache-Control"}

var (
	errInvalidKey = errs.New(errs.Invalid, "invalid_idempotency_key",
		"Idempotency-Key must be one header of 1 to 255 printable ASCII characters (space to ~)")
	errKeyInUse = &errs.Error{Kind: errs.Conflict, Code: "idempotency_key_in_use", RetryAfter: time.Second,
		Message: "a request with this Idempotency-Key is still running; retry when it has finished"}
	errKeyReused = errs.New(errs.Unprocessable, "idempotency_key_reused",
		"this Idempotency-Key was used for another request (method, path, query or body differ); use a new key")
)

// Config is what the edge tells the service of its requests.
type Config struct {
	// Parts wraps a multipart body before the fingerprint parses it by
	// its parts: the edge's bound on part headers, so that the parser
	// buffers no more of them than the upload handler does (nil: none).
	Parts func(body io.Reader, boundary string) io.Reader
	// RequestID names a request in the log (nil: unnamed).
	RequestID func(ctx context.Context) string
}

// Service runs the requests that carry a key.
type Service struct {
	keys Store
	cfg  Config
	log  *slog.Logger
}

// New returns a Service keeping its keys in keys.
func New(keys Store, cfg Config, log *slog.Logger) *Service {
	if cfg.RequestID == nil {
		cfg.RequestID = func(context.Context) string { return "" }
	}
	return &Service{keys: keys, cfg: cfg, log: log}
}

// Shows checks, before a kept success is replayed, that the caller may
// see the record its body is; nil lets every replay through.
type Shows func(r *http.Request, body []byte) error

// Serve runs next for r, a request of user userID of tenant tenantID,
// under the request's Idempotency-Key; without the header it only runs
// next. It runs after authentication and the route's permit: keys belong
// to a user, and are replayed only to a caller who may make the request.
// A returned error is the request's answer, not yet sent.
func (s *Service) Serve(w http.ResponseWriter, r *http.Request, tenantID, userID int64, next http.Handler, shows Shows) error {
	values := r.Header.Values(Header)
	if len(values) == 0 {
		next.ServeHTTP(w, r)
		return nil
	}
	if len(values) > 1 || !validKey(values[0]) {
		return errInvalidKey
	}
	k := Key{TenantID: tenantID, UserID: userID, Name: values[0]}
	fp := newFingerprint(r, s.cfg.Parts)
	r.Body = fp
	defer fp.close()
	holder := make([]byte, 16)
	_, _ = rand.Read(holder)
	// A key found free between a failed claim and the look-up (its
	// request released it, its lease ran out, it expired) is claimed
	// again; three rounds end any such race but a contrived one.
	for range 3 {
		claimed, err := s.keys.Claim(r.Context(), k, holder, time.Now(), lease, keep)
		if err != nil {
			return err
		}
		if claimed {
			s.runKeyed(w, r, next, k, holder, fp)
			return nil
		}
		e, err := s.keys.Entry(r.Context(), k, time.Now())
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		if e.Running {
			return errKeyInUse
		}
		return replay(w, r, e.Answer, fp, shows)
	}
	return errKeyInUse
}

// validKey reports whether k is 1 to 255 printable ASCII characters,
// space included (HTTP strips spaces at either end of a header value).
func validKey(k string) bool {
	if k == "" || len(k) > maxKeyLength {
		return false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return false
		}
	}
	return true
}

// runKeyed runs the request that claimed k and keeps its answer, or
// releases the key when there is nothing to keep: a 5xx, an answer that
// says to retry, an answer too large, or a request whose body broke off.
// A panic (an aborted answer included) releases the key on its way up.
func (s *Service) runKeyed(w http.ResponseWriter, r *http.Request, next http.Handler, k Key, holder []byte, fp *fingerprint) {
	// The work around the answer must not end with the request's
	// cancellation: an answer the client did not wait for is the one to
	// keep.
	stop := s.holdKey(context.WithoutCancel(r.Context()), k, holder)
	done := false
	defer func() {
		stop()
		if !done {
			s.releaseKey(r.Context(), k, holder)
		}
	}()
	rec := &recorder{ResponseWriter: w}
	next.ServeHTTP(rec, r)
	if rec.status == 0 {
		rec.WriteHeader(http.StatusOK) // as net/http does for a handler that wrote nothing
	}
	fp.drain()
	stop()
	done = true
	if !keepAnswer(rec, fp.err != nil) {
		s.releaseKey(r.Context(), k, holder)
		return
	}
	a := Answer{Fingerprint: fp.sum(), Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
	ctx, cancel := afterAnswer(r.Context())
	defer cancel()
	ok, err := s.keys.Finish(ctx, k, holder, a)
	switch {
	case err != nil:
		// The key stays running until its lease runs out; then a retry
		// runs the request again.
		s.log.WarnContext(r.Context(), "store idempotent answer", "request_id", s.cfg.RequestID(r.Context()), "err", err)
	case !ok:
		s.log.WarnContext(r.Context(), "idempotency key taken over while its request ran", "request_id", s.cfg.RequestID(r.Context()))
	}
}

// answerGrace is how long past its request's deadline storing a keyed
// request's answer or releasing its key may go on: less than the second
// by which the request must be answered, however slow the database.
const answerGrace = 500 * time.Millisecond

// afterAnswer is the context of storing a keyed request's answer or
// releasing its key, once the answer is made (ctx is the request's). It
// does not end with the request's cancellation, but answerGrace after
// its deadline, so that a database that does not answer holds the
// request no longer (the key then stays running until its lease ends,
// as when its instance dies); a request that streamed past its deadline
// (an upload) has answerGrace from now. Without a deadline: cleanup.
func afterAnswer(ctx context.Context) (context.Context, context.CancelFunc) {
	after := context.WithoutCancel(ctx)
	d, ok := ctx.Deadline()
	switch now := time.Now(); {
	case !ok:
		return context.WithTimeout(after, cleanup)
	case d.Add(answerGrace).After(now):
		return context.WithDeadline(after, d.Add(answerGrace))
	default:
		return context.WithDeadline(after, now.Add(answerGrace))
	}
}

// keepAnswer reports whether an answer is kept for replay. Refusals are
// kept (the same request would be refused the same way), except those
// that say to retry (408, 429, 499) and those of a request whose body
// broke off: they answered a request that never arrived whole. A success
// is kept even when the body broke off after the handler had what it
// needed: the work was done, and must not be done twice.
func keepAnswer(rec *recorder, broken bool) bool {
	switch {
	case rec.overflow, rec.status >= 500:
		return false
	case rec.status < 400:
		return true
	case rec.status == http.StatusRequestTimeout, rec.status == http.StatusTooManyRequests, rec.status == statusClientClosed:
		return false
	}
	return !broken
}

// holdKey renews the lease of the running request on k until the
// returned function is called (once or more); that call ends a renewal
// under way rather than waiting for a database that does not answer.
func (s *Service) holdKey(ctx context.Context, k Key, holder []byte) func() {
	ctx, cancelRenewal := context.WithCancel(ctx)
	quit := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(renewEvery)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, renewEvery)
			ok, err := s.keys.Renew(rctx, k, holder, time.Now().Add(lease))
			cancel()
			if ctx.Err() != nil {
				return // stopped: the request is over
			}
			if err != nil {
				s.log.WarnContext(ctx, "renew idempotency key", "request_id", s.cfg.RequestID(ctx), "err", err)
			} else if !ok {
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			cancelRenewal()
			<-stopped
		})
	}
}

// releaseKey frees k for the next request.
func (s *Service) releaseKey(ctx context.Context, k Key, holder []byte) {
	ctx, cancel := afterAnswer(ctx)
	defer cancel()
	if _, err := s.keys.Release(ctx, k, holder); err != nil {
		// The key stays running until its lease runs out.
		s.log.WarnContext(ctx, "release idempotency key", "request_id", s.cfg.RequestID(ctx), "err", err)
	}
}

// replay answers with the kept answer a if the request is the one that
// made it, else 422, and if shows (when set) lets the caller see the
// record of a kept success, else with its refusal. The body is read to
// its end for the comparison.
func replay(w http.ResponseWriter, r *http.Request, a Answer, fp *fingerprint, shows Shows) error {
	fp.drain()
	if fp.err != nil {
		return fp.err
	}
	if !bytes.Equal(fp.sum(), a.Fingerprint) {
		return errKeyReused
	}
	if shows != nil && a.Status < 300 {
		if err := shows(r, a.Body); err != nil {
			return err
		}
	}
	h := w.Header()
	for _, name := range replayedHeaders {
		if v, ok := a.Header[name]; ok {
			h.Set(name, v)
		}
	}
	h.Set("Idempotent-Replayed", "true")
	h.Set("Content-Length", strconv.Itoa(len(a.Body)))
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
	return nil
}

// recorder passes an answer on and keeps what a replay needs: the status,
// the replayed headers as the handler set them (before compression), and
// up to maxKeptAnswer bytes of body.
type recorder struct {
	http.ResponseWriter
	status   int
	header   map[string]string
	body     bytes.Buffer
	overflow bool
}

func (c *recorder) WriteHeader(status int) {
	if c.status == 0 && status >= 200 {
		c.status = status
		c.header = map[string]string{}
		for _, name := range replayedHeaders {
			if v := c.Header().Get(name); v != "" {
				c.header[name] = v
			}
		}
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *recorder) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if !c.overflow {
		if c.body.Len()+len(p) > maxKeptAnswer {
			c.overflow = true
			c.body = bytes.Buffer{}
		} else {
			c.body.Write(p)
		}
	}
	return c.ResponseWriter.Write(p)
}

// Flush and Unwrap keep streaming and http.ResponseController working
// through the recorder.
func (c *recorder) Flush() {
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

func (c *recorder) Unwrap() http.ResponseWriter { return c.ResponseWriter }
