-- +goose Up
-- Each change records the size of its document in bytes, written with
-- the change, so that a read of the feed can end its page at a byte
-- budget in SQL (a running sum) without reading the documents it leaves
-- out. Changes made before are measured once here. Written to run again
-- harmlessly. SQLite has no such step: its reader stops at the budget and
-- measures the text it has read anyway.
ALTER TABLE changes ADD COLUMN IF NOT EXISTS doc_bytes BIGINT NOT NULL DEFAULT 0;
UPDATE changes SET doc_bytes = octet_length(doc::text) WHERE doc_bytes = 0;

-- +goose Down
ALTER TABLE changes DROP COLUMN doc_bytes;
