package app

import (
	"context"
	"io"
)

// exportArchive writes the archive of a tenant's data for its admins:
// the operator's archive without password hashes or secrets.
func (s *Service) exportArchive(ctx context.Context, tenantID int64, w io.Writer) error {
	return exportForAdmins(ctx, s, tenantID, w)
}
