package store

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"strings"
)

// The planner's statistics. Both engines choose among the indexes of
// records by statistics of their contents. Without them SQLite planned a
// user's day by the index that hands a tenant's time entries over in id
// order (records_by_resource), and so read every one of them (the indexes
// of migration 00030 also serve it well without statistics; see
// docs/decisions.md "Statistics for the query planner").
//
// SQLite keeps statistics only when told to (ANALYZE); PRAGMA optimize
// renews them where they are missing or the table has grown or shrunk
// tenfold since, and does nothing otherwise. It runs when the database
// is opened, after migrations, and every minute (the statistics job); with
// the mask below, over every table (the lists are planned on the read
// connections, whose use the writer's connection, which runs it, does
// not see). Its ANALYZE reads every row of a table's indexes: SQLite's
// bound on the rows it reads (analysis_limit, PRAGMA optimize's 0x10)
// reads the first rows of each index, which in a key led by tenant_id
// are the first tenant's, often of one day, and made SQLite think a day
// of any tenant as large as a whole resource of it, and read the
// tenant's every time entry for a day. The histograms a full ANALYZE
// gathers (sqlite_stat4) are dropped: with them SQLite read a whole
// tenant rather than sort a month of it. Full analyses are rare (a
// tenfold growth of a table, an import), and cost about a second of the
// write lock per million records.
// A SQLite connection reads the statistics when it reads the schema, and
// keeps them; so a renewal that changed them ends with a change of the
// schema (a view made and dropped in the same transaction), after which
// every connection, of this process or another, reads the schema and the
// new statistics again before its next statement.
//
// PostgreSQL's autovacuum analyzes a table as its rows change. ANALYZE
// runs in addition after migrations (a new expression index has no
// statistics until the table is analyzed) and after an import of a
// tenant, whose many rows at once the statistics should know before the
// tenant's first request.

// optimizeMask is the mask of PRAGMA optimize: ANALYZE where it helps
// (0x02), considering every table (0x10000), without SQLite's limit on
// the rows it reads (0x10).
const optimizeMask = 0x10002

// statisticsMark is the view a renewal of SQLite's statistics makes and
// drops, to change the schema.
const statisticsMark = "planwerk_statistics_renewed"

// tableName is what a table named to Analyze must look like: it is
// written into the statement.
var tableName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

// RefreshStatistics renews the planner's statistics where they are
// missing or stale: SQLite's PRAGMA optimize. PostgreSQL keeps its own
// (autovacuum): there it does nothing.
func (db *DB) RefreshStatistics(ctx context.Context) error {
	if err := db.dialect.refreshStatistics(ctx, db.write); err != nil {
		return fmt.Errorf("refresh statistics: %w", err)
	}
	return nil
}

// Analyze renews the planner's statistics of the tables, on either
// engine: after a change too large to wait for the next renewal (an
// import of a tenant). Names are the catalog's own, never a client's.
func (db *DB) Analyze(ctx context.Context, tables ...string) error {
	for _, t := range tables {
		if !tableName.MatchString(t) {
			return fmt.Errorf("analyze: %q is not a table name", t)
		}
	}
	if len(tables) == 0 {
		return nil
	}
	if err := db.dialect.analyze(ctx, db.write, tables); err != nil {
		return fmt.Errorf("analyze %s: %w", strings.Join(tables, ", "), err)
	}
	return nil
}

// afterMigrations renews the statistics a migration may have left
// without: of new indexes.
func (db *DB) afterMigrations(ctx context.Context) error {
	if err := db.dialect.afterMigrations(ctx, db.write); err != nil {
		return fmt.Errorf("statistics after migrations: %w", err)
	}
	return nil
}

func (sqliteDialect) refreshStatistics(ctx context.Context, pool *sql.DB) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return renewSQLite(ctx, conn, fmt.Sprintf("PRAGMA optimize=0x%x", optimizeMask))
}

func (sqliteDialect) analyze(ctx context.Context, pool *sql.DB, tables []string) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	var stmts []string
	for _, t := range tables {
		stmts = append(stmts, "ANALYZE "+t)
	}
	return renewSQLite(ctx, conn, stmts...)
}

func (d sqliteDialect) afterMigrations(ctx context.Context, pool *sql.DB) error {
	// PRAGMA optimize analyzes a table with an index that has no
	// statistics yet.
	return d.refreshStatistics(ctx, pool)
}

// renewSQLite runs the statements that renew statistics in one
// transaction on the writer's connection; when they changed the
// statistics, the transaction also changes the schema, so that every
// connection reads them anew. (An empty table has no statistics to keep,
// and PRAGMA optimize analyzes it every time, to no effect.)
func renewSQLite(ctx context.Context, conn *sql.Conn, stmts ...string) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // after Commit it does nothing
	before, err := sqliteStatistics(ctx, tx)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	if stat4, err := hasTable(ctx, tx, "sqlite_stat4"); err != nil {
		return err
	} else if stat4 {
		if _, err := tx.ExecContext(ctx, "DELETE FROM sqlite_stat4"); err != nil {
			return fmt.Errorf("drop the histograms: %w", err)
		}
	}
	after, err := sqliteStatistics(ctx, tx)
	if err != nil {
		return err
	}
	if after != before {
		for _, s := range []string{"CREATE VIEW " + statisticsMark + " AS SELECT 1", "DROP VIEW " + statisticsMark} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
	}
	return tx.Commit()
}

// sqliteStatistics is the content of the statistics tables as text
// ("" when there are none yet).
func sqliteStatistics(ctx context.Context, tx *sql.Tx) (string, error) {
	var b strings.Builder
	for _, q := range []struct{ table, lines string }{
		{"sqlite_stat1", "tbl || ' ' || coalesce(idx, '') || ' ' || coalesce(stat, '')"},
		{"sqlite_stat4", "tbl || ' ' || idx || ' ' || neq || ' ' || nlt || ' ' || ndlt || ' ' || hex(sample)"},
	} {
		if exists, err := hasTable(ctx, tx, q.table); err != nil {
			return "", err
		} else if !exists {
			continue
		}
		var text sql.NullString
		if err := tx.QueryRowContext(ctx, "SELECT group_concat(line, char(10)) FROM (SELECT "+q.lines+" AS line FROM "+q.table+" ORDER BY 1)").Scan(&text); err != nil {
			return "", err
		}
		b.WriteString(q.table + "\n" + text.String + "\n")
	}
	return b.String(), nil
}

// hasTable reports whether SQLite's schema has the table.
func hasTable(ctx context.Context, tx *sql.Tx, name string) (bool, error) {
	var exists int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = $1`, name).Scan(&exists)
	return exists > 0, err
}

func (postgresDialect) refreshStatistics(context.Context, *sql.DB) error { return nil }

// analyze analyzes each table in a statement of its own: Citus refuses
// one ANALYZE of distributed and reference tables together.
func (postgresDialect) analyze(ctx context.Context, pool *sql.DB, tables []string) error {
	for _, t := range tables {
		if _, err := pool.ExecContext(ctx, "ANALYZE "+t); err != nil {
			return err
		}
	}
	return nil
}

// afterMigrations analyzes every table of the schema: a new expression
// index has no statistics until its table is analyzed, and autovacuum
// analyzes a table only once enough of its rows have changed. Each table
// costs a sample of its rows, however large it is.
func (d postgresDialect) afterMigrations(ctx context.Context, pool *sql.DB) error {
	var tables []string
	err := eachRow(ctx, pool, `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`, func(scan func(...any) error) error {
		var t string
		err := scan(&t)
		if err == nil && tableName.MatchString(t) {
			tables = append(tables, t)
		}
		return err
	})
	if err != nil {
		return err
	}
	if len(tables) == 0 {
		return nil
	}
	return d.analyze(ctx, pool, tables)
}
