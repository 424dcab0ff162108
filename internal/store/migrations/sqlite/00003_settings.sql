-- +goose Up
-- Account-level settings of a tenant; a missing row means the defaults.
CREATE TABLE tenant_settings (
    tenant_id    INTEGER PRIMARY KEY REFERENCES tenants (id),
    timer_mode   TEXT    NOT NULL DEFAULT 'DURATION',
    use_worktime INTEGER NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE tenant_settings;
