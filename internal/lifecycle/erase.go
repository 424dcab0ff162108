package lifecycle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/filestore"
	"planwerk/internal/store"
)

// eraseBatch bounds the rows one transaction of eraseImport deletes.
const eraseBatch = 1000

// eraseImport removes a tenant whose import did not complete: its files
// first (each named by an upload row, which goes with it), then its rows
// of every table in the catalog, a batch per transaction, and its tenants
// row last, so that an erasure cut short leaves the tenant importing and
// the next one finishes it. It refuses a tenant that is not importing.
//
// It stands for the erasure of a whole tenant that tenant deletion
// brings; once the engine has one, this is a call of it.
func eraseImport(ctx context.Context, db Database, files filestore.Store, tenantID int64) error {
	var state sql.NullString
	err := db.Reader().QueryRowContext(ctx, `SELECT state FROM tenant_states WHERE tenant_id = $1`, tenantID).Scan(&state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("erase import: %w", err)
	}
	if state.String != store.TenantImporting {
		return fmt.Errorf("erase import: tenant %d is not importing", tenantID)
	}
	if err := eraseFiles(ctx, db, files, tenantID); err != nil {
		return err
	}
	for _, t := range eraseOrder(db.Engine()) {
		if err := eraseRows(ctx, db, tenantID, t.name, t.key); err != nil {
			return err
		}
	}
	err = db.Tx(ctx, func(q store.Querier) error {
		if _, err := q.ExecContext(ctx, `DELETE FROM tenant_states WHERE tenant_id = $1`, tenantID); err != nil {
			return err
		}
		_, err := q.ExecContext(ctx, `DELETE FROM tenants WHERE id = $1`, tenantID)
		return err
	})
	if err != nil {
		return fmt.Errorf("erase import: tenant: %w", err)
	}
	return nil
}

// eraseFiles removes the files of the tenant's uploads, and the uploads,
// a batch at a time: a file is gone before the row that names it.
func eraseFiles(ctx context.Context, db Database, files filestore.Store, tenantID int64) error {
	for {
		rows, err := db.Reader().QueryContext(ctx, `SELECT id, storage_key FROM uploads WHERE tenant_id = $1 ORDER BY id LIMIT $2`, tenantID, eraseBatch)
		if err != nil {
			return fmt.Errorf("erase import: uploads: %w", err)
		}
		var last int64
		var keys []string
		for rows.Next() {
			var key string
			if err := rows.Scan(&last, &key); err != nil {
				rows.Close()
				return fmt.Errorf("erase import: uploads: %w", err)
			}
			keys = append(keys, key)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("erase import: uploads: %w", err)
		}
		if len(keys) == 0 {
			return nil
		}
		for _, key := range keys {
			if err := files.Delete(ctx, key); err != nil {
				return fmt.Errorf("erase import: file %s: %w", key, err)
			}
		}
		err = db.Tx(ctx, func(q store.Querier) error {
			_, err := q.ExecContext(ctx, `DELETE FROM uploads WHERE tenant_id = $1 AND id <= $2`, tenantID, last)
			return err
		})
		if err != nil {
			return fmt.Errorf("erase import: uploads: %w", err)
		}
	}
}

// erasable is a table eraseImport empties of the tenant's rows, by key
// in batches ("" or tenant_id: at once).
type erasable struct{ name, key string }

// eraseOrder is every table of the catalog the engine has, exported or
// skipped, but for tenant_states, which goes with the tenant.
func eraseOrder(engine string) []erasable {
	var out []erasable
	for _, t := range tables {
		out = append(out, erasable{t.name, t.key})
	}
	for _, name := range sortedKeys(skippedTables) {
		s := skippedTables[name]
		if name != "tenant_states" && (s.engine == "" || s.engine == engine) {
			out = append(out, erasable{name, s.key})
		}
	}
	return out
}

// eraseRows deletes the tenant's rows of a table.
func eraseRows(ctx context.Context, db Database, tenantID int64, table, key string) error {
	if key == "" || key == "tenant_id" {
		err := db.Tx(ctx, func(q store.Querier) error {
			_, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1`, tenantID)
			return err
		})
		if err != nil {
			return fmt.Errorf("erase import: %s: %w", table, err)
		}
		return nil
	}
	for {
		var n int64
		err := db.Tx(ctx, func(q store.Querier) error {
			res, err := q.ExecContext(ctx, `DELETE FROM `+table+` WHERE tenant_id = $1 AND `+key+` IN (
				SELECT `+key+` FROM `+table+` WHERE tenant_id = $1 ORDER BY `+key+` LIMIT $2)`, tenantID, eraseBatch)
			if err != nil {
				return err
			}
			n, err = res.RowsAffected()
			return err
		})
		if err != nil {
			return fmt.Errorf("erase import: %s: %w", table, err)
		}
		if n < eraseBatch {
			return nil
		}
	}
}
