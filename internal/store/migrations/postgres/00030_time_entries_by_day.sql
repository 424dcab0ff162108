-- +goose Up
-- Time entries by day: one day (or a month, or a year) of the whole
-- tenant, as the time totals and the approval read them, without
-- reading the tenant's other days. The day is read as the queries read
-- it, in the "C" collation; id ends the key, so that the entries of one
-- day come out in id order, the order of a list.
CREATE INDEX IF NOT EXISTS time_entries_by_day ON records
    (tenant_id, ((doc ->> 'day') COLLATE "C"), id)
    WHERE resource = 'time-entries';

-- +goose Down
DROP INDEX time_entries_by_day;
