package webhooks

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"planwerk/internal/store"
)

// TestPurgeDeliveriesGoesOn: a deliveries purge starts where the last one
// of the process stopped, trims from there to the last webhook, and the
// next run starts from the first again; a run cut short keeps the mark.
func TestPurgeDeliveriesGoesOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "purge.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	const hooks, perHook, keep = 2*purgeWebhooks + 10, 4, 2
	now := store.Timestamp(time.Now())
	// A tenant row: the webhooks' foreign key needs one.
	tn, err := db.InsertTenant(ctx, db, "acme", "Acme")
	if err != nil {
		t.Fatal(err)
	}
	tables := NewTables(db)
	err = db.Tx(ctx, func(q store.Querier) error {
		for w := int64(1); w <= hooks; w++ {
			if err := tables.InsertWebhook(ctx, q, tn.ID, Webhook{ID: w, URL: "https://example.test/", Secret: "s", Enabled: true, CreatedAt: now}); err != nil {
				return err
			}
			for seq := 1; seq <= perHook; seq++ {
				if _, err := q.ExecContext(ctx, `INSERT INTO webhook_deliveries (tenant_id, webhook_id, id, seq, status, attempts, created_at)
					VALUES ($1, $2, $3, $4, $5, 1, $6)`, tn.ID, w, fmt.Sprintf("msg_%d", seq), seq, DeliveryDelivered, now); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	count := func(w int64) int {
		ds, err := tables.Deliveries(ctx, tn.ID, w, 100)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}

	// A run cut short before it did anything keeps the mark where it was.
	mid := Key{TenantID: tn.ID, ID: hooks / 2}
	tables.mark.set(mid)
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if err := tables.PurgeDeliveries(ended, keep); err == nil {
		t.Fatal("a purge on an ended context reported success")
	}
	if got := tables.mark.get(); got != mid {
		t.Fatalf("mark %v after a cut run, want %v", got, mid)
	}

	// The next run goes on from the mark to the end, then starts over.
	if err := tables.PurgeDeliveries(ctx, keep); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1, mid.ID} {
		if n := count(w); n != perHook {
			t.Errorf("webhook %d, before the mark: %d deliveries, want %d untouched", w, n, perHook)
		}
	}
	for _, w := range []int64{mid.ID + 1, hooks} {
		if n := count(w); n != keep {
			t.Errorf("webhook %d, after the mark: %d deliveries, want %d", w, n, keep)
		}
	}
	if got := tables.mark.get(); got != (Key{}) {
		t.Fatalf("mark %v after a run reached the end, want the start", got)
	}
	if err := tables.PurgeDeliveries(ctx, keep); err != nil {
		t.Fatal(err)
	}
	for _, w := range []int64{1, mid.ID} {
		if n := count(w); n != keep {
			t.Errorf("webhook %d after the run from the start: %d deliveries, want %d", w, n, keep)
		}
	}
}
