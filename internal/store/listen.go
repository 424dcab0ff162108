package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the PostgreSQL notification channel on which commits
// that recorded changes are announced (NOTIFY is delivered at commit).
const changesChannel = "planwerk_changes"

// listenChanges keeps a connection of its own listening on the changes
// channel and wakes this process's feed waiters at each notification, so
// that a change committed by another instance reaches a waiting read at
// once. While the connection is down the waiters poll, as on SQLite; the
// listener dials again with growing pauses until ctx ends.
func (db *DB) listenChanges(ctx context.Context, cfg *pgx.ConnConfig) {
	defer close(db.listening)
	pause := time.Second
	for ctx.Err() == nil {
		// A failure needs no report of its own: the database's failures
		// show in the requests, and waiting reads poll meanwhile.
		_ = db.listenOnce(ctx, cfg)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

func (db *DB) listenOnce(ctx context.Context, cfg *pgx.ConnConfig) error {
	dial, cancel := context.WithTimeout(ctx, 10*time.Second)
	conn, err := pgx.ConnectConfig(dial, cfg)
	cancel()
	if err != nil {
		return err
	}
	defer func() {
		// Bounded: a frozen server must not hold Close.
		closing, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closing)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+changesChannel); err != nil {
		return err
	}
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		db.signal.fire()
	}
}
