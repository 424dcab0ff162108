package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/store"
)

// The dispatcher's queries go across tenants, as housekeeping does: it
// serves every tenant's webhooks. Each statement still names the tenant
// of every row it touches.

// dueCondition selects the webhooks with work to do at $1 whose lease is
// free: a pending delivery that is due, or changes after their position.
// A tenant that is not active (suspended, or being imported or deleted)
// has a row in tenant_states: its webhooks hold their deliveries, and
// deliver them when it is active again.
const dueCondition = `w.enabled = TRUE AND w.lease_until < $1 AND (
	(w.retry_at <> '' AND w.retry_at <= $1) OR
	(w.retry_at = '' AND EXISTS (SELECT 1 FROM change_positions p WHERE p.tenant_id = w.tenant_id AND p.last > w.position)))
	AND NOT EXISTS (SELECT 1 FROM tenant_states s WHERE s.tenant_id = w.tenant_id)`

// tenantActive is the condition of the statements below that lease a
// webhook of tenant $1 or store its progress: the tenant is active. A
// worker whose tenant was suspended meanwhile loses its lease at its next
// step, and the delivery it made then, not stored, is made again after
// the tenant is resumed (with the same message id).
const tenantActive = `NOT EXISTS (SELECT 1 FROM tenant_states s WHERE s.tenant_id = $1)`

// DueWebhooks returns up to limit webhooks with work to do at now and a
// free lease, those whose lease ended (or was given up) longest ago
// first: a webhook just let go waits behind the others. It only reads,
// so that idle polling costs no write.
func (t *Tables) DueWebhooks(ctx context.Context, now string, limit int) ([]Key, error) {
	rows, err := t.Reader().QueryContext(ctx,
		`SELECT w.tenant_id, w.id FROM webhooks w WHERE `+dueCondition+` ORDER BY w.lease_until, w.tenant_id, w.id LIMIT $2`,
		now, limit)
	if err != nil {
		return nil, fmt.Errorf("webhooks due: %w", err)
	}
	defer rows.Close()
	var out []Key
	for rows.Next() {
		var k Key
		if err := rows.Scan(&k.TenantID, &k.ID); err != nil {
			return nil, fmt.Errorf("webhooks due: %w", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhooks due: %w", err)
	}
	return out, nil
}

// LeaseWebhook leases a webhook to holder until the time until, if its
// lease is still free at now; ErrLeaseLost when another instance took
// it meanwhile (or it was deleted or disabled, or its tenant is no longer
// active). The one conditional statement needs no row lock, so it is the
// same on every engine.
func (t *Tables) LeaseWebhook(ctx context.Context, k Key, holder, now, until string) (Webhook, error) {
	var w Webhook
	err := t.Tx(ctx, func(q store.Querier) error {
		var err error
		w, err = scanWebhook(q.QueryRowContext(ctx,
			`UPDATE webhooks SET lease_until = $3, lease_holder = $4 WHERE tenant_id = $1 AND id = $2 AND enabled = TRUE AND lease_until < $5
			 AND `+tenantActive+` RETURNING `+webhookColumns, k.TenantID, k.ID, until, holder, now))
		return err
	})
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, ErrLeaseLost
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("lease webhook: %w", err)
	}
	return w, nil
}

// RenewLease extends holder's lease of a webhook; ErrLeaseLost when it
// is no longer holder's, or its tenant is no longer active.
func (t *Tables) RenewLease(ctx context.Context, tenantID, id int64, holder, until string) error {
	return t.Tx(ctx, func(q store.Querier) error {
		return leased(q.ExecContext(ctx, `UPDATE webhooks SET lease_until = $4 WHERE tenant_id = $1 AND id = $2 AND lease_holder = $3 AND `+tenantActive,
			tenantID, id, holder, until))
	})
}

// ReleaseLease gives up holder's lease of a webhook at now, so that any
// instance may take it at once; its lease then ends at now, which puts
// it behind the webhooks that have waited longer.
func (t *Tables) ReleaseLease(ctx context.Context, tenantID, id int64, holder, now string) error {
	_, err := t.ExecOne(ctx, "release webhook lease",
		`UPDATE webhooks SET lease_until = $4, lease_holder = '' WHERE tenant_id = $1 AND id = $2 AND lease_holder = $3`,
		tenantID, id, holder, now)
	return err
}

func leased(res sql.Result, err error) error {
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n == 0 {
		return ErrLeaseLost
	}
	return nil
}

// SaveProgress stores a step of holder's work on a webhook: its new
// position, retry time and failing state, and the delivery (when d is
// not nil) as it now stands. ErrLeaseLost, and nothing is stored, when
// the lease is no longer holder's, an admin disabled the webhook
// meanwhile (the step is made again when it is enabled) or its tenant is
// no longer active (again when it is resumed). The enabled
// flag is only ever cleared here.
func (t *Tables) SaveProgress(ctx context.Context, tenantID, webhookID int64, holder string, p Progress, d *Delivery) error {
	err := t.Tx(ctx, func(q store.Querier) error {
		err := leased(q.ExecContext(ctx,
			`UPDATE webhooks SET position = $4, retry_at = $5, failing_since = $6,
			 enabled = CASE WHEN $7 THEN FALSE ELSE enabled END
			 WHERE tenant_id = $1 AND id = $2 AND lease_holder = $3 AND enabled = TRUE AND `+tenantActive,
			tenantID, webhookID, holder, p.Position, p.RetryAt, p.FailingSince, p.Disable))
		if err != nil || d == nil {
			return err
		}
		_, err = q.ExecContext(ctx,
			`INSERT INTO webhook_deliveries (tenant_id, webhook_id, seq, status, attempts, last_status_code, next_attempt_at, created_at, id)
			 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
			 ON CONFLICT (tenant_id, webhook_id, id) DO UPDATE SET status = $4, attempts = $5, last_status_code = $6, next_attempt_at = $7`,
			tenantID, webhookID, d.Seq, d.Status, d.Attempts, d.LastStatusCode, d.NextAttemptAt, d.CreatedAt, d.ID)
		return err
	})
	if err != nil && !errors.Is(err, ErrLeaseLost) {
		return fmt.Errorf("save webhook progress: %w", err)
	}
	return err
}

// OldestUndelivered returns when the oldest change that an enabled
// webhook of an active tenant has not yet handled was made ("" when there
// is none): a suspended tenant's held deliveries are no backlog.
func (t *Tables) OldestUndelivered(ctx context.Context) (string, error) {
	var at sql.NullString
	err := t.Reader().QueryRowContext(ctx,
		`SELECT MIN(c.at) FROM webhooks w JOIN changes c ON c.tenant_id = w.tenant_id AND c.seq = w.position + 1
		 WHERE w.enabled = TRUE AND NOT EXISTS (SELECT 1 FROM tenant_states s WHERE s.tenant_id = w.tenant_id)`).Scan(&at)
	if err != nil {
		return "", fmt.Errorf("oldest undelivered change: %w", err)
	}
	return at.String, nil
}
