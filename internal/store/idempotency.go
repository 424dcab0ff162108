package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// IdempotencyKey names one Idempotency-Key: a key of a user of a tenant.
type IdempotencyKey struct {
	TenantID int64
	UserID   int64
	Key      string
}

// IdempotentAnswer is the answer kept for a key: the fingerprint of the
// request that made it, its status, the headers a replay sends, its body.
type IdempotentAnswer struct {
	Fingerprint []byte
	Status      int
	Header      map[string]string
	Body        []byte
}

// IdempotencyEntry is what a key holds: a request still running, or the
// answer of the finished one.
type IdempotencyEntry struct {
	Running bool
	Answer  IdempotentAnswer
}

// ClaimIdempotencyKey takes k for a request starting at now: holder holds
// it until now+lease (RenewIdempotencyKey extends that), and the key is
// kept until now+keep. It reports whether the key was free: unknown,
// expired, or held by a request whose lease ran out (its process died,
// and nobody else will finish it). Of concurrent claims exactly one wins.
func (db *DB) ClaimIdempotencyKey(ctx context.Context, k IdempotencyKey, holder []byte, now time.Time, lease, keep time.Duration) (bool, error) {
	var state string
	err := db.single(ctx, func(q Querier) error {
		return q.QueryRowContext(ctx,
			`INSERT INTO idempotency_keys (tenant_id, user_id, key, state, holder, created_at, locked_until, expires_at)
			 VALUES ($1, $2, $3, 'running', $4, $5, $6, $7)
			 ON CONFLICT (tenant_id, user_id, key) DO UPDATE
			    SET state = 'running', holder = excluded.holder, fingerprint = NULL, status = NULL, headers = NULL, body = NULL,
			        created_at = excluded.created_at, locked_until = excluded.locked_until, expires_at = excluded.expires_at
			  WHERE idempotency_keys.expires_at <= $5
			     OR (idempotency_keys.state = 'running' AND idempotency_keys.locked_until <= $5)
			 RETURNING state`,
			k.TenantID, k.UserID, k.Key, holder, now.UnixMilli(), now.Add(lease).UnixMilli(), now.Add(keep).UnixMilli()).Scan(&state)
	})
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("claim idempotency key: %w", err)
	}
	return true, nil
}

// IdempotencyKeyEntry returns what k holds at now. A key that is unknown,
// expired, or held by a request whose lease ran out is ErrNotFound: it is
// free to claim.
func (db *DB) IdempotencyKeyEntry(ctx context.Context, k IdempotencyKey, now time.Time) (IdempotencyEntry, error) {
	var (
		state   string
		status  sql.NullInt64
		headers sql.NullString
		e       IdempotencyEntry
	)
	err := db.lookup.QueryRowContext(ctx,
		`SELECT state, fingerprint, status, headers, body FROM idempotency_keys
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3
		    AND expires_at > $4 AND (state = 'done' OR locked_until > $4)`,
		k.TenantID, k.UserID, k.Key, now.UnixMilli()).Scan(&state, &e.Answer.Fingerprint, &status, &headers, &e.Answer.Body)
	if errors.Is(err, sql.ErrNoRows) {
		return IdempotencyEntry{}, fmt.Errorf("idempotency key: %w", ErrNotFound)
	}
	if err != nil {
		return IdempotencyEntry{}, fmt.Errorf("idempotency key: %w", err)
	}
	if state == "running" {
		return IdempotencyEntry{Running: true}, nil
	}
	e.Answer.Status = int(status.Int64)
	if err := json.Unmarshal([]byte(headers.String), &e.Answer.Header); err != nil {
		return IdempotencyEntry{}, fmt.Errorf("idempotency key: headers: %w", err)
	}
	return e, nil
}

// RenewIdempotencyKey extends holder's lease on k to until. It reports
// false when holder no longer holds the key.
func (db *DB) RenewIdempotencyKey(ctx context.Context, k IdempotencyKey, holder []byte, until time.Time) (bool, error) {
	return db.writeOne(ctx, "renew idempotency key",
		`UPDATE idempotency_keys SET locked_until = $5
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Key, holder, until.UnixMilli())
}

// FinishIdempotencyKey keeps the answer of holder's request under k. It
// reports false when holder no longer holds the key: its lease ran out and
// another request took the key over.
func (db *DB) FinishIdempotencyKey(ctx context.Context, k IdempotencyKey, holder []byte, a IdempotentAnswer) (bool, error) {
	headers, err := json.Marshal(a.Header)
	if err != nil {
		return false, fmt.Errorf("finish idempotency key: %w", err)
	}
	return db.writeOne(ctx, "finish idempotency key",
		`UPDATE idempotency_keys SET state = 'done', holder = NULL, fingerprint = $5, status = $6, headers = $7, body = $8
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Key, holder, a.Fingerprint, a.Status, string(headers), a.Body)
}

// ReleaseIdempotencyKey frees k for the next request: holder's request
// ended without an answer to keep. It reports false when holder no longer
// held the key.
func (db *DB) ReleaseIdempotencyKey(ctx context.Context, k IdempotencyKey, holder []byte) (bool, error) {
	return db.writeOne(ctx, "release idempotency key",
		`DELETE FROM idempotency_keys
		  WHERE tenant_id = $1 AND user_id = $2 AND key = $3 AND holder = $4 AND state = 'running'`,
		k.TenantID, k.UserID, k.Key, holder)
}

// writeOne runs one writing statement as a transaction of its own and
// reports whether it changed a row.
func (db *DB) writeOne(ctx context.Context, what, query string, args ...any) (bool, error) {
	var res sql.Result
	err := db.single(ctx, func(q Querier) error {
		var err error
		res, err = q.ExecContext(ctx, query, args...)
		return err
	})
	return affected(res, err, what)
}

// affected reports whether a statement changed a row.
func affected(res sql.Result, err error, what string) (bool, error) {
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("%s: %w", what, err)
	}
	return n > 0, nil
}
