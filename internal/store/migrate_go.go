package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pressly/goose/v3"
)

// goMigrations are the steps written in Go rather than SQL, for steps one
// engine cannot write so that they run again harmlessly; they take their
// numbers in the same sequence as the files (migrations/README.md).
func (db *DB) goMigrations() []*goose.Migration {
	return []*goose.Migration{
		goose.NewGoMigration(26, &goose.GoFunc{RunTx: db.addETagColumns}, &goose.GoFunc{RunTx: db.dropETagColumns}),
	}
}

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
