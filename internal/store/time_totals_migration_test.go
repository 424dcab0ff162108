package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/store"
	"planwerk/internal/tally"
	"planwerk/internal/testenv"
)

// TestTimeTotalsMigration: step 00032 computes the time totals of every
// tenant from the time entries stored before it, each tenant's its own:
// a year's totals read afterwards equal the entries' sums.
func TestTimeTotalsMigration(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) { timeTotalsMigration(t, testenv.DSN(t, b)) })
}

// timeTotalsMigration is TestTimeTotalsMigration on the database of dsn,
// empty before.
func timeTotalsMigration(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	db := openAt(t, dsn, 31)
	const at = "2026-12-01T00:00:00.000Z"
	entry := func(tenant int64, doc string) {
		t.Helper()
		var id int64
		if err := db.Tx(ctx, func(q store.Querier) (err error) {
			id, err = db.NewID(ctx, q, tenant)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		exec(t, db, `INSERT INTO records (tenant_id, id, resource, doc, created_at, updated_at) VALUES ($1, $2, 'time-entries', $3, $4, $4)`,
			tenant, id, fmt.Sprintf(`{"id":%d,%s,"createdAt":%q,"updatedAt":%q}`, id, doc, at, at), at)
	}
	one, _ := testenv.TenantIn(t, db, "totals-one", "admin@one.test")
	two, _ := testenv.TenantIn(t, db, "totals-two", "admin@two.test")
	entry(one.ID, `"trackingType":"WORK","user":1,"project":7,"day":"2026-01-31","duration":3600`)
	entry(one.ID, `"trackingType":"WORK","user":1,"project":7,"day":"2026-02-01","duration":1800`)
	entry(one.ID, `"trackingType":"WORK","user":2,"project":8,"day":"2026-02-01","startTime":"2026-02-01T08:00:00.000Z","endTime":"2026-02-01T09:00:00.000Z"`)
	entry(one.ID, `"trackingType":"BREAK","user":2,"day":"2026-02-01","duration":900`)
	entry(two.ID, `"trackingType":"WORK","user":1,"project":7,"day":"2026-02-01","duration":99`)
	if _, err := db.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tenant          int64
		from, to, group string
		want            string
	}{
		{one.ID, "2026-01-01", "2026-12-31", "", "[{<nil> BREAK 900 1} {<nil> WORK 9000 3}]"},
		{one.ID, "2026-01-01", "2026-12-31", "project", "[{7 WORK 5400 2} {8 WORK 3600 1} {<nil> BREAK 900 1}]"},
		{one.ID, "2026-01-15", "2026-02-01", "user", "[{1 WORK 5400 2} {2 BREAK 900 1} {2 WORK 3600 1}]"},
		{one.ID, "2026-02-01", "2026-02-28", "day", "[{2026-02-01 BREAK 900 1} {2026-02-01 WORK 5400 2}]"},
		{two.ID, "2026-01-01", "2026-12-31", "user", "[{1 WORK 99 1}]"},
	} {
		rows, err := tally.Sum(ctx, db.Reader(), c.tenant, c.from, c.to, c.group)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(sorted(rows)); got != c.want {
			t.Errorf("tenant %d %s..%s by %q: %s, want %s", c.tenant, c.from, c.to, c.group, got, c.want)
		}
	}
}

func sorted(rows []tally.Row) []tally.Row {
	out := slices.Clone(rows)
	slices.SortFunc(out, func(a, b tally.Row) int {
		return strings.Compare(fmt.Sprint(a.Key, a.Type), fmt.Sprint(b.Key, b.Type))
	})
	return out
}
