// Package webhooks delivers the change feed to URLs (docs/api.md
// "Webhooks"): admins subscribe a URL to a tenant's changes, and
// a dispatcher in every instance of the service posts each change, signed
// as the Standard Webhooks specification says, at least once and in order
// per webhook. See docs/decisions.md "Webhooks".
package webhooks

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"time"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/store"
)

// Bounds of webhooks.
const (
	// MaxWebhooks per tenant: each is a stream of outgoing requests the
	// service makes on the tenant's behalf.
	MaxWebhooks = 20
	// MaxDeliveries is how many deliveries the log shows and keeps per webhook.
	MaxDeliveries = 100
	maxURL        = 2000
	secretPrefix  = "whsec_"
	secretBytes   = 32
)

// Store is what webhooks need of the database: the engine's
// transactions and change feed, and their own tables (Tables).
type Store interface {
	Tx(ctx context.Context, fn func(q store.Querier) error) error
	NewID(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	InsertWebhook(ctx context.Context, q store.Querier, tenantID int64, w Webhook) error
	CountWebhooks(ctx context.Context, q store.Querier, tenantID int64) (int, error)
	Lock(ctx context.Context, q store.Querier, tenantID int64, key string) error
	Webhooks(ctx context.Context, tenantID int64) ([]Webhook, error)
	WebhookByID(ctx context.Context, tenantID, id int64) (Webhook, error)
	LockWebhook(ctx context.Context, q store.Querier, tenantID, id int64) (Webhook, error)
	UpdateWebhook(ctx context.Context, q store.Querier, tenantID int64, w Webhook) error
	DeleteWebhook(ctx context.Context, q store.Querier, tenantID, id int64) error
	Deliveries(ctx context.Context, tenantID, webhookID int64, limit int) ([]Delivery, error)
	PendingDelivery(ctx context.Context, tenantID, webhookID int64) (Delivery, error)
	ChangeWindow(ctx context.Context, tenantID int64) (last, purged int64, err error)
	ChangesAfter(ctx context.Context, tenantID, after int64, resources []string, limit int) ([]store.Change, error)
	ChangeSignal() <-chan struct{}
	DueWebhooks(ctx context.Context, now string, limit int) ([]Key, error)
	LeaseWebhook(ctx context.Context, k Key, holder, now, until string) (Webhook, error)
	RenewLease(ctx context.Context, tenantID, id int64, holder, until string) error
	ReleaseLease(ctx context.Context, tenantID, id int64, holder, now string) error
	SaveProgress(ctx context.Context, tenantID, webhookID int64, holder string, p Progress, d *Delivery) error
	OldestUndelivered(ctx context.Context) (string, error)
	PurgeDeliveries(ctx context.Context, keep int) error
	Audit(ctx context.Context, q store.Querier, tenantID int64, n store.AuditNote) error
}

// Metrics learns what deliveries do.
type Metrics interface {
	Delivery(outcome string)
	OldestPendingDelivery(d time.Duration)
	FeedLag(d time.Duration)
}

// Config are the webhooks' settings; zero values take the defaults.
type Config struct {
	// AllowPrivate lets webhooks reach loopback, private and link-local
	// addresses (development and tests).
	AllowPrivate bool
	// DisableAfter disables a webhook whose deliveries have failed this
	// long without a success between (72h).
	DisableAfter time.Duration
	// RetryFor is how long a delivery is retried before it fails (24h).
	RetryFor time.Duration
	// RetryBase is the first retry's delay (5s); each next one doubles,
	// up to RetryMax (1h).
	RetryBase, RetryMax time.Duration
	// Poll is how often the dispatcher looks for work other instances
	// made and retries that came due (1s).
	Poll time.Duration
	// Lease is how long a webhook is the instance's without renewal (30s).
	Lease time.Duration
	// Timeout bounds one delivery request (10s).
	Timeout time.Duration
	// Workers is how many webhooks an instance delivers to at once (8).
	Workers int
	// Budget is how long a worker keeps a webhook while others wait for
	// a worker (1s): then, after the delivery in flight, it lets the
	// webhook go, and the next claim favours the tenants holding the
	// fewest workers.
	Budget time.Duration
	// Lookup resolves a webhook URL's host when it is created or changed
	// (nil: the system resolver).
	Lookup  func(ctx context.Context, host string) ([]netip.Addr, error)
	Metrics Metrics
}

func (c *Config) defaults() {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	set(&c.DisableAfter, 72*time.Hour)
	set(&c.RetryFor, 24*time.Hour)
	set(&c.RetryBase, 5*time.Second)
	set(&c.RetryMax, time.Hour)
	set(&c.Poll, time.Second)
	set(&c.Lease, 30*time.Second)
	set(&c.Timeout, 10*time.Second)
	set(&c.Budget, time.Second)
	if c.Workers <= 0 {
		c.Workers = 8
	}
	if c.Metrics == nil {
		c.Metrics = noMetrics{}
	}
}

type noMetrics struct{}

func (noMetrics) Delivery(string)                     {}
func (noMetrics) OldestPendingDelivery(time.Duration) {}
func (noMetrics) FeedLag(time.Duration)               {}

// Service manages webhooks and, once started, delivers their changes.
type Service struct {
	db        Store
	cfg       Config
	resources []string // the feed's resources
	log       *slog.Logger
	sender    *sender
	holder    string // this instance's name on the leases it holds

	pool pool // the workers in use, by tenant
}

// New returns a Service; resources are the names of the feed's resources.
func New(db Store, cfg Config, resources []string, log *slog.Logger) *Service {
	cfg.defaults()
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return &Service{db: db, cfg: cfg, resources: resources, log: log, sender: newSender(cfg),
		holder: base64.RawURLEncoding.EncodeToString(b)}
}

func adminOnly(caller auth.Principal) error {
	if !caller.IsAdmin {
		return errs.Forbid("only admins may manage webhooks")
	}
	return nil
}

// Create subscribes a URL to the tenant's changes from a request body:
// url and resources (all when left out). Only changes committed after
// it are delivered.
func (s *Service) Create(ctx context.Context, caller auth.Principal, input map[string]any) (Webhook, error) {
	if err := adminOnly(caller); err != nil {
		return Webhook{}, err
	}
	w := Webhook{Enabled: true}
	if err := s.parse(input, &w, false); err != nil {
		return Webhook{}, err
	}
	if err := s.checkHost(ctx, w.URL); err != nil {
		return Webhook{}, err
	}
	w.Secret = newSecret()
	w.CreatedAt = store.Timestamp(time.Now())
	err := s.db.Tx(ctx, func(q store.Querier) error {
		// One create at a time per tenant counts and inserts, so that
		// racing creates never pass MaxWebhooks.
		if err := s.db.Lock(ctx, q, caller.TenantID, "webhooks"); err != nil {
			return err
		}
		n, err := s.db.CountWebhooks(ctx, q, caller.TenantID)
		if err != nil {
			return err
		}
		if n >= MaxWebhooks {
			return errs.New(errs.Conflict, "too_many_webhooks",
				fmt.Sprintf("the tenant has %d webhooks, the most it may have; delete one first", MaxWebhooks))
		}
		// Every position up to the last committed one is taken by a
		// committed change (see store/changes.go): the webhook starts after them.
		if w.Position, _, err = s.db.ChangeWindow(ctx, caller.TenantID); err != nil {
			return err
		}
		if w.ID, err = s.db.NewID(ctx, q, caller.TenantID); err != nil {
			return err
		}
		if err := s.db.InsertWebhook(ctx, q, caller.TenantID, w); err != nil {
			return err
		}
		return s.audit(ctx, q, caller.TenantID, store.OpCreate, nil, &w)
	})
	if err != nil {
		return Webhook{}, fmt.Errorf("create webhook: %w", err)
	}
	w.TenantID = caller.TenantID
	return w, nil
}

func newSecret() string {
	b := make([]byte, secretBytes)
	_, _ = rand.Read(b)
	return secretPrefix + base64.StdEncoding.EncodeToString(b)
}

// parse reads a webhook's fields into w, naming every invalid one; a
// patch may leave any out and may set enabled.
func (s *Service) parse(input map[string]any, w *Webhook, patch bool) error {
	var problems []errs.Problem
	known := []string{"url", "resources"}
	if patch {
		known = append(known, "enabled")
	}
	for k := range input {
		if !slices.Contains(known, k) {
			problems = append(problems, errs.Problem{Field: k, Message: "is not a field of a webhook to write (" + joinNames(known) + ")"})
		}
	}
	if v, ok := input["url"]; ok || !patch {
		raw, _ := v.(string)
		if msg := checkURL(raw); msg != "" {
			problems = append(problems, errs.Problem{Field: "url", Message: msg})
		}
		w.URL = raw
	}
	if v, ok := input["resources"]; ok {
		r, msg := s.parseResources(v)
		if msg != "" {
			problems = append(problems, errs.Problem{Field: "resources", Message: msg})
		}
		w.Resources = r
	}
	if v, ok := input["enabled"]; ok {
		b, isBool := v.(bool)
		if !isBool {
			problems = append(problems, errs.Problem{Field: "enabled", Message: "must be true or false"})
		}
		if b && !w.Enabled {
			w.FailingSince = "" // re-enabled: the pending delivery is tried again at once
			if w.RetryAt != "" {
				w.RetryAt = store.Timestamp(time.Now())
			}
		}
		w.Enabled = b
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	return nil
}

func (s *Service) parseResources(v any) ([]string, string) {
	if v == nil {
		return nil, "" // every resource
	}
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return nil, "must be a non-empty list of the feed's resource names, or null for all"
	}
	var out []string
	for _, e := range list {
		name, _ := e.(string)
		if !slices.Contains(s.resources, name) {
			return nil, fmt.Sprintf("%v is not a resource of the feed (%s)", e, joinNames(s.resources))
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out, ""
}

func joinNames(names []string) string {
	b, _ := jsontext.Marshal(names)
	return string(b[1 : len(b)-1])
}

// List lists the tenant's webhooks. Admins only.
func (s *Service) List(ctx context.Context, caller auth.Principal) ([]Webhook, error) {
	if err := adminOnly(caller); err != nil {
		return nil, err
	}
	return s.db.Webhooks(ctx, caller.TenantID)
}

// Get returns one webhook. Admins only.
func (s *Service) Get(ctx context.Context, caller auth.Principal, id int64) (Webhook, error) {
	if err := adminOnly(caller); err != nil {
		return Webhook{}, err
	}
	return s.db.WebhookByID(ctx, caller.TenantID, id)
}

// Check refuses a write to a webhook as it is (If-Match); nil checks nothing.
type Check func(w Webhook) error

// Update changes a webhook's url, resources or enabled flag. check runs
// on the webhook as it is, inside the write.
func (s *Service) Update(ctx context.Context, caller auth.Principal, id int64, input map[string]any, check Check) (Webhook, error) {
	if err := adminOnly(caller); err != nil {
		return Webhook{}, err
	}
	// A new URL's host is resolved before the transaction, which must not
	// wait on DNS while it holds the webhook (or SQLite's one writer).
	if raw, ok := input["url"].(string); ok && checkURL(raw) == "" {
		if _, err := s.db.WebhookByID(ctx, caller.TenantID, id); err != nil {
			return Webhook{}, err // another tenant's id: 404, not a word about its URL
		}
		if err := s.checkHost(ctx, raw); err != nil {
			return Webhook{}, err
		}
	}
	var w Webhook
	err := s.db.Tx(ctx, func(q store.Querier) error {
		var err error
		if w, err = s.lockChecked(ctx, q, caller.TenantID, id, check); err != nil {
			return err
		}
		before := w
		if err := s.parse(input, &w, true); err != nil {
			return err
		}
		if err := s.db.UpdateWebhook(ctx, q, caller.TenantID, w); err != nil {
			return err
		}
		return s.audit(ctx, q, caller.TenantID, store.OpUpdate, &before, &w)
	})
	if err != nil {
		return Webhook{}, err
	}
	return w, nil
}

// Delete removes a webhook and its deliveries log. check runs on the
// webhook as it is, inside the write.
func (s *Service) Delete(ctx context.Context, caller auth.Principal, id int64, check Check) (Webhook, error) {
	if err := adminOnly(caller); err != nil {
		return Webhook{}, err
	}
	var w Webhook
	err := s.db.Tx(ctx, func(q store.Querier) error {
		var err error
		if w, err = s.lockChecked(ctx, q, caller.TenantID, id, check); err != nil {
			return err
		}
		if err := s.db.DeleteWebhook(ctx, q, caller.TenantID, id); err != nil {
			return err
		}
		return s.audit(ctx, q, caller.TenantID, store.OpDelete, &w, nil)
	})
	return w, err
}

// audit notes an admin's write of a webhook in q's transaction: a
// webhook makes no change-feed change. before and after are the webhook
// as it was and is (nil for none), shown as GET shows them: never with
// their secret.
func (s *Service) audit(ctx context.Context, q store.Querier, tenantID int64, op string, before, after *Webhook) error {
	n := store.AuditNote{Resource: "webhooks", Op: op}
	var err error
	if n.Before, err = viewDoc(before); err != nil {
		return err
	}
	if n.After, err = viewDoc(after); err != nil {
		return err
	}
	if after != nil {
		n.Record = after.ID
	} else {
		n.Record = before.ID
	}
	return s.db.Audit(ctx, q, tenantID, n)
}

// viewDoc is the JSON of the webhook as GET shows it; nil for none.
func viewDoc(w *Webhook) ([]byte, error) {
	if w == nil {
		return nil, nil
	}
	doc, err := jsontext.Marshal(w.View())
	if err != nil {
		return nil, fmt.Errorf("webhook %d: %w", w.ID, err)
	}
	return doc, nil
}

// lockChecked locks the tenant's webhook id for the rest of the write and
// runs check (when given) on it as it is.
func (s *Service) lockChecked(ctx context.Context, q store.Querier, tenantID, id int64, check Check) (Webhook, error) {
	w, err := s.db.LockWebhook(ctx, q, tenantID, id)
	if err != nil {
		return Webhook{}, err
	}
	if check != nil {
		if err := check(w); err != nil {
			return Webhook{}, err
		}
	}
	return w, nil
}

// Deliveries returns a webhook's newest deliveries. Admins only.
func (s *Service) Deliveries(ctx context.Context, caller auth.Principal, id int64) ([]Delivery, error) {
	if _, err := s.Get(ctx, caller, id); err != nil {
		return nil, err
	}
	return s.db.Deliveries(ctx, caller.TenantID, id, MaxDeliveries)
}
