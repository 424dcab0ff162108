package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"planwerk/internal/etag"
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
