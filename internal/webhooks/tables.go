package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"planwerk/internal/jsontext"
	"planwerk/internal/store"
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

// View is a webhook as GET /v1/webhooks/{id} shows it: the document of
// its reads, of its ETag and of its audit entries, without its secret.
type View struct {
	ID           int64    `json:"id"`
	URL          string   `json:"url"`
	Resources    []string `json:"resources"` // null: every resource
	Enabled      bool     `json:"enabled"`
	FailingSince *string  `json:"failingSince"`
	CreatedAt    string   `json:"createdAt"`
}

// View returns the webhook as GET shows it.
func (w Webhook) View() View {
	out := View{ID: w.ID, URL: w.URL, Resources: w.Resources, Enabled: w.Enabled, CreatedAt: w.CreatedAt}
	if len(out.Resources) == 0 {
		out.Resources = nil
	}
	if w.FailingSince != "" {
		since := w.FailingSince
		out.FailingSince = &since
	}
	return out
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

// Key names a webhook of a tenant.
type Key struct {
	TenantID, ID int64
}

// Progress is what a delivery step changes of its webhook.
type Progress struct {
	Position     int64
	RetryAt      string
	FailingSince string
	Disable      bool
}

// Engine is what the webhooks' tables are built on (a *store.DB): the
// engine's transactions, ids and locks, its pools, and the change feed's
// outbox the dispatcher reads.
type Engine interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	Reader() store.Querier
	Lookup() store.Querier
	ExecOne(ctx context.Context, what, query string, args ...any) (bool, error)
	ForUpdate() string
	ChangeWindow(ctx context.Context, tenantID int64) (last, purged int64, err error)
	ChangesAfter(ctx context.Context, tenantID, after int64, resources []string, limit int) ([]store.Change, error)
	ChangeSignal() <-chan struct{}
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
}

// Tables is the Store of the webhooks and webhook_deliveries tables, on
// the engine it passes the rest of Store on to.
type Tables struct {
	Engine
	// mark is where the next deliveries purge starts.
	mark purgeMark
}

// NewTables returns the webhooks' tables in db.
func NewTables(db Engine) *Tables { return &Tables{Engine: db} }

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
	b, _ := jsontext.Marshal(r)
	return string(b)
}

// InsertWebhook stores a new webhook; w.ID comes from NewID.
func (t *Tables) InsertWebhook(ctx context.Context, q store.Querier, tenantID int64, w Webhook) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO webhooks (`+webhookColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		tenantID, w.ID, w.URL, resourcesText(w.Resources), w.Secret, w.Enabled, w.Position, w.FailingSince, w.RetryAt, w.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert webhook: %w", err)
	}
	return nil
}

// CountWebhooks counts the tenant's webhooks.
func (t *Tables) CountWebhooks(ctx context.Context, q store.Querier, tenantID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM webhooks WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count webhooks: %w", err)
	}
	return n, nil
}

// Webhooks lists the tenant's webhooks by id.
func (t *Tables) Webhooks(ctx context.Context, tenantID int64) ([]Webhook, error) {
	rows, err := t.Reader().QueryContext(ctx,
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
func (t *Tables) WebhookByID(ctx context.Context, tenantID, id int64) (Webhook, error) {
	return t.webhook(ctx, t.Lookup(), tenantID, id, "")
}

// LockWebhook reads a webhook of the tenant in q, locked until q ends.
func (t *Tables) LockWebhook(ctx context.Context, q store.Querier, tenantID, id int64) (Webhook, error) {
	return t.webhook(ctx, q, tenantID, id, t.ForUpdate())
}

func (t *Tables) webhook(ctx context.Context, q store.Querier, tenantID, id int64, lock string) (Webhook, error) {
	w, err := scanWebhook(q.QueryRowContext(ctx,
		`SELECT `+webhookColumns+` FROM webhooks WHERE tenant_id = $1 AND id = $2`+lock, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Webhook{}, fmt.Errorf("webhook: %w", store.ErrNotFound)
	}
	if err != nil {
		return Webhook{}, fmt.Errorf("webhook: %w", err)
	}
	return w, nil
}

// UpdateWebhook stores what an admin may change of a webhook: its URL,
// resources and enabled flag, and with them its failing_since and
// retry_at (a re-enabled webhook starts afresh).
func (t *Tables) UpdateWebhook(ctx context.Context, q store.Querier, tenantID int64, w Webhook) error {
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
func (t *Tables) DeleteWebhook(ctx context.Context, q store.Querier, tenantID, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM webhooks WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete webhook: %w", err)
	} else if n == 0 {
		return fmt.Errorf("webhook: %w", store.ErrNotFound)
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
func (t *Tables) Deliveries(ctx context.Context, tenantID, webhookID int64, limit int) ([]Delivery, error) {
	rows, err := t.Reader().QueryContext(ctx,
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
func (t *Tables) PendingDelivery(ctx context.Context, tenantID, webhookID int64) (Delivery, error) {
	d, err := scanDelivery(t.Lookup().QueryRowContext(ctx,
		`SELECT `+deliveryColumns+` FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND status = $3
		 ORDER BY seq LIMIT 1`, tenantID, webhookID, DeliveryPending))
	if errors.Is(err, sql.ErrNoRows) {
		return Delivery{}, fmt.Errorf("pending delivery: %w", store.ErrNotFound)
	}
	if err != nil {
		return Delivery{}, fmt.Errorf("pending delivery: %w", err)
	}
	return d, nil
}
