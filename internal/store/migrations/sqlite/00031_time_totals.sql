-- +goose Up
-- The time totals of a tenant's time entries, kept in the transaction of
-- every write of an entry (internal/tally): seconds and entries per user
-- and per project (dim), per day and per month (grain), and trackingType,
-- so that a month's or a year's totals read a row per group and period
-- instead of every entry. A user or project of 0 is an entry without one.
-- Step 00032 fills them from the entries stored before.
CREATE TABLE time_totals (
    tenant_id     INTEGER NOT NULL REFERENCES tenants (id),
    dim           TEXT    NOT NULL,
    grain         TEXT    NOT NULL,
    period        TEXT    NOT NULL,
    key           INTEGER NOT NULL,
    tracking_type TEXT    NOT NULL,
    seconds       INTEGER NOT NULL,
    entries       INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, dim, grain, period, key, tracking_type)
) WITHOUT ROWID;

-- +goose Down
DROP TABLE time_totals;
