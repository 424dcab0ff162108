-- +goose Up
-- The W3C trace context of the request or job that made each change, when
-- it was traced, so that the change's webhook deliveries carry the trace
-- on. NULL for changes made untraced.
ALTER TABLE changes ADD COLUMN trace_parent TEXT;

-- +goose Down
ALTER TABLE changes DROP COLUMN trace_parent;
