package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// changesChannel is the PostgreSQL notification channel on which the
// commits of a schema that recorded changes are announced, each with its
// tenant (NOTIFY is delivered at commit). Notifications go to every
// listener of the database: the name carries the schema, so that the
// instances of one schema hear only each other (another schema numbers
// its tenants afresh).
func changesChannel(schema string) string {
	sum := sha256.Sum256([]byte(schema))
	return "planwerk_changes_" + hex.EncodeToString(sum[:8])
}

// listenChanges keeps a connection of its own listening on the changes
// channel and wakes this process's feed waiters at each notification, so
// that a change committed by another instance reaches a waiting read at
// once. While the connection is down the waiters poll, as on SQLite; the
// listener dials again with growing pauses until ctx ends.
func (db *DB) listenChanges(ctx context.Context, cfg *pgx.ConnConfig, channel string) {
	defer close(db.listening)
	pause := time.Second
	for ctx.Err() == nil {
		// A failure needs no report of its own: the database's failures
		// show in the requests, and waiting reads poll meanwhile.
		_ = db.listenOnce(ctx, cfg, channel)
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, 30*time.Second)
	}
}

func (db *DB) listenOnce(ctx context.Context, cfg *pgx.ConnConfig, channel string) error {
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
	if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{channel}.Sanitize()); err != nil {
		return err
	}
	db.heard.Store(true)
	defer db.heard.Store(false)
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		db.notified(n.Payload)
	}
}

// notified wakes the waiters of the tenant a notification names (and
// those waiting for any tenant's changes).
func (db *DB) notified(payload string) {
	tenantID, err := strconv.ParseInt(payload, 10, 64)
	if err != nil {
		db.signal.fire() // not a tenant's: only the waiters for any
		return
	}
	db.signal.fire(tenantID)
}

// WakesOnCommit reports whether every commit that records changes, of
// any instance, wakes this process's waiters now: on SQLite (one process
// writes) always, on PostgreSQL while the listener hears the
// notifications. Otherwise waiters look for changes themselves.
func (db *DB) WakesOnCommit() bool {
	if _, ok := db.dialect.file(); ok {
		return true
	}
	return db.heard.Load()
}
