package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/query"
)

// FindRecords returns the records of a collection that match where, in id
// order, at most limit of them. Inside a transaction pass its Querier.
func (db *DB) FindRecords(ctx context.Context, q Querier, tenantID int64, c Collection, where query.Node, limit int) ([]Record, error) {
	return db.findRecords(ctx, q, tenantID, c, where, limit, false)
}

// findRecords is FindRecords; with lock set, inside a transaction, the
// rows stay locked until it ends, and an update's audit entry shows each
// record as read here (as after GetRecord with lock).
func (db *DB) findRecords(ctx context.Context, q Querier, tenantID int64, c Collection, where query.Node, limit int, lock bool) ([]Record, error) {
	if q == nil {
		q = db.read
	}
	var s query.SQL
	db.dialect.compiler().Select(&s, query.Select{
		Columns: "id, " + db.dialect.storedDoc(),
		Table:   c.Table,
		Scope:   func(s *query.SQL) { c.scope(s, tenantID) },
		Where:   where,
		Limit:   int64(limit),
	})
	if lock {
		s.Write(db.dialect.forUpdate())
	}
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return nil, fmt.Errorf("find %s: %w", c.Resource, err)
	}
	defer rows.Close()
	var out []Record
	for rows.Next() {
		var r Record
		var doc string
		if err := rows.Scan(&r.ID, &doc); err != nil {
			return nil, fmt.Errorf("find %s: %w", c.Resource, err)
		}
		r.Doc = Doc(doc)
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("find %s: %w", c.Resource, err)
	}
	if t, ok := q.(*txn); ok && lock {
		for _, r := range out {
			t.image(tenantID, c.name(), r.ID, r.Doc)
		}
	}
	return out, nil
}

// SetAttribute sets a string attribute in the documents of a collection
// that match where and do not hold that value yet, stamps them updated,
// and returns how many changed. name must be a constant of Planwerk's;
// value is bound.
func (db *DB) SetAttribute(ctx context.Context, q Querier, tenantID int64, c Collection, where query.Node, name string, value string) (int64, error) {
	changed := &query.Cond{Field: query.Field{Name: name}, Op: query.Ne, Values: []query.Value{{Kind: query.KindString, Str: value}}}
	where = &query.And{Terms: []query.Node{where, changed}}
	locked, err := db.lockImages(ctx, q, tenantID, c, where)
	if err != nil {
		return 0, fmt.Errorf("set %s of %s: %w", name, c.Resource, err)
	}
	if locked == 0 {
		// The set happens as of the read, which found nothing to change:
		// a row that came to match since would change without the image
		// its audit entry shows.
		return 0, nil
	}
	var s query.SQL
	now := s.Arg(Timestamp(time.Now()))
	v := s.Arg(value)
	s.Write("UPDATE ", c.Table, " SET doc = ", db.dialect.setAttribute(name, v, now), ", etag = NULL, updated_at = ", now, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND ")
	// These criteria are the service's own and small, and an UPDATE cannot
	// join its target laterally: they read the document where they use it.
	db.dialect.compiler().Where(&s, where)
	s.Write(" RETURNING id, ", db.dialect.docColumn())
	n, err := db.changedRows(ctx, q, tenantID, c, s)
	if err != nil {
		return 0, fmt.Errorf("set %s of %s: %w", name, c.Resource, err)
	}
	return n, nil
}

// lockImages reads and locks the records of a transaction's update
// that match where, before it, so that their audit entries show them as
// they were, and returns how many it locked; -1 where it reads none (no
// transaction, or no audit).
func (db *DB) lockImages(ctx context.Context, q Querier, tenantID int64, c Collection, where query.Node) (int, error) {
	t, ok := q.(*txn)
	if !ok || db.noAudit {
		return -1, nil
	}
	var s query.SQL
	s.Write("SELECT id, ", db.dialect.storedDoc(), " FROM ", c.Table, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND ")
	db.dialect.compiler().Where(&s, where)
	s.Write(db.dialect.forUpdate())
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var doc string
		if err := rows.Scan(&id, &doc); err != nil {
			return 0, err
		}
		t.image(tenantID, c.name(), id, []byte(doc))
		n++
	}
	return n, rows.Err()
}

// changedRows runs an UPDATE … RETURNING id, doc and records a change of
// each row it changed.
func (db *DB) changedRows(ctx context.Context, q Querier, tenantID int64, c Collection, s query.SQL) (int64, error) {
	rows, err := q.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return 0, err
	}
	type changed struct {
		id  int64
		doc string
	}
	var all []changed
	for rows.Next() {
		var ch changed
		if err := rows.Scan(&ch.id, &ch.doc); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, ch)
	}
	if err := rows.Close(); err != nil {
		return 0, err
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	for _, ch := range all {
		if err := db.recordChange(ctx, q, tenantID, c.name(), ch.id, OpUpdate, []byte(ch.doc)); err != nil {
			return 0, err
		}
	}
	return int64(len(all)), nil
}

// Lock serialises the transactions that take the same key of the
// tenant, until they end. SQLite write transactions already exclude each
// other.
func (db *DB) Lock(ctx context.Context, q Querier, tenantID int64, key string) error {
	return db.dialect.lock(ctx, q, tenantID, []string{key})
}

// LockAll is Lock of each key, one after the other in the order given,
// in one statement: a transaction that takes several locks in a fixed
// order takes them so in one round trip.
func (db *DB) LockAll(ctx context.Context, q Querier, tenantID int64, keys []string) error {
	return db.dialect.lock(ctx, q, tenantID, keys)
}

// TouchRecord sets a record's updatedAt to now: a change that belongs to
// the record but lives elsewhere (its file) gives it a new version.
func (db *DB) TouchRecord(ctx context.Context, q Querier, tenantID int64, c Collection, id int64) error {
	// Read first, for the audit entry's before; a record that is gone
	// has nothing to touch.
	if _, err := db.GetRecord(ctx, q, tenantID, c, id, true); errors.Is(err, ErrNotFound) {
		return nil
	} else if err != nil {
		return fmt.Errorf("touch %s %d: %w", c.Resource, id, err)
	}
	var s query.SQL
	now := s.Arg(Timestamp(time.Now()))
	s.Write("UPDATE ", c.Table, " SET doc = ", db.dialect.setAttribute("updatedAt", now, now), ", etag = NULL, updated_at = ", now, " WHERE ")
	c.scope(&s, tenantID)
	s.Write(" AND id = ", s.Arg(id), " RETURNING id, ", db.dialect.docColumn())
	if _, err := db.changedRows(ctx, q, tenantID, c, s); err != nil {
		return fmt.Errorf("touch %s %d: %w", c.Resource, id, err)
	}
	return nil
}
