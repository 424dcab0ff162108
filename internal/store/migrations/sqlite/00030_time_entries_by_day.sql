-- +goose Up
-- Time entries by day: one day (or a month, or a year) of the whole
-- tenant, as the time totals and the approval read them, without
-- reading the tenant's other days. id ends the key, so that the entries
-- of one day come out in id order, the order of a list: SQLite then
-- prefers this index to records_by_resource, which hands over every time
-- entry of the tenant in id order, even without statistics.
CREATE INDEX IF NOT EXISTS time_entries_by_day ON records
    (tenant_id, json_extract(doc, '$.day'), id)
    WHERE resource = 'time-entries';

-- A project's days in the order of day and id: the rows of a project's
-- month sorted by day come out of the index in order. Without id, SQLite
-- read the month of the whole tenant from time_entries_by_day instead,
-- which hands them over in that order.
DROP INDEX IF EXISTS time_entries_by_project_day;
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id, json_extract(doc, '$.project'), json_extract(doc, '$.day'), id)
    WHERE resource = 'time-entries';

-- +goose Down
DROP INDEX time_entries_by_project_day;
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id, json_extract(doc, '$.project'), json_extract(doc, '$.day'))
    WHERE resource = 'time-entries';
DROP INDEX time_entries_by_day;
