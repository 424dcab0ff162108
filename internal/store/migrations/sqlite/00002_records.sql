-- +goose Up
-- Records of every resource except users: the JSON document as the API
-- returns it, plus the columns the service owns.
CREATE TABLE records (
    tenant_id  INTEGER NOT NULL REFERENCES tenants (id),
    id         INTEGER NOT NULL,
    resource   TEXT    NOT NULL,
    doc        TEXT    NOT NULL,
    created_at TEXT    NOT NULL,
    updated_at TEXT    NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX records_by_resource ON records (tenant_id, resource, id);

-- ProjectDay: one record per (project, day); day ranges.
CREATE UNIQUE INDEX project_days_key ON records
    (tenant_id, json_extract(doc, '$.project'), json_extract(doc, '$.day'))
    WHERE resource = 'project-days';
CREATE INDEX project_days_by_day ON records (tenant_id, json_extract(doc, '$.day'))
    WHERE resource = 'project-days';

-- TimeEntry: by (project, day) for approval, by (user, day) for timesheets.
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id, json_extract(doc, '$.project'), json_extract(doc, '$.day'))
    WHERE resource = 'time-entries';
CREATE INDEX time_entries_by_user_day ON records
    (tenant_id, json_extract(doc, '$.user'), json_extract(doc, '$.day'))
    WHERE resource = 'time-entries';

-- +goose Down
DROP TABLE records;
