package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/etag"
	"planwerk/internal/jsontext"
	"planwerk/internal/query"
)

// Collection names where the records of one resource live: the shared
// records table (Resource set) or a table of their own (users).
type Collection struct {
	Table    string // "records" or "users"; a constant of Planwerk's, never client text
	Resource string // the resource name in the records table; a registry constant
}

// Users is the collection of the users resource: a table of its own,
// because users also carry sign-in credentials.
var Users = Collection{Table: "users", Resource: ""}

// scope writes the condition every query on the collection starts with:
// the tenant first. The resource name comes from the registry, never from
// a client, so it is written into the statement, where partial indexes can
// see it.
func (c Collection) scope(s *query.SQL, tenantID int64) {
	s.Write("tenant_id = ", s.Arg(tenantID))
	if c.Resource != "" {
		s.Write(" AND resource = '", c.Resource, "'")
	}
}

// name is the resource a change of the collection is recorded under.
func (c Collection) name() string {
	if c.Resource != "" {
		return c.Resource
	}
	return c.Table
}

// Doc is a record's JSON document as the API returns it.
type Doc = json.RawMessage

// Record is a stored record.
type Record struct {
	ID  int64
	Doc Doc
	// ETag is the entity tag stored with the record, the tag of the
	// document as it was written: an answer carries it as it is instead
	// of hashing the document again. Empty when the read did not ask for
	// it or the row has none (see Tag).
	ETag string
}

// Tag returns the record's entity tag: the one stored with it, or, for a
// record stored without one (written before tags were stored, or changed
// inside the database by SetAttribute or TouchRecord), the tag of its
// document.
func (r Record) Tag() string {
	if r.ETag != "" {
		return r.ETag
	}
	return etag.Of(r.Doc)
}

// NewID allocates a record id for the tenant.
// Outside a transaction (q is the database itself) the id is drawn as a
// write of its own.
func (db *DB) NewID(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	if d, ok := q.(*DB); ok && d == db {
		var id int64
		err := db.single(ctx, func(q Querier) error {
			var err error
			id, err = db.nextID(ctx, q, tenantID)
			return err
		})
		return id, err
	}
	return db.nextID(ctx, q, tenantID)
}

// Stamp completes a document with the service-owned attributes (id,
// createdAt, updatedAt) and encodes it: every stored document, of the
// records table or of a domain's own (users), is stamped so.
func Stamp(doc map[string]any, id int64, createdAt, updatedAt string) ([]byte, error) {
	doc["id"] = id
	doc["createdAt"] = createdAt
	doc["updatedAt"] = updatedAt
	b, err := jsontext.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("encode record: %w", err)
	}
	return b, nil
}

// InsertRecord stores a new record of a records-table collection with the
// given id (from NewID) and returns it.
func (db *DB) InsertRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64, doc map[string]any) (Record, error) {
	now := Timestamp(time.Now())
	b, err := Stamp(doc, id, now, now)
	if err != nil {
		return Record{}, err
	}
	tag := etag.Of(b)
	_, err = q.ExecContext(ctx,
		`INSERT INTO records (tenant_id, id, resource, doc, etag, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $6)`,
		tenantID, id, c.Resource, string(b), tag, now)
	if err != nil {
		return Record{}, db.insertFailed(c, err)
	}
	return Record{ID: id, Doc: b, ETag: tag}, db.recordChange(ctx, q, tenantID, c.Resource, id, OpCreate, b)
}

// insertFailed is the error of an INSERT of a record of c that failed
// with err: a conflict when it broke a unique constraint.
func (db *DB) insertFailed(c Collection, err error) error {
	if db.dialect.uniqueViolation(err) {
		err = ErrConflict
	}
	return fmt.Errorf("insert %s: %w", c.Resource, err)
}

// insertNew stores a new record of a records-table collection under a
// new id and returns it. Where the engine can, the id is drawn by the
// INSERT itself: one round trip instead of two.
func (db *DB) insertNew(ctx context.Context, q Querier, tenantID int64, c Collection, doc map[string]any) (Record, error) {
	insert := db.dialect.insertWithNewID()
	if insert == "" {
		id, err := db.nextID(ctx, q, tenantID)
		if err != nil {
			return Record{}, err
		}
		return db.InsertRecord(ctx, q, tenantID, c, id, doc)
	}
	now := Timestamp(time.Now())
	// The document goes with a stand-in id, which the statement replaces;
	// then it is encoded again with the real one, as it is stored. The
	// statement also computes the tag of the stored document from the
	// canonical form's text around the stand-in and the drawn id (without
	// the parts, a document holding the stand-in twice, it stores none).
	b, err := Stamp(doc, standInID, now, now)
	if err != nil {
		return Record{}, err
	}
	var before, after *string
	if x, y, ok := etag.Around(b, standInMember); ok {
		sx, sy := string(x), string(y)
		before, after = &sx, &sy
	}
	var id int64
	var tag sql.NullString
	if err := q.QueryRowContext(ctx, insert, tenantID, c.Resource, string(b), now, before, after).Scan(&id, &tag); err != nil {
		return Record{}, db.insertFailed(c, err)
	}
	if b, err = Stamp(doc, id, now, now); err != nil {
		return Record{}, err
	}
	return Record{ID: id, Doc: b, ETag: tag.String}, db.recordChange(ctx, q, tenantID, c.Resource, id, OpCreate, b)
}

// standInID is the id a document carries into an INSERT that draws the
// real one: a whole number of 15 digits, which the canonical form of a
// document keeps as it is (etag.Around).
const (
	standInID     = 918273645546372
	standInMember = `"id":918273645546372`
)

// rowLock is how a read of one record locks its row.
type rowLock int

const (
	noLock     rowLock = iota
	updateLock         // for the transaction's own change of the row
	shareLock          // the row must not change; others may share it
)

// GetRecord reads one record. With lock set and inside a transaction, the
// row stays locked until the transaction ends.
func (db *DB) GetRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64, lock bool) (Record, error) {
	mode := noLock
	if lock {
		mode = updateLock
	}
	return db.getRecord(ctx, q, tenantID, c, id, mode)
}

// getRecord is GetRecord with the row's lock named.
func (db *DB) getRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64, mode rowLock) (Record, error) {
	k := getKey{c, mode}
	text, ok := db.gets.Load(k)
	if !ok {
		var s query.SQL
		s.Write("SELECT ", db.dialect.storedDoc(), ", COALESCE(etag, '') FROM ", c.Table, " WHERE ")
		c.scope(&s, tenantID)
		s.Write(" AND id = ", s.Arg(id))
		switch mode {
		case updateLock:
			s.Write(db.dialect.forUpdate())
		case shareLock:
			s.Write(db.dialect.forShare())
		}
		text = s.String()
		db.gets.Store(k, text)
	}
	if q == nil {
		q = db.read
	}
	var doc, tag string
	err := q.QueryRowContext(ctx, text, tenantID, id).Scan(&doc, &tag)
	if errors.Is(err, sql.ErrNoRows) {
		return Record{}, fmt.Errorf("%s %d: %w", c.Resource, id, ErrNotFound)
	}
	if err != nil {
		return Record{}, fmt.Errorf("get %s %d: %w", c.Resource, id, err)
	}
	if t, ok := q.(*txn); ok && mode == updateLock {
		t.image(tenantID, c.name(), id, []byte(doc))
	}
	return Record{ID: id, Doc: Doc(doc), ETag: tag}, nil
}

// UpdateRecord replaces the document of a records-table record, keeping
// its id and creation time, and returns the record as it is now.
func (db *DB) UpdateRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64, createdAt string, doc map[string]any) (Record, error) {
	if t, ok := q.(*txn); ok && !db.noAudit {
		// The audit entry shows the record as it was: read it, unless the
		// transaction has.
		if _, read := t.images[changeKey{tenantID, c.name(), id}]; !read {
			if _, err := db.GetRecord(ctx, q, tenantID, c, id, true); err != nil {
				return Record{}, err
			}
		}
	}
	now := Timestamp(time.Now())
	b, err := Stamp(doc, id, createdAt, now)
	if err != nil {
		return Record{}, err
	}
	tag := etag.Of(b)
	res, err := q.ExecContext(ctx,
		`UPDATE records SET doc = $1, etag = $2, updated_at = $3 WHERE tenant_id = $4 AND id = $5 AND resource = $6`,
		string(b), tag, now, tenantID, id, c.Resource)
	if db.dialect.uniqueViolation(err) {
		return Record{}, fmt.Errorf("update %s: %w", c.Resource, ErrConflict)
	}
	if err != nil {
		return Record{}, fmt.Errorf("update %s %d: %w", c.Resource, id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return Record{}, fmt.Errorf("%s %d: %w", c.Resource, id, ErrNotFound)
	}
	return Record{ID: id, Doc: b, ETag: tag}, db.recordChange(ctx, q, tenantID, c.Resource, id, OpUpdate, b)
}

// DeleteRecord removes a records-table record.
func (db *DB) DeleteRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64) error {
	var doc string
	err := q.QueryRowContext(ctx,
		`DELETE FROM records WHERE tenant_id = $1 AND id = $2 AND resource = $3 RETURNING `+db.dialect.docColumn(),
		tenantID, id, c.Resource).Scan(&doc)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("%s %d: %w", c.Resource, id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete %s %d: %w", c.Resource, id, err)
	}
	return db.recordChange(ctx, q, tenantID, c.Resource, id, OpDelete, []byte(doc))
}

// RecordExists reports whether the tenant has the record in the collection.
func (db *DB) RecordExists(ctx context.Context, q Querier, tenantID int64, c Collection, id int64) (bool, error) {
	var s query.SQL
	s.Write("SELECT 1 FROM ", c.Table, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND id = ", s.Arg(id))
	if q == nil {
		q = db.read
	}
	var one int
	err := q.QueryRowContext(ctx, s.String(), s.Args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("check %s %d: %w", c.Resource, id, err)
	}
	return true, nil
}

// ListRecords runs a list query and calls fn with each document in order.
// A scan takes a slot of the tenant's share of list scans (the tenant that
// ctx carries, see gate.WithKey) for as long as its rows are open, so fn
// should be quick: copy, do not wait.
// Rows are read one at a time: the document slice is only valid during
// the call. The criteria compile to a single parameterised statement.
// When q.Limit cut the list short, next is the cursor (query.Cursor) of
// the page's last row: the after= of the next page; else it is empty.
func (db *DB) ListRecords(ctx context.Context, tenantID int64, c Collection, q *query.Query, fn func(doc []byte) error) (next string, err error) {
	var s query.SQL
	// One row more than the page tells whether another page follows.
	limit := int64(q.Limit)
	if limit > 0 {
		limit++
	}
	db.dialect.compiler().Select(&s, query.Select{
		Columns: db.dialect.storedDoc(),
		Table:   c.Table,
		Scope:   func(s *query.SQL) { c.scope(s, tenantID) },
		Where:   q.Where,
		Sort:    q.Sort,
		Limit:   limit,
		Skip:    int64(q.Skip),
		After:   q.After,
		Keys:    true,
	})
	release, err := db.reads.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer release()
	var (
		failed error // fn's own error, passed on unwrapped
		n      int
		last   []any
	)
	err = db.dialect.eachDoc(ctx, db.read, s.String(), s.Args, query.Terms(q.Sort), q.Limit, func(doc []byte, keys []any) error {
		if n++; n > q.Limit {
			next, failed = query.Cursor(q.Sort, last)
			return errPageFull
		}
		if keys != nil {
			last = keys
		}
		if err := fn(doc); err != nil {
			failed = err
			return err
		}
		return nil
	})
	switch {
	case errors.Is(err, errPageFull) && failed == nil:
		return next, nil
	case failed != nil:
		return "", failed
	case err != nil:
		return "", fmt.Errorf("list %s: %w", c.Resource, err)
	}
	return "", nil
}

// errPageFull ends the read of a list at the row after its page.
var errPageFull = errors.New("the page is full")

// getKey names one of GetRecord's statements.
type getKey struct {
	c    Collection
	lock rowLock
}
