-- +goose Up
-- Every tenant has a PublicHoliday absence type; tenants created before it
-- existed get theirs here, once. The id comes from the tenant's counter, as
-- for any record, and the document is shaped as the store shapes one
-- (json_object keeps the keys in the order Go's encoder writes them).
-- Both statements pick the same tenants: those still without the type.
INSERT INTO tenant_sequences (tenant_id, last_id)
SELECT t.id, 1
  FROM tenants t
 WHERE NOT EXISTS (SELECT 1 FROM records r
                    WHERE r.tenant_id = t.id AND r.resource = 'absence-types'
                      AND json_extract(r.doc, '$.name') = 'PublicHoliday')
ON CONFLICT (tenant_id) DO UPDATE SET last_id = tenant_sequences.last_id + 1;

INSERT INTO records (tenant_id, id, resource, doc, created_at, updated_at)
SELECT t.id, s.last_id, 'absence-types',
       json_object('createdAt', n.at, 'id', s.last_id, 'name', 'PublicHoliday', 'updatedAt', n.at),
       n.at, n.at
  FROM tenants t
  JOIN tenant_sequences s ON s.tenant_id = t.id
 CROSS JOIN (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', 'now') AS at) n
 WHERE NOT EXISTS (SELECT 1 FROM records r
                    WHERE r.tenant_id = t.id AND r.resource = 'absence-types'
                      AND json_extract(r.doc, '$.name') = 'PublicHoliday');

-- +goose Down
-- Nothing to undo: the records are valid at every earlier version, and
-- those made here cannot be told from those made with their tenant.
SELECT 1;
