package auth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/jsontext"
	"planwerk/internal/store"
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
	// CreatedBy is the user who created the client; 0 for the clients
	// created before it was recorded.
	CreatedBy int64
}

// ClientView is an API client as GET /v1/api-clients/{id} shows it: the
// document of its reads, of its ETag and of its audit entries, without
// its secret or the secret's hash.
type ClientView struct {
	ID        int64  `json:"id"`
	ClientID  string `json:"clientId"`
	Name      string `json:"name"`
	User      int64  `json:"user"`
	Scope     string `json:"scope"`
	CreatedAt string `json:"createdAt"`
	// CreatedBy is the admin who created the client; null for clients
	// created before it was recorded.
	CreatedBy *int64 `json:"createdBy"`
}

// View returns the client as GET shows it.
func (c APIClient) View() ClientView {
	out := ClientView{ID: c.ID, ClientID: c.ClientID, Name: c.Name, User: c.UserID, Scope: c.Scope, CreatedAt: c.CreatedAt}
	if c.CreatedBy != 0 {
		by := c.CreatedBy
		out.CreatedBy = &by
	}
	return out
}

// clientsResource names API clients in the audit log.
const clientsResource = "api-clients"

// auditClient notes a create or delete of the client in q's transaction:
// an API client makes no change-feed change. The table's writes note
// themselves, so that the clients deleted with their creator's admin
// rights (RevokeClientsCreatedBy) are noted too; the secret is in no
// document a note holds.
func (t *Tables) auditClient(ctx context.Context, q store.Querier, tenantID int64, op string, c APIClient) error {
	doc, err := jsontext.Marshal(c.View())
	if err != nil {
		return fmt.Errorf("api client %d: %w", c.ID, err)
	}
	n := store.AuditNote{Resource: clientsResource, Record: c.ID, Op: op}
	if op == store.OpDelete {
		n.Before = doc
	} else {
		n.After = doc
	}
	return t.db.Audit(ctx, q, tenantID, n)
}

const apiClientColumns = `id, client_id, secret_hash, name, user_id, scope, created_at, created_by`

func scanAPIClient(row interface{ Scan(...any) error }) (APIClient, error) {
	var c APIClient
	var createdBy sql.NullInt64
	err := row.Scan(&c.ID, &c.ClientID, &c.SecretHash, &c.Name, &c.UserID, &c.Scope, &c.CreatedAt, &createdBy)
	c.CreatedBy = createdBy.Int64
	return c, err
}

// InsertAPIClient stores a new client, with its audit entry; c.ID comes
// from NewID.
func (t *Tables) InsertAPIClient(ctx context.Context, q store.Querier, tenantID int64, c APIClient) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO api_clients (tenant_id, `+apiClientColumns+`) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tenantID, c.ID, c.ClientID, c.SecretHash, c.Name, c.UserID, c.Scope, c.CreatedAt, sql.NullInt64{Int64: c.CreatedBy, Valid: c.CreatedBy != 0})
	if err != nil {
		return fmt.Errorf("insert api client: %w", err)
	}
	return t.auditClient(ctx, q, tenantID, store.OpCreate, c)
}

// CountAPIClients counts the tenant's clients.
func (t *Tables) CountAPIClients(ctx context.Context, q store.Querier, tenantID int64) (int, error) {
	var n int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM api_clients WHERE tenant_id = $1`, tenantID).Scan(&n); err != nil {
		return 0, fmt.Errorf("count api clients: %w", err)
	}
	return n, nil
}

// APIClients lists the tenant's clients by id.
func (t *Tables) APIClients(ctx context.Context, tenantID int64) ([]APIClient, error) {
	rows, err := t.db.Reader().QueryContext(ctx,
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
func (t *Tables) APIClientByID(ctx context.Context, tenantID, id int64) (APIClient, error) {
	return t.apiClient(ctx, `id = $2`, tenantID, id)
}

// APIClientByClientID finds a client of the tenant by its public client_id.
func (t *Tables) APIClientByClientID(ctx context.Context, tenantID int64, clientID string) (APIClient, error) {
	return t.apiClient(ctx, `client_id = $2`, tenantID, clientID)
}

func (t *Tables) apiClient(ctx context.Context, cond string, tenantID int64, key any) (APIClient, error) {
	c, err := scanAPIClient(t.db.Lookup().QueryRowContext(ctx,
		`SELECT `+apiClientColumns+` FROM api_clients WHERE tenant_id = $1 AND `+cond, tenantID, key))
	if errors.Is(err, sql.ErrNoRows) {
		return APIClient{}, fmt.Errorf("api client: %w", store.ErrNotFound)
	}
	if err != nil {
		return APIClient{}, fmt.Errorf("api client: %w", err)
	}
	return c, nil
}

// DeleteAPIClient removes a client, with its audit entry, and revokes
// every token it was given.
func (t *Tables) DeleteAPIClient(ctx context.Context, q store.Querier, tenantID, id int64) error {
	c, err := scanAPIClient(q.QueryRowContext(ctx,
		`DELETE FROM api_clients WHERE tenant_id = $1 AND id = $2 RETURNING `+apiClientColumns, tenantID, id))
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("api client: %w", store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("delete api client: %w", err)
	}
	if err := t.auditClient(ctx, q, tenantID, store.OpDelete, c); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx,
		`UPDATE access_tokens SET revoked = TRUE WHERE tenant_id = $1 AND client = $2`, tenantID, id); err != nil {
		return fmt.Errorf("revoke api client tokens: %w", err)
	}
	return nil
}

// LockAPIClient locks a client's row until the transaction ends, so that
// a token given to the client in it is revoked by a delete that follows:
// a delete that came first leaves nothing to lock (store.ErrNotFound).
func (t *Tables) LockAPIClient(ctx context.Context, q store.Querier, tenantID, id int64) error {
	var found int64
	err := q.QueryRowContext(ctx,
		`SELECT id FROM api_clients WHERE tenant_id = $1 AND id = $2`+t.db.ForUpdate(), tenantID, id).Scan(&found)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("api client: %w", store.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("lock api client: %w", err)
	}
	return nil
}

// RevokeClientsCreatedBy deletes the API clients the user created, each
// as DeleteAPIClient does (every token it was given revoked), unless the
// user is an admin of the tenant: it belongs in the transaction that
// deletes the user or takes their admin away, after that change. The
// tenant's first user is an admin whatever is_admin says, so setting it
// false revokes nothing. Returns how many clients it deleted.
func (t *Tables) RevokeClientsCreatedBy(ctx context.Context, q store.Querier, tenantID, userID int64) (int, error) {
	rows, err := q.QueryContext(ctx,
		`SELECT id FROM api_clients WHERE tenant_id = $1 AND created_by = $2
		    AND NOT EXISTS (SELECT 1 FROM users WHERE tenant_id = $1 AND id = $2 AND (is_admin OR is_owner))
		  ORDER BY id`, tenantID, userID)
	if err != nil {
		return 0, fmt.Errorf("clients created by %d: %w", userID, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("clients created by %d: %w", userID, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("clients created by %d: %w", userID, err)
	}
	n := 0
	for _, id := range ids {
		// One deleted meanwhile by another transaction is gone already.
		if err := t.DeleteAPIClient(ctx, q, tenantID, id); errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
