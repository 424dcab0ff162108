package lifecycle

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/exports"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
)

// Erasure counts what EraseTenant removed.
type Erasure struct {
	Rows, Tables int64
	Files        files.Erased
}

// EraseTenant erases every file and row of the tenant with id, which is
// no longer served (deleting, or an import that never completed): its
// uploads' files first, each before its row; then, once every instance
// has stopped serving the tenant (at servedUntil: the state's change and
// a tenant cache's time to live), the files of uploads in flight then,
// the archives of its account exports, the rows of every table and last
// the tenant's row. Cut short, it goes on where it stopped when run
// again. servedUntil is the zero time for a tenant that was never served
// (an import cut short). report, when set, is told what was erased, a
// line at a time.
func EraseTenant(ctx context.Context, db Database, fs filestore.Store, id int64, servedUntil time.Time, report func(line string)) (Erasure, error) {
	if report == nil {
		report = func(string) {}
	}
	var e Erasure
	uploads := files.NewTables(db)
	erased, err := files.Erase(ctx, uploads, fs, id, nil)
	if err != nil {
		return e, err
	}
	if wait := time.Until(servedUntil); wait > 0 {
		report(fmt.Sprintf("waiting %v for every instance to stop serving it", wait.Round(100*time.Millisecond)))
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return e, context.Cause(ctx)
		}
		late, err := files.Erase(ctx, uploads, fs, id, nil)
		if err != nil {
			return e, err
		}
		erased = files.Erased{Files: erased.Files + late.Files, Bytes: erased.Bytes + late.Bytes, Leftovers: erased.Leftovers + late.Leftovers}
	}
	// The archives of its account exports are kept under keys of their
	// own.
	if err := exports.EraseTenant(ctx, db, fs, id); err != nil {
		return e, err
	}
	e.Files = erased
	report(fmt.Sprintf("files: %d (%d bytes), and %d other files under the tenant's keys", e.Files.Files, e.Files.Bytes, e.Files.Leftovers))
	if e.Files.Files > 0 {
		report(fmt.Sprintf("uploads: %d rows", e.Files.Files))
		e.Rows, e.Tables = e.Files.Files, 1
	}
	var table string
	var rows int64
	done := func() {
		if table != "" {
			report(fmt.Sprintf("%s: %d rows", table, rows))
			e.Tables++
		}
	}
	err = db.EraseTenant(ctx, id, func(t string, n int64) {
		if t != table {
			done()
			table, rows = t, 0
		}
		rows += n
		e.Rows += n
	})
	if err != nil {
		return e, err
	}
	done()
	return e, nil
}

// eraseImport removes a tenant whose import did not complete, as
// EraseTenant does; it refuses a tenant that is not importing. Cut
// short, it leaves the tenant importing, and the next import of its slug
// finishes it.
func eraseImport(ctx context.Context, db Database, fs filestore.Store, tenantID int64) error {
	var state sql.NullString
	err := db.Reader().QueryRowContext(ctx, `SELECT state FROM tenant_states WHERE tenant_id = $1`, tenantID).Scan(&state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("erase import: %w", err)
	}
	if state.String != store.TenantImporting {
		return fmt.Errorf("erase import: tenant %d is not importing", tenantID)
	}
	if _, err := EraseTenant(ctx, db, fs, tenantID, time.Time{}, nil); err != nil {
		return fmt.Errorf("erase import: %w", err)
	}
	return nil
}
