package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"planwerk/internal/fault"
)

// Fault marks err as a database fault when it is one: the database cannot
// be reached, does not answer in time, is shutting down or busy (marked
// unavailable), or has no room left (marked full). Other errors are
// returned unchanged.
func Fault(err error) error {
	if err == nil {
		return nil
	}
	if _, ok := fault.As(err); ok {
		return err
	}
	var pgErr *pgconn.PgError
	switch {
	case full(err):
		return fault.Full(fault.Database, err)
	case errors.As(err, &pgErr) && pgErr.Code == "57014":
		return fault.Unavailable(fault.Database, fmt.Errorf("%w: %w", ErrStatementTimeout, err))
	case unavailable(err):
		return fault.Unavailable(fault.Database, err)
	}
	return err
}

// ErrStatementTimeout marks a statement the database ended because it
// ran longer than the statement timeout.
var ErrStatementTimeout = errors.New("statement timeout")

func full(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code == "53100" // disk_full
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) && sqErr.Code()&0xff == sqlite3.SQLITE_FULL {
		return true
	}
	return fault.NoSpace(err)
}

func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return strings.HasPrefix(pgErr.Code, "08") || // connection exception
			strings.HasPrefix(pgErr.Code, "53") || // insufficient resources, too many connections
			strings.HasPrefix(pgErr.Code, "57P") || // shutting down, starting up
			pgErr.Code == "57014" || // query_canceled: the statement timeout
			pgErr.Code == "55P03" || // lock_not_available
			pgErr.Code == "25006" // read-only transaction: a standby after a fail-over
	}
	var sqErr *sqlite.Error
	if errors.As(err, &sqErr) {
		switch sqErr.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT, sqlite3.SQLITE_IOERR,
			sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_NOMEM:
			return true
		}
		return false
	}
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || pgconn.Timeout(err) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || pgconn.SafeToRetry(err) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}
