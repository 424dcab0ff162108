package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/query"
)

// EachByID calls fn with each record of the tenant in the collection
// whose id is in ids, one row at a time, in no particular order; ids not
// found are skipped. doc is valid only during the call. fn may stop the
// scan early by returning ErrStop.
func (db *DB) EachByID(ctx context.Context, tenantID int64, c Collection, ids []int64, fn func(id int64, doc []byte) error) error {
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		var s query.SQL
		s.Write("SELECT id, ", db.dialect.storedDoc(), " FROM ", c.Table, " WHERE ")
		c.scope(&s, tenantID)
		s.Write(" AND id IN (")
		for i, id := range chunk {
			if i > 0 {
				s.Write(", ")
			}
			s.Write(s.Arg(id))
		}
		s.Write(")")
		stop, err := db.eachRow(ctx, s, fn)
		if err != nil {
			return fmt.Errorf("read %s: %w", c.Resource, err)
		}
		if stop {
			return nil
		}
	}
	return nil
}

// ErrStop ends a scan early without an error.
var ErrStop = errors.New("stop")

func (db *DB) eachRow(ctx context.Context, s query.SQL, fn func(id int64, doc []byte) error) (stopped bool, err error) {
	rows, err := db.read.QueryContext(ctx, s.String(), s.Args...)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var (
		id  int64
		doc sql.RawBytes
	)
	for rows.Next() {
		if err := rows.Scan(&id, &doc); err != nil {
			return false, err
		}
		if err := fn(id, doc); errors.Is(err, ErrStop) {
			return true, nil
		} else if err != nil {
			return false, err
		}
	}
	return false, rows.Err()
}
