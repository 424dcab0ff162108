package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// APIClient is a credential for an integration: it acts as its user
// within its scope. The secret is kept only as its hash.
type APIClient struct {
	ID         int64
	ClientID   string
	SecretHash []byte
	Name       string
	UserID     int64
	Scope      string
	CreatedAt  string
}

const apiClientColumns = `id, client_id, secret_hash, name, user_id, scope, created_at`

func scanAPIClient(row interface{ Scan(...any) error }) (APIClient, error) {
	var c APIClient
	err := row.Scan(&c.ID, &c.ClientID, &c.SecretHash, &c.Name, &c.UserID, &c.Scope, &c.CreatedAt)
	return c, err
}

// InsertAPIClient stores a new client; c.ID comes from NewID.
func (db *DB) InsertAPIClient(ctx context.Context, q Querier, tenantID int64, c APIClient) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO api_clients (tenant_id, `+apiClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		tenantID, c.ID, c.ClientID, c.SecretHash, c.Name, c.UserID, c.Scope, c.CreatedAt)
	if err != nil {
		return fmt.Errorf("insert api client: %w", err)
	}
	return nil
}

// CountAPIClients counts the tenant's clients.
func (db *DB) CountAPIClients(ctx context.Context, q Querier, tenantID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_clients WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count api clients: %w", err)
	}
	return n, nil
}

// APIClients lists the tenant's clients by id.
func (db *DB) APIClients(ctx context.Context, tenantID int64) ([]APIClient, error) {
	rows, err := db.read.QueryContext(ctx,
		`SELECT `+apiClientColumns+` FROM api_clients WHERE tenant_id = $1 ORDER BY id`, tenantID)
	if err != nil {
		return nil, fmt.Errorf("api clients: %w", err)
	}
	defer rows.Close()
	var out []APIClient
	for rows.Next() {
		c, err := scanAPIClient(rows)
		if err != nil {
			return nil, fmt.Errorf("api clients: %w", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("api clients: %w", err)
	}
	return out, nil
}

// APIClientByID finds a client of the tenant by its record id.
func (db *DB) APIClientByID(ctx context.Context, tenantID, id int64) (APIClient, error) {
	return db.apiClient(ctx, `id = $2`, tenantID, id)
}

// APIClientByClientID finds a client of the tenant by its public client_id.
func (db *DB) APIClientByClientID(ctx context.Context, tenantID int64, clientID string) (APIClient, error) {
	return db.apiClient(ctx, `client_id = $2`, tenantID, clientID)
}

func (db *DB) apiClient(ctx context.Context, cond string, tenantID int64, key any) (APIClient, error) {
	c, err := scanAPIClient(db.lookup.QueryRowContext(ctx,
		`SELECT `+apiClientColumns+` FROM api_clients WHERE tenant_id = $1 AND `+cond, tenantID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return APIClient{}, fmt.Errorf("api client: %w", ErrNotFound)
	}
	if err != nil {
		return APIClient{}, fmt.Errorf("api client: %w", err)
	}
	return c, nil
}

// DeleteAPIClient removes a client and revokes every token it was given.
func (db *DB) DeleteAPIClient(ctx context.Context, q Querier, tenantID, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM api_clients WHERE tenant_id = $1 AND id = $2`, tenantID, id)
	if err != nil {
		return fmt.Errorf("delete api client: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("delete api client: %w", err)
	} else if n == 0 {
		return fmt.Errorf("api client: %w", ErrNotFound)
	}
	if _, err := q.ExecContext(ctx,
		`UPDATE access_tokens SET revoked = TRUE WHERE tenant_id = $1 AND client = $2`, tenantID, id); err != nil {
		return fmt.Errorf("revoke api client tokens: %w", err)
	}
	return nil
}
