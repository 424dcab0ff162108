package timetrack

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"planwerk/internal/store"
)

// Settings are a tenant's account settings.
type Settings struct {
	TimerMode   string `json:"timerMode"` // DURATION or START_TIME_END_TIME
	UseWorktime bool   `json:"useWorktime"`
}

// DefaultSettings are the settings of a tenant that never changed them.
var DefaultSettings = Settings{TimerMode: Duration, UseWorktime: false}

// SettingsStore is what the rules need of the tenant settings' table
// (SettingsTable).
type SettingsStore interface {
	TenantSettings(ctx context.Context, q store.Querier, tenantID int64) (Settings, error)
	SetTenantSettings(ctx context.Context, q store.Querier, tenantID int64, s Settings) error
}

// Engine is what the tenant settings' table is built on: the storage
// engine (a *store.DB).
type Engine interface {
	Reader() store.Querier
}

// SettingsTable is the table of the tenants' account settings.
type SettingsTable struct {
	db Engine
}

// NewSettingsTable returns the table on db.
func NewSettingsTable(db Engine) *SettingsTable { return &SettingsTable{db: db} }

// TenantSettings reads a tenant's settings. Inside a transaction pass its
// Querier, so the rules of a write see the settings the write commits
// with; nil reads on the read pool.
func (t *SettingsTable) TenantSettings(ctx context.Context, q store.Querier, tenantID int64) (Settings, error) {
	if q == nil {
		q = t.db.Reader()
	}
	s := DefaultSettings
	err := q.QueryRowContext(ctx,
		`SELECT timer_mode, use_worktime FROM tenant_settings WHERE tenant_id = $1`, tenantID).
		Scan(&s.TimerMode, &s.UseWorktime)
	if errors.Is(err, sql.ErrNoRows) {
		return DefaultSettings, nil
	}
	if err != nil {
		return Settings{}, fmt.Errorf("tenant settings: %w", err)
	}
	return s, nil
}

// SetTenantSettings stores a tenant's settings.
func (t *SettingsTable) SetTenantSettings(ctx context.Context, q store.Querier, tenantID int64, s Settings) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO tenant_settings (tenant_id, timer_mode, use_worktime) VALUES ($1, $2, $3)
		 ON CONFLICT (tenant_id) DO UPDATE SET timer_mode = excluded.timer_mode, use_worktime = excluded.use_worktime`,
		tenantID, s.TimerMode, s.UseWorktime)
	if err != nil {
		return fmt.Errorf("set tenant settings: %w", err)
	}
	return nil
}
