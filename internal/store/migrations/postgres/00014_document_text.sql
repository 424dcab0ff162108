-- +goose Up
-- The documents of records and users kept a second time, as the text a
-- read answers with. Reading doc::text makes PostgreSQL render every jsonb
-- document anew, row by row, on every read. A stored generated column
-- renders it once per write, and reads hand the text over as it is. The
-- text is doc::text itself, so answers stay byte for byte what they were.
-- doc stays the column that filters, sorts, indexes and updates use:
-- PostgreSQL recomputes doc_text whenever doc changes, whoever writes it.
-- Adding the columns rewrites both tables, filling them for existing rows.
-- Written to run again harmlessly.
ALTER TABLE records ADD COLUMN IF NOT EXISTS doc_text TEXT GENERATED ALWAYS AS (doc::text) STORED;
ALTER TABLE users ADD COLUMN IF NOT EXISTS doc_text TEXT GENERATED ALWAYS AS (doc::text) STORED;

-- +goose Down
ALTER TABLE users DROP COLUMN doc_text;
ALTER TABLE records DROP COLUMN doc_text;
