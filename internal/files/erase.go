package files

import (
	"context"
	"fmt"
	"time"

	"planwerk/internal/filestore"
)

// keyPrefix starts the storage keys of the tenant's files.
func keyPrefix(tenantID int64) string { return fmt.Sprintf("t%d/", tenantID) }

// eraseBatch is how many uploads Erase handles at a time: their files one
// by one, then their rows in one transaction.
const eraseBatch = 100

// Erased counts what Erase removed: the uploads' files and their bytes,
// and the other files kept under the tenant's keys (temporary files and
// files of uploads that never completed) with unfinished multipart writes.
type Erased struct {
	Files, Bytes int64
	Leftovers    int64
}

// Erase removes the tenant's files from the store, the first step of
// erasing a tenant that is no longer served: the uploads, a batch at a
// time, each file before its row, so that an erasure cut short and run
// again still finds every upload whose file may be left; then whatever
// else the store holds under the tenant's keys. progress, when set, learns
// each batch's files and bytes.
func Erase(ctx context.Context, t *Tables, fs filestore.Store, tenantID int64, progress func(files, bytes int64)) (Erased, error) {
	var e Erased
	for after := int64(0); ; {
		ups, err := t.UploadsAfter(ctx, tenantID, after, eraseBatch)
		if err != nil {
			return e, err
		}
		if len(ups) == 0 {
			break
		}
		ids := make([]int64, len(ups))
		var bytes int64
		for i, up := range ups {
			if err := fs.Delete(ctx, up.StorageKey); err != nil {
				return e, fmt.Errorf("erase the file of upload %d: %w", up.ID, err)
			}
			ids[i], bytes = up.ID, bytes+up.Size
		}
		if err := t.EraseUploads(ctx, tenantID, ids); err != nil {
			return e, err
		}
		e.Files, e.Bytes = e.Files+int64(len(ups)), e.Bytes+bytes
		if progress != nil {
			progress(int64(len(ups)), bytes)
		}
		after = ids[len(ids)-1]
	}
	err := fs.Walk(ctx, keyPrefix(tenantID), func(key string, _ time.Time) error {
		e.Leftovers++
		return fs.Delete(ctx, key)
	})
	if err != nil {
		return e, fmt.Errorf("erase the tenant's other files: %w", err)
	}
	err = fs.WalkIncomplete(ctx, keyPrefix(tenantID), func(u filestore.Incomplete) error {
		e.Leftovers++
		return fs.AbortIncomplete(ctx, u)
	})
	if err != nil {
		return e, fmt.Errorf("erase the tenant's unfinished files: %w", err)
	}
	return e, nil
}
