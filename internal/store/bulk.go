package store

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"planwerk/internal/etag"
	"planwerk/internal/query"
)

// recordsPerInsert bounds one statement's rows (6 parameters each: far
// below either engine's limit of bound parameters).
const recordsPerInsert = 25

// InsertRecords stores new records of a records-table collection under
// ids allocated together and returns the ids, in the order of docs. It
// writes what as many InsertRecord calls would (the documents stamped
// alike, a change recorded for each) in a few multi-row statements: for
// bulk loads, such as a benchmark's.
func (db *DB) InsertRecords(ctx context.Context, q Querier, tenantID int64, c Collection, docs []map[string]any) ([]int64, error) {
	if len(docs) == 0 {
		return nil, nil
	}
	ids, err := db.dialect.nextIDs(ctx, q, tenantID, len(docs))
	if err != nil {
		return nil, err
	}
	now := Timestamp(time.Now())
	stamped := make([][]byte, len(docs))
	for i, doc := range docs {
		if stamped[i], err = Stamp(doc, ids[i], now, now); err != nil {
			return nil, err
		}
	}
	for start := 0; start < len(docs); start += recordsPerInsert {
		end := min(start+recordsPerInsert, len(docs))
		if err := insertRecordRows(ctx, q, tenantID, c, ids[start:end], stamped[start:end], now); err != nil {
			if db.dialect.uniqueViolation(err) {
				return nil, fmt.Errorf("insert %s: %w", c.Resource, ErrConflict)
			}
			return nil, fmt.Errorf("insert %s: %w", c.Resource, err)
		}
	}
	for i, b := range stamped {
		if err := db.recordChange(ctx, q, tenantID, c.Resource, ids[i], OpCreate, b); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// insertRecordRows inserts records in one statement.
func insertRecordRows(ctx context.Context, q Querier, tenantID int64, c Collection, ids []int64, docs [][]byte, now string) error {
	var sb strings.Builder
	sb.WriteString(`INSERT INTO records (tenant_id, id, resource, doc, etag, created_at, updated_at) VALUES `)
	args := make([]any, 0, 6*len(ids))
	for i, id := range ids {
		if i > 0 {
			sb.WriteString(", ")
		}
		n := len(args)
		fmt.Fprintf(&sb, "($%d, $%d, $%d, $%d, $%d, $%d, $%d)", n+1, n+2, n+3, n+4, n+5, n+6, n+6)
		args = append(args, tenantID, id, c.Resource, string(docs[i]), etag.Of(docs[i]), now)
	}
	_, err := q.ExecContext(ctx, sb.String(), args...)
	return err
}

// Put is one record of PutRecords: a new record when ID is 0, else the
// new document of record ID, which keeps its id and CreatedAt.
type Put struct {
	ID        int64
	CreatedAt string
	Doc       map[string]any
}

// recordsPerUpdate bounds one UPDATE's rows (3 parameters each).
const recordsPerUpdate = 100

// PutRecords writes what InsertRecord (with an id from NewID) or
// UpdateRecord would write for each put, in a few statements instead of
// one or two each, and returns the records as they are now, in the order
// of puts. Each record gets its change, in that order, an update's audit
// entry showing the record as the transaction first read it. A record
// may be put once.
func (db *DB) PutRecords(ctx context.Context, q Querier, tenantID int64, c Collection, puts []Put) ([]Record, error) {
	if len(puts) == 0 {
		return nil, nil
	}
	if len(puts) == 1 && puts[0].ID == 0 {
		// Where the engine can, the INSERT draws the id itself.
		rec, err := db.insertNew(ctx, q, tenantID, c, puts[0].Doc)
		if err != nil {
			return nil, err
		}
		return []Record{rec}, nil
	}
	var updated []int64
	created := 0
	for _, p := range puts {
		switch {
		case p.ID == 0:
			created++
		case slices.Contains(updated, p.ID):
			return nil, fmt.Errorf("put %s %d twice", c.Resource, p.ID)
		default:
			updated = append(updated, p.ID)
		}
	}
	if err := db.readImages(ctx, q, tenantID, c, updated); err != nil {
		return nil, err
	}
	var ids []int64
	if created > 0 {
		var err error
		if ids, err = db.dialect.nextIDs(ctx, q, tenantID, created); err != nil {
			return nil, err
		}
	}
	now := Timestamp(time.Now())
	out := make([]Record, len(puts))
	var newIDs []int64
	var newDocs [][]byte
	var changed []Record
	for i, p := range puts {
		id, createdAt := p.ID, p.CreatedAt
		if id == 0 {
			id, createdAt, ids = ids[0], now, ids[1:]
		}
		b, err := Stamp(p.Doc, id, createdAt, now)
		if err != nil {
			return nil, err
		}
		out[i] = Record{ID: id, Doc: b, ETag: etag.Of(b)}
		if p.ID == 0 {
			newIDs, newDocs = append(newIDs, id), append(newDocs, b)
		} else {
			changed = append(changed, out[i])
		}
	}
	for start := 0; start < len(newIDs); start += recordsPerInsert {
		end := min(start+recordsPerInsert, len(newIDs))
		if err := insertRecordRows(ctx, q, tenantID, c, newIDs[start:end], newDocs[start:end], now); err != nil {
			return nil, db.insertFailed(c, err)
		}
	}
	for start := 0; start < len(changed); start += recordsPerUpdate {
		if err := db.updateRecordRows(ctx, q, tenantID, c, changed[start:min(start+recordsPerUpdate, len(changed))], now); err != nil {
			return nil, err
		}
	}
	for i, r := range out {
		op := OpUpdate
		if puts[i].ID == 0 {
			op = OpCreate
		}
		if err := db.recordChange(ctx, q, tenantID, c.Resource, r.ID, op, r.Doc); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readImages reads and locks the records of a transaction's update that
// it has not read so, in one statement, so that their audit entries show
// them as they were (UpdateRecord's read, for many records); a record
// the tenant does not have is ErrNotFound.
func (db *DB) readImages(ctx context.Context, q Querier, tenantID int64, c Collection, ids []int64) error {
	t, ok := q.(*txn)
	if !ok || db.noAudit || len(ids) == 0 {
		return nil
	}
	var unread []int64
	for _, id := range ids {
		if _, read := t.images[changeKey{tenantID, c.name(), id}]; !read {
			unread = append(unread, id)
		}
	}
	if len(unread) == 0 {
		return nil
	}
	var s query.SQL
	s.Write("SELECT id, ", db.dialect.storedDoc(), " FROM ", c.Table, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND ")
	idIn(&s, unread)
	s.Write(db.dialect.forUpdate())
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return fmt.Errorf("get %s: %w", c.Resource, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return fmt.Errorf("get %s: %w", c.Resource, err)
		}
		t.image(tenantID, c.name(), id, []byte(doc))
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("get %s: %w", c.Resource, err)
	}
	for _, id := range ids {
		if _, read := t.images[changeKey{tenantID, c.name(), id}]; !read {
			return fmt.Errorf("%s %d: %w", c.Resource, id, ErrNotFound)
		}
	}
	return nil
}

// updateRecordRows replaces the documents of records in one statement;
// recs hold the new documents, stamped, and their tags. (A plain UPDATE
// of the tenant's rows, which Citus routes to the tenant's shard as it
// does UpdateRecord's.)
func (db *DB) updateRecordRows(ctx context.Context, q Querier, tenantID int64, c Collection, recs []Record, now string) error {
	var s query.SQL
	var docs, tags strings.Builder
	ids := make([]int64, len(recs))
	for i, r := range recs {
		id := s.Arg(r.ID)
		fmt.Fprintf(&docs, " WHEN %s THEN %s", id, db.dialect.docParam(s.Arg(string(r.Doc))))
		fmt.Fprintf(&tags, " WHEN %s THEN %s", id, s.Arg(r.ETag))
		ids[i] = r.ID
	}
	s.Write("UPDATE ", c.Table, " SET doc = CASE id", docs.String(), " END, etag = CASE id", tags.String(), " END, updated_at = ", s.Arg(now), " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND ")
	idIn(&s, ids)
	s.Write(" RETURNING id")
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if db.dialect.uniqueViolation(err) {
		return fmt.Errorf("update %s: %w", c.Resource, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", c.Resource, err)
	}
	done := make(map[int64]bool, len(recs))
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return fmt.Errorf("update %s: %w", c.Resource, err)
		}
		done[id] = true
	}
	err = rows.Close()
	if err == nil {
		err = rows.Err()
	}
	if db.dialect.uniqueViolation(err) {
		return fmt.Errorf("update %s: %w", c.Resource, ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("update %s: %w", c.Resource, err)
	}
	for _, r := range recs {
		if !done[r.ID] {
			return fmt.Errorf("%s %d: %w", c.Resource, r.ID, ErrNotFound)
		}
	}
	return nil
}

// ExistingRecords returns which of ids the tenant has in the collection,
// in one statement.
func (db *DB) ExistingRecords(ctx context.Context, q Querier, tenantID int64, c Collection, ids []int64) (map[int64]bool, error) {
	have := make(map[int64]bool, len(ids))
	if len(ids) == 0 {
		return have, nil
	}
	var s query.SQL
	s.Write("SELECT id FROM ", c.Table, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND ")
	idIn(&s, ids)
	if q == nil {
		q = db.read
	}
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return nil, fmt.Errorf("check %s: %w", c.Resource, err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("check %s: %w", c.Resource, err)
		}
		have[id] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check %s: %w", c.Resource, err)
	}
	return have, nil
}

// idIn writes the condition that a row's id is one of ids (at least
// one): for several, the list within the range from the least to the
// greatest of them. The range bounds a read of an index by id whatever
// the engine estimates of the list; without it PostgreSQL may read all
// of a tenant's records of the resource and test each against the list,
// which on a few rows is the cheaper plan.
func idIn(s *query.SQL, ids []int64) {
	if len(ids) == 1 {
		s.Write("id = ", s.Arg(ids[0]))
		return
	}
	s.Write("id >= ", s.Arg(slices.Min(ids)), " AND id <= ", s.Arg(slices.Max(ids)), " AND id IN (")
	for i, id := range ids {
		if i > 0 {
			s.Write(", ")
		}
		s.Write(s.Arg(id))
	}
	s.Write(")")
}
