package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
)

// Webhook is a subscription of a URL to the tenant's changes. Position
// is the feed position it has handled (delivered, finally failed or
// passed over) up to; RetryAt is when its pending delivery is due, ""
// when it has none; FailingSince is when its deliveries began to fail,
// "" while they succeed.
type Webhook struct {
	TenantID     int64
	ID           int64
	URL          string
	Resources    []string // empty: every resource
	Secret       string
	Enabled      bool
	Position     int64
	FailingSince string
	RetryAt      string
	CreatedAt    string
}

// Delivery is one change a webhook sent or is sending. ID is the message
// id, the same on every attempt.
type Delivery struct {
	ID             string
	WebhookID      int64
	Seq            int64
	Status         string
	Attempts       int
	LastStatusCode int
	NextAttemptAt  string
	CreatedAt      string
}

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// ErrLeaseLost: the webhook's lease is no longer the caller's (it ran
// out and another instance took it, or the webhook was deleted).
var ErrLeaseLost = errors.New("webhook lease lost")

const webhookColumns = `tenant_id, id, url, resources, secret, enabled, position, failing_since, retry_at, created_at`

func scanWebhook(row interface{ Scan(...any) error }) (Webhook, error) {
	var w Webhook
	var resources string
	err := row.Scan(&w.TenantID, &w.ID, &w.URL, &resources, &w.Secret, &w.Enabled, &w.Position, &w.FailingSince, &w.RetryAt, &w.CreatedAt)
	if err == nil {
		err = json.Unmarshal([]byte(resources), &w.Resources)
	}
	return w, err
}

func resourcesText(r []string) string {
	if r == nil {
		r = []string{}
	}
	b, _ := json.Marshal(r)
	return string(b)
}

// InsertWebhook stores a new webhook; w.ID comes from NewID.
func (db *DB) InsertWebhook(ctx context.Context, q Querier, tenantID int64, w Webhook) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO webhooks (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tenantID, w.ID, w.URL, resourcesText(w.Resources), w.Secret, w.Enabled, w.Position, w.FailingSince, w.RetryAt, w.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert webhook: %w", err)
	}
	return nil
}

// CountWebhooks counts the tenant's webhooks.
func (db *DB) CountWebhooks(ctx context.Context, q Querier, tenantID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count webhooks: %w", err)
	}
	return n, nil
}

// Webhooks lists the tenant's webhooks by id.
func (db *DB) Webhooks(ctx context.Context, tenantID int64) ([]Webhook, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 ORDER BY id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	defer rows.Close()
	var out []Webhook
	for rows.Next() {
		w, err := scanWebhook(rows)
		if err != nil {
			return nil, fmt.Errorf("webhooks: %w", err)
		}
		out = append(out, w)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhooks: %w", err)
	}
	return out, nil
}

// WebhookByID finds a webhook of the tenant.
func (db *DB) WebhookByID(ctx context.Context, tenantID, id int64) (Webhook, error) {
	return db.webhook(ctx, db.lookup, tenantID, id, "")
}

// LockWebhook reads a webhook of the tenant in q, locked until q ends.
func (db *DB) LockWebhook(ctx context.Context, q Querier, tenantID, id int64) (Webhook, error) {
	return db.webhook(ctx, q, tenantID, id, db.dialect.forUpdate())
}

func (db *DB) webhook(ctx context.Context, q Querier, tenantID, id int64, lock string) (Webhook, error) {
	w, err := scanWebhook(q.QueryRowContext(ctx,
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 AND id = $2`+lock, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, fmt.Errorf("webhook: %w", ErrNotFound)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook: %w", err)
	}
	return w, nil
}

// UpdateWebhook stores what an admin may change of a webhook: its URL,
// resources and enabled flag, and with them its failing_since and
// retry_at (a re-enabled webhook starts afresh).
func (db *DB) UpdateWebhook(ctx context.Context, q Querier, tenantID int64, w Webhook) error {
	_, err := q.ExecContext(ctx,
		`UPDATE webhooks SET url = $3, resources = $4, enabled = $5, failing_since = $6, retry_at = $7
		 WHERE tenant_id = $1 AND id = $2`,
		tenantID, w.ID, w.URL, resourcesText(w.Resources), w.Enabled, w.FailingSince, w.RetryAt)
	if err != nil {
		return fmt.Errorf("update webhook: %w", err)
	}
	return nil
}

// DeleteWebhook removes a webhook and its deliveries log.
func (db *DB) DeleteWebhook(ctx context.Context, q Querier, tenantID, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	} else if n == 0 {
		return fmt.Errorf("webhook: %w", ErrNotFound)
	}
	if _, err := q.ExecContext(ctx, `DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2`, tenantID, id); err != nil {
		return fmt.Errorf("delete webhook deliveries: %w", err)
	}
	return nil
}

const deliveryColumns = `id, webhook_id, seq, status, attempts, last_status_code, next_attempt_at, created_at`

func scanDelivery(row interface{ Scan(...any) error }) (Delivery, error) {
	var d Delivery
	err := row.Scan(&d.ID, &d.WebhookID, &d.Seq, &d.Status, &d.Attempts, &d.LastStatusCode, &d.NextAttemptAt, &d.CreatedAt)
	return d, err
}

// Deliveries returns a webhook's newest deliveries, at most limit.
func (db *DB) Deliveries(ctx context.Context, tenantID, webhookID int64, limit int) ([]Delivery, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2
		 ORDER BY seq DESC LIMIT $3`, tenantID, webhookID, limit)
	if err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	defer rows.Close()
	var out []Delivery
	for rows.Next() {
		d, err := scanDelivery(rows)
		if err != nil {
			return nil, fmt.Errorf("webhook deliveries: %w", err)
		}
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("webhook deliveries: %w", err)
	}
	return out, nil
}

// PendingDelivery returns a webhook's pending delivery.
func (db *DB) PendingDelivery(ctx context.Context, tenantID, webhookID int64) (Delivery, error) {
	d, err := scanDelivery(db.lookup.QueryRowContext(ctx,
		`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND status = $3
		 ORDER BY seq LIMIT 1`, tenantID, webhookID, DeliveryPending))
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, fmt.Errorf("pending delivery: %w", ErrNotFound)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("pending delivery: %w", err)
	}
	return d, nil
}

// The dispatcher's queries go across tenants, as housekeeping does: it
// serves every tenant's webhooks. Each statement still names the tenant
// of every row it touches.

// dueCondition selects the webhooks with work to do at $1 whose lease is
// free: a pending delivery that is due, or changes after their position.
const dueCondition = `w.enabled = TRUE AND w.lease_until < $1 AND (
	(w.retry_at <> '' AND w.retry_at <= $1) OR
	(w.retry_at = '' AND EXISTS (SELECT 1 FROM change_positions p WHERE p.tenant_id = w.tenant_id AND p.last > w.position)))`

// WebhookKey names a webhook of a tenant.
type WebhookKey struct {
	TenantID, ID int64
}

// DueWebhooks returns up to limit webhooks with work to do at now and a
// free lease, those whose lease ended (or was given up) longest ago
// first: a webhook just let go waits behind the others. It only reads,
// so that idle polling costs no write.
func (db *DB) DueWebhooks(ctx context.Context, now string, limit int) ([]WebhookKey, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT w.tenant_id, w.id FROM webhooks w WHERE `+dueCondition+` ORDER BY w.lease_until, w.tenant_id, w.id LIMIT $2`,
		now, limit)
	if err != nil {
		return nil, fmt.Errorf("webhooks due: %w", err)
	}
	defer rows.Close()
	var out []WebhookKey
	for rows.Next() {
		var k WebhookKey
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
// it meanwhile (or it was deleted or disabled). The one conditional
// statement needs no row lock, so it is the same on every engine.
func (db *DB) LeaseWebhook(ctx context.Context, k WebhookKey, holder, now, until string) (Webhook, error) {
	var w Webhook
	err := db.Tx(ctx, func(q Querier) error {
		var err error
		w, err = scanWebhook(q.QueryRowContext(ctx,
			`UPDATE webhooks SET lease_until = $3, lease_holder = $4 WHERE tenant_id = $1 AND id = $2 AND enabled = TRUE AND lease_until < $5
			 RETURNING `+webhookColumns, k.TenantID, k.ID, until, holder, now))
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
// is no longer holder's.
func (db *DB) RenewLease(ctx context.Context, tenantID, id int64, holder, until string) error {
	return db.Tx(ctx, func(q Querier) error {
		return leased(q.ExecContext(ctx, `UPDATE webhooks SET lease_until = $4 WHERE tenant_id = $1 AND id = $2 AND lease_holder = $3`,
			tenantID, id, holder, until))
	})
}

// ReleaseLease gives up holder's lease of a webhook at now, so that any
// instance may take it at once; its lease then ends at now, which puts
// it behind the webhooks that have waited longer.
func (db *DB) ReleaseLease(ctx context.Context, tenantID, id int64, holder, now string) error {
	_, err := db.writeOne(ctx, "release webhook lease",
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

// Progress is what a delivery step changes of its webhook.
type Progress struct {
	Position     int64
	RetryAt      string
	FailingSince string
	Disable      bool
}

// SaveProgress stores a step of holder's work on a webhook: its new
// position, retry time and failing state, and the delivery (when d is
// not nil) as it now stands. ErrLeaseLost, and nothing is stored, when
// the lease is no longer holder's or an admin disabled the webhook
// meanwhile (the step is made again when it is enabled). The enabled
// flag is only ever cleared here.
func (db *DB) SaveProgress(ctx context.Context, tenantID, webhookID int64, holder string, p Progress, d *Delivery) error {
	err := db.Tx(ctx, func(q Querier) error {
		err := leased(q.ExecContext(ctx,
			`UPDATE webhooks SET position = $4, retry_at = $5, failing_since = $6,
			 enabled = CASE WHEN $7 THEN FALSE ELSE enabled END
			 WHERE tenant_id = $1 AND id = $2 AND lease_holder = $3 AND enabled = TRUE`,
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
// webhook has not yet handled was made ("" when there is none).
func (db *DB) OldestUndelivered(ctx context.Context) (string, error) {
	var at sql.NullString
	err := db.read.QueryRowContext(ctx,
		`SELECT MIN(c.at) FROM webhooks w JOIN changes c ON c.tenant_id = w.tenant_id AND c.seq = w.position + 1
		 WHERE w.enabled = TRUE`).Scan(&at)
	if err != nil {
		return "", fmt.Errorf("oldest undelivered change: %w", err)
	}
	return at.String, nil
}
