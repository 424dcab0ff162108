//go:build system

package store_test

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"planwerk/internal/fault"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestFault: the database's own failures are marked as such, whatever
// the engine; the caller's mistakes and plain absence are not.
func TestFault(t *testing.T) {
	ctx := context.Background()
	t.Run("postgres statement timeout", func(t *testing.T) {
		opts := store.DefaultOptions()
		opts.StatementTimeout = 100 * time.Millisecond
		db, err := store.OpenWith(ctx, testenv.DSN(t, testenv.Backend{Name: "postgres"}), opts)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		err = db.QueryRowContext(ctx, `SELECT pg_sleep(5)`).Scan(new(any))
		marked := store.Fault(err)
		if f, ok := fault.As(marked); !ok || f.Part != fault.Database || f.Full || !errors.Is(marked, store.ErrStatementTimeout) {
			t.Fatalf("a statement past its timeout: %v, want an unavailable database and ErrStatementTimeout", marked)
		}
	})
	t.Run("postgres unreachable", func(t *testing.T) {
		u, err := url.Parse(testenv.DSN(t, testenv.Backend{Name: "postgres"}))
		if err != nil {
			t.Fatal(err)
		}
		u.Host = testenv.FreeAddr(t)
		dsn := u.String()
		_, err = store.Open(ctx, dsn)
		if f, ok := fault.As(store.Fault(err)); !ok || f.Part != fault.Database {
			t.Fatalf("a server nobody listens for: %v, want an unavailable database", err)
		}
	})
	t.Run("sqlite lock held past the deadline", func(t *testing.T) {
		db := testenv.OpenDB(t, testenv.Backend{Name: "sqlite"})
		dsn := db.DSN()
		other, err := sql.Open("sqlite", "file:"+strings.TrimPrefix(dsn, "sqlite:")+"?_txlock=immediate")
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		tx, err := other.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback()
		if _, err := tx.Exec(`UPDATE tenants SET name = name`); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		defer cancel()
		err = db.Tx(short, func(q store.Querier) error {
			_, err := q.ExecContext(short, `UPDATE tenants SET name = name`)
			return err
		})
		if f, ok := fault.As(store.Fault(err)); !ok || f.Part != fault.Database || f.Full {
			t.Fatalf("a write behind another's lock past the deadline: %v, want an unavailable database", err)
		}
	})
	t.Run("not faults", func(t *testing.T) {
		db := testenv.OpenDB(t, testenv.Backend{Name: "sqlite"})
		for _, err := range []error{
			store.ErrNotFound, store.ErrConflict, context.Canceled, errors.New("some bug"),
			db.QueryRowContext(ctx, `SELECT no_such_column FROM tenants`).Scan(new(any)),
		} {
			if _, ok := fault.As(store.Fault(err)); ok {
				t.Errorf("%v marked as a fault of the database", err)
			}
		}
		if store.Fault(nil) != nil {
			t.Error("nil marked")
		}
	})
}
