package store

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/audit"
)

// The audit log (docs/decisions.md "Audit log"). Every change a
// transaction records for the feed, and every note of a change the feed
// does not show (Audit), becomes an entry when the transaction commits:
// flushChanges links the tenant's entries into its hash chain after it
// has taken the tenant's change_positions row lock, which it holds until
// the commit, so that a tenant's entries get their seq and prevHash in
// the order they commit, on any number of instances, without a second
// lock. An entry's canonical JSON is put together from pieces computed
// with the write (audit.Pieces) and the two values only the lock decides
// (seq, prevHash): on PostgreSQL inside the statement that stores it, so
// that the lock is held for no round trip (pgtx.go); elsewhere here.

// AuditNote is a change the change feed does not show, for the audit
// log: of account settings, an API client, a webhook, the storage cap,
// or a password. Before and After are what GET shows (nil for none);
// Extra names changed attributes shown in neither (a password).
type AuditNote struct {
	Resource string
	Record   int64 // 0: not a record
	Op       string
	Before   []byte
	After    []byte
	Extra    []string
}

// pendingEntry is an audit entry waiting for its transaction's commit:
// everything but seq, prevHash and hash, with its documents canonical.
type pendingEntry struct {
	tenant int64
	e      audit.Entry
	order  int // among the transaction's entries
}

// Audit adds the note to the audit log in q's transaction (or in one of
// its own when q is the database), with the source ctx carries.
func (db *DB) Audit(ctx context.Context, q Querier, tenantID int64, n AuditNote) error {
	if db.noAudit {
		return nil
	}
	t, ok := q.(*txn)
	if !ok {
		return db.Tx(ctx, func(q Querier) error { return db.Audit(ctx, q, tenantID, n) })
	}
	var record *int64
	if n.Record != 0 {
		record = &n.Record
	}
	p, err := newEntry(audit.SourceOf(ctx), tenantID, Timestamp(time.Now()), n.Resource, record, n.Op, n.Before, n.After, n.Extra)
	if err != nil {
		return err
	}
	p.order = t.recorded
	t.recorded++
	t.notes = append(t.notes, p)
	return nil
}

// newEntry makes the pending entry of a change.
func newEntry(src audit.Source, tenantID int64, at, resource string, record *int64, op string, before, after []byte, extra []string) (pendingEntry, error) {
	e := src.Entry()
	e.At, e.Resource, e.Record, e.Op = at, resource, record, op
	var err error
	if e.Before, e.After, e.Changed, err = audit.Diff(before, after, extra...); err != nil {
		return pendingEntry{}, fmt.Errorf("audit %s: %w", resource, err)
	}
	return pendingEntry{tenant: tenantID, e: e}, nil
}

// auditEntries returns the transaction's pending entries by tenant: those
// of its changes, then its notes.
func (db *DB) auditEntries(t *txn) (map[int64][]pendingEntry, error) {
	es, err := db.auditList(t)
	if err != nil || len(es) == 0 {
		return nil, err
	}
	out := map[int64][]pendingEntry{}
	for _, p := range es {
		out[p.tenant] = append(out[p.tenant], p)
	}
	return out, nil
}

// auditList returns the transaction's pending entries in the order they
// were recorded (a change merged with later ones where it was first).
func (db *DB) auditList(t *txn) ([]pendingEntry, error) {
	if db.noAudit || len(t.changes)+len(t.notes) == 0 {
		return nil, nil
	}
	out := make([]pendingEntry, 0, len(t.changes)+len(t.notes))
	for _, c := range t.changes {
		before, after := c.before, c.Doc
		if c.Op == OpDelete {
			if before == nil {
				before = c.Doc
			}
			after = nil
		}
		id := c.RecordID
		p, err := newEntry(c.src, c.tenant, c.At, c.Resource, &id, c.Op, before, after, c.extra)
		if err != nil {
			return nil, err
		}
		p.order = c.order
		out = append(out, p)
	}
	out = append(out, t.notes...)
	if len(t.notes) > 0 {
		slices.SortStableFunc(out, func(a, b pendingEntry) int { return cmp.Compare(a.order, b.order) })
	}
	return out, nil
}

// auditPerStatement bounds the entries one statement stores.
const auditPerStatement = 100

// lockPositions takes the tenant's change_positions row lock for a
// transaction that records no change but audit entries.
const lockPositions = `INSERT INTO change_positions (tenant_id, last) VALUES ($1, 0)
	ON CONFLICT (tenant_id) DO UPDATE SET last = change_positions.last`

// chainHead is the last entry of a tenant's chain.
type chainHead struct {
	seq  int64
	hash string
}

// appendAuditHere links the tenant's entries into its chain in this
// process and stores them: the chain's head and each record's previous
// entry are read in q, which must hold the tenant's position lock (or,
// on SQLite, be the one writer).
func appendAuditHere(ctx context.Context, q Querier, inserts map[int]string, tenantID int64, es []pendingEntry) error {
	rows, _, err := linkChain(ctx, q, tenantID, nil, es, nil)
	if err != nil {
		return err
	}
	return insertRows(ctx, q, inserts, rows)
}

// recordKey names a record among audit entries.
type recordKey struct {
	resource string
	id       int64
}

// auditWidth is the number of values of one entry's row: auditColumns,
// before_seq, prev_hash and hash.
const auditWidth = 17

// linkChain links the tenant's entries after the head known (nil: read
// it) and appends their rows' values to rows; it returns them and the
// new head.
func linkChain(ctx context.Context, q Querier, tenantID int64, known *chainHead, es []pendingEntry, rows []any) ([]any, chainHead, error) {
	head := chainHead{hash: audit.ZeroHash}
	if known != nil {
		head = *known
	} else {
		err := q.QueryRowContext(ctx, selectAuditHead, tenantID).Scan(&head.seq, &head.hash)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return rows, head, fmt.Errorf("audit log head: %w", err)
		}
	}
	// The entries of this call are stored after all are linked: a
	// record's previous entry among them is found here.
	type version struct {
		seq   int64
		after []byte
	}
	var latest map[recordKey]version
	for _, p := range es {
		var before, beforeSeq any
		var err error
		k, isRecord := recordKey{}, p.e.Record != nil
		if isRecord {
			k = recordKey{p.e.Resource, *p.e.Record}
		}
		if v, ok := latest[k]; isRecord && ok {
			before, beforeSeq = storedBefore(p.e.Before, v.seq, v.after)
		} else if before, beforeSeq, err = previousAfter(ctx, q, tenantID, p.e); err != nil {
			return rows, head, err
		}
		next := chainHead{seq: head.seq + 1, hash: audit.Seal(p.e, head.hash, head.seq+1)}
		if isRecord {
			if latest == nil {
				latest = map[recordKey]version{}
			}
			latest[k] = version{next.seq, p.e.After}
		}
		rows = append(rows, tenantID, next.seq)
		rows = append(rows, entryColumns(p.e, before)...)
		rows = append(rows, beforeSeq, head.hash, next.hash)
		head = next
	}
	return rows, head, nil
}

// insertRows stores the rows (auditWidth values each) with the
// statements inserts (insertAudit or insertAuditSQLite), up to 16 rows to
// a statement.
func insertRows(ctx context.Context, q Querier, inserts map[int]string, rows []any) error {
	for len(rows) > 0 {
		n := auditRows(len(rows) / auditWidth)
		if _, err := q.ExecContext(ctx, inserts[n], rows[:n*auditWidth]...); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		rows = rows[n*auditWidth:]
	}
	return nil
}

// auditRows is how many of n entries the next INSERT stores: 16, 4 or 1,
// so that the writer keeps three statements prepared, whatever the sizes
// of its batches.
func auditRows(n int) int {
	switch {
	case n >= 16:
		return 16
	case n >= 4:
		return 4
	}
	return 1
}

// The audit log's reads of a write: the chain's head, and a record's
// previous entry.
const (
	selectAuditHead     = `SELECT seq, hash FROM audit_log WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1`
	selectPreviousEntry = `SELECT seq, after FROM audit_log WHERE tenant_id = $1 AND resource = $2 AND record_id = $3 ORDER BY seq DESC LIMIT 1`
)

// auditWriterStatements are the texts SQLite's writer keeps prepared
// from their first run: they run once a batch, where other statements run
// once a write.
func auditWriterStatements() []string {
	return append(slices.Collect(maps.Values(insertAuditSQLite)), selectAuditHead, selectPreviousEntry)
}

// insertAudit are the INSERTs of 1, 4 and 16 entries, each the values
// of auditColumns, before_seq, prev_hash and hash.
var insertAudit = map[int]string{1: insertAuditRows(1, false), 4: insertAuditRows(4, false), 16: insertAuditRows(16, false)}

// insertAuditSQLite are insertAudit for SQLite, whose parameters are
// anonymous (?): the driver asks SQLite each numbered parameter's name,
// and SQLite finds it by a walk through all the names before it, so that
// binding the 272 values of 16 rows took a third of the statement's time.
var insertAuditSQLite = map[int]string{1: insertAuditRows(1, true), 4: insertAuditRows(4, true), 16: insertAuditRows(16, true)}

func insertAuditRows(n int, anonymous bool) string {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO audit_log (` + auditColumns + `, before_seq, prev_hash, hash) VALUES `)
	for i := range n {
		if i > 0 {
			sb.WriteString(", ")
		}
		if anonymous {
			sb.WriteString("(?" + strings.Repeat(", ?", auditWidth-1) + ")")
		} else {
			sb.WriteString(marks(auditWidth*i+1, auditWidth))
		}
	}
	return sb.String()
}

// previousAfter decides how an entry's before is stored: as nothing, with
// the seq of the record's previous entry, when that entry's after is the
// same text; else as itself.
func previousAfter(ctx context.Context, q Querier, tenantID int64, e audit.Entry) (before any, beforeSeq any, err error) {
	if e.Before == nil || e.Record == nil {
		return nullDoc(e.Before), nil, nil
	}
	var seq int64
	var after sql.NullString
	err = q.QueryRowContext(ctx, selectPreviousEntry, tenantID, e.Resource, *e.Record).Scan(&seq, &after)
	if errors.Is(err, sql.ErrNoRows) {
		return string(e.Before), nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("audit log: previous entry: %w", err)
	}
	before, beforeSeq = storedBefore(e.Before, seq, []byte(after.String))
	return before, beforeSeq, nil
}

// storedBefore is how a before is stored when the record's previous entry
// is seq with after: as a pointer to it where after is the same text,
// else as itself.
func storedBefore(before []byte, seq int64, after []byte) (any, any) {
	if before != nil && after != nil && string(after) == string(before) {
		return nil, seq
	}
	return nullDoc(before), nil
}

// auditColumns are the columns entryColumns fills, after tenant_id and seq.
const auditColumns = `tenant_id, seq, at, actor_user, actor_client, via, request_id, reason, resource, record_id, op, changed, after, before`

// entryColumns are an entry's values of auditColumns after tenant_id and
// seq; before is how its before is stored.
func entryColumns(e audit.Entry, before any) []any {
	return []any{e.At, nullID(e.Actor.User), nullID(e.Actor.APIClient), e.Actor.Via, nullString(e.RequestID), nullString(e.Reason),
		e.Resource, nullID(e.Record), e.Op, string(audit.AppendStrings(nil, e.Changed)), nullDoc(e.After), before}
}

func nullID(id *int64) any {
	if id == nil {
		return nil
	}
	return *id
}

func nullString(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func nullDoc(doc []byte) any {
	if doc == nil {
		return nil
	}
	return string(doc)
}

// marks is "($first, …, $first+n-1)".
func marks(first, n int) string {
	var sb strings.Builder
	sb.WriteByte('(')
	for j := range n {
		if j > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('$')
		sb.WriteString(strconv.Itoa(first + j))
	}
	sb.WriteByte(')')
	return sb.String()
}

// auditStatements are PostgreSQL's statements that link the tenant's
// entries into its chain and store them, each for up to
// auditPerStatement entries. Each reads the chain's head afresh, after
// the lock: a statement begun after the lock was granted sees every
// entry committed before it.
func auditStatements(tenantID int64, es []pendingEntry) []statement {
	if len(es) == 1 {
		return []statement{auditStatement(tenantID, es[0])}
	}
	var out []statement
	for start := 0; start < len(es); start += auditPerStatement {
		chunk := es[start:min(start+auditPerStatement, len(es))]
		var values strings.Builder
		args := []any{tenantID, audit.ZeroHash}
		for i, p := range chunk {
			if i > 0 {
				values.WriteString(", ")
			}
			k := len(args)
			fmt.Fprintf(&values, "(%d, $%d::text, $%d::bigint, $%d::bigint, $%d::text, $%d::text, $%d::text, $%d::text, $%d::bigint, $%d::text, $%d::text, $%d::text, $%d::text, $%d::text, $%d::text)",
				i+1, k+1, k+2, k+3, k+4, k+5, k+6, k+7, k+8, k+9, k+10, k+11, k+12, k+13, k+14)
			args = append(args, entryColumns(p.e, nullDoc(p.e.Before))...)
			pieces := audit.PiecesOf(p.e)
			args = append(args, pieces.Head, pieces.Mid)
		}
		out = append(out, statement{`WITH RECURSIVE v (k, at, actor_user, actor_client, via, request_id, reason, resource, record_id, op, changed, after, before, head, mid) AS (
				VALUES ` + values.String() + `),
			last AS (SELECT seq, hash FROM audit_log WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1),
			chain (k, seq, prev, hash) AS (
				SELECT 0, COALESCE((SELECT seq FROM last), 0::bigint), ''::text, COALESCE((SELECT hash FROM last), $2::text)
				UNION ALL
				SELECT v.k, c.seq + 1, c.hash, encode(sha256(convert_to(c.hash || v.head || c.hash || v.mid || (c.seq + 1)::text || '}', 'UTF8')), 'hex')
				  FROM chain c JOIN v ON v.k = c.k + 1)
			INSERT INTO audit_log (` + auditColumns + `, before_seq, prev_hash, hash)
			SELECT $1, c.seq, v.at, v.actor_user, v.actor_client, v.via, v.request_id, v.reason, v.resource, v.record_id, v.op, v.changed, v.after,
			       CASE WHEN p.after = v.before THEN NULL ELSE v.before END, CASE WHEN p.after = v.before THEN p.seq END, c.prev, c.hash
			  FROM chain c JOIN v ON v.k = c.k
			  LEFT JOIN LATERAL (SELECT x.seq, x.after FROM audit_log x
			                      WHERE x.tenant_id = $1 AND x.resource = v.resource AND x.record_id = v.record_id
			                      ORDER BY x.seq DESC LIMIT 1) p ON v.before IS NOT NULL`, args})
	}
	return out
}

// auditStatement is auditStatements' one statement for a single entry,
// the usual write's: no recursion, and no look for the record's previous
// entry where there is no before (a create).
func auditStatement(tenantID int64, p pendingEntry) statement {
	pieces := audit.PiecesOf(p.e)
	args := append([]any{tenantID, audit.ZeroHash}, entryColumns(p.e, nullDoc(p.e.Before))...)
	args = append(args, pieces.Head, pieces.Mid)
	// Without a record's previous entry to point to, before is stored as
	// it is ($14, NULL on a create).
	before, from := `$14::text, NULL::bigint`, ``
	if p.e.Before != nil && p.e.Record != nil {
		before = `CASE WHEN p.seq IS NULL THEN $14::text END, p.seq`
		from = `
		  LEFT JOIN LATERAL (SELECT x.seq, x.after FROM audit_log x WHERE x.tenant_id = $1 AND x.resource = $9 AND x.record_id = $10
		                      ORDER BY x.seq DESC LIMIT 1) p ON p.after = $14::text`
	}
	return statement{`INSERT INTO audit_log (` + auditColumns + `, before_seq, prev_hash, hash)
		SELECT $1, h.seq + 1, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, ` + before + `, h.hash,
		       encode(sha256(convert_to(h.hash || $15::text || h.hash || $16::text || (h.seq + 1)::text || '}', 'UTF8')), 'hex')
		  FROM (SELECT COALESCE(l.seq, 0::bigint) AS seq, COALESCE(l.hash, $2::text) AS hash
		          FROM (SELECT 1) AS one
		          LEFT JOIN LATERAL (SELECT seq, hash FROM audit_log WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1) l ON true) AS h` + from, args}
}

// AuditFilter selects entries of a tenant's audit log.
type AuditFilter struct {
	After    int64  // entries after this seq
	Limit    int    // at most this many (0: all)
	Resource string // "" for any
	Record   *int64
	User     *int64
	Op       string // "" for any
	From, To string // on at: From inclusive, To exclusive ("" for open)
}

// AuditEntries calls fn with the tenant's entries that match f, oldest
// first, their before as stored or as the after it points to. Rows are
// read one at a time: memory stays flat however many there are.
func (db *DB) AuditEntries(ctx context.Context, tenantID int64, f AuditFilter, fn func(audit.Entry) error) error {
	var cond strings.Builder
	args := []any{tenantID, f.After}
	cond.WriteString(`a.tenant_id = $1 AND a.seq > $2`)
	add := func(sql string, v any) {
		args = append(args, v)
		cond.WriteString(" AND " + sql + " $" + strconv.Itoa(len(args)))
	}
	if f.Resource != "" {
		add("a.resource =", f.Resource)
	}
	if f.Record != nil {
		add("a.record_id =", *f.Record)
	}
	if f.User != nil {
		add("a.actor_user =", *f.User)
	}
	if f.Op != "" {
		add("a.op =", f.Op)
	}
	if f.From != "" {
		add("a.at >=", f.From)
	}
	if f.To != "" {
		add("a.at <", f.To)
	}
	q := `SELECT a.seq, a.at, a.actor_user, a.actor_client, a.via, a.request_id, a.reason, a.resource, a.record_id, a.op,
	             a.changed, a.after, COALESCE(a.before, b.after), a.prev_hash, a.hash
	        FROM audit_log a LEFT JOIN audit_log b ON b.tenant_id = a.tenant_id AND b.seq = a.before_seq
	       WHERE ` + cond.String() + ` ORDER BY a.seq`
	if f.Limit > 0 {
		args = append(args, f.Limit)
		q += ` LIMIT $` + strconv.Itoa(len(args))
	}
	release, err := db.reads.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	rows, err := db.read.QueryContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e audit.Entry
		var user, client, record sql.NullInt64
		var requestID, reason, after, before sql.NullString
		var changed string
		if err := rows.Scan(&e.Seq, &e.At, &user, &client, &e.Actor.Via, &requestID, &reason, &e.Resource, &record, &e.Op,
			&changed, &after, &before, &e.PrevHash, &e.Hash); err != nil {
			return fmt.Errorf("audit log: %w", err)
		}
		e.Actor.User, e.Actor.APIClient, e.Record = optID(user), optID(client), optID(record)
		e.RequestID, e.Reason = optString(requestID), optString(reason)
		if err := json.Unmarshal([]byte(changed), &e.Changed); err != nil {
			return fmt.Errorf("audit log: entry %d: changed: %w", e.Seq, err)
		}
		if after.Valid {
			e.After = json.RawMessage(after.String)
		}
		if before.Valid {
			e.Before = json.RawMessage(before.String)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}

func optID(v sql.NullInt64) *int64 {
	if !v.Valid {
		return nil
	}
	return &v.Int64
}

func optString(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	return &v.String
}

// AuditStart is where the tenant's chain starts: after the last entry a
// purge removed, or at its origin (audit.Origin) when none did.
func (db *DB) AuditStart(ctx context.Context, q Querier, tenantID int64) (audit.Head, error) {
	h := audit.Origin
	err := q.QueryRowContext(ctx, `SELECT seq, hash FROM audit_purges WHERE tenant_id = $1`, tenantID).Scan(&h.Seq, &h.Hash)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return h, fmt.Errorf("audit log start: %w", err)
	}
	return h, nil
}

// AuditHead is the last entry of the tenant's chain: its start while the
// chain has no entry.
func (db *DB) AuditHead(ctx context.Context, tenantID int64) (audit.Head, error) {
	var h audit.Head
	err := db.read.QueryRowContext(ctx, selectAuditHead, tenantID).Scan(&h.Seq, &h.Hash)
	if errors.Is(err, sql.ErrNoRows) {
		return db.AuditStart(ctx, db.read, tenantID)
	}
	if err != nil {
		return h, fmt.Errorf("audit log head: %w", err)
	}
	return h, nil
}

// AuditPages reads the tenant's entries a page at a time, for a walk of
// its chain (audit.Walk).
func (db *DB) AuditPages(tenantID int64) audit.Pages {
	return func(ctx context.Context, after int64, limit int, fn func(audit.Entry) error) error {
		return db.AuditEntries(ctx, tenantID, AuditFilter{After: after, Limit: limit}, fn)
	}
}

// AuditTenants returns the ids of the tenants whose audit log has
// entries, in order. It reads the tenants, then probes each one's log
// over its primary key: no statement reads the whole log (which is the
// largest table by far), and on Citus each probe goes to one shard.
func (db *DB) AuditTenants(ctx context.Context) ([]int64, error) {
	rows, err := db.read.QueryContext(ctx, `SELECT id FROM tenants ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("audit log tenants: %w", err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("audit log tenants: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit log tenants: %w", err)
	}
	out := ids[:0]
	for _, id := range ids {
		var one int
		err := db.read.QueryRowContext(ctx, `SELECT 1 FROM audit_log WHERE tenant_id = $1 ORDER BY seq LIMIT 1`, id).Scan(&one)
		switch {
		case err == nil:
			out = append(out, id)
		case !errors.Is(err, sql.ErrNoRows):
			return nil, fmt.Errorf("audit log tenants: %w", err)
		}
	}
	return out, nil
}

// auditPurgeBatch is the most entries one transaction of PurgeAudit
// deletes: a first purge of years of entries is many short transactions,
// between which the tenant's writes go on.
const auditPurgeBatch = 1000

// PurgeAudit deletes the tenant's oldest entries, up to the newest one
// older than before (at < before), and never the tenant's newest entry:
// the chain goes on from it. (at is stamped at the write and seq at the
// commit, so a few entries just below the last one deleted may be a
// little younger than before; they go too, and the log stays a run of
// seqs without a gap.) It returns how many entries went.
//
// It deletes from the oldest entry up, at most auditPurgeBatch entries
// a transaction, and each transaction first stores in every entry left
// whose before is the after of an entry it deletes that document itself
// (the entries that can point there are the later ones of the same
// records, found over the record index), so that after every
// transaction the chain verifies from the oldest entry kept, as after
// none. Each holds the tenant's position lock, under which entries are
// appended, so no entry can come to point into a batch while it goes. A
// tenant with nothing to purge costs one probe and no transaction. When
// ctx ends between batches it stops with what it has deleted; the rest
// goes at the next call.
func (db *DB) PurgeAudit(ctx context.Context, tenantID int64, before string) (int64, error) {
	var old int
	if err := db.read.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT at FROM audit_log WHERE tenant_id = $1 ORDER BY seq LIMIT 1) o WHERE o.at < $2`,
		tenantID, before).Scan(&old); err != nil || old == 0 {
		if err != nil {
			err = fmt.Errorf("purge audit log: %w", err)
		}
		return 0, err
	}
	var total int64
	for {
		if ctx.Err() != nil {
			return total, errPurgeCut(ctx, "audit log", total)
		}
		n, more, err := db.purgeAuditBatch(ctx, tenantID, before)
		total += n
		if err != nil {
			return total, fmt.Errorf("purge audit log: %w", err)
		}
		if !more {
			return total, nil
		}
	}
}

// purgeAuditBatch deletes, in one transaction, the tenant's entries from
// its oldest up to the newest older than before among the next
// auditPurgeBatch (never its newest entry). more says whether every entry
// it looked at was older and more lie beyond them.
func (db *DB) purgeAuditBatch(ctx context.Context, tenantID int64, before string) (deleted int64, more bool, err error) {
	err = db.Tx(ctx, func(q Querier) error {
		deleted, more = 0, false
		if _, err := q.ExecContext(ctx, lockPositions, tenantID); err != nil {
			return err
		}
		// Two probes of the primary key (SQLite reads min and max of an
		// index at its ends only one to a statement).
		var lo, head sql.NullInt64
		if err := q.QueryRowContext(ctx, `SELECT (SELECT seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq LIMIT 1),
			(SELECT seq FROM audit_log WHERE tenant_id = $1 ORDER BY seq DESC LIMIT 1)`, tenantID).Scan(&lo, &head); err != nil || !lo.Valid {
			return err
		}
		// seq has no gaps: the window is at most auditPurgeBatch entries,
		// and stops short of the newest.
		end := min(lo.Int64+auditPurgeBatch, head.Int64)
		var through, younger sql.NullInt64
		if err := q.QueryRowContext(ctx, `SELECT max(CASE WHEN at < $4 THEN seq END), min(CASE WHEN at >= $4 THEN seq END)
			FROM audit_log WHERE tenant_id = $1 AND seq >= $2 AND seq < $3`, tenantID, lo.Int64, end, before).Scan(&through, &younger); err != nil || !through.Valid {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE audit_log
			   SET before = (SELECT p.after FROM audit_log p WHERE p.tenant_id = $1 AND p.seq = audit_log.before_seq), before_seq = NULL
			 WHERE tenant_id = $1 AND seq > $3 AND before_seq >= $2 AND before_seq <= $3
			   AND (resource, record_id) IN (SELECT resource, record_id FROM audit_log
			                                  WHERE tenant_id = $1 AND seq >= $2 AND seq <= $3 AND record_id IS NOT NULL)`,
			tenantID, lo.Int64, through.Int64); err != nil {
			return err
		}
		// The chain left starts after the last entry removed: its seq and
		// hash are kept, for verification to start from.
		if _, err := q.ExecContext(ctx, `INSERT INTO audit_purges (tenant_id, seq, hash)
			SELECT tenant_id, seq, hash FROM audit_log WHERE tenant_id = $1 AND seq = $2
			ON CONFLICT (tenant_id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash`, tenantID, through.Int64); err != nil {
			return err
		}
		res, err := q.ExecContext(ctx, `DELETE FROM audit_log WHERE tenant_id = $1 AND seq >= $2 AND seq <= $3`, tenantID, lo.Int64, through.Int64)
		if err != nil {
			return err
		}
		if deleted, err = res.RowsAffected(); err != nil {
			return err
		}
		more = !younger.Valid && end < head.Int64
		return nil
	})
	return deleted, more, err
}
