package certs

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"planwerk/internal/store"
)

// Engine is what the cache needs of the database.
type Engine interface {
	ExecOne(ctx context.Context, what, query string, args ...any) (bool, error)
	Lookup() store.Querier
}

// cacheTimeout bounds each of the cache's statements: a handshake that
// needs the cache fails rather than hang on a frozen database (an
// instance serves the certificates it holds in memory meanwhile).
const cacheTimeout = 10 * time.Second

// Cache is autocert's cache in the acme_cache table, which every instance
// on the database shares: the ACME account's key, and each domain's key
// and certificate chain. Its errors name the entry, never its data.
type Cache struct{ db Engine }

// NewCache returns the cache in db.
func NewCache(db Engine) *Cache { return &Cache{db: db} }

var _ autocert.Cache = (*Cache)(nil)

// Get returns the entry of name, or autocert.ErrCacheMiss.
func (c *Cache) Get(ctx context.Context, name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	var data []byte
	err := c.db.Lookup().QueryRowContext(ctx, `SELECT data FROM acme_cache WHERE name = $1`, name).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, autocert.ErrCacheMiss
	case err != nil:
		return nil, fmt.Errorf("acme cache: read %s: %w", name, err)
	}
	return data, nil
}

// Put stores the entry of name, replacing what was there.
func (c *Cache) Put(ctx context.Context, name string, data []byte) error {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	_, err := c.db.ExecOne(ctx, "acme cache: write "+name,
		`INSERT INTO acme_cache (name, data, updated_at) VALUES ($1, $2, $3)
		 ON CONFLICT (name) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
		name, data, store.Timestamp(time.Now()))
	return err
}

// Delete removes the entry of name, if there is one.
func (c *Cache) Delete(ctx context.Context, name string) error {
	ctx, cancel := context.WithTimeout(ctx, cacheTimeout)
	defer cancel()
	_, err := c.db.ExecOne(ctx, "acme cache: delete "+name, `DELETE FROM acme_cache WHERE name = $1`, name)
	return err
}
