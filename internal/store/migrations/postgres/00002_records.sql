-- +goose Up
-- Records of every resource except users: the JSON document as the API
-- returns it, plus the columns the service owns. Text is compared in the
-- "C" collation: byte-wise, as on SQLite.
CREATE TABLE records (
    tenant_id  BIGINT NOT NULL REFERENCES tenants (id),
    id         BIGINT NOT NULL,
    resource   TEXT   COLLATE "C" NOT NULL,
    doc        JSONB  NOT NULL,
    created_at TEXT   COLLATE "C" NOT NULL,
    updated_at TEXT   COLLATE "C" NOT NULL,
    PRIMARY KEY (tenant_id, id)
);
CREATE INDEX records_by_resource ON records (tenant_id, resource, id);

-- ProjectDay: one record per (project, day); day ranges.
CREATE UNIQUE INDEX project_days_key ON records
    (tenant_id, ((doc ->> 'project')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'project-days';
CREATE INDEX project_days_by_day ON records (tenant_id, ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'project-days';

-- TimeEntry: by (project, day) for approval, by (user, day) for timesheets.
CREATE INDEX time_entries_by_project_day ON records
    (tenant_id, ((doc ->> 'project')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';
CREATE INDEX time_entries_by_user_day ON records
    (tenant_id, ((doc ->> 'user')::bigint), ((doc ->> 'day') COLLATE "C"))
    WHERE resource = 'time-entries';

-- +goose Down
DROP TABLE records;
