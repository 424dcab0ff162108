-- +goose Up
-- Declared numeric attributes are read as numbers only where the document
-- holds a number, so that no other resource's string under the same name
-- can make a query fail; the indexes follow the new expressions.
DROP INDEX project_days_key;
CREATE UNIQUE INDEX project_days_key ON records
    (tenant_id,
     (CASE WHEN jsonb_typeof(doc -> 'project') = 'number' THEN (doc ->> 'project')::numeric END),
     ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'project-days';

DROP INDEX time_entries_by_project_day;
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id,
     (CASE WHEN jsonb_typeof(doc -> 'project') = 'number' THEN (doc ->> 'project')::numeric END),
     ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';

DROP INDEX time_entries_by_user_day;
CREATE INDEX time_entries_by_user_day ON records
    (tenant_id,
     (CASE WHEN jsonb_typeof(doc -> 'user') = 'number' THEN (doc ->> 'user')::numeric END),
     ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';

DROP INDEX skill_assignments_key;
CREATE UNIQUE INDEX skill_assignments_key ON records
    (tenant_id,
     (CASE WHEN jsonb_typeof(doc -> 'user') = 'number' THEN (doc ->> 'user')::numeric END),
     (CASE WHEN jsonb_typeof(doc -> 'tag') = 'number' THEN (doc ->> 'tag')::numeric END))
    WHERE resource = 'skill-assignments';

-- +goose Down
DROP INDEX skill_assignments_key;
CREATE UNIQUE INDEX skill_assignments_key ON records
    (tenant_id, ((doc ->> 'user')::bigint), ((doc ->> 'tag')::bigint))
    WHERE resource = 'skill-assignments';
DROP INDEX time_entries_by_user_day;
CREATE INDEX time_entries_by_user_day ON records
    (tenant_id, ((doc ->> 'user')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';
DROP INDEX time_entries_by_project_day;
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id, ((doc ->> 'project')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';
DROP INDEX project_days_key;
CREATE UNIQUE INDEX project_days_key ON records
    (tenant_id, ((doc ->> 'project')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'project-days';
