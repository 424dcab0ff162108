package httpapi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/store"
)

// Idempotency keys (docs/api.md "Safe writes", docs/decisions.md
// "Idempotency keys").
const (
	// idempotencyKeep is how long a key and its answer are kept.
	idempotencyKeep = 24 * time.Hour
	// idempotencyLease is how long a running request holds its key
	// without renewing it: a key whose holder died is free after this.
	idempotencyLease = time.Minute
	// idempotencyRenew is how often a running request renews its lease.
	idempotencyRenew = idempotencyLease / 3
	// idempotencyCleanup bounds storing or releasing a key after the
	// request, whose own context may have ended.
	idempotencyCleanup = 10 * time.Second
	// maxKeptAnswer is the largest answer body kept for replay; a request
	// with a larger answer releases its key.
	maxKeptAnswer = 4 << 20
	// maxKeyLength is the longest Idempotency-Key.
	maxKeyLength = 255
)

// replayedHeaders are the headers of an answer a replay repeats.
var replayedHeaders = []string{"Content-Type", "Location", "ETag", "Cache-Control"}

var (
	errKeyInUse = &errs.Error{Kind: errs.Conflict, Code: "idempotency_key_in_use", RetryAfter: time.Second,
		Message: "a request with this Idempotency-Key is still running; retry when it has finished"}
	errKeyReused = errs.New(errs.Unprocessable, "idempotency_key_reused",
		"this Idempotency-Key was used for another request (method, path, query or body differ); use a new key")
)

// idempotent lets a POST be retried safely with an Idempotency-Key: the
// first request with a key runs and its answer is kept; the same request
// again gets that answer replayed, another request with the key 422, and
// any request while the first runs 409. Without the header nothing
// changes. It runs after authentication and the route's permit: keys
// belong to a user, and are replayed only to a caller who may make the
// request. shows, if set, must let the caller see the record of a kept
// success before it is replayed (see permit).
func (s *Server) idempotent(next http.Handler, shows func(r *http.Request, id int64, doc []byte) error) http.Handler {
	return s.handle(func(w http.ResponseWriter, r *http.Request) error {
		values := r.Header.Values("Idempotency-Key")
		if len(values) == 0 {
			next.ServeHTTP(w, r)
			return nil
		}
		if len(values) > 1 || !validKey(values[0]) {
			return errs.New(errs.Invalid, "invalid_idempotency_key",
				"Idempotency-Key must be one header of 1 to 255 printable ASCII characters (space to ~)")
		}
		p := principalOf(r)
		k := store.IdempotencyKey{TenantID: p.TenantID, UserID: p.UserID, Key: values[0]}
		fp := newFingerprint(r)
		r.Body = fp
		defer fp.close()
		holder := make([]byte, 16)
		_, _ = rand.Read(holder)
		// A key found free between a failed claim and the look-up (its
		// request released it, its lease ran out, it expired) is claimed
		// again; three rounds end any such race but a contrived one.
		for range 3 {
			claimed, err := s.db.ClaimIdempotencyKey(r.Context(), k, holder, time.Now(), idempotencyLease, idempotencyKeep)
			if err != nil {
				return err
			}
			if claimed {
				s.runKeyed(w, r, next, k, holder, fp)
				return nil
			}
			e, err := s.db.IdempotencyKeyEntry(r.Context(), k, time.Now())
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			if e.Running {
				return errKeyInUse
			}
			return s.replay(w, r, e.Answer, fp, shows)
		}
		return errKeyInUse
	})
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
func (s *Server) runKeyed(w http.ResponseWriter, r *http.Request, next http.Handler, k store.IdempotencyKey, holder []byte, fp *fingerprint) {
	// The work after the answer must not end with the request's context:
	// an answer the client did not wait for is the one to keep.
	after := context.WithoutCancel(r.Context())
	stop := s.holdKey(after, k, holder)
	done := false
	defer func() {
		stop()
		if !done {
			s.releaseKey(after, k, holder)
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
		s.releaseKey(after, k, holder)
		return
	}
	a := store.IdempotentAnswer{Fingerprint: fp.sum(), Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
	ctx, cancel := context.WithTimeout(after, idempotencyCleanup)
	defer cancel()
	ok, err := s.db.FinishIdempotencyKey(ctx, k, holder, a)
	switch {
	case err != nil:
		// The key stays running until its lease runs out; then a retry
		// runs the request again.
		s.log.WarnContext(r.Context(), "store idempotent answer", "request_id", requestID(r.Context()), "err", err)
	case !ok:
		s.log.WarnContext(r.Context(), "idempotency key taken over while its request ran", "request_id", requestID(r.Context()))
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
	case rec.status == http.StatusRequestTimeout, rec.status == http.StatusTooManyRequests, rec.status == statusOf[errs.Canceled]:
		return false
	}
	return !broken
}

// holdKey renews the lease of the running request on k until the
// returned function is called (once or more).
func (s *Server) holdKey(ctx context.Context, k store.IdempotencyKey, holder []byte) func() {
	quit := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(idempotencyRenew)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, idempotencyRenew)
			ok, err := s.db.RenewIdempotencyKey(rctx, k, holder, time.Now().Add(idempotencyLease))
			cancel()
			if err != nil {
				s.log.WarnContext(ctx, "renew idempotency key", "request_id", requestID(ctx), "err", err)
			} else if !ok {
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(quit)
			<-stopped
		})
	}
}

// releaseKey frees k for the next request.
func (s *Server) releaseKey(ctx context.Context, k store.IdempotencyKey, holder []byte) {
	ctx, cancel := context.WithTimeout(ctx, idempotencyCleanup)
	defer cancel()
	if _, err := s.db.ReleaseIdempotencyKey(ctx, k, holder); err != nil {
		// The key stays running until its lease runs out.
		s.log.WarnContext(ctx, "release idempotency key", "request_id", requestID(ctx), "err", err)
	}
}

// replay answers with the kept answer a if the request is the one that
// made it, else 422, and if shows (when set) lets the caller see the
// record of a kept success, else with its refusal. The body is read to
// its end for the comparison.
func (s *Server) replay(w http.ResponseWriter, r *http.Request, a store.IdempotentAnswer, fp *fingerprint,
	shows func(r *http.Request, id int64, doc []byte) error) error {
	fp.drain()
	if fp.err != nil {
		return fp.err
	}
	if !bytes.Equal(fp.sum(), a.Fingerprint) {
		return errKeyReused
	}
	if shows != nil && a.Status < 300 {
		if id, ok := docID(a.Body); ok {
			if err := shows(r, id, a.Body); err != nil {
				return err
			}
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

// fingerprint is the request body as the handler reads it, hashed on the
// way with the method, path, query and media type (the Content-Type
// without parameters): SHA-256 over what identifies the request, without
// keeping the body. A multipart body is hashed by its
// parts (headers and content, in order), not its bytes: clients choose a
// new boundary for every request, retries included.
type fingerprint struct {
	hash  hash.Hash
	body  io.ReadCloser
	parts *partHasher // nil: the body's bytes are hashed as they are
	// capped: the body ended at the edge's size cap; err: it broke off
	// (the client went away or stalled); either ends the reading.
	capped bool
	err    error
	eof    bool
	sealed []byte
}

func newFingerprint(r *http.Request) *fingerprint {
	f := &fingerprint{hash: sha256.New(), body: r.Body}
	contentType := r.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	for _, s := range []string{r.Method, r.URL.Path, r.URL.RawQuery, mediaType} {
		writeField(f.hash, []byte(s))
	}
	if boundary, ok := multipartBoundary(contentType); ok {
		f.parts = newPartHasher(f.hash, boundary)
	}
	return f
}

// writeField writes b with its length, so that fields cannot run into
// each other.
func writeField(h hash.Hash, b []byte) {
	_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
	h.Write(b)
}

func multipartBoundary(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

func (f *fingerprint) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.body.Read(p)
	if n > 0 {
		if f.parts != nil {
			f.parts.write(p[:n])
		} else {
			f.hash.Write(p[:n])
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		f.eof = true
	case errors.As(err, &mbe):
		f.capped = true
	default:
		f.err = err
	}
	return n, err
}

func (f *fingerprint) Close() error { return f.body.Close() }

// drain reads the rest of the body, so that the fingerprint covers all of
// it however much the handler read. The edge caps the body's size.
func (f *fingerprint) drain() {
	if !f.eof && !f.capped && f.err == nil {
		_, _ = io.Copy(io.Discard, f)
	}
}

// sum seals the fingerprint: what was read, and how the body ended.
func (f *fingerprint) sum() []byte {
	if f.sealed == nil {
		f.close()
		end := []byte{'.'}
		switch {
		case f.capped:
			end = []byte("capped")
		case f.err != nil || !f.eof:
			end = []byte("broken")
		}
		writeField(f.hash, end)
		f.sealed = f.hash.Sum(nil)
	}
	return f.sealed
}

// close ends the part hasher, if any; no more body is hashed.
func (f *fingerprint) close() {
	if f.parts != nil {
		f.parts.close()
	}
}

// partHasher hashes a multipart body by its parts while it streams: the
// request's reads hand their bytes through a pipe to a parser of its own,
// and each returns when the parser has taken them, so that nothing is
// buffered beyond the parser's window.
type partHasher struct {
	pw   *io.PipeWriter
	done chan struct{}
	once sync.Once
}

func newPartHasher(h hash.Hash, boundary string) *partHasher {
	pr, pw := io.Pipe()
	p := &partHasher{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		// Part headers are limited here as in the upload handler: the
		// hasher buffers no more of them than the handler does.
		hashParts(h, multipart.NewReader(newPartHeaderLimit(pr, boundary), boundary))
		// What follows the parts (the epilogue, or the rest after framing
		// that does not parse) is read, not hashed: its split between the
		// parser's buffer and this read depends on how the body arrived.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return p
}

func (p *partHasher) write(b []byte) { _, _ = p.pw.Write(b) }

// close ends the body and waits until the parser has hashed it all.
func (p *partHasher) close() {
	p.once.Do(func() {
		p.pw.Close()
		<-p.done
	})
}

// hashParts hashes each part's header fields (sorted) and content, and
// how the parts ended: at the closing boundary, or where the framing
// broke.
func hashParts(h hash.Hash, mr *multipart.Reader) {
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			writeField(h, []byte("end"))
			return
		}
		if err != nil {
			writeField(h, []byte("malformed"))
			return
		}
		names := make([]string, 0, len(part.Header))
		for name := range part.Header {
			names = append(names, name)
		}
		slices.Sort(names)
		writeField(h, []byte("part"))
		for _, name := range names {
			writeField(h, []byte(name))
			_ = binary.Write(h, binary.BigEndian, uint64(len(part.Header[name])))
			for _, v := range part.Header[name] {
				writeField(h, []byte(v))
			}
		}
		n, err := io.Copy(h, part)
		_ = binary.Write(h, binary.BigEndian, uint64(n))
		if err != nil {
			writeField(h, []byte("malformed"))
			return
		}
	}
}
