// Package files attaches files to Documents and Expenses: streaming
// uploads with size and storage caps, one file per record, atomic
// replacement, signed download URLs and per-user rate limits.
package files

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"sync/atomic"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/etag"
	"planwerk/internal/fault"
	"planwerk/internal/filestore"
	"planwerk/internal/metrics"
	"planwerk/internal/ratelimit"
	"planwerk/internal/resource"
	"planwerk/internal/store"
)

// Messages clients match on (docs/api.md "Errors"), used verbatim.
const msgTooMany = "too many uploads"

// URLTTL is how long a signed download URL is valid.
const URLTTL = 30 * time.Second

// Config tunes the Service.
type Config struct {
	MaxUploadBytes     int64
	TenantStorageBytes int64 // default cap of tenants without their own
	Secret             []byte
	Metrics            *metrics.Metrics // may be nil
	// StepTimeout bounds each database step of an upload; the file itself
	// streams for as long as it moves.
	StepTimeout time.Duration
	// IdleTimeout ends an upload whose bytes stop moving: the store stops
	// taking them (a client that stops sending is cut off by the HTTP
	// edge's body deadline).
	IdleTimeout time.Duration
	// Serving, when set, says whether a download link's tenant is served:
	// nil, the refusal to answer (a suspended tenant's), or
	// store.ErrNotFound for a tenant that is not there (gone, or being
	// deleted or imported), whose links answer as a missing upload.
	Serving func(ctx context.Context, tenantID int64) error
}

// Store is what uploads need of the database: the engine's transactions
// and locks, and their own table (Tables). An upload's id is allocated
// outside any transaction.
type Store interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	UploadID(ctx context.Context, tenantID int64) (int64, error)
	UploadByID(ctx context.Context, q store.Querier, tenantID, id int64) (Upload, error)
	UploadOf(ctx context.Context, q store.Querier, tenantID int64, model string, record int64) (Upload, error)
	StorageUsed(ctx context.Context, q store.Querier, tenantID, except int64) (int64, error)
	InsertUpload(ctx context.Context, q store.Querier, tenantID int64, u *Upload) error
	DeleteUpload(ctx context.Context, q store.Querier, tenantID, id int64) error
	TouchRecord(ctx context.Context, q store.Querier, tenantID int64, c store.Collection, id int64) error
	StorageKeyInUse(ctx context.Context, tenantID int64, key string) (bool, error)
}

// Records reads the records files attach to, under their rules.
type Records interface {
	Get(ctx context.Context, caller auth.Principal, r *resource.Resource, id int64, populate []string) (store.Record, error)
	MayWrite(caller auth.Principal, r *resource.Resource, doc store.Doc) error
}

// Service manages uploads.
type Service struct {
	db      Store
	fs      filestore.Store
	reg     *resource.Registry
	records Records
	limiter ratelimit.Limiter
	cfg     Config
	log     *slog.Logger
}

// New returns a Service.
func New(db Store, fs filestore.Store, reg *resource.Registry, recs Records, limiter ratelimit.Limiter, cfg Config, log *slog.Logger) *Service {
	return &Service{db: db, fs: fs, reg: reg, records: recs, limiter: limiter, cfg: cfg, log: log}
}

// The refusals of file operations.
var (
	errNoRecord   = errs.New(errs.NotFound, "not_found", "no such record")
	errNoUpload   = errs.New(errs.NotFound, "not_found", "no such upload")
	errTooMany    = errs.New(errs.Forbidden, "too_many_uploads", msgTooMany)
	errFull       = errs.New(errs.Forbidden, "storage_full", "the account's file storage is full")
	errBadLink    = errs.New(errs.Forbidden, "invalid_signature", "the download link is invalid or has expired")
	errNoSuchKind = errs.New(errs.NotFound, "not_found", "files attach to model document or expense")
)

// models maps the upload path's model to the owning resource.
var models = map[string]string{"document": "documents", "expense": "expenses"}

// Policy is the name of the files' rate limit in the RateLimit fields.
const Policy = "files"

// Limit counts one rate-limited request (upload or download URL) of the
// caller, or refuses it with 429. Either way it returns the policy's state
// for the answer's RateLimit fields (zero when the limiter failed).
func (s *Service) Limit(ctx context.Context, caller auth.Principal) (ratelimit.Policy, error) {
	d, err := s.limiter.Take(ctx, fmt.Sprintf("files:%d:%d", caller.TenantID, caller.UserID))
	if err != nil {
		return ratelimit.Policy{}, err
	}
	p := ratelimit.Policy{Name: Policy, State: d.State}
	if d.Wait > 0 {
		s.cfg.Metrics.RateLimited("files")
		e := errs.New(errs.Throttled, "rate_limited", "too many upload and download requests; retry later")
		e.RetryAfter = d.Wait
		return p, e
	}
	return p, nil
}

// owner reads the record that owns uploads and checks that the caller may
// see it (404 otherwise) and, for writes, change it (403 otherwise).
func (s *Service) owner(ctx context.Context, caller auth.Principal, model string, id int64, write bool) (*resource.Resource, error) {
	name, ok := models[model]
	if !ok {
		return nil, errNoSuchKind
	}
	r, _ := s.reg.Get(name)
	rec, err := s.records.Get(ctx, caller, r, id, nil)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errNoRecord
	}
	if err != nil {
		return nil, err
	}
	if write {
		if err := s.records.MayWrite(caller, r, rec.Doc); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Part is the file part of an upload request.
type Part struct {
	Filename    string
	ContentType string
	Body        io.Reader
}

// Upload stores a file for a record. The file streams to the store with
// the size cap enforced as it comes; the upload row is written only after
// the file is complete, in a transaction that checks the one-file rule
// and the tenant's storage cap atomically. A replaced file is removed only
// after its successor is committed.
func (s *Service) Upload(ctx context.Context, caller auth.Principal, tenant store.Tenant, model string, recordID int64, replace bool, next func() (*Part, error)) (Upload, error) {
	if _, err := s.owner(ctx, caller, model, recordID, true); err != nil {
		return Upload{}, err
	}
	slot := slot{tenant: caller.TenantID, model: model, record: recordID, replace: replace, capacity: s.capacity(tenant)}
	// An early answer before the file streams; the transaction decides.
	if _, err := s.admit(ctx, nil, slot, 0); err != nil {
		return Upload{}, err
	}
	part, err := next()
	if err != nil {
		return Upload{}, err
	}
	id, err := s.db.UploadID(ctx, caller.TenantID)
	if err != nil {
		return Upload{}, err
	}
	// From here on the upload may outlast the request's deadline: the file
	// streams while it moves, and the steps after it get deadlines of
	// their own.
	ctx = context.WithoutCancel(ctx)
	up := Upload{
		ID: id, Model: model, Record: recordID,
		Filename: Sanitize(part.Filename), ContentType: part.ContentType,
		StorageKey: fmt.Sprintf("%su%d-%s", keyPrefix(caller.TenantID), id, randomHex(8)),
	}
	if up.Size, err = s.put(ctx, up.StorageKey, part.Body); err != nil {
		return Upload{}, err
	}
	replaced, err := s.commit(ctx, slot, &up)
	if err != nil {
		s.removeBlob(up.StorageKey)
		return Upload{}, err
	}
	if replaced != nil {
		s.removeBlob(replaced.StorageKey)
	}
	s.cfg.Metrics.Uploaded(up.Size)
	return up, nil
}

// slot is the place an upload goes: a record of a tenant, under the
// tenant's storage cap.
type slot struct {
	tenant   int64
	model    string
	record   int64
	replace  bool
	capacity int64
}

// admit applies the one-file rule and the storage cap to a file of size
// bytes (q nil: outside a transaction) and returns the upload it
// replaces, if any. A file being replaced does not count against the cap,
// and an account at its cap takes no file at all, not even an empty one.
func (s *Service) admit(ctx context.Context, q store.Querier, sl slot, size int64) (*Upload, error) {
	var replaced *Upload
	old, err := s.db.UploadOf(ctx, q, sl.tenant, sl.model, sl.record)
	switch {
	case err == nil && !sl.replace:
		return nil, errTooMany
	case err == nil:
		replaced = &old
	case !errors.Is(err, store.ErrNotFound):
		return nil, err
	}
	var except int64
	if replaced != nil {
		except = replaced.ID
	}
	used, err := s.db.StorageUsed(ctx, q, sl.tenant, except)
	if err != nil {
		return nil, err
	}
	if used >= sl.capacity || used+size > sl.capacity {
		return nil, errFull
	}
	return replaced, nil
}

// put streams a file to the store under the size cap and returns its size.
func (s *Service) put(ctx context.Context, key string, body io.Reader) (int64, error) {
	putCtx, watch := watchStore(ctx, s.cfg.IdleTimeout)
	limited := &capReader{r: body, left: s.cfg.MaxUploadBytes, watch: watch}
	size, err := s.fs.Put(putCtx, key, limited)
	stalled := watch.stop()
	var bodyErr *clientError
	switch {
	case errors.Is(err, errTooLarge):
		return 0, errs.New(errs.Forbidden, "file_too_large",
			fmt.Sprintf("the file is larger than the per-upload cap of %d bytes", s.cfg.MaxUploadBytes))
	case errors.As(err, &bodyErr):
		// The request, not the store, failed: a body too large or stalled
		// is answered as any request's; one cut short or malformed here.
		if mbe := (*http.MaxBytesError)(nil); errors.As(bodyErr.err, &mbe) || errors.Is(bodyErr.err, os.ErrDeadlineExceeded) {
			return 0, bodyErr.err
		}
		return 0, errs.New(errs.Invalid, "invalid_upload", "the file part cannot be read: "+bodyErr.err.Error())
	case err != nil && stalled:
		return 0, fault.Unavailable(fault.FileStore, fmt.Errorf("store upload: %w", err))
	case err != nil:
		return 0, fmt.Errorf("store upload: %w", err)
	}
	return size, nil
}

// commit writes the upload row of a stored file, replacing the slot's
// current upload if allowed, and returns the replaced one.
func (s *Service) commit(ctx context.Context, sl slot, up *Upload) (*Upload, error) {
	var replaced *Upload
	ctx, cancel := s.step(ctx)
	defer cancel()
	err := s.db.Tx(ctx, func(tx store.Querier) error {
		// One writer per tenant at a time: the storage check holds.
		if err := s.db.Lock(ctx, tx, sl.tenant, "storage"); err != nil {
			return err
		}
		var err error
		if replaced, err = s.admit(ctx, tx, sl, up.Size); err != nil {
			return err
		}
		if replaced != nil {
			if err := s.db.DeleteUpload(ctx, tx, sl.tenant, replaced.ID); err != nil {
				return err
			}
		}
		err = s.db.InsertUpload(ctx, tx, sl.tenant, up)
		if errors.Is(err, store.ErrConflict) {
			return errTooMany
		}
		if err != nil {
			return err
		}
		return s.touchOwner(ctx, tx, sl.tenant, sl.model, sl.record)
	})
	return replaced, err
}

// touchOwner gives the record a file belongs to a new version (updatedAt,
// and so its entity tag): its file is part of it.
func (s *Service) touchOwner(ctx context.Context, tx store.Querier, tenantID int64, model string, record int64) error {
	return s.db.TouchRecord(ctx, tx, tenantID, store.Collection{Table: "records", Resource: models[model]}, record)
}

// removeBlob deletes a stored file that no upload row names; a failure
// leaves an orphan that Sweep removes later, never a lost upload.
func (s *Service) removeBlob(key string) {
	// Bounded: a frozen store must not hold the request; the sweep
	// removes what this misses.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.fs.Delete(ctx, key); err != nil {
		s.log.Warn("remove stored file", "key", key, "err", err)
	}
}

func (s *Service) capacity(t store.Tenant) int64 {
	if t.StorageBytes != nil {
		return *t.StorageBytes
	}
	return s.cfg.TenantStorageBytes
}

// List returns the uploads of a record: zero or one.
func (s *Service) List(ctx context.Context, caller auth.Principal, model string, recordID int64) ([]Upload, error) {
	if _, err := s.owner(ctx, caller, model, recordID, false); err != nil {
		return nil, err
	}
	up, err := s.db.UploadOf(ctx, nil, caller.TenantID, model, recordID)
	if errors.Is(err, store.ErrNotFound) {
		return []Upload{}, nil
	}
	if err != nil {
		return nil, err
	}
	return []Upload{up}, nil
}

// visibleUpload finds an upload whose record the caller may see (and,
// for writes, change).
func (s *Service) visibleUpload(ctx context.Context, caller auth.Principal, id int64, write bool) (Upload, error) {
	up, err := s.db.UploadByID(ctx, nil, caller.TenantID, id)
	if errors.Is(err, store.ErrNotFound) {
		return Upload{}, errNoUpload
	}
	if err != nil {
		return Upload{}, err
	}
	if _, err := s.owner(ctx, caller, up.Model, up.Record, write); err != nil {
		fe, ok := errs.As(err)
		if ok && fe.Kind == errs.NotFound && !caller.IsAdmin {
			return Upload{}, errNoUpload
		}
		if !ok || fe.Kind != errs.NotFound {
			return Upload{}, err
		}
		// The owning record is gone (deleted after its file was uploaded):
		// admins still manage the orphaned upload.
	}
	return up, nil
}

// Delete removes an upload and its file; the owning record stays.
// ifMatch is the request's If-Match header ("" for none); an upload never
// changes, so its tag is checked before the transaction.
func (s *Service) Delete(ctx context.Context, caller auth.Principal, id int64, ifMatch string) (Upload, error) {
	up, err := s.visibleUpload(ctx, caller, id, true)
	if err != nil {
		return Upload{}, err
	}
	if !etag.Match(ifMatch, etag.OfValue(up)) {
		return Upload{}, errs.New(errs.PreconditionFailed, "precondition_failed",
			"the upload is not the one If-Match names")
	}
	if err := s.db.Tx(ctx, func(tx store.Querier) error {
		if err := s.db.DeleteUpload(ctx, tx, caller.TenantID, id); err != nil {
			return err
		}
		return s.touchOwner(ctx, tx, caller.TenantID, up.Model, up.Record)
	}); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return Upload{}, errNoUpload
		}
		return Upload{}, err
	}
	s.removeBlob(up.StorageKey)
	return up, nil
}

// DownloadURL returns an absolute URL, valid URLTTL, from which a plain GET
// fetches the file: the store's own presigned URL, or one of the service's
// signed with the server secret.
func (s *Service) DownloadURL(ctx context.Context, caller auth.Principal, id int64, base string) (string, error) {
	up, err := s.visibleUpload(ctx, caller, id, false)
	if err != nil {
		return "", err
	}
	if u, err := s.fs.Presign(ctx, up.StorageKey, up.Filename, up.ContentType, URLTTL); err != nil || u != "" {
		return u, err
	}
	expires := time.Now().Add(URLTTL).Unix()
	q := url.Values{}
	q.Set("tenant", strconv.FormatInt(caller.TenantID, 10))
	q.Set("expires", strconv.FormatInt(expires, 10))
	q.Set("signature", s.sign(caller.TenantID, id, expires))
	return fmt.Sprintf("%s/v1/files/blob/%d?%s", base, id, q.Encode()), nil
}

func (s *Service) sign(tenantID, uploadID, expires int64) string {
	mac := hmac.New(sha256.New, s.cfg.Secret)
	fmt.Fprintf(mac, "planwerk-download\n%d\n%d\n%d", tenantID, uploadID, expires)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Blob checks a signed URL's query and opens its file, which seeks (a
// download may ask for a byte range). A bad, tampered or expired
// signature → 403.
func (s *Service) Blob(ctx context.Context, uploadID int64, query url.Values) (Upload, io.ReadSeekCloser, int64, error) {
	denied := errBadLink
	tenantID, err1 := strconv.ParseInt(query.Get("tenant"), 10, 64)
	expires, err2 := strconv.ParseInt(query.Get("expires"), 10, 64)
	sig := query.Get("signature")
	if err1 != nil || err2 != nil || sig == "" {
		return Upload{}, nil, 0, denied
	}
	want := s.sign(tenantID, uploadID, expires)
	if !hmac.Equal([]byte(sig), []byte(want)) || time.Now().Unix() > expires {
		return Upload{}, nil, 0, denied
	}
	if s.cfg.Serving != nil {
		if err := s.cfg.Serving(ctx, tenantID); errors.Is(err, store.ErrNotFound) {
			return Upload{}, nil, 0, errNoUpload
		} else if err != nil {
			return Upload{}, nil, 0, err
		}
	}
	up, err := s.db.UploadByID(ctx, nil, tenantID, uploadID)
	if errors.Is(err, store.ErrNotFound) {
		return Upload{}, nil, 0, errNoUpload
	}
	if err != nil {
		return Upload{}, nil, 0, err
	}
	rc, size, err := s.fs.Open(ctx, up.StorageKey)
	if errors.Is(err, filestore.ErrNotFound) {
		return Upload{}, nil, 0, errNoUpload
	}
	return up, rc, size, err
}

// errTooLarge ends a stream that passes the per-upload cap.
var errTooLarge = errors.New("file too large")

// step returns a context for one database step after the stream.
func (s *Service) step(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.cfg.StepTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.cfg.StepTimeout)
}

// storeWatch ends the store's context of an upload when the store takes
// no bytes for idle: the time from one read of the body returning to the
// store asking for the next. Time spent waiting for the client is the
// body deadline's, not the store's.
type storeWatch struct {
	timer   *time.Timer // nil: not watching (idle 0)
	idle    time.Duration
	cancel  context.CancelCauseFunc
	stalled atomic.Bool
}

func watchStore(ctx context.Context, idle time.Duration) (context.Context, *storeWatch) {
	ctx, cancel := context.WithCancelCause(ctx)
	w := &storeWatch{idle: idle, cancel: cancel}
	if idle > 0 {
		w.timer = time.AfterFunc(idle, func() {
			w.stalled.Store(true)
			cancel(errStalled)
		})
	}
	return ctx, w
}

// reading pauses the watch while the body is read; read resumes it.
func (w *storeWatch) reading() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *storeWatch) read() {
	if w.timer != nil {
		w.timer.Reset(w.idle)
	}
}

// stop ends the watch and reports whether the store stalled.
func (w *storeWatch) stop() bool {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.cancel(nil)
	return w.stalled.Load()
}

// errStalled ends an upload whose store stopped taking bytes.
var errStalled = errors.New("the file store took no data")

// capReader fails once more than left bytes have been read; it tells the
// store's watch when the body is being read.
type capReader struct {
	r     io.Reader
	left  int64
	watch *storeWatch
}

func (c *capReader) Read(p []byte) (int, error) {
	c.watch.reading()
	n, err := c.r.Read(p)
	c.watch.read()
	c.left -= int64(n)
	if c.left < 0 {
		return n, errTooLarge
	}
	if err != nil && err != io.EOF {
		err = &clientError{err}
	}
	return n, err
}

// clientError is a failure reading the request body.
type clientError struct{ err error }

func (e *clientError) Error() string { return e.err.Error() }
func (e *clientError) Unwrap() error { return e.err }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
