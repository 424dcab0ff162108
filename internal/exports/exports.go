// Package exports runs the exports tenant admins ask for of their
// tenant's data: an archive of everything the tenant holds but password
// hashes and secrets, made in the background, kept in the file store for
// a day and downloaded through a signed link.
//
// An export is a row of account_exports: pending when asked for, running
// while an instance makes it (under a lease it renews, so that an export
// whose instance died is made again by another), then done or failed. A
// tenant has at most one pending or running export (a unique index says
// so); an instance makes one export at a time, oldest first across
// tenants, so that exports queue behind each other instead of taking the
// service's database connections and disk from its requests.
package exports

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
	"planwerk/internal/tracing"
)

// Statuses of an export.
const (
	Pending = "pending"
	Running = "running"
	Done    = "done"
	Failed  = "failed"
)

// Keep is how long a done export's archive stays; URLTTL how long a
// download link is valid.
const (
	Keep   = 24 * time.Hour
	URLTTL = 30 * time.Second
)

// Refusals.
var (
	errInProgress = errs.New(errs.Conflict, "export_in_progress", "an export of this tenant is pending or running; ask for its state with GET")
	errNotFound   = errs.New(errs.NotFound, "not_found", "no export with this id")
	errAdmins     = errs.Forbid("only admins may export the tenant's data")
	errBadLink    = errs.New(errs.Forbidden, "invalid_signature", "the download link is invalid or has expired")
	errGone       = errs.New(errs.NotFound, "not_found", "the export's archive is no longer kept")
)

// Writer writes the archive of the tenant's data, without password
// hashes or secrets, to w.
type Writer func(ctx context.Context, tenantID int64, w io.Writer) error

// Engine is what the exports' table is built on (a *store.DB).
type Engine interface {
	store.Querier
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	Reader() store.Querier
	ExecOne(ctx context.Context, what, query string, args ...any) (bool, error)
	IsUniqueViolation(err error) bool
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
}

// Config is what the service needs besides its parts.
type Config struct {
	Secret []byte        // signs download links
	Lease  time.Duration // how long a running export's claim lasts unrenewed (default 1 min)
	Poll   time.Duration // how often an idle instance looks for a pending export (default 2 s)
	// Serving refuses the download link of a tenant that is not served
	// (suspended: its refusal; unknown: store.ErrNotFound); nil: every
	// tenant is.
	Serving func(ctx context.Context, tenantID int64) error
}

// Service runs a tenant's exports.
type Service struct {
	db    Engine
	fs    filestore.Store
	write Writer
	cfg   Config
	log   *slog.Logger
	wake  chan struct{}
}

// New returns the service.
func New(db Engine, fs filestore.Store, write Writer, cfg Config, log *slog.Logger) *Service {
	if cfg.Lease <= 0 {
		cfg.Lease = time.Minute
	}
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	return &Service{db: db, fs: fs, write: write, cfg: cfg, log: log, wake: make(chan struct{}, 1)}
}

// Export is an export as GET shows it.
type Export struct {
	ID        int64   `json:"id"`
	Status    string  `json:"status"`
	Size      *int64  `json:"size"`
	SHA256    *string `json:"sha256"`
	URL       *string `json:"url"`
	ExpiresAt *string `json:"expiresAt"`
	key       string
}

// Start asks for an export of the caller's tenant: pending until an
// instance makes it.
func (s *Service) Start(ctx context.Context, caller auth.Principal) (Export, error) {
	if !caller.IsAdmin {
		return Export{}, errAdmins
	}
	id, err := s.db.NewID(ctx, s.db, caller.TenantID)
	if err != nil {
		return Export{}, err
	}
	err = s.db.Tx(ctx, func(q store.Querier) error {
		_, err := q.ExecContext(ctx, `INSERT INTO account_exports (tenant_id, id, status, created_by, created_at) VALUES ($1, $2, $3, $4, $5)`,
			caller.TenantID, id, Pending, caller.UserID, store.Timestamp(time.Now()))
		if s.db.IsUniqueViolation(err) {
			return errInProgress
		}
		if err != nil {
			return fmt.Errorf("export: %w", err)
		}
		return s.db.Audit(ctx, q, caller.TenantID, store.AuditNote{Resource: "account-exports", Record: id, Op: store.OpCreate,
			After: fmt.Appendf(nil, `{"id":%d,"status":%q}`, id, Pending)})
	})
	if err != nil {
		return Export{}, err
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return Export{ID: id, Status: Pending}, nil
}

// Get returns the caller's tenant's export id; once done, with a fresh
// download link under base.
func (s *Service) Get(ctx context.Context, caller auth.Principal, id int64, base string) (Export, error) {
	if !caller.IsAdmin {
		return Export{}, errAdmins
	}
	e, err := s.byID(ctx, caller.TenantID, id)
	if err != nil || e.Status != Done {
		return e, err
	}
	link, err := s.link(ctx, caller.TenantID, e, base)
	if err != nil {
		return Export{}, err
	}
	e.URL = &link
	return e, nil
}

func (s *Service) byID(ctx context.Context, tenantID, id int64) (Export, error) {
	e := Export{ID: id}
	var size sql.NullInt64
	var sum, key, expires sql.NullString
	err := s.db.Reader().QueryRowContext(ctx, `SELECT status, size, sha256, storage_key, expires_at FROM account_exports WHERE tenant_id = $1 AND id = $2`,
		tenantID, id).Scan(&e.Status, &size, &sum, &key, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return Export{}, errNotFound
	}
	if err != nil {
		return Export{}, fmt.Errorf("export %d: %w", id, err)
	}
	if size.Valid {
		e.Size = &size.Int64
	}
	if sum.Valid {
		e.SHA256 = &sum.String
	}
	if expires.Valid {
		e.ExpiresAt = &expires.String
	}
	e.key = key.String
	return e, nil
}

// link is a URL, valid URLTTL, from which a plain GET fetches the
// archive: the store's own presigned URL, or one of the service's.
func (s *Service) link(ctx context.Context, tenantID int64, e Export, base string) (string, error) {
	name := fmt.Sprintf("export-%d.tar.zst", e.ID)
	if u, err := s.fs.Presign(ctx, e.key, name, "application/zstd", URLTTL); err != nil || u != "" {
		return u, err
	}
	expires := time.Now().Add(URLTTL).Unix()
	q := url.Values{}
	q.Set("tenant", strconv.FormatInt(tenantID, 10))
	q.Set("expires", strconv.FormatInt(expires, 10))
	q.Set("signature", s.sign(tenantID, e.ID, expires))
	return fmt.Sprintf("%s/v1/account/exports/%d/archive?%s", base, e.ID, q.Encode()), nil
}

func (s *Service) sign(tenantID, id, expires int64) string {
	mac := hmac.New(sha256.New, s.cfg.Secret)
	fmt.Fprintf(mac, "planwerk-export\n%d\n%d\n%d", tenantID, id, expires)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// Archive checks a download link's query and opens its archive. A bad,
// tampered or expired signature → 403.
func (s *Service) Archive(ctx context.Context, id int64, query url.Values) (io.ReadSeekCloser, int64, error) {
	tenantID, err1 := strconv.ParseInt(query.Get("tenant"), 10, 64)
	expires, err2 := strconv.ParseInt(query.Get("expires"), 10, 64)
	sig := query.Get("signature")
	if err1 != nil || err2 != nil || sig == "" {
		return nil, 0, errBadLink
	}
	if !hmac.Equal([]byte(sig), []byte(s.sign(tenantID, id, expires))) || time.Now().Unix() > expires {
		return nil, 0, errBadLink
	}
	if s.cfg.Serving != nil {
		if err := s.cfg.Serving(ctx, tenantID); errors.Is(err, store.ErrNotFound) {
			return nil, 0, errGone
		} else if err != nil {
			return nil, 0, err
		}
	}
	e, err := s.byID(ctx, tenantID, id)
	if err != nil {
		return nil, 0, err
	}
	if e.Status != Done {
		return nil, 0, errGone
	}
	rc, size, err := s.fs.Open(ctx, e.key)
	if errors.Is(err, filestore.ErrNotFound) {
		return nil, 0, errGone
	}
	return rc, size, err
}

// claimed is an export an instance took.
type claimed struct {
	tenantID, id int64
}

// Run makes exports, one at a time, until ctx ends: it is the service's
// lifelong job.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Poll)
	defer t.Stop()
	for {
		for {
			c, ok, err := s.claim(ctx)
			if err != nil {
				s.log.Warn("account export: claim", "error", err)
				break
			}
			if !ok {
				break
			}
			s.make(ctx, c)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wake:
		}
	}
}

// claim takes the oldest pending export of any tenant, or a running one
// whose lease ran out.
func (s *Service) claim(ctx context.Context) (claimed, bool, error) {
	now := store.Timestamp(time.Now())
	var c claimed
	err := s.db.Reader().QueryRowContext(ctx, `SELECT tenant_id, id FROM account_exports
		WHERE status = $1 OR (status = $2 AND lease_until < $3) ORDER BY created_at, tenant_id, id LIMIT 1`, Pending, Running, now).Scan(&c.tenantID, &c.id)
	if errors.Is(err, sql.ErrNoRows) {
		return c, false, nil
	}
	if err != nil {
		return c, false, err
	}
	ok, err := s.db.ExecOne(ctx, "claim export", `UPDATE account_exports SET status = $1, lease_until = $2
		WHERE tenant_id = $3 AND id = $4 AND (status = $5 OR (status = $1 AND lease_until < $6))`,
		Running, store.Timestamp(time.Now().Add(s.cfg.Lease)), c.tenantID, c.id, Pending, now)
	if err != nil || !ok {
		// Another instance took it: look again.
		return c, ok, err
	}
	return c, true, nil
}

// make writes the claimed export's archive to the file store and records
// the outcome.
func (s *Service) make(ctx context.Context, c claimed) {
	ctx, span := tracing.Start(ctx, "account export", trace.SpanKindInternal,
		attribute.Int64("planwerk.tenant.id", c.tenantID), attribute.Int64("planwerk.export.id", c.id))
	defer span.End()
	key := fmt.Sprintf("exports/t%d/%d-%s.tar.zst", c.tenantID, c.id, randomHex(8))
	jobCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	renewed := make(chan struct{})
	go func() {
		defer close(renewed)
		s.renew(jobCtx, c, cancel)
	}()
	size, sum, err := s.store(jobCtx, c.tenantID, key)
	cancel()
	<-renewed
	if ctx.Err() != nil {
		// Shutting down: the lease runs out and another instance (or
		// this one, restarted) makes the export again.
		_ = s.fs.Delete(context.WithoutCancel(ctx), key)
		return
	}
	done := context.WithoutCancel(ctx)
	if err != nil {
		s.log.Warn("account export failed", "tenant", c.tenantID, "export", c.id, "error", err)
		_ = s.fs.Delete(done, key)
		_, err = s.db.ExecOne(done, "export failed", `UPDATE account_exports SET status = $1, lease_until = NULL, finished_at = $2, expires_at = $3
			WHERE tenant_id = $4 AND id = $5 AND status = $6`, Failed, store.Timestamp(time.Now()), store.Timestamp(time.Now().Add(Keep)), c.tenantID, c.id, Running)
		if err != nil {
			s.log.Warn("account export: record failure", "error", err)
		}
		return
	}
	now := time.Now()
	ok, err := s.db.ExecOne(done, "export done", `UPDATE account_exports SET status = $1, lease_until = NULL, storage_key = $2, size = $3, sha256 = $4, finished_at = $5, expires_at = $6
		WHERE tenant_id = $7 AND id = $8 AND status = $9`, Done, key, size, sum, store.Timestamp(now), store.Timestamp(now.Add(Keep)), c.tenantID, c.id, Running)
	if err != nil || !ok {
		// Lost: the row went (the tenant was deleted) or the database
		// failed; the archive must not outlive its row.
		_ = s.fs.Delete(done, key)
		if err != nil {
			s.log.Warn("account export: record success", "error", err)
		}
	}
}

// store writes the tenant's archive under key and returns its size and
// SHA-256.
func (s *Service) store(ctx context.Context, tenantID int64, key string) (int64, string, error) {
	pr, pw := io.Pipe()
	h := sha256.New()
	go func() {
		pw.CloseWithError(s.write(ctx, tenantID, io.MultiWriter(pw, h)))
	}()
	size, err := s.fs.Put(ctx, key, pr)
	pr.CloseWithError(errors.New("export: the store stopped reading"))
	if err != nil {
		return 0, "", err
	}
	return size, hex.EncodeToString(h.Sum(nil)), nil
}

// renew keeps the claim on the export while it is made, and cancels it
// when the claim is lost (another instance took it over).
func (s *Service) renew(ctx context.Context, c claimed, cancel context.CancelFunc) {
	t := time.NewTicker(s.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		ok, err := s.db.ExecOne(ctx, "renew export", `UPDATE account_exports SET lease_until = $1 WHERE tenant_id = $2 AND id = $3 AND status = $4`,
			store.Timestamp(time.Now().Add(s.cfg.Lease)), c.tenantID, c.id, Running)
		if err == nil && !ok {
			cancel()
			return
		}
	}
}

// Purge removes the exports whose time is up, with their archives, and
// returns how many it removed.
func (s *Service) Purge(ctx context.Context, now time.Time) (int, error) {
	removed := 0
	for {
		n, err := remove(ctx, s.db, s.fs, `SELECT tenant_id, id, storage_key FROM account_exports
			WHERE status IN ($1, $2) AND expires_at < $3 ORDER BY expires_at LIMIT 100`, Done, Failed, store.Timestamp(now))
		removed += n
		if err != nil || n < 100 {
			return removed, err
		}
	}
}

// Sweep removes the archives no export names (an instance stopped after
// writing one and before recording it), when last written before cutoff,
// and returns how many it removed. Only keys of the exports' own form
// are touched.
func (s *Service) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	return filestore.Sweep(ctx, s.fs, "exports/t", cutoff, func(key string) (bool, error) {
		var tenantID int64
		if _, err := fmt.Sscanf(key, "exports/t%d/", &tenantID); err != nil {
			return true, nil // not of the exports' form
		}
		var n int
		err := s.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM account_exports WHERE tenant_id = $1 AND storage_key = $2`, tenantID, key).Scan(&n)
		return n > 0, err
	})
}

// EraseTenant removes every archive of the tenant's exports from fs and
// the exports themselves from db: part of erasing the tenant, before its
// rows go.
func EraseTenant(ctx context.Context, db Engine, fs filestore.Store, tenantID int64) error {
	for {
		n, err := remove(ctx, db, fs, `SELECT tenant_id, id, storage_key FROM account_exports WHERE tenant_id = $1 ORDER BY id LIMIT 100`, tenantID)
		if err != nil || n == 0 {
			return err
		}
	}
}

// remove removes the exports query names (tenant_id, id, storage_key),
// each archive before its row, and returns how many it removed.
func remove(ctx context.Context, db Engine, fs filestore.Store, query string, args ...any) (int, error) {
	type export struct {
		tenantID, id int64
		key          sql.NullString
	}
	rows, err := db.Reader().QueryContext(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("remove exports: %w", err)
	}
	var batch []export
	for rows.Next() {
		var e export
		if err := rows.Scan(&e.tenantID, &e.id, &e.key); err != nil {
			rows.Close()
			return 0, fmt.Errorf("remove exports: %w", err)
		}
		batch = append(batch, e)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("remove exports: %w", err)
	}
	for i, e := range batch {
		if e.key.Valid {
			if err := fs.Delete(ctx, e.key.String); err != nil {
				return i, err
			}
		}
		if _, err := db.ExecOne(ctx, "remove export", `DELETE FROM account_exports WHERE tenant_id = $1 AND id = $2`, e.tenantID, e.id); err != nil {
			return i, err
		}
	}
	return len(batch), nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
