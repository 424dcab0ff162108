-- +goose Up
-- Account-level settings of a tenant; a missing row means the defaults.
CREATE TABLE tenant_settings (
    tenant_id    BIGINT  PRIMARY KEY REFERENCES tenants (id),
    timer_mode   TEXT    NOT NULL DEFAULT 'DURATION',
    use_worktime BOOLEAN NOT NULL DEFAULT FALSE
);

-- +goose Down
DROP TABLE tenant_settings;
