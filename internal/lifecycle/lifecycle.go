// Package lifecycle moves a tenant between databases and file stores:
// Export writes everything a tenant has into one archive, read from one
// snapshot while the service runs, and Import creates the tenant from an
// archive in any database (SQLite, PostgreSQL, Citus) and file store,
// whichever engine the archive came from, all or nothing. The archive's
// format is docs/tenant-archive.md: a tar stream compressed with zstd,
// whose first member, manifest.json, names every other member with its
// size and SHA-256, then a JSON Lines member per table, then the files.
//
// The package builds its SQL from a catalog of the tables that hold a
// tenant's rows (catalog.go), on the engine's surface (store.DB): it is
// the one place that reads and writes all of a tenant's tables at once.
package lifecycle

import (
	"context"
	"errors"

	"planwerk/internal/audit"
	"planwerk/internal/exports"
	"planwerk/internal/files"
	"planwerk/internal/store"
)

// The archive's format.
const (
	// FormatName is the manifest's "format".
	FormatName = "planwerk-tenant-archive"
	// FormatVersion is the manifest's "version" this program writes, and
	// the newest it reads.
	FormatVersion = 2
	manifestName  = "manifest.json"
	filesPrefix   = "files/"
	tableSuffix   = ".jsonl"
)

// Why an archive is refused. Import wraps them with the details.
var (
	// ErrNotArchive: the input is no tenant archive (not zstd, not tar,
	// or no manifest first).
	ErrNotArchive = errors.New("not a tenant archive")
	// ErrNewerVersion: the archive's format is newer than this program's.
	ErrNewerVersion = errors.New("archive format newer than this program reads")
	// ErrDamaged: the archive is truncated, or a member differs from what
	// the manifest says of it.
	ErrDamaged = errors.New("the archive is damaged")
	// ErrRefused: the archive is sound, but holds what the service could
	// not have written (a record that is no JSON object, an id beyond
	// 2^53, an audit chain that does not verify, more webhooks than a
	// tenant may have), which would break the imported tenant or another.
	ErrRefused = errors.New("the archive holds what Planwerk could not have written")
	// ErrNoSecrets: the archive was made without password hashes and
	// secrets (a tenant's own export), with which no tenant can be made.
	ErrNoSecrets = errors.New("the archive holds no password hashes and secrets")
)

// Database is what moving and erasing a tenant needs of the engine (a
// *store.DB): the uploads' and the account exports' tables live on it.
type Database interface {
	files.Engine
	exports.Engine
	Snapshot(ctx context.Context, fn func(q store.Querier) error) error
	StoredDoc() string
	Engine() string
	EraseTenant(ctx context.Context, tenantID int64, progress func(table string, rows int64)) error
	IDsHandedOut(ctx context.Context, q store.Querier, tenantID int64) (int64, error)
	IDsDrawn(ctx context.Context, q store.Querier) (int64, error)
	ReserveIDs(ctx context.Context, q store.Querier, tenantID, held, drawn int64) error
	AuditStart(ctx context.Context, q store.Querier, tenantID int64) (audit.Head, error)
	AuditPages(tenantID int64) audit.Pages
	LockTenant(ctx context.Context, slug string) (func(), error)
	TenantBySlug(ctx context.Context, slug string) (store.Tenant, error)
	SetTenantState(ctx context.Context, slug, state string, from ...string) (store.Tenant, error)
	PutTenantState(ctx context.Context, q store.Querier, tenantID int64, state string) error
	Placeholder(n int) string
	Analyze(ctx context.Context, tables ...string) error
}

// Summary is what an archive holds: rows per table, files and their
// bytes, and the archive's own size.
type Summary struct {
	Slug      string
	TenantID  int64 // of the imported tenant
	Rows      map[string]int64
	Files     int64
	FileBytes int64
	Bytes     int64 // of the archive, compressed
}
