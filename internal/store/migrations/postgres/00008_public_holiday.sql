-- +goose Up
-- Every tenant has a PublicHoliday absence type; tenants created before it
-- existed get theirs here, once. The id comes from record_ids, as for any
-- record, and the document is shaped as the store shapes one.
WITH missing AS (
    SELECT t.id AS tenant_id,
           nextval('record_ids') AS id,
           to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS at
      FROM tenants t
     WHERE NOT EXISTS (SELECT 1 FROM records r
                        WHERE r.tenant_id = t.id AND r.resource = 'absence-types'
                          AND r.doc ->> 'name' = 'PublicHoliday')
)
INSERT INTO records (tenant_id, id, resource, doc, created_at, updated_at)
SELECT tenant_id, id, 'absence-types',
       jsonb_build_object('id', id, 'name', 'PublicHoliday', 'createdAt', at, 'updatedAt', at),
       at, at
  FROM missing;

-- +goose Down
-- Nothing to undo: the records are valid at every earlier version, and
-- those made here cannot be told from those made with their tenant.
SELECT 1;
