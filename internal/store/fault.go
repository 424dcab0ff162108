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

// unavailableCode reports whether a PostgreSQL error of the SQLSTATE
// code is the server's failure to serve in time rather than the
// request's mistake: whatever ended the session or the transaction for
// the server's own reasons (a timeout, a shutdown, an operator, a
// fail-over, an aborted commit) is retried by the client, never a 500.
func unavailableCode(code string) bool {
	switch {
	case strings.HasPrefix(code, "08"), // connection exception
		strings.HasPrefix(code, "53"),  // insufficient resources, too many connections
		strings.HasPrefix(code, "57P"): // admin or crash shutdown, cannot connect now, idle session timeout
		return true
	}
	switch code {
	case "57014", // query_canceled: the statement timeout, a cancel request
		"55P03",      // lock_not_available: the lock timeout
		"25006",      // read-only transaction: a standby after a fail-over
		"25P03",      // idle_in_transaction_session_timeout: the session was ended
		"40001",      // serialization_failure, still after the retries of Tx
		"40P01",      // deadlock_detected, likewise
		"40003",      // statement_completion_unknown
		"58000",      // system_error
		"58030",      // io_error: the server's disk fails
		commitByCode: // the commit came after its request's deadline
		return true
	}
	return false
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
		return unavailableCode(pgErr.Code)
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
