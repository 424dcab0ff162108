package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/pressly/goose/v3"

	"planwerk/internal/tally"
)

// goMigrations are the steps written in Go rather than SQL, for steps one
// engine cannot write so that they run again harmlessly; they take their
// numbers in the same sequence as the files (migrations/README.md).
func (db *DB) goMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(26, &goose.GoFunc{RunTx: db.addETagColumns}, &goose.GoFunc{RunTx: db.dropETagColumns}),
		goose.NewGoMigration(28, &goose.GoFunc{RunTx: db.unescapeMarkup}, nil),
		goose.NewGoMigration(32, &goose.GoFunc{RunTx: db.fillTimeTotals}, nil),
	}
}

// fillTimeTotals (00032) computes the time totals (00031) of every
// tenant from the time entries stored before, as the writes of entries
// keep them from then on (internal/tally). It runs again harmlessly: each
// tenant's totals are computed afresh.
func (db *DB) fillTimeTotals(ctx context.Context, tx *sql.Tx) error {
	var tenants []int64
	err := eachRow(ctx, tx, `SELECT DISTINCT tenant_id FROM records WHERE resource = 'time-entries'`, func(scan func(...any) error) error {
		var id int64
		err := scan(&id)
		tenants = append(tenants, id)
		return err
	})
	if err != nil {
		return err
	}
	run := func(fn func(q tally.Querier) error) error { return fn(tx) }
	for _, id := range tenants {
		if err := tally.Rebuild(ctx, run, id, db.StoredDoc()); err != nil {
			return fmt.Errorf("tenant %d: %w", id, err)
		}
	}
	return nil
}

// unescapeMarkup (00028) writes "<", ">" and "&" as themselves in the
// documents SQLite keeps as written, where encoding/json had escaped them
// (\u003c, \u003e, \u0026): answers hand documents over as stored, and
// JSON answers write markup as itself. PostgreSQL keeps jsonb, whose text
// has them unescaped already. Only those three escapes change, byte for
// byte (markupUnescaped); the entity tag of a document is that of its
// content, the same before and after, and is cleared as every step that
// changes documents clears it. Rows are read in batches in key order.
func (db *DB) unescapeMarkup(ctx context.Context, tx *sql.Tx) error {
	if db.dialect.name() != "sqlite" {
		return nil
	}
	for _, table := range []string{"records", "users"} {
		var tenant, id int64
		for {
			rows, err := tx.QueryContext(ctx, `SELECT tenant_id, id, doc FROM `+table+`
				WHERE (tenant_id, id) > ($1, $2) ORDER BY tenant_id, id LIMIT 1000`, tenant, id)
			if err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			type change struct {
				tenant, id int64
				doc        []byte
			}
			var changes []change
			n := 0
			for rows.Next() {
				var doc []byte
				if err := rows.Scan(&tenant, &id, &doc); err != nil {
					rows.Close()
					return fmt.Errorf("%s: %w", table, err)
				}
				n++
				if out, changed := markupUnescaped(doc); changed {
					changes = append(changes, change{tenant, id, out})
				}
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
			for _, c := range changes {
				if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET doc = $1, etag = NULL WHERE tenant_id = $2 AND id = $3`,
					string(c.doc), c.tenant, c.id); err != nil {
					return fmt.Errorf("%s: %w", table, err)
				}
			}
			if n < 1000 {
				break
			}
		}
	}
	return nil
}

// markupUnescaped returns the JSON text doc with the escapes \u003c,
// \u003e and \u0026 in its strings written as the characters themselves
// (case of the hex digits aside), every other byte as it is; changed is
// false when there were none. A backslash that is itself escaped starts
// no escape.
func markupUnescaped(doc []byte) (out []byte, changed bool) {
	if !bytes.Contains(doc, []byte(`\u00`)) {
		return doc, false
	}
	out = make([]byte, 0, len(doc))
	inString := false
	for i := 0; i < len(doc); i++ {
		c := doc[i]
		switch {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+5 < len(doc) && doc[i+1] == 'u':
			if r, ok := markupEscapes[strings.ToLower(string(doc[i+2:i+6]))]; ok {
				out = append(out, r)
				i += 5
				changed = true
				continue
			}
			out = append(out, doc[i:i+2]...)
			i++
			continue
		case c == '\\' && inString && i+1 < len(doc):
			out = append(out, doc[i:i+2]...)
			i++
			continue
		}
		out = append(out, c)
	}
	return out, changed
}

var markupEscapes = map[string]byte{"003c": '<', "003e": '>', "0026": '&'}

// addETagColumns (00026) gives records and users the column etag: the
// entity tag of the document as it was written, which reads answer with
// instead of hashing the document again. It may be NULL: rows written
// before and rows changed inside the database (a set attribute, a touch)
// have none, and a read computes theirs. A new column
// of a distributed table needs no distribution.
func (db *DB) addETagColumns(ctx context.Context, tx *sql.Tx) error {
	for _, table := range []string{"records", "users"} {
		if err := db.addColumn(ctx, tx, table, "etag", "TEXT"); err != nil {
			return err
		}
	}
	return nil
}

func (db *DB) dropETagColumns(ctx context.Context, tx *sql.Tx) error {
	for _, table := range []string{"records", "users"} {
		if _, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` DROP COLUMN etag`); err != nil {
			return err
		}
	}
	return nil
}

// addColumn adds a column unless the table has it: SQLite has no ADD
// COLUMN IF NOT EXISTS, so its catalogue is asked first. table, column
// and kind are constants of Planwerk's.
func (db *DB) addColumn(ctx context.Context, tx *sql.Tx, table, column, kind string) error {
	if db.dialect.name() != "sqlite" {
		_, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN IF NOT EXISTS `+column+` `+kind)
		return err
	}
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info($1) WHERE name = $2`, table, column).Scan(&n); err != nil {
		return fmt.Errorf("columns of %s: %w", table, err)
	}
	if n > 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `ALTER TABLE `+table+` ADD COLUMN `+column+` `+kind)
	return err
}
