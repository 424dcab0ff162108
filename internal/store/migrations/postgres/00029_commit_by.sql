-- +goose Up
-- planwerk_commit_by(deadline) is the last statement of every write
-- transaction with a deadline, sent together with its COMMIT: it raises
-- (SQLSTATE PW001) when the server's clock is past the deadline, so that
-- a COMMIT the server reaches only after its request has given up (the
-- server was stopped or its disk stalled while the COMMIT waited in its
-- socket or behind a lock) rolls the transaction back instead of
-- committing a write its client was told had failed (decisions: "A write
-- past its deadline"). It touches no table: nothing to distribute.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION planwerk_commit_by(deadline timestamptz) RETURNS void
LANGUAGE plpgsql VOLATILE PARALLEL SAFE AS $$
BEGIN
    IF clock_timestamp() > deadline THEN
        RAISE EXCEPTION 'the commit reached the database % after its request''s deadline', clock_timestamp() - deadline
            USING ERRCODE = 'PW001';
    END IF;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION planwerk_commit_by(timestamptz);
