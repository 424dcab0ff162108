package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"planwerk/internal/audit"
	"planwerk/internal/tracing"
)

// The change feed's outbox. Every write function of the store records
// what it changed on the transaction it runs in; when the transaction's
// work is done, Tx gives the changes their positions and stores them as
// the transaction's last statements, then commits. Positions are handed
// out per tenant under the tenant's change_positions row lock, which the
// transaction holds until it commits: a transaction that gets a later
// position therefore commits later, and a reader that sees position n
// has already been able to see every position below it. Taking that lock
// last, after every other lock of the transaction, keeps it from ever
// being part of a deadlock. See docs/decisions.md "Change feed".

// Change operations.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Change is one entry of the feed: a record of a resource created,
// changed or deleted. Doc is the record after the change; for a delete,
// as it was (the feed shows null, but visibility is decided on it).
type Change struct {
	Seq      int64
	Resource string
	RecordID int64
	Op       string
	At       string
	Doc      []byte
	Size     int64 // of the document as stored, in bytes
	// TraceParent is the W3C trace context of the request or job that made
	// the change, when it was traced: its webhook deliveries carry it on.
	TraceParent string
	// While pending in a transaction: its tenant, and for its audit entry
	// the record before it (on an update), attributes changed that the
	// documents do not show (a password), and who made it.
	tenant int64
	before []byte
	extra  []string
	src    audit.Source
	order  int // when the transaction first recorded it, among its audit notes
}

// anyTraced reports whether a change of cs has a trace context: only
// then do its statements name the column.
func anyTraced(cs []Change) bool {
	return slices.ContainsFunc(cs, func(c Change) bool { return c.TraceParent != "" })
}

// traceParent is the column's value: NULL for a change made untraced.
func (c Change) traceParent() any {
	if c.TraceParent == "" {
		return nil
	}
	return c.TraceParent
}

// txn is a transaction that collects its changes.
type txn struct {
	Querier // the transaction's: a *sql.Tx, or the *sql.Conn it runs on
	changes []Change
	// at finds a record's change in changes, so that a transaction of
	// many writes merges each in constant time.
	at map[changeKey]int
	// notes are the audit entries of changes the feed does not show.
	notes []pendingEntry
	// recorded counts the changes and notes recorded: their entries come
	// in that order.
	recorded int
	// images are the records as the transaction read them with a lock
	// (before it changed them): an update's audit entry shows them as its
	// before.
	images map[changeKey][]byte
}

// image remembers a record as read with a lock, before any change of the
// transaction: only the first read counts.
func (t *txn) image(tenant int64, resource string, id int64, doc []byte) {
	k := changeKey{tenant, resource, id}
	if _, ok := t.images[k]; ok {
		return
	}
	if t.images == nil {
		t.images = map[changeKey][]byte{}
	}
	t.images[k] = slices.Clone(doc)
}

// changeKey names the record a change is of.
type changeKey struct {
	tenant   int64
	resource string
	id       int64
}

// recordChange notes a change made in q. Outside a transaction (q is not
// one of Tx's) the change is stored at once.
// An update's audit entry shows the record as the transaction first read
// it with a lock (GetRecord); extra names changed attributes that no
// document shows.
func (db *DB) recordChange(ctx context.Context, q Querier, tenantID int64, resource string, id int64, op string, doc []byte, extra ...string) error {
	c := Change{Resource: resource, RecordID: id, Op: op, At: Timestamp(time.Now()), Doc: slices.Clone(doc), tenant: tenantID,
		extra: extra, src: audit.SourceOf(ctx)}
	if tracing.Enabled() {
		c.TraceParent = tracing.Parent(ctx)
	}
	if t, ok := q.(*txn); ok {
		if op == OpUpdate {
			c.before = t.images[changeKey{tenantID, resource, id}]
		}
		c.order = t.recorded
		t.recorded++
		t.coalesce(c)
		return nil
	}
	return db.Tx(ctx, func(q Querier) error {
		return db.recordChange(ctx, q, tenantID, resource, id, op, doc, extra...)
	})
}

// coalesce adds c to the transaction's changes, merging it with an earlier
// change of the same record: the feed shows what the transaction did, not
// each statement. A record created and then deleted leaves no change.
func (t *txn) coalesce(c Change) {
	if t.at == nil {
		t.at = map[changeKey]int{}
	}
	k := changeKey{c.tenant, c.Resource, c.RecordID}
	i, ok := t.at[k]
	if !ok {
		t.at[k] = len(t.changes)
		t.changes = append(t.changes, c)
		return
	}
	prev := &t.changes[i]
	switch {
	case prev.Op == OpCreate && c.Op == OpDelete:
		t.changes = slices.Delete(t.changes, i, i+1)
		delete(t.at, k)
		for j := i; j < len(t.changes); j++ {
			d := t.changes[j]
			t.at[changeKey{d.tenant, d.Resource, d.RecordID}] = j
		}
	case prev.Op == OpCreate:
		prev.Doc, prev.At = c.Doc, c.At
	default:
		// The entry's before stays the record before the transaction.
		prev.Op, prev.Doc, prev.At = c.Op, c.Doc, c.At
		prev.extra = append(prev.extra, c.extra...)
	}
}

// flushChanges gives a transaction's changes their positions and stores
// them; the tenants' position locks are taken in tenant order.
// So are its audit entries, each tenant's after its changes: under the
// same lock.
func (db *DB) flushChanges(ctx context.Context, t *txn) ([]int64, error) {
	entries, err := db.auditEntries(t)
	if err != nil {
		return nil, err
	}
	return db.flush(ctx, t, entries)
}

// flush is flushChanges with the transaction's audit entries made.
func (db *DB) flush(ctx context.Context, t *txn, entries map[int64][]pendingEntry) ([]int64, error) {
	if len(t.changes) == 0 && len(entries) == 0 {
		return nil, nil
	}
	tenants, byTenant := t.byTenant()
	if db.observeChanges != nil && len(t.changes) > 0 {
		defer db.observeChanges(len(t.changes))
	}
	for _, tenantID := range unionSorted(tenants, entries) {
		if cs := byTenant[tenantID]; len(cs) > 0 {
			head := cs[:min(changesPerInsert, len(cs))]
			first, err := db.dialect.claimChanges(ctx, t, tenantID, len(cs), head)
			if err != nil {
				return nil, err
			}
			for start := len(head); start < len(cs); start += changesPerInsert {
				if err := insertChanges(ctx, t, tenantID, first+int64(start), cs[start:min(start+changesPerInsert, len(cs))], db.dialect.changeSizeStored()); err != nil {
					return nil, err
				}
			}
		} else if _, err := t.ExecContext(ctx, lockPositions, tenantID); err != nil {
			return nil, fmt.Errorf("audit log: %w", err)
		}
		if es := entries[tenantID]; len(es) > 0 {
			if err := db.dialect.appendAudit(ctx, t, tenantID, es); err != nil {
				return nil, err
			}
		}
	}
	return tenants, nil
}

// unionSorted is the tenants of changes and of audit entries, in order.
func unionSorted(tenants []int64, entries map[int64][]pendingEntry) []int64 {
	out := slices.Clone(tenants)
	for id := range entries {
		if !slices.Contains(tenants, id) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// byTenant groups the transaction's changes by tenant, tenants in order.
func (t *txn) byTenant() ([]int64, map[int64][]Change) {
	byTenant := map[int64][]Change{}
	for _, c := range t.changes {
		byTenant[c.tenant] = append(byTenant[c.tenant], c)
	}
	tenants := make([]int64, 0, len(byTenant))
	for id := range byTenant {
		tenants = append(tenants, id)
	}
	slices.Sort(tenants)
	return tenants, byTenant
}

// claimPositions hands out a tenant's next $2 positions; the statement
// keeps the tenant's row locked until the transaction ends.
const claimPositions = `INSERT INTO change_positions (tenant_id, last) VALUES ($1, $2)
	ON CONFLICT (tenant_id) DO UPDATE SET last = change_positions.last + $2`

// changesPerInsert bounds one statement's rows (9 parameters each: far
// below either engine's limit of bound parameters).
const changesPerInsert = 100

// insertChanges stores changes at consecutive positions from first, in
// one statement; sized: with their documents' sizes.
func insertChanges(ctx context.Context, q Querier, tenantID, first int64, cs []Change, sized bool) error {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO changes (tenant_id, seq, resource, record_id, op, at, doc`)
	width := 7
	if sized {
		sb.WriteString(`, doc_bytes`)
		width++
	}
	// The trace context is a column only when a change has one.
	traced := anyTraced(cs)
	if traced {
		sb.WriteString(`, trace_parent`)
		width++
	}
	sb.WriteString(`) VALUES `)
	args := make([]any, 0, width*len(cs))
	for i, c := range cs {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString("(")
		for j := range width {
			if j > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "$%d", len(args)+j+1)
		}
		sb.WriteString(")")
		args = append(args, tenantID, first+int64(i), c.Resource, c.RecordID, c.Op, c.At, string(c.Doc))
		if sized {
			args = append(args, len(c.Doc))
		}
		if traced {
			args = append(args, c.traceParent())
		}
	}
	if _, err := q.ExecContext(ctx, sb.String(), args...); err != nil {
		return fmt.Errorf("record changes: %w", err)
	}
	return nil
}

// changeSignal wakes waiters after commits that recorded changes: those
// of the tenants whose changes they were, and those that wait for any
// tenant's (the webhook dispatcher). A commit of this process fires it
// directly; on PostgreSQL, so does every instance's commit, through the
// notification that carries its tenant. A tenant's entry lives from the
// first waiter after a firing to the next firing of that tenant.
type changeSignal struct {
	mu       sync.Mutex
	any      chan struct{}
	byTenant map[int64]chan struct{}
}

// wait returns a channel closed at the next firing for the tenant, or
// for any tenant when tenantID is 0.
func (s *changeSignal) wait(tenantID int64) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if tenantID == 0 {
		if s.any == nil {
			s.any = make(chan struct{})
		}
		return s.any
	}
	if s.byTenant == nil {
		s.byTenant = map[int64]chan struct{}{}
	}
	ch, ok := s.byTenant[tenantID]
	if !ok {
		ch = make(chan struct{})
		s.byTenant[tenantID] = ch
	}
	return ch
}

// fire wakes the waiters of the tenants and of any tenant.
func (s *changeSignal) fire(tenants ...int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.any != nil {
		close(s.any)
		s.any = nil
	}
	for _, id := range tenants {
		if ch, ok := s.byTenant[id]; ok {
			close(ch)
			delete(s.byTenant, id)
		}
	}
}

// ObserveChanges makes fn learn how many changes each commit recorded
// (for metrics). Call it before the database is used.
func (db *DB) ObserveChanges(fn func(n int)) { db.observeChanges = fn }

// ChangeSignal returns a channel closed at the next commit that records
// changes of any tenant (of this process, or on PostgreSQL of any).
func (db *DB) ChangeSignal() <-chan struct{} { return db.signal.wait(0) }

// TenantChangeSignal returns a channel closed at the next commit that
// records changes of the tenant: other tenants' commits leave it be.
func (db *DB) TenantChangeSignal(tenantID int64) <-chan struct{} { return db.signal.wait(tenantID) }

// ChangeReadBytes is the byte budget of one read of changes: the read
// ends after the change at which their documents add up to this or more.
const ChangeReadBytes = 4 << 20

// ChangesAfter returns the tenant's changes after position after, in
// order, at most limit, of the given resources (all when empty), and
// ending early after the change at which their documents (Size) add up
// to ChangeReadBytes: a read ended so has at least that many bytes,
// which tells it from the end of the feed.
func (db *DB) ChangesAfter(ctx context.Context, tenantID, after int64, resources []string, limit int) ([]Change, error) {
	q := `tenant_id = $1 AND seq > $2`
	args := []any{tenantID, after}
	if len(resources) > 0 {
		marks := make([]string, len(resources))
		for i, r := range resources {
			args = append(args, r)
			marks[i] = fmt.Sprintf("$%d", len(args))
		}
		q += ` AND resource IN (` + strings.Join(marks, ", ") + `)`
	}
	args = append(args, limit)
	rows, err := db.read.QueryContext(ctx, db.dialect.changesQuery(q, fmt.Sprintf("$%d", len(args))), args...)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	defer rows.Close()
	var out []Change
	var size int64
	for size < ChangeReadBytes && rows.Next() {
		var c Change
		var doc string
		if err := rows.Scan(&c.Seq, &c.Resource, &c.RecordID, &c.Op, &c.At, &doc, &c.Size, &c.TraceParent); err != nil {
			return nil, fmt.Errorf("changes: %w", err)
		}
		c.Doc = []byte(doc)
		size += c.Size
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	return out, nil
}

// ChangeWindow returns the last position handed out to the tenant and
// the position up to which its changes were purged (0, 0 before any).
func (db *DB) ChangeWindow(ctx context.Context, tenantID int64) (last, purged int64, err error) {
	err = db.read.QueryRowContext(ctx,
		`SELECT last, purged_through FROM change_positions WHERE tenant_id = $1`, tenantID).Scan(&last, &purged)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, nil
	}
	if err != nil {
		return 0, 0, fmt.Errorf("change window: %w", err)
	}
	return last, purged, nil
}
