-- +goose Up
-- The W3C trace context of the request or job that made each change, when
-- it was traced, so that the change's webhook deliveries carry the trace
-- on. NULL for changes made untraced. A new column of a distributed table
-- needs no distribution. Written to run again harmlessly.
ALTER TABLE changes ADD COLUMN IF NOT EXISTS trace_parent TEXT;

-- +goose Down
ALTER TABLE changes DROP COLUMN IF EXISTS trace_parent;
