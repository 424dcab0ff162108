package app

import (
	"context"
	"fmt"
	"io"

	"planwerk/internal/lifecycle"
)

// exportArchive writes the archive of a tenant's data for its admins:
// the operator's archive without password hashes or secrets.
func (s *Service) exportArchive(ctx context.Context, tenantID int64, w io.Writer) error {
	var slug string
	if err := s.DB.Reader().QueryRowContext(ctx, `SELECT slug FROM tenants WHERE id = $1`, tenantID).Scan(&slug); err != nil {
		return fmt.Errorf("export of tenant %d: %w", tenantID, err)
	}
	_, err := lifecycle.Export(ctx, s.DB, s.Files, slug, w, lifecycle.ExportOptions{})
	return err
}
