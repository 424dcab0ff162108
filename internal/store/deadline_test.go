package store_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"testing"
	"time"

	"planwerk/internal/fault"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestEndedByTheServer: PostgreSQL ending a session or a transaction for
// reasons of its own (an idle transaction's timeout, an operator, a lock
// timeout) is a fault of the database, answered 503 with Retry-After,
// never an internal error.
func TestEndedByTheServer(t *testing.T) {
	t.Parallel()
	pg := testenv.Backend{Name: "postgres"}
	if msg := testenv.PostgresUnavailable(t); msg != "" {
		t.Skip(msg)
	}
	ctx := context.Background()
	cases := []struct {
		name string
		// params are settings of the service's sessions.
		params string
		// end ends the transaction of the session pid from outside, or
		// makes its next statement fail; admin is a session of its own.
		end func(t *testing.T, admin *sql.DB, pid int)
		// next is the transaction's statement after it.
		next string
	}{
		{"idle in transaction past its timeout", "&idle_in_transaction_session_timeout=50",
			func(t *testing.T, admin *sql.DB, pid int) { waitGone(t, admin, pid) }, `SELECT 1`},
		{"terminated by an operator", "",
			func(t *testing.T, admin *sql.DB, pid int) {
				if _, err := admin.Exec(`SELECT pg_terminate_backend($1)`, pid); err != nil {
					t.Fatal(err)
				}
				waitGone(t, admin, pid)
			}, `SELECT 1`},
		{"a lock past the lock timeout", "&lock_timeout=50",
			func(t *testing.T, admin *sql.DB, _ int) {
				tx, err := admin.Begin()
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = tx.Rollback() })
				if _, err := tx.Exec(`SELECT * FROM schema_migrations FOR UPDATE`); err != nil {
					t.Fatal(err)
				}
			}, `SELECT * FROM schema_migrations FOR UPDATE`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			dsn := testenv.DSN(t, pg)
			testenv.Open(t, dsn)
			db, err := store.Open(ctx, dsn+c.params)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { db.Close() })
			admin := adminOf(t, dsn)
			err = db.Tx(ctx, func(q store.Querier) error {
				var pid int
				if err := q.QueryRowContext(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
					return err
				}
				c.end(t, admin, pid)
				_, err := q.ExecContext(ctx, c.next)
				return err
			})
			if err == nil {
				t.Fatal("the transaction succeeded")
			}
			if f, ok := fault.As(store.Fault(err)); !ok || f.Part != fault.Database || f.Full {
				t.Fatalf("%v: want an unavailable database (503), not an internal error", err)
			}
		})
	}
}

// TestCommitPastTheDeadline: a COMMIT the server reaches only after its
// request's deadline (it waited behind the tenant's position lock) rolls
// the transaction back, and the request hears so within its deadline and
// a second: the write was not made, and nothing says it was.
func TestCommitPastTheDeadline(t *testing.T) {
	t.Parallel()
	pg := testenv.Backend{Name: "postgres"}
	if msg := testenv.PostgresUnavailable(t); msg != "" {
		t.Skip(msg)
	}
	ctx := context.Background()
	dsn := testenv.DSN(t, pg)
	db := testenv.Open(t, dsn)
	tn, _ := testenv.TenantIn(t, db, "acme", "admin@acme.test")
	admin := adminOf(t, dsn)
	// The tenant's position lock, which every write's last statements
	// take, held elsewhere.
	hold, err := admin.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Rollback()
	if _, err := hold.Exec(`INSERT INTO change_positions (tenant_id, last) VALUES ($1, 0)
		ON CONFLICT (tenant_id) DO UPDATE SET last = change_positions.last`, tn.ID); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(time.Second)
	short, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	projects := store.Collection{Table: "records", Resource: "projects"}
	done := make(chan error, 1)
	go func() {
		done <- db.Tx(short, func(q store.Querier) error {
			_, err := db.Records(q, tn.ID, projects).Insert(short, map[string]any{"name": "too late"})
			return err
		})
	}()
	// Its COMMIT waits in the server, behind the lock, until after the
	// deadline.
	waitFor(t, admin, "a write waiting for the position lock", `SELECT count(*) > 0 FROM pg_stat_activity
		WHERE wait_event_type = 'Lock' AND query LIKE '%change_positions%'`)
	time.Sleep(time.Until(deadline) + 50*time.Millisecond)
	if err := hold.Rollback(); err != nil {
		t.Fatal(err)
	}
	err = <-done
	if took := time.Since(deadline); took > time.Second {
		t.Errorf("the write answered %s after its deadline, more than a second", took)
	}
	if !errors.Is(err, store.ErrCommitTooLate) {
		t.Errorf("a commit past its deadline: %v, want ErrCommitTooLate", err)
	}
	if f, ok := fault.As(store.Fault(err)); !ok || f.Part != fault.Database {
		t.Errorf("a commit past its deadline: %v, want an unavailable database (503)", err)
	}
	var n int
	if err := admin.QueryRow(`SELECT count(*) FROM records WHERE tenant_id = $1 AND doc->>'name' = 'too late'`, tn.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("the write past its deadline was committed")
	}
}

// adminOf is a pool on the database at dsn beside the service's.
func adminOf(t *testing.T, dsn string) *sql.DB {
	t.Helper()
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close() })
	return admin
}

// waitGone waits until the session pid has ended.
func waitGone(t *testing.T, admin *sql.DB, pid int) {
	t.Helper()
	waitFor(t, admin, "the session still there", `SELECT count(*) = 0 FROM pg_stat_activity WHERE pid = `+strconv.Itoa(pid))
}

// waitFor polls a query answering one boolean until it is true.
func waitFor(t *testing.T, admin *sql.DB, what, query string) {
	t.Helper()
	limit := time.Now().Add(30 * time.Second)
	for {
		var ok bool
		if err := admin.QueryRow(query).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		if ok {
			return
		}
		if time.Now().After(limit) {
			t.Fatalf("after 30s: %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
