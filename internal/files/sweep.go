package files

import (
	"context"
	"errors"
	"fmt"
	"time"

	"planwerk/internal/filestore"
)

// Sweep removes what crashes, cut requests and failed cleanups leave in
// the store, when last written before cutoff (a younger one may belong
// to an upload that is about to commit): temporary files, files no upload
// names, and unfinished multipart uploads. Only keys of Planwerk's own
// form are touched. It returns how many it removed.
func (s *Service) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	files, err := s.sweepFiles(ctx, cutoff)
	uploads, err2 := s.sweepIncomplete(ctx, cutoff)
	return files + uploads, errors.Join(err, err2)
}

// sweepFiles removes temporary files and files no upload names.
func (s *Service) sweepFiles(ctx context.Context, cutoff time.Time) (int, error) {
	return filestore.Sweep(ctx, s.fs, "", cutoff, func(key string) (bool, error) {
		if filestore.IsTemporary(key) {
			return false, nil
		}
		tenantID, ok := ownKey(key)
		if !ok {
			return true, nil // not Planwerk's
		}
		return s.db.StorageKeyInUse(ctx, tenantID, key)
	})
}

// sweepIncomplete aborts unfinished multipart uploads. No upload row ever
// names one: rows are written only for complete files.
func (s *Service) sweepIncomplete(ctx context.Context, cutoff time.Time) (int, error) {
	removed := 0
	err := s.fs.WalkIncomplete(ctx, "", func(u filestore.Incomplete) error {
		if !u.Started.Before(cutoff) {
			return nil
		}
		if _, ok := ownKey(u.Key); !ok {
			return nil
		}
		if err := s.fs.AbortIncomplete(ctx, u); err != nil {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}

// ownKey reports whether key has the form of Planwerk's storage keys
// ("tTENANT/..."), and of which tenant. Other keys are left alone: the
// bucket or folder may hold files that are not Planwerk's.
func ownKey(key string) (int64, bool) {
	var tenantID int64
	if _, err := fmt.Sscanf(key, "t%d/", &tenantID); err != nil {
		return 0, false
	}
	return tenantID, true
}
