package files

import (
	"context"
	"fmt"
	"time"

	"planwerk/internal/filestore"
)

// Sweep removes what crashes and failed cleanups leave in the store:
// temporary files and files no upload names, once older than minAge (a
// younger file may belong to an upload that is about to commit). It
// returns how many files it removed.
func (s *Service) Sweep(ctx context.Context, minAge time.Duration) (int, error) {
	cutoff := time.Now().Add(-minAge)
	removed := 0
	err := s.fs.Walk(ctx, func(key string, modTime time.Time) error {
		if modTime.After(cutoff) {
			return nil
		}
		if !filestore.IsTemporary(key) {
			var tenantID int64
			if _, err := fmt.Sscanf(key, "t%d/", &tenantID); err != nil {
				return nil // not a key of ours: leave it alone
			}
			used, err := s.db.StorageKeyInUse(ctx, tenantID, key)
			if err != nil || used {
				return err
			}
		}
		if err := s.fs.Delete(ctx, key); err != nil {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}
