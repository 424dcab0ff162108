package store

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Erasing a tenant. Its tables are found in the database's catalog, not
// in a list kept by hand: every table with a tenant_id column, so that a
// table a later migration adds is erased without anyone remembering to.
// Rows go in batches, each a short transaction of its own, so that the
// erasure of a large tenant never holds SQLite's one writer (or
// PostgreSQL's locks) long enough to stall another tenant's requests.

// Bounds of the erasure's batches. A batch's size adapts to how long its
// DELETE took: halved when it took longer than its engine's target,
// doubled when it took less than half of it. After each batch the erasure rests as long as the
// batch took: SQLite's writers of other processes (the service's), which
// wait for the lock in sleeps of a few milliseconds, find it free, and
// the erasure takes at most about half of any engine's time for writes.
const (
	// eraseTarget is PostgreSQL's, whose batches lock only the rows they
	// delete: another tenant's writes do not wait for them.
	eraseTarget = 50 * time.Millisecond
	// eraseTargetSQLite is SQLite's, whose batch holds the database's one
	// write lock: a write of the service that comes meanwhile waits for
	// the batch to end. With 50 ms, the served tenant's p99 during an
	// erasure was 3.5 to 10.7 times its quiet one (planwerk-bench
	// lifecycle); with 2 ms, 1.75 times, for an erasure 4 to 5 times as
	// long.
	eraseTargetSQLite = 2 * time.Millisecond
	eraseFirst        = 64
	eraseMin          = 8
	eraseMax          = 16384
	// eraseRounds bounds the passes over the tables: a write of a request
	// already in flight when the tenant stopped being served may add rows
	// behind a pass, which the next takes.
	eraseRounds = 5
)

// tenantStates is the table of tenants' states, erased last with the
// tenant's row: until then the tenant stays unknown to the service.
const tenantStates = "tenant_states"

// tenantTable is a table with a tenant_id column, as the catalog has it.
type tenantTable struct {
	name string
	key  []string // its primary key's columns, in order
	refs []string // the tables its foreign keys refer to
}

// errRowsLeft reports rows of the tenant found when its row was to go.
var errRowsLeft = errors.New("rows of the tenant are left")

// EraseTenant deletes every row of the tenant from every table that has
// a tenant_id column, children before the tables their foreign keys refer
// to, in batches of bounded time; then, in one transaction, its state and
// its row, after which its slug may be taken again and its id is never
// handed out again. progress, when set, learns each batch: the table and
// the rows deleted. The caller stops the tenant being served first
// (SetTenantState to TenantDeleting, or an import that never made it
// active), and erases the files its uploads name before (the store does
// not know them). Cut short, it may be run again: it goes on where it
// stopped. A tenant without a row leaves only its leftover rows to erase.
func (db *DB) EraseTenant(ctx context.Context, tenantID int64, progress func(table string, rows int64)) error {
	if progress == nil {
		progress = func(string, int64) {}
	}
	tables, err := db.tenantTables(ctx)
	if err != nil {
		return fmt.Errorf("erase tenant %d: %w", tenantID, err)
	}
	for round := 1; ; round++ {
		for _, t := range tables {
			if err := db.eraseTable(ctx, t, tenantID, progress); err != nil {
				return fmt.Errorf("erase tenant %d: %s: %w", tenantID, t.name, err)
			}
		}
		err := db.dropTenant(ctx, tables, tenantID, progress)
		if !errors.Is(err, errRowsLeft) || round == eraseRounds {
			if err != nil {
				return fmt.Errorf("erase tenant %d: %w", tenantID, err)
			}
			return nil
		}
	}
}

// eraseTable deletes the tenant's rows of t, a batch at a time, over its
// primary key.
func (db *DB) eraseTable(ctx context.Context, t tenantTable, tenantID int64, progress func(string, int64)) error {
	key := strings.Join(quoteAll(t.key), ", ")
	table := quoteIdent(t.name)
	del := `DELETE FROM ` + table + ` WHERE tenant_id = $1 AND (` + key + `) IN (SELECT ` + key + ` FROM ` + table +
		` WHERE tenant_id = $1 LIMIT $2)`
	n := int64(eraseFirst)
	target := eraseTarget
	if db.Engine() == "sqlite" {
		target = eraseTargetSQLite
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var deleted int64
		var start time.Time
		var work time.Duration
		err := db.Tx(ctx, func(q Querier) error {
			// From here to the commit the transaction holds what it locks
			// (on SQLite, the database's one write lock, taken at its
			// start): that time is what others may wait.
			start = time.Now()
			res, err := q.ExecContext(ctx, del, tenantID, n)
			work = time.Since(start)
			if err != nil {
				return err
			}
			deleted, err = res.RowsAffected()
			return err
		})
		took := time.Since(start)
		if err != nil {
			return err
		}
		if db.observeErase != nil {
			db.observeErase(took)
		}
		if deleted > 0 {
			progress(t.name, deleted)
		}
		if deleted < n {
			return nil
		}
		// The batch's size follows the time of its DELETE, the part that
		// grows with it. The commit's sync to disk does not: on a loaded
		// machine it alone may take longer than the target, and halving
		// the batches for it would only make the erasure crawl (in the
		// service's process SQLite's batch shares the sync with the
		// writes committed with it anyway).
		if err := rest(ctx, min(took, target)); err != nil {
			return err
		}
		switch {
		case work > target:
			n = max(n/2, eraseMin)
		case work < target/2:
			n = min(n*2, eraseMax)
		}
	}
}

// dropTenant deletes the tenant's state and row in one transaction,
// after making sure no table holds a row of it (errRowsLeft otherwise);
// its id is retired, so that no later tenant is handed it.
func (db *DB) dropTenant(ctx context.Context, tables []tenantTable, tenantID int64, progress func(string, int64)) error {
	var states, tenants int64
	err := db.Tx(ctx, func(q Querier) error {
		for _, t := range tables {
			var one int
			err := q.QueryRowContext(ctx, `SELECT 1 FROM `+quoteIdent(t.name)+` WHERE tenant_id = $1 LIMIT 1`, tenantID).Scan(&one)
			if err == nil {
				return fmt.Errorf("%s: %w", t.name, errRowsLeft)
			}
			if !errors.Is(err, sql.ErrNoRows) {
				return err
			}
		}
		if err := db.dialect.retireTenantID(ctx, q, tenantID); err != nil {
			return err
		}
		var err error
		if states, err = execCount(ctx, q, `DELETE FROM tenant_states WHERE tenant_id = $1`, tenantID); err != nil {
			return err
		}
		tenants, err = execCount(ctx, q, `DELETE FROM tenants WHERE id = $1`, tenantID)
		return err
	})
	if err != nil {
		return err
	}
	if states > 0 {
		progress(tenantStates, states)
	}
	if tenants > 0 {
		progress("tenants", tenants)
	}
	return nil
}

// rest waits for d, or until ctx ends.
func rest(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func execCount(ctx context.Context, q Querier, query string, args ...any) (int64, error) {
	res, err := q.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// TenantTables names the tables that hold rows of tenants (those with a
// tenant_id column), in the order the erasure empties them: a table
// before those its foreign keys refer to. The tenants' states are not
// among them: they go with the tenant's row.
func (db *DB) TenantTables(ctx context.Context) ([]string, error) {
	tables, err := db.tenantTables(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return names, nil
}

// tenantTables reads the tenant tables from the catalog and orders them
// for the erasure.
func (db *DB) tenantTables(ctx context.Context) ([]tenantTable, error) {
	all, err := db.dialect.tenantTables(ctx, db.read)
	if err != nil {
		return nil, fmt.Errorf("tenant tables: %w", err)
	}
	var tables []tenantTable
	for _, t := range all {
		if t.name == tenantStates {
			continue
		}
		if len(t.key) == 0 {
			return nil, fmt.Errorf("tenant table %s has no primary key to erase it by", t.name)
		}
		tables = append(tables, t)
	}
	return childrenFirst(tables)
}

// childrenFirst orders tables so that each comes before every table its
// foreign keys refer to (those outside tables, such as tenants, do not
// count); among tables free to go, by name.
func childrenFirst(tables []tenantTable) ([]tenantTable, error) {
	left := slices.Clone(tables)
	slices.SortFunc(left, func(a, b tenantTable) int { return cmp.Compare(a.name, b.name) })
	var out []tenantTable
	for len(left) > 0 {
		i := slices.IndexFunc(left, func(t tenantTable) bool {
			// t may go when no other table left refers to it.
			return !slices.ContainsFunc(left, func(o tenantTable) bool { return o.name != t.name && slices.Contains(o.refs, t.name) })
		})
		if i < 0 {
			names := make([]string, len(left))
			for j, t := range left {
				names[j] = t.name
			}
			return nil, fmt.Errorf("the foreign keys of %s refer to each other in a cycle", strings.Join(names, ", "))
		}
		out = append(out, left[i])
		left = slices.Delete(left, i, i+1)
	}
	return out, nil
}

// quoteIdent quotes a name from the catalog for SQL, on both engines.
func quoteIdent(name string) string { return `"` + strings.ReplaceAll(name, `"`, `""`) + `"` }

func quoteAll(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = quoteIdent(n)
	}
	return out
}

// The catalogs. Each engine reads its own: the tables of the database
// (on PostgreSQL, of the schema in use) with a tenant_id column, their
// primary keys and what their foreign keys refer to.

func (sqliteDialect) tenantTables(ctx context.Context, q Querier) ([]tenantTable, error) {
	byName := map[string]*tenantTable{}
	var names []string
	err := eachRow(ctx, q, `SELECT m.name, p.name, p.pk FROM sqlite_master m, pragma_table_info(m.name) p
		 WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite%'
		   AND EXISTS (SELECT 1 FROM pragma_table_info(m.name) c WHERE c.name = 'tenant_id')
		 ORDER BY m.name, p.pk`, func(scan func(...any) error) error {
		var table, column string
		var pk int
		if err := scan(&table, &column, &pk); err != nil {
			return err
		}
		t, ok := byName[table]
		if !ok {
			t = &tenantTable{name: table}
			byName[table] = t
			names = append(names, table)
		}
		if pk > 0 {
			t.key = append(t.key, column)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = eachRow(ctx, q, `SELECT DISTINCT m.name, f."table" FROM sqlite_master m, pragma_foreign_key_list(m.name) f
		 WHERE m.type = 'table'`, func(scan func(...any) error) error {
		var table, ref string
		if err := scan(&table, &ref); err != nil {
			return err
		}
		if t, ok := byName[table]; ok {
			t.refs = append(t.refs, ref)
		}
		return nil
	})
	out := make([]tenantTable, len(names))
	for i, n := range names {
		out[i] = *byName[n]
	}
	return out, err
}

func (postgresDialect) tenantTables(ctx context.Context, q Querier) ([]tenantTable, error) {
	var out []tenantTable
	err := eachRow(ctx, q, `
		SELECT c.relname,
		       COALESCE((SELECT string_agg(a.attname, ',' ORDER BY k.n)
		                   FROM pg_index x
		                   CROSS JOIN LATERAL unnest(x.indkey::int2[]) WITH ORDINALITY AS k(attnum, n)
		                   JOIN pg_attribute a ON a.attrelid = x.indrelid AND a.attnum = k.attnum
		                  WHERE x.indrelid = c.oid AND x.indisprimary), ''),
		       COALESCE((SELECT string_agg(DISTINCT f.relname, ',')
		                   FROM pg_constraint r JOIN pg_class f ON f.oid = r.confrelid
		                  WHERE r.conrelid = c.oid AND r.contype = 'f'), '')
		  FROM pg_class c JOIN pg_namespace ns ON ns.oid = c.relnamespace
		 WHERE ns.nspname = current_schema() AND c.relkind IN ('r', 'p') AND NOT c.relispartition
		   AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped)
		 ORDER BY c.relname`, func(scan func(...any) error) error {
		var t tenantTable
		var key, refs string
		if err := scan(&t.name, &key, &refs); err != nil {
			return err
		}
		t.key, t.refs = splitList(key), splitList(refs)
		out = append(out, t)
		return nil
	})
	return out, err
}

func splitList(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// eachRow runs query on q and calls fn with each row's Scan.
func eachRow(ctx context.Context, q Querier, query string, fn func(scan func(...any) error) error) error {
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows.Scan); err != nil {
			return err
		}
	}
	return rows.Err()
}

// Tenant ids. PostgreSQL draws them from a sequence, which never hands
// one out twice. SQLite gives a new row the highest id plus one, which
// after the erasure of the newest tenant would be that tenant's id again:
// caches keyed by tenant id (the audit chains' heads of a running
// service, its tokens) could then take the new tenant for the old. So
// SQLite keeps the highest id it retired (tenant_id_floor, migration
// 00022), and a new tenant's id is above it too.

func (sqliteDialect) insertTenant() string {
	return `INSERT INTO tenants (id, slug, name, created_at, updated_at)
		VALUES (max(COALESCE((SELECT max(id) FROM tenants), 0), COALESCE((SELECT last_id FROM tenant_id_floor), 0)) + 1, $1, $2, $3, $3)
		RETURNING id`
}

func (sqliteDialect) retireTenantID(ctx context.Context, q Querier, tenantID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO tenant_id_floor (one, last_id) VALUES (1, $1)
		ON CONFLICT (one) DO UPDATE SET last_id = max(last_id, excluded.last_id)`, tenantID)
	return err
}

func (postgresDialect) insertTenant() string {
	return `INSERT INTO tenants (slug, name, created_at, updated_at) VALUES ($1, $2, $3, $3) RETURNING id`
}

func (postgresDialect) retireTenantID(context.Context, Querier, int64) error { return nil }
