package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// Settings are a tenant's account settings.
type Settings struct {
	TimerMode   string `json:"timerMode"` // DURATION or START_TIME_END_TIME
	UseWorktime bool   `json:"useWorktime"`
}

// DefaultSettings are the settings of a tenant that never changed them.
var DefaultSettings = Settings{TimerMode: "DURATION", UseWorktime: false}

// TenantSettings reads a tenant's settings. Inside a transaction pass its
// Querier, so the rules of a write see the settings the write commits with.
func (db *DB) TenantSettings(ctx context.Context, q Querier, tenantID int64) (Settings, error) {
	if q == nil {
		q = db.read
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
func (db *DB) SetTenantSettings(ctx context.Context, q Querier, tenantID int64, s Settings) error {
	_, err := q.ExecContext(ctx,
		`INSERT INTO tenant_settings (tenant_id, timer_mode, use_worktime) VALUES ($1, $2, $3)
		 ON CONFLICT (tenant_id) DO UPDATE SET timer_mode = excluded.timer_mode, use_worktime = excluded.use_worktime`,
		tenantID, s.TimerMode, s.UseWorktime)
	if err != nil {
		return fmt.Errorf("set tenant settings: %w", err)
	}
	return nil
}
