package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"planwerk/internal/query"
)

// dialect holds everything that differs between the engines. The rest of
// the store asks it, never which engine it runs on.
type dialect interface {
	// name names the engine in logs and messages: "sqlite" or "postgres".
	name() string
	// compiler writes list-language criteria and sort keys in the
	// engine's SQL.
	compiler() query.Dialect
	// nextID returns a fresh record id for the tenant.
	nextID(ctx context.Context, q Querier, tenantID int64) (int64, error)
	// nextIDs returns n fresh record ids for the tenant, in one statement.
	nextIDs(ctx context.Context, q Querier, tenantID int64, n int) ([]int64, error)
	// uniqueViolation reports whether err broke a unique constraint.
	uniqueViolation(err error) bool
	// retryable reports whether a transaction failing with err may be run again.
	retryable(err error) bool
	// lock serialises transactions that use the same keys of the tenant
	// until they end, taking the keys one after the other in the order
	// given (an empty list takes none).
	lock(ctx context.Context, q Querier, tenantID int64, keys []string) error
	// crossTenantRead prepares the transaction q for a read across all
	// tenants that the transaction follows with writes.
	crossTenantRead(ctx context.Context, q Querier) error
	// docColumn is how a SELECT reads the document, as JSON text.
	docColumn() string
	// storedDoc is docColumn for the tables records and users, which keep
	// the text as written: reads then copy it instead of rendering it.
	storedDoc() string
	// forUpdate is the clause that keeps the rows a SELECT reads locked
	// until the transaction ends.
	forUpdate() string
	// forShare is the clause that keeps the rows a SELECT reads from
	// changing until the transaction ends, while other transactions may
	// hold them so too.
	forShare() string
	// docParam is the bound JSON text p as the column doc stores it,
	// where the statement gives the value no type of its own (a branch
	// of CASE).
	docParam(p string) string
	// setAttribute is the document with the string attribute name (a
	// constant of Planwerk's) set to the bound value v, and updatedAt to
	// the bound timestamp now.
	setAttribute(name, v, now string) string
	// claimChanges hands the tenant n consecutive change positions and
	// stores head, the first of the changes, at the first of them; it
	// returns the first position. Where other processes listen, it also
	// announces that the transaction, when it commits, recorded changes.
	claimChanges(ctx context.Context, q Querier, tenantID int64, n int, head []Change) (first int64, err error)
	// appendAudit links the tenant's audit entries into its chain and
	// stores them, in q, which holds the tenant's position lock.
	appendAudit(ctx context.Context, q Querier, tenantID int64, es []pendingEntry) error
	// changesQuery is the SELECT of changes (seq, resource, record_id,
	// op, at, document text, document bytes) that match cond, in position
	// order, at most limit (a parameter). Where the database would send
	// every row of the LIMIT, read or not, it ends the rows after the one
	// at which the documents add up to ChangeReadBytes; the reader stops
	// there in any case.
	changesQuery(cond, limit string) string
	// changeSizeStored says whether changes store their documents' size
	// (doc_bytes), which every insert of changes then writes.
	changeSizeStored() bool
	// eachDoc runs a query of a text column and n more on pool and calls
	// fn with each row's text, valid only during the call; the other
	// columns are read on row keysAt (1 for the first) only, in the types
	// the driver reads them as, and given to fn with it (else nil).
	eachDoc(ctx context.Context, pool *readPool, query string, args []any, n, keysAt int, fn func(doc []byte, keys []any) error) error
	// insertWithNewID, when not empty, is an INSERT of a records-table
	// record that draws the record's id itself and returns it, saving
	// the round trip of nextID: parameters tenant, resource, document
	// (whose id it sets), timestamp, and the canonical form of the
	// document around its id (etag.Around), from which it computes the
	// entity tag (none when they are NULL); it returns id and tag.
	insertWithNewID() string
	// migrations names the folder of the engine's migrations and the
	// goose dialect that runs them.
	migrations() (folder string, d goose.Dialect)
	// tableExists is a query for whether the table exists where goose
	// looks for it.
	tableExists(table string) string
	// migrationLock excludes other migration runs on the same database
	// until the returned function is called; pool is the write pool.
	migrationLock(ctx context.Context, pool *sql.DB) (func(), error)
	// file is the path of a database that is a file of this machine's;
	// ok is false for a database on a server.
	file() (path string, ok bool)
	// beginSnapshot begins a read-only transaction on pool whose reads
	// all see one moment, without a statement timeout (lifecycle.go).
	beginSnapshot(ctx context.Context, pool *sql.DB) (*sql.Tx, error)
	// idsHandedOut is the tenant's id counter where it has one of its
	// own, else 0.
	idsHandedOut(ctx context.Context, q Querier, tenantID int64) (int64, error)
	// idsDrawn is the largest record id drawn for any tenant.
	idsDrawn(ctx context.Context, q Querier) (int64, error)
	// idsToReserve is how far reserveIDs goes for a tenant whose rows
	// hold ids up to held and who had drawn up to drawn.
	idsToReserve(held, drawn int64) int64
	// reserveIDs makes the ids the tenant draws from now on greater than
	// through.
	reserveIDs(ctx context.Context, q Querier, tenantID, through int64) error
	// tenantLock takes the slug's lock without waiting (ErrConflict when
	// another holds it) until the returned function is called.
	tenantLock(ctx context.Context, pool *sql.DB, slug string) (func(), error)
	// placeholder is the marker of a statement's n-th bound value (from 1)
	// in a statement whose values are all bound in order.
	placeholder(n int) string
	// tenantTables reads the catalog's tables with a tenant_id column,
	// with their primary keys and the tables their foreign keys refer to
	// (erase.go).
	tenantTables(ctx context.Context, q Querier) ([]tenantTable, error)
	// insertTenant is the INSERT of a tenant (parameters slug, name and
	// timestamp) returning its id, which no tenant had before.
	insertTenant() string
	// retireTenantID keeps the id of a tenant being erased from being
	// handed out again, in q.
	retireTenantID(ctx context.Context, q Querier, tenantID int64) error
	// refreshStatistics renews the planner's statistics where they are
	// missing or stale, on the write pool (statistics.go); nothing where
	// the server keeps them itself.
	refreshStatistics(ctx context.Context, pool *sql.DB) error
	// analyze renews the statistics of the tables.
	analyze(ctx context.Context, pool *sql.DB, tables []string) error
	// afterMigrations renews the statistics that applied migrations may
	// have left without.
	afterMigrations(ctx context.Context, pool *sql.DB) error
	// reportExprs writes the parts of a time report (report.go).
	reportExprs() reportExprs
}

// sqliteDialect is SQLite's, on the database file at path.
type sqliteDialect struct{ path string }

func (sqliteDialect) name() string { return "sqlite" }

func (sqliteDialect) compiler() query.Dialect { return query.SQLite }

func (sqliteDialect) reportExprs() reportExprs { return sqliteReport{} }

// SQLite has a single writer, so a per-tenant counter row costs nothing extra.
func (sqliteDialect) nextID(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx,
		`INSERT INTO tenant_sequences (tenant_id, last_id) VALUES ($1, 1)
		 ON CONFLICT (tenant_id) DO UPDATE SET last_id = tenant_sequences.last_id + 1
		 RETURNING last_id`,
		tenantID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("next id: %w", err)
	}
	return id, nil
}

// The counter moves by n at once: the ids are the n below its new value.
func (sqliteDialect) nextIDs(ctx context.Context, q Querier, tenantID int64, n int) ([]int64, error) {
	var last int64
	err := q.QueryRowContext(ctx,
		`INSERT INTO tenant_sequences (tenant_id, last_id) VALUES ($1, $2)
		 ON CONFLICT (tenant_id) DO UPDATE SET last_id = tenant_sequences.last_id + $2
		 RETURNING last_id`,
		tenantID, n).Scan(&last)
	if err != nil {
		return nil, fmt.Errorf("next ids: %w", err)
	}
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = last - int64(n-1-i)
	}
	return ids, nil
}

func (sqliteDialect) uniqueViolation(err error) bool {
	return err != nil && strings.Contains(err.Error(), "UNIQUE constraint failed")
}

func (sqliteDialect) retryable(error) bool { return false }

// SQLite write transactions already exclude each other.
func (sqliteDialect) lock(context.Context, Querier, int64, []string) error { return nil }

// One database file holds every tenant.
func (sqliteDialect) crossTenantRead(context.Context, Querier) error { return nil }

func (sqliteDialect) docColumn() string { return "doc" }

// SQLite's reader stops at the budget, and the rows it leaves are never
// read: the size is measured on the text read anyway.
// SQLite's one writer links the entries here; a batch of writes (group
// commit) reads each tenant's chain head once.
func (sqliteDialect) appendAudit(ctx context.Context, q Querier, tenantID int64, es []pendingEntry) error {
	return appendAuditHere(ctx, q, insertAuditSQLite, tenantID, es)
}

func (sqliteDialect) changesQuery(cond, limit string) string {
	return `SELECT seq, resource, record_id, op, at, doc, octet_length(doc), COALESCE(trace_parent, '') FROM changes WHERE ` + cond + ` ORDER BY seq LIMIT ` + limit
}

func (sqliteDialect) changeSizeStored() bool { return false }

// SQLite stores the document as text already.
func (sqliteDialect) storedDoc() string { return "doc" }

// SQLite write transactions already hold the database's write lock.
func (sqliteDialect) forUpdate() string { return "" }

func (sqliteDialect) forShare() string { return "" }

// SQLite has one writing process: its commits wake waiters directly. Its
// statements cost no round trip, so the positions and the changes are two.
func (sqliteDialect) claimChanges(ctx context.Context, q Querier, tenantID int64, n int, head []Change) (int64, error) {
	var last int64
	err := q.QueryRowContext(ctx, claimPositions+` RETURNING last`, tenantID, n).Scan(&last)
	if err != nil {
		return 0, fmt.Errorf("change positions: %w", err)
	}
	first := last - int64(n) + 1
	return first, insertChanges(ctx, q, tenantID, first, head, false)
}

func (sqliteDialect) eachDoc(ctx context.Context, pool *readPool, query string, args []any, n, keysAt int, fn func(doc []byte, keys []any) error) error {
	rows, err := pool.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	var doc sql.RawBytes
	// The other columns are scanned as bytes, which costs no allocation,
	// except on row keysAt.
	skip := make([]sql.RawBytes, n)
	keys := make([]any, n)
	dest := make([]any, 1+n)
	dest[0] = &doc
	for row := 1; rows.Next(); row++ {
		for i := range n {
			if row == keysAt {
				dest[1+i] = &keys[i]
			} else {
				dest[1+i] = &skip[i]
			}
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		var got []any
		if row == keysAt {
			got = keys
		}
		if err := fn(doc, got); err != nil {
			return err
		}
	}
	return rows.Err()
}

// SQLite draws ids before the insert, in process.
func (sqliteDialect) insertWithNewID() string { return "" }

// SQLite stores the document as the text.
func (sqliteDialect) docParam(p string) string { return p }

func (sqliteDialect) setAttribute(name, v, now string) string {
	return "json_set(doc, '$." + name + "', " + v + ", '$.updatedAt', " + now + ")"
}

func (sqliteDialect) migrations() (string, goose.Dialect) {
	return "migrations/sqlite", goose.DialectSQLite3
}

func (sqliteDialect) tableExists(table string) string {
	return `SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = '` + table + `')`
}

// SQLite runs take an exclusive lock on a file beside the database.
func (d sqliteDialect) migrationLock(context.Context, *sql.DB) (func(), error) {
	return fileLock(d.path + ".migrate-lock")
}

func (d sqliteDialect) file() (string, bool) { return d.path, true }

// postgresDialect is PostgreSQL's. channel is the notification channel
// of the schema's commits (changesChannel).
type postgresDialect struct{ channel string }

// citusDialect is PostgreSQL's with its tables spread over the nodes of
// a Citus cluster (migration 00016): the few statements a distributed
// plan cannot run as written take another form.
type citusDialect struct{ postgresDialect }

// detectCitus reports whether the database pool reaches has the citus
// extension, and refuses a Citus node other than the coordinator: it is
// the cluster's one entry point (decisions: "Citus: the coordinator is
// the entry point").
func detectCitus(ctx context.Context, pool *sql.DB) (bool, error) {
	var citus bool
	if err := pool.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')`).Scan(&citus); err != nil {
		return false, fmt.Errorf("look for citus: %w", err)
	}
	if !citus {
		return false, nil
	}
	var coordinator bool
	if err := pool.QueryRowContext(ctx, `SELECT citus_is_coordinator()`).Scan(&coordinator); err != nil {
		return false, fmt.Errorf("look for citus: %w", err)
	}
	if !coordinator {
		return false, errors.New("this database is a Citus worker: connect to the Citus coordinator")
	}
	return true, nil
}

func (postgresDialect) name() string { return "postgres" }

func (postgresDialect) compiler() query.Dialect { return query.Postgres }

func (postgresDialect) reportExprs() reportExprs { return postgresReport{} }

// PostgreSQL uses one sequence: it never blocks concurrent writers and works
// unchanged when tables are distributed by tenant.
func (postgresDialect) nextID(ctx context.Context, q Querier, _ int64) (int64, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT nextval('record_ids')`).Scan(&id); err != nil {
		return 0, fmt.Errorf("next id: %w", err)
	}
	return id, nil
}

func (postgresDialect) nextIDs(ctx context.Context, q Querier, _ int64, n int) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT nextval('record_ids') FROM generate_series(1, $1)`, n)
	if err != nil {
		return nil, fmt.Errorf("next ids: %w", err)
	}
	defer rows.Close()
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("next ids: %w", err)
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("next ids: %w", err)
	}
	return ids, nil
}

func (postgresDialect) uniqueViolation(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == "23505"
}

func (postgresDialect) retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40001" || pgErr.Code == "40P01")
}

// A lock is the tenant's row of the key in locks (migration 00016),
// written so that it stays locked until the transaction ends: a row lock
// holds across a Citus cluster, where an advisory lock would hold only on
// the node that took it. The first use of a key makes its row.
//
// Several keys are one statement, one round trip: its rows of VALUES are
// inserted one after the other, each waiting for its row's lock before
// the next is tried, as if each key were a statement of its own; so the
// order of the keys is the order their locks are taken in. A key's hash
// repeated (the same key, or two whose hashes collide) is taken once, at
// its first place: a statement may not lock its own row twice.
func (postgresDialect) lock(ctx context.Context, q Querier, tenantID int64, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString(`INSERT INTO locks (tenant_id, key) VALUES `)
	args := make([]any, 1, len(keys)+1)
	args[0] = tenantID
	seen := make(map[int64]bool, len(keys))
	for _, key := range keys {
		k := lockKey(key)
		if seen[k] {
			continue
		}
		seen[k] = true
		if len(args) > 1 {
			sb.WriteString(", ")
		}
		args = append(args, k)
		fmt.Fprintf(&sb, "($1, $%d)", len(args))
	}
	sb.WriteString(` ON CONFLICT (tenant_id, key) DO UPDATE SET key = EXCLUDED.key`)
	if _, err := q.ExecContext(ctx, sb.String(), args...); err != nil {
		if len(keys) == 1 {
			return fmt.Errorf("lock %q: %w", keys[0], err)
		}
		return fmt.Errorf("lock %q and %d more: %w", keys[0], len(keys)-1, err)
	}
	return nil
}

// lockKey is the 64-bit FNV-1a hash of a lock's name.
func lockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return int64(h.Sum64())
}

// One server holds every tenant.
func (postgresDialect) crossTenantRead(context.Context, Querier) error { return nil }

// Citus reads a distributed table in parallel, over several connections
// to each node, and then refuses writes to a reference table in the same
// transaction (it could not see them from every connection). Sequential
// mode reads over one connection a node.
func (citusDialect) crossTenantRead(ctx context.Context, q Querier) error {
	if _, err := q.ExecContext(ctx, `SET LOCAL citus.multi_shard_modify_mode TO 'sequential'`); err != nil {
		return fmt.Errorf("cross-tenant read: %w", err)
	}
	return nil
}

// PostgreSQL links the entries inside the statements that store them.
func (postgresDialect) appendAudit(ctx context.Context, q Querier, tenantID int64, es []pendingEntry) error {
	for _, st := range auditStatements(tenantID, es) {
		if _, err := q.ExecContext(ctx, st.query, st.args...); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
	}
	return nil
}

// Citus would run the recursive statement through the coordinator, so
// this process links the entries: the position lock is taken already.
func (citusDialect) appendAudit(ctx context.Context, q Querier, tenantID int64, es []pendingEntry) error {
	return appendAuditHere(ctx, q, insertAudit, tenantID, es)
}

// PostgreSQL renders jsonb as text.
func (postgresDialect) docColumn() string { return "doc::text" }

// PostgreSQL would send every row of the LIMIT, read or not, so the rows
// end at the position where a running sum of the stored sizes reaches the
// budget; a document past it is never rendered. The sum runs over the
// positions and sizes alone, which costs a third of summing over whole
// rows.
func (postgresDialect) changesQuery(cond, limit string) string {
	return `SELECT seq, resource, record_id, op, at, doc::text, doc_bytes, COALESCE(trace_parent, '') FROM changes WHERE ` + cond + `
		AND seq <= COALESCE((SELECT min(seq) FROM (
			SELECT seq, SUM(doc_bytes) OVER (ORDER BY seq ROWS UNBOUNDED PRECEDING) AS run FROM (
				SELECT seq, doc_bytes FROM changes WHERE ` + cond + ` ORDER BY seq LIMIT ` + limit + `) l) w
			WHERE run >= ` + strconv.Itoa(ChangeReadBytes) + `), 9223372036854775807)
		ORDER BY seq LIMIT ` + limit
}

func (postgresDialect) changeSizeStored() bool { return true }

// doc_text is generated from doc by the database on every write
// (migration 00014): the same text as doc::text, rendered once.
func (postgresDialect) storedDoc() string { return "doc_text" }

func (postgresDialect) forUpdate() string { return " FOR UPDATE" }

func (postgresDialect) forShare() string { return " FOR SHARE" }

// PostgreSQL does it in one statement, one round trip: positions, rows
// and notification (sent at commit, once however many statements ask).
func (d postgresDialect) claimChanges(ctx context.Context, q Querier, tenantID int64, n int, head []Change) (int64, error) {
	st := d.claimStatements(tenantID, n, head)[0]
	var first int64
	var notified string
	if err := q.QueryRowContext(ctx, st.query, st.args...).Scan(&first, &notified); err != nil {
		return 0, fmt.Errorf("record changes: %w", err)
	}
	return first, nil
}

// On Citus, in the three statements of claimStatements.
func (d citusDialect) claimChanges(ctx context.Context, q Querier, tenantID int64, n int, head []Change) (int64, error) {
	stmts := d.claimStatements(tenantID, n, head)
	var last int64
	if err := q.QueryRowContext(ctx, stmts[0].query+` RETURNING last`, stmts[0].args...).Scan(&last); err != nil {
		return 0, fmt.Errorf("record changes: %w", err)
	}
	for _, st := range stmts[1:] {
		if _, err := q.ExecContext(ctx, st.query, st.args...); err != nil {
			return 0, fmt.Errorf("record changes: %w", err)
		}
	}
	return last - int64(n) + 1, nil
}

// statement is an SQL statement with its arguments.
type statement struct {
	query string
	args  []any
}

// pipelining is a dialect whose change recording can be queued with the
// COMMIT (pgtx.go): claimStatements are claimChanges as statements that
// need no answer before the next one is sent.
type pipelining interface {
	claimStatements(tenantID int64, n int, head []Change) []statement
	// auditStatements store the tenant's audit entries after the claim,
	// linking them; none where this process links them (appendAudit).
	auditStatements(tenantID int64, es []pendingEntry) []statement
}

func (postgresDialect) auditStatements(tenantID int64, es []pendingEntry) []statement {
	return auditStatements(tenantID, es)
}

func (citusDialect) auditStatements(int64, []pendingEntry) []statement { return nil }

// On plain PostgreSQL it is one statement, which returns the first
// position.
func (d postgresDialect) claimStatements(tenantID int64, n int, head []Change) []statement {
	values, args, cols, vals := changeValues(tenantID, n, head)
	return []statement{{`WITH pos AS (` + claimPositions + ` RETURNING last), ins AS (
		INSERT INTO changes (tenant_id, seq, resource, record_id, op, at, doc, doc_bytes` + cols + `)
		SELECT $1, pos.last - $2 + v.n, v.resource, v.record_id, v.op, v.at, v.doc, v.doc_bytes` + vals + ` FROM pos, ` + values + ` RETURNING seq)
		SELECT min(seq), pg_notify($` + strconv.Itoa(len(args)+1) + `, $1::bigint::text) FROM ins`, append(args, d.channel)}}
}

// Citus would plan the one statement in three steps through the
// coordinator (its data-modifying CTEs become subplans), so there it is
// three statements, each of which Citus routes whole: the positions (to
// the tenant's shard), the rows, numbered from the positions in the same
// shard, and the notification, on the coordinator where every instance
// listens.
func (d citusDialect) claimStatements(tenantID int64, n int, head []Change) []statement {
	values, args, cols, vals := changeValues(tenantID, n, head)
	return []statement{
		{claimPositions, args[:2]},
		{`INSERT INTO changes (tenant_id, seq, resource, record_id, op, at, doc, doc_bytes` + cols + `)
			SELECT p.tenant_id, p.last - $2 + v.n, v.resource, v.record_id, v.op, v.at, v.doc, v.doc_bytes` + vals + `
			  FROM change_positions p, ` + values + `
			 WHERE p.tenant_id = $1`, args},
		{`SELECT pg_notify($1, $2)`, []any{d.channel, strconv.FormatInt(tenantID, 10)}},
	}
}

// changeValues is the VALUES list of the changes in head, numbered from
// 1, as v (n, resource, record_id, op, at, doc, doc_bytes[, trace_parent]),
// and its arguments after the tenant ($1) and the number of positions
// ($2). The trace context is a column only when a change has one (cols
// and vals name it for the INSERT and its SELECT): untraced, the
// statements stay as they were before it.
func changeValues(tenantID int64, n int, head []Change) (values string, args []any, cols, vals string) {
	traced := anyTraced(head)
	var sb strings.Builder
	sb.WriteString("(VALUES ")
	args = make([]any, 0, 2+7*len(head))
	args = append(args, tenantID, n)
	for i, c := range head {
		if i > 0 {
			sb.WriteString(", ")
		}
		k := len(args)
		fmt.Fprintf(&sb, "(%d, $%d::text, $%d::bigint, $%d::text, $%d::text, $%d::jsonb, $%d::bigint", i+1, k+1, k+2, k+3, k+4, k+5, k+6)
		args = append(args, c.Resource, c.RecordID, c.Op, c.At, string(c.Doc), len(c.Doc))
		if traced {
			fmt.Fprintf(&sb, ", $%d::text", k+7)
			args = append(args, c.traceParent())
		}
		sb.WriteString(")")
	}
	sb.WriteString(") AS v (n, resource, record_id, op, at, doc, doc_bytes")
	if traced {
		sb.WriteString(", trace_parent")
		cols, vals = ", trace_parent", ", v.trace_parent"
	}
	sb.WriteString(")")
	return sb.String(), args, cols, vals
}

// PostgreSQL hands each row's bytes over as pgx read them: through
// database/sql every row would become a string first.
func (postgresDialect) eachDoc(ctx context.Context, pool *readPool, query string, args []any, n, keysAt int, fn func(doc []byte, keys []any) error) error {
	conn, err := pool.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		c, ok := dc.(*stdlib.Conn)
		if !ok {
			return fmt.Errorf("a PostgreSQL connection of %T", dc)
		}
		rows, err := c.Conn().Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for row := 1; rows.Next(); row++ {
			var got []any
			if row == keysAt && n > 0 {
				vs, err := rows.Values()
				if err != nil {
					return err
				}
				got = vs[1:]
			}
			if err := fn(rows.RawValues()[0], got); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

// The record's id comes from the sequence inside the INSERT.
func (postgresDialect) insertWithNewID() string {
	return `INSERT INTO records (tenant_id, id, resource, doc, etag, created_at, updated_at)
		SELECT $1, n.id, $2, jsonb_set($3::jsonb, '{id}', to_jsonb(n.id)),
		       '"' || translate(encode(substring(sha256(convert_to($5 || n.id::text || $6, 'UTF8')) FROM 1 FOR 18), 'base64'), '+/', '-_') || '"',
		       $4, $4
		  FROM (SELECT nextval('record_ids') AS id) AS n
		RETURNING id, etag`
}

// Not on Citus: there an INSERT ... SELECT is run through the
// coordinator, on a connection of its own to the shard's node, and a
// transaction that writes over two connections commits in two phases.
func (citusDialect) insertWithNewID() string { return "" }

func (postgresDialect) docParam(p string) string { return "CAST(" + p + " AS jsonb)" }

func (postgresDialect) setAttribute(name, v, now string) string {
	return "jsonb_set(jsonb_set(doc, '{" + name + "}', to_jsonb(" + v + "::text)), '{updatedAt}', to_jsonb(" + now + "::text))"
}

func (postgresDialect) migrations() (string, goose.Dialect) {
	return "migrations/postgres", goose.DialectPostgres
}

// goose looks in the current schema.
func (postgresDialect) tableExists(table string) string {
	return `SELECT EXISTS (SELECT 1 FROM pg_tables WHERE schemaname = current_schema() AND tablename = '` + table + `')`
}

// PostgreSQL runs take an advisory lock scoped to the current schema.
func (postgresDialect) migrationLock(ctx context.Context, pool *sql.DB) (func(), error) {
	return postgresMigrationLock(ctx, pool)
}

func (postgresDialect) file() (string, bool) { return "", false }
