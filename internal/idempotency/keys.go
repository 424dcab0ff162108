package idempotency

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/store"
)

// Key names one Idempotency-Key: a key of a user of a tenant.
type Key struct {
	TenantID int64
	UserID   int64
	Name     string
}

// Answer is the answer kept for a key: the fingerprint of the request
// that made it, its status, the headers a replay sends, its body.
type Answer struct {
	Fingerprint []byte
	Status      int
	Header      map[string]string
	Body        []byte
}

// Entry is what a key holds: a request still running, or the answer of
// the finished one.
type Entry struct {
	Running bool
	Answer  Answer
}

// Store keeps the keys. A holder is the running request's random name on
// the key it claimed.
type Store interface {
	// Claim takes k for a request starting at now: holder holds it until
	// now+lease (Renew extends that), and the key is kept until now+keep.
	// It reports whether the key was free: unknown, expired, or held by
	// a request whose lease ran out. Of concurrent claims exactly one wins.
	Claim(ctx context.Context, k Key, holder []byte, now time.Time, lease, keep time.Duration) (bool, error)
	// Entry returns what k holds at now. A key that is free to claim is
	// store.ErrNotFound.
	Entry(ctx context.Context, k Key, now time.Time) (Entry, error)
	// Renew extends holder's lease on k to until; false when holder no
	// longer holds the key.
	Renew(ctx context.Context, k Key, holder []byte, until time.Time) (bool, error)
	// Finish keeps the answer of holder's request under k; false when
	// holder no longer holds the key.
	Finish(ctx context.Context, k Key, holder []byte, a Answer) (bool, error)
	// Release frees k for the next request; false when holder no longer
	// held the key.
	Release(ctx context.Context, k Key, holder []byte) (bool, error)
}

// Engine is what the keys' table is built on (a *store.DB).
type Engine interface {
	Single(ctx context.Context, fn func(q store.Querier) error) error
	Lookup() store.Querier
	ExecOne(ctx context.Context, what, query string, args ...any) (bool, error)
	PurgeRows(ctx context.Context, what, del string, args ...any) (int64, error)
}

// Keys is the Store of the idempotency_keys table.
type Keys struct {
	db Engine
}

// NewKeys returns the keys kept in db.
func NewKeys(db Engine) *Keys { return &Keys{db: db} }

// Claim takes k for a request starting at now (see Store). A key held by
// a request whose lease ran out is free: its process died, and nobody
// else will finish it.
func (s *Keys) Claim(ctx context.Context, k Key, holder []byte, now time.Time, lease, keep time.Duration) (bool, error) {
	var state string
	err := s.db.Single(ctx, func(q store.Querier) error {
		return q.QueryRowContext(ctx,
			`INSERT INTO idempotency_keys (tenant_id, user_id, key, state, holder, created_at, locked_until, expires_at)
			 VALUES ($1, $2, $3, 'running', $4, $5, $6, $7)
			 ON CONFLICT (tenant_id, user_id, key) DO UPDATE
			    SET state = 'running', holder = excluded.holder, fingerprint = NULL, status = NULL, headers = NULL, body = NULL,
			        created_at = excluded.created_at, locked_until = excluded.locked_until, expires_at = excluded.expires_at
			  WHERE idempotency_keys.expires_at <= $5
			     OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until <= $5)
			 RETURNING state`,
			k.TenantID, k.UserID, k.Name, holder, now.UnixMilli(), now.Add(lease).UnixMilli(), now.Add(keep).UnixMilli()).Scan(&state)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return true, nil
}

// Entry returns what k holds at now. A key that is unknown, expired, or
// held by a request whose lease ran out is store.ErrNotFound: it is free
// to claim.
func (s *Keys) Entry(ctx context.Context, k Key, now time.Time) (Entry, error) {
	var (
		state   string
		status  sql.NullInt64
		headers sql.NullString
		e       Entry
	)
	err := s.db.Lookup().QueryRowContext(ctx,
		`SELECT state, fingerprint, status, headers, body FROM idempotency_keys
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3
		    AND expires_at > $4 AND (state = 'done' OR locked_until > $4)`,
		k.TenantID, k.UserID, k.Name, now.UnixMilli()).Scan(&state, &e.Answer.Fingerprint, &status, &headers, &e.Answer.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return Entry{}, fmt.Errorf("idempotency key: %w", store.ErrNotFound)
	}
	if err != nil {
		return Entry{}, fmt.Errorf("idempotency key: %w", err)
	}
	if state == "running" {
		return Entry{Running: true}, nil
	}
	e.Answer.Status = int(status.Int64)
	if err := json.Unmarshal([]byte(headers.String), &e.Answer.Header); err != nil {
		return Entry{}, fmt.Errorf("idempotency key: headers: %w", err)
	}
	return e, nil
}

// Renew extends holder's lease on k to until. It reports false when
// holder no longer holds the key.
func (s *Keys) Renew(ctx context.Context, k Key, holder []byte, until time.Time) (bool, error) {
	return s.db.ExecOne(ctx, "renew idempotency key",
		`UPDATE idempotency_keys SET locked_until = $5
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Name, holder, until.UnixMilli())
}

// Finish keeps the answer of holder's request under k. It reports false
// when holder no longer holds the key: its lease ran out and another
// request took the key over.
func (s *Keys) Finish(ctx context.Context, k Key, holder []byte, a Answer) (bool, error) {
	headers, err := json.Marshal(a.Header)
	if err != nil {
		return false, fmt.Errorf("finish idempotency key: %w", err)
	}
	return s.db.ExecOne(ctx, "finish idempotency key",
		`UPDATE idempotency_keys SET state = 'done', holder = NULL, fingerprint = $5, status = $6, headers = $7, body = $8
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Name, holder, a.Fingerprint, a.Status, string(headers), a.Body)
}

// Release frees k for the next request: holder's request ended without
// an answer to keep. It reports false when holder no longer held the key.
func (s *Keys) Release(ctx context.Context, k Key, holder []byte) (bool, error) {
	return s.db.ExecOne(ctx, "release idempotency key",
		`DELETE FROM idempotency_keys
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Name, holder)
}

// PurgeExpired deletes the keys of every tenant that expired before now
// and returns how many: cross-tenant housekeeping over the expires_at
// index, in the engine's short batches.
func (s *Keys) PurgeExpired(ctx context.Context, now time.Time) (int64, error) {
	return s.db.PurgeRows(ctx, "idempotency keys",
		`DELETE FROM idempotency_keys WHERE (tenant_id, user_id, key) IN (
		   SELECT tenant_id, user_id, key FROM idempotency_keys WHERE expires_at <= $1 LIMIT $2)`,
		now.UnixMilli())
}
