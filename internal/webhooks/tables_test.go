package webhooks_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"planwerk/internal/store"
	"planwerk/internal/testenv"
	"planwerk/internal/webhooks"
)

// TestPurgeDeliveriesAcrossTenants: every webhook keeps its newest
// finished deliveries and its pending one, in every tenant, also with more
// webhooks than one batch trims.
func TestPurgeDeliveriesAcrossTenants(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		tables := webhooks.NewTables(db)
		const hooks, perHook, keep = 20, 12, 5
		now := store.Timestamp(time.Now())
		var tenants []store.Tenant
		for i := range 3 {
			// A tenant row: the webhooks' foreign key needs one.
			tenants = append(tenants, testenv.BareTenant(t, db, fmt.Sprintf("t%03d", i)))
		}
		for _, tn := range tenants {
			for w := int64(1); w <= hooks; w++ {
				err := db.Tx(ctx, func(q store.Querier) error {
					if err := tables.InsertWebhook(ctx, q, tn.ID, webhooks.Webhook{ID: w, URL: "https://example.test/", Secret: "s", Enabled: true, CreatedAt: now}); err != nil {
						return err
					}
					for seq := 1; seq <= perHook; seq++ {
						status := webhooks.DeliveryDelivered
						if seq == 1 {
							status = webhooks.DeliveryPending // old, but still pending: kept
						}
						if _, err := q.ExecContext(ctx, `INSERT INTO webhook_deliveries (tenant_id, webhook_id, id, seq, status, attempts, created_at)
							VALUES ($1, $2, $3, $4, $5, 1, $6)`, tn.ID, w, fmt.Sprintf("msg_%d", seq), seq, status, now); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := tables.PurgeDeliveries(ctx, keep); err != nil {
			t.Fatal(err)
		}
		for _, tn := range tenants {
			for w := int64(1); w <= hooks; w++ {
				ds, err := tables.Deliveries(ctx, tn.ID, w, 100)
				if err != nil {
					t.Fatal(err)
				}
				var seqs []int64
				for _, d := range ds {
					seqs = append(seqs, d.Seq)
				}
				got, _ := json.Marshal(seqs)
				if want := "[12,11,10,9,8,1]"; string(got) != want {
					t.Fatalf("tenant %s webhook %d: deliveries %s, want %s", tn.Slug, w, got, want)
				}
			}
		}
	})
}
