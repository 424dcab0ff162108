package webhooks

import (
	"context"
	"fmt"
	"sync"

	"planwerk/internal/store"
)

// purgeWebhooks is how many webhooks' logs a batch of the delivery purge
// trims.
const purgeWebhooks = 50

// PurgeDeliveries trims every webhook's deliveries log to its newest
// MaxDeliveries finished deliveries: housekeeping across tenants.
func (s *Service) PurgeDeliveries(ctx context.Context) error {
	return s.db.PurgeDeliveries(ctx, MaxDeliveries)
}

// PurgeDeliveries keeps each webhook's newest keep finished deliveries and
// deletes the older ones. It visits the webhooks, in key order and
// purgeWebhooks at a time, not the tenants: most tenants have none. A run
// cut short (its budget, a fault) leaves a mark, and the next run on
// these tables goes on from there, so that with more webhooks than one
// run reaches every one is still trimmed in turn; at the end the mark
// goes back to the first. Like the engine's purges, each batch is a short
// transaction of its own.
func (t *Tables) PurgeDeliveries(ctx context.Context, keep int) error {
	after := t.mark.get()
	var done int64
	for {
		if ctx.Err() != nil {
			t.mark.set(after)
			return fmt.Errorf("purge deliveries: stopped after %d, the rest goes next time: %w", done, context.Cause(ctx))
		}
		keys, err := t.webhookKeys(ctx, after)
		if err != nil {
			t.mark.set(after)
			return fmt.Errorf("purge deliveries: %w", err)
		}
		if len(keys) > 0 {
			n, err := t.trimDeliveries(ctx, keys, keep)
			done += n
			if err != nil {
				t.mark.set(after)
				return fmt.Errorf("purge deliveries: %w", err)
			}
		}
		if len(keys) < purgeWebhooks {
			t.mark.set(Key{})
			return nil
		}
		after = keys[len(keys)-1]
	}
}

// purgeMark is where the next deliveries purge starts: a cache of
// progress, which a restart only sets back to the start.
type purgeMark struct {
	mu  sync.Mutex
	key Key
}

func (m *purgeMark) get() Key {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.key
}

func (m *purgeMark) set(k Key) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.key = k
}

// webhookKeys returns the next purgeWebhooks webhooks after the key
// `after`, across tenants, over the primary key.
func (t *Tables) webhookKeys(ctx context.Context, after Key) ([]Key, error) {
	rows, err := t.Reader().QueryContext(ctx,
		`SELECT tenant_id, id FROM webhooks WHERE (tenant_id, id) > ($1, $2) ORDER BY tenant_id, id LIMIT $3`,
		after.TenantID, after.ID, purgeWebhooks)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var keys []Key
	for rows.Next() {
		var k Key
		if err := rows.Scan(&k.TenantID, &k.ID); err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	return keys, rows.Err()
}

// trimDeliveries deletes the finished deliveries of each webhook of keys
// beyond its newest keep, in one transaction, and returns how many went.
func (t *Tables) trimDeliveries(ctx context.Context, keys []Key, keep int) (int64, error) {
	var total int64
	err := t.Tx(ctx, func(q store.Querier) error {
		total = 0
		for _, k := range keys {
			// One webhook's log, over its (tenant_id, webhook_id, seq) index.
			res, err := q.ExecContext(ctx,
				`DELETE FROM webhook_deliveries WHERE tenant_id = $1 AND webhook_id = $2 AND status <> $3 AND seq <= (
				   SELECT k.seq FROM webhook_deliveries k WHERE k.tenant_id = $1 AND k.webhook_id = $2
				   ORDER BY k.seq DESC LIMIT 1 OFFSET $4)`, k.TenantID, k.ID, DeliveryPending, keep)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			total += n
		}
		return nil
	})
	return total, err
}
