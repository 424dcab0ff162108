-- +goose Up
-- A user holds each skill at most once (archived assignments included:
-- adding an archived skill again re-activates it).
CREATE UNIQUE INDEX skill_assignments_key ON records
    (tenant_id, json_extract(doc, '$.user'), json_extract(doc, '$.tag'))
    WHERE resource = 'skill-assignments';

-- +goose Down
DROP INDEX skill_assignments_key;
