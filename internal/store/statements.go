package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	sqlite "modernc.org/sqlite"
)

// A statement log hears every statement the database is sent, with its
// parameters, before the engine runs it (Options.Statements): what the
// service really runs, for the tests that ask the engines how they plan it
// (EXPLAIN). A service runs without one; nothing of it is on its path then.

// sqliteConnector opens SQLite connections whose statements the log hears.
type sqliteConnector struct {
	name string
	d    driver.Driver
	log  func(query string, args []any)
}

func (c sqliteConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.d.Open(c.name)
	if err != nil {
		return nil, err
	}
	return loggedConn{conn: conn, log: c.log}, nil
}

func (c sqliteConnector) Driver() driver.Driver { return c.d }

// openLoggedSQLite opens a pool of SQLite connections that tell log of
// each statement.
func openLoggedSQLite(name string, log func(query string, args []any)) *sql.DB {
	return sql.OpenDB(sqliteConnector{name: name, d: &sqlite.Driver{}, log: log})
}

// sqliteConn is what database/sql uses of a SQLite connection.
type sqliteConn interface {
	driver.Conn
	driver.ConnBeginTx
	driver.ConnPrepareContext
	driver.ExecerContext
	driver.QueryerContext
	driver.Pinger
	driver.SessionResetter
	driver.Validator
}

// loggedConn is a SQLite connection that tells the log of its statements.
type loggedConn struct {
	conn driver.Conn
	log  func(query string, args []any)
}

func (c loggedConn) inner() (sqliteConn, error) {
	s, ok := c.conn.(sqliteConn)
	if !ok {
		return nil, errors.New("statement log: the SQLite driver's connection lacks a method database/sql uses")
	}
	return s, nil
}

func values(args []driver.NamedValue) []any {
	out := make([]any, len(args))
	for i, a := range args {
		out[i] = a.Value
	}
	return out
}

func (c loggedConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c loggedConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	s, err := c.inner()
	if err != nil {
		return nil, err
	}
	st, err := s.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return loggedStmt{Stmt: st, query: query, log: c.log}, nil
}

func (c loggedConn) Close() error { return c.conn.Close() }

func (c loggedConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c loggedConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	s, err := c.inner()
	if err != nil {
		return nil, err
	}
	return s.BeginTx(ctx, opts)
}

func (c loggedConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	s, err := c.inner()
	if err != nil {
		return nil, err
	}
	c.log(query, values(args))
	return s.ExecContext(ctx, query, args)
}

func (c loggedConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	s, err := c.inner()
	if err != nil {
		return nil, err
	}
	c.log(query, values(args))
	return s.QueryContext(ctx, query, args)
}

func (c loggedConn) Ping(ctx context.Context) error {
	s, err := c.inner()
	if err != nil {
		return err
	}
	return s.Ping(ctx)
}

func (c loggedConn) ResetSession(ctx context.Context) error {
	s, err := c.inner()
	if err != nil {
		return err
	}
	return s.ResetSession(ctx)
}

func (c loggedConn) IsValid() bool {
	s, err := c.inner()
	return err == nil && s.IsValid()
}

// loggedStmt is a prepared SQLite statement that tells the log of each run.
type loggedStmt struct {
	driver.Stmt
	query string
	log   func(query string, args []any)
}

func (s loggedStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	st, ok := s.Stmt.(driver.StmtExecContext)
	if !ok {
		return nil, errors.New("statement log: the SQLite driver's statement lacks ExecContext")
	}
	s.log(s.query, values(args))
	return st.ExecContext(ctx, args)
}

func (s loggedStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	st, ok := s.Stmt.(driver.StmtQueryContext)
	if !ok {
		return nil, errors.New("statement log: the SQLite driver's statement lacks QueryContext")
	}
	s.log(s.query, values(args))
	return st.QueryContext(ctx, args)
}

// pgxLog is a pgx tracer that tells the log of each statement, alone and
// in batches.
type pgxLog struct {
	log func(query string, args []any)
}

func (t pgxLog) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.log(data.SQL, parameters(data.Args))
	return ctx
}

// parameters are the statement's parameters among pgx's arguments, which
// may begin with options of the query (database/sql's adapter passes the
// result formats so).
func parameters(args []any) []any {
	for len(args) > 0 {
		switch args[0].(type) {
		case pgx.QueryResultFormats, pgx.QueryResultFormatsByOID, pgx.QueryExecMode, pgx.QueryRewriter:
			args = args[1:]
			continue
		}
		break
	}
	return args
}

func (pgxLog) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t pgxLog) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	for _, q := range data.Batch.QueuedQueries {
		t.log(q.SQL, parameters(q.Arguments))
	}
	return ctx
}

func (pgxLog) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (pgxLog) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}
