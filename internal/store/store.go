// Package store keeps Planwerk's records in SQLite or PostgreSQL.
//
// Both engines run the same SQL wherever they can; every place where they
// really differ is a method of the dialect interface (dialect.go), and no
// other code asks which engine it runs on. Every query that
// touches tenant data takes the tenant id as its first parameter.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/XSAM/otelsql"
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/puzpuzpuz/xsync/v4"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"planwerk/internal/gate"
)

// Sentinel errors. Callers test them with errors.Is.
var (
	// ErrNotFound means the record does not exist in the caller's tenant.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a uniqueness rule would be broken.
	ErrConflict = errors.New("conflict")
)

// Querier runs SQL; both *DB and the transaction handle passed to Tx
// implement it, so store functions work inside and outside transactions.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// DB is an open database of either engine.
type DB struct {
	signal         changeSignal // wakes the change feed's waiters
	observeChanges func(n int)  // counts recorded changes; may be nil
	// PostgreSQL: the change notifications' listener (listen.go).
	stopListening func()
	listening     chan struct{}
	heard         atomic.Bool // the listener hears the notifications now
	write         *sql.DB     // all writes and transactions
	read          *readPool   // plain reads; the same pool as write on PostgreSQL
	// lookup serves the short reads every request makes (tenant, token,
	// user), so that clients reading long lists slowly, each holding a
	// read connection, cannot starve authentication. SQLite only.
	lookup *readPool
	// GetRecord's statement of each collection (and lock), made once:
	// as many as the registry has collections, twice.
	gets *xsync.Map[getKey, string]
	// health is a connection of its own for readiness checks, so that
	// they never queue behind busy pools.
	health *sql.DB
	// writes and reads share the pools fairly among tenants: every
	// transaction takes a slot of writes, every list scan one of reads, so
	// that no tenant holds more than its share of the connections.
	writes  *gate.Gate
	reads   *gate.Gate
	dialect dialect
	dsn     string
	// committer batches SQLite's writes (commit.go); nil commits each
	// transaction on its own.
	committer *committer
	// runTx runs one attempt of a transaction where it is not tx:
	// PostgreSQL's pipelinedTx.
	runTx func(ctx context.Context, fn func(q Querier) error) error
	// noAudit: writes make no audit entries (Options.NoAudit).
	noAudit bool
	// observeErase, when set, learns how long each batch of EraseTenant
	// held its transaction (tests measure it).
	observeErase func(took time.Duration)
}

// Options tune how the database is used.
type Options struct {
	// StatementTimeout ends a PostgreSQL statement that runs longer: the
	// server-side backstop for a client that can no longer cancel it.
	StatementTimeout time.Duration
	// PoolSize is the number of PostgreSQL connections of the pool.
	PoolSize int
	// GroupCommit makes concurrent SQLite writes share a transaction and
	// its sync to disk (commit.go); CommitWait bounds how long a batch
	// waits for more writes before it commits.
	GroupCommit bool
	CommitWait  time.Duration
	// NoAudit makes writes leave the audit log alone: for measuring what
	// the audit log costs (planwerk-bench), never for a service.
	NoAudit bool
	// Trace makes every statement a client span of the request or job
	// that runs it (OpenTelemetry: otelpgx on PostgreSQL, otelsql on
	// SQLite), with the statement's text but never its parameters.
	Trace bool
	// Statements, when set, hears every statement sent to the database,
	// with its parameters, before it runs: for tests that ask the engine
	// how it plans what the service runs (EXPLAIN). Never in a service.
	// On SQLite it takes the place of Trace.
	Statements func(query string, args []any)
}

// DefaultOptions are the options of Open.
func DefaultOptions() Options {
	return Options{StatementTimeout: 30 * time.Second, PoolSize: 48, GroupCommit: true, CommitWait: 2 * time.Millisecond}
}

// Open connects to the database named by dsn: "sqlite:PATH" or a
// "postgres://" / "postgresql://" URL. For SQLite the folder of PATH is
// created when missing.
func Open(ctx context.Context, dsn string) (*DB, error) {
	return OpenWith(ctx, dsn, DefaultOptions())
}

// OpenWith is Open with options.
func OpenWith(ctx context.Context, dsn string, opts Options) (*DB, error) {
	var db *DB
	var err error
	switch {
	case strings.HasPrefix(dsn, "sqlite:"):
		db, err = openSQLite(ctx, dsn, strings.TrimPrefix(dsn, "sqlite:"), opts)
	case strings.HasPrefix(dsn, "postgres://"), strings.HasPrefix(dsn, "postgresql://"):
		db, err = openPostgres(ctx, dsn, opts)
	default:
		return nil, fmt.Errorf("open database: %q is neither sqlite:PATH nor a postgres:// URL", dsn)
	}
	if err != nil {
		return nil, err
	}
	db.noAudit = opts.NoAudit
	return db, nil
}

// Dial and I/O bounds of PostgreSQL connections.
const (
	connectTimeout = 5 * time.Second
	// idleInTransaction ends a session that keeps a transaction open
	// without sending anything, so a stalled instance cannot hold locks
	// for ever.
	idleInTransaction = time.Minute
)

func openSQLite(ctx context.Context, dsn, path string, opts Options) (*DB, error) {
	if path == "" {
		return nil, errors.New("open database: sqlite: needs a file path")
	}
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return nil, fmt.Errorf("open database: create folder: %w", err)
		}
	}
	// synchronous(FULL): a commit is on disk before the client hears of it,
	// even across a power cut. busy_timeout lets a second process wait for
	// the write lock instead of failing. journal_size_limit truncates the
	// WAL back to 64 MiB after each checkpoint that resets it, so a burst
	// of writes does not leave a large file behind.
	pragmas := "_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(FULL)&_pragma=journal_size_limit(67108864)"
	// Writes go through one connection whose transactions take the write
	// lock up front (BEGIN IMMEDIATE), so two writers never deadlock on a
	// lock upgrade. Its temporary files are in memory: each write of a
	// batch runs in a savepoint, whose journal of the pages it changes
	// would otherwise be written to a file, a system call a page; the
	// writer sorts nothing large, so they stay small.
	write, err := openSQLiteDB(opts, "file:"+path+"?"+pragmas+"&_pragma=temp_store(MEMORY)&_txlock=immediate")
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	write.SetMaxOpenConns(1)
	write.SetMaxIdleConns(1)
	write.SetConnMaxLifetime(0)
	read, err := openSQLiteDB(opts, "file:"+path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	read.SetMaxOpenConns(8)
	read.SetMaxIdleConns(8)
	read.SetConnMaxIdleTime(5 * time.Minute)
	lookup, err := openSQLiteDB(opts, "file:"+path+"?"+pragmas+"&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		read.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	lookup.SetMaxOpenConns(4)
	lookup.SetMaxIdleConns(4)
	health, err := openSQLiteDB(opts, "file:"+path+"?_pragma=busy_timeout(1000)&_pragma=query_only(1)")
	if err != nil {
		write.Close()
		read.Close()
		lookup.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	health.SetMaxOpenConns(1)
	// One writer: a tenant has at most two transactions waiting for it
	// (so that the next is ready when one commits), and another tenant's
	// write waits for at most five others. A tenant's further writes wait
	// in turn; how many may, the tenant's share of requests in progress
	// bounds.
	writes := gate.Options{Capacity: 6, PerKey: 2, MaxQueue: 1024, Lend: true}
	if opts.GroupCommit {
		// Batched, the writer takes up to 64 writes a sync, a tenant a
		// quarter of them while another tenant waits.
		writes = gate.Options{Capacity: maxBatch, PerKey: maxBatch / 4, MaxQueue: 1024, Lend: true}
	}
	db := &DB{gets: xsync.NewMap[getKey, string](), write: write, read: newReadPool(read, true), lookup: newReadPool(lookup, true), health: health, dialect: sqliteDialect{path: path}, dsn: dsn,
		writes: gate.New("database writes", writes),
		// Eight readers: list scans take at most six, the rest serve
		// single reads. SQLite runs on this process's cores, so a tenant
		// scans with at most half of them at once while another tenant
		// waits, and with all of them while none does: more scans than
		// cores would only slow the tenant that comes next.
		reads: gate.New("database reads", gate.Options{Capacity: 6, PerKey: max(1, runtime.NumCPU()/2), MaxQueue: 1024,
			Lend: true, LendUpTo: runtime.NumCPU()}),
	}
	// Touch the write connection first so WAL mode is set before readers open.
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	// Statistics where a table has none or they are stale, before the
	// first reader reads them (statistics.go). A failure does not keep the
	// database from opening: the statistics job tries again, and reports.
	_ = db.dialect.refreshStatistics(ctx, write)
	if opts.GroupCommit {
		db.committer = newCommitter(write, maxBatch, opts.CommitWait, db.signal.fire)
	}
	return db, nil
}

// openSQLiteDB opens a pool of SQLite connections, whose statements are
// spans when opts.Trace says so.
func openSQLiteDB(opts Options, name string) (*sql.DB, error) {
	if opts.Statements != nil {
		return openLoggedSQLite(name, opts.Statements), nil
	}
	if !opts.Trace {
		return sql.Open("sqlite", name)
	}
	return otelsql.Open("sqlite", name, otelsql.WithAttributes(semconv.DBSystemNameSQLite),
		otelsql.WithSpanOptions(otelsql.SpanOptions{OmitConnResetSession: true, OmitRows: true, DisableErrSkip: true}))
}

// maxBatch bounds the writes of one SQLite batch.
const maxBatch = 64

func openPostgres(ctx context.Context, dsn string, opts Options) (*DB, error) {
	cfg, err := postgresConfig(dsn, opts)
	if err != nil {
		return nil, err
	}
	pool := stdlib.OpenDB(*cfg)
	pool.SetMaxOpenConns(opts.PoolSize)
	pool.SetMaxIdleConns(opts.PoolSize)
	pool.SetConnMaxIdleTime(5 * time.Minute)
	health := stdlib.OpenDB(*cfg)
	health.SetMaxOpenConns(1)
	// Transactions and list scans each take at most a third of the pool;
	// a tenant at most half of that for transactions (short) and a
	// quarter for scans (long) while another tenant waits, all but one
	// while none does. The last third serves lookups and single reads.
	share := max(1, opts.PoolSize/3)
	shared := newReadPool(pool, false)
	db := &DB{gets: xsync.NewMap[getKey, string](), write: pool, read: shared, lookup: shared, health: health, dialect: postgresDialect{}, dsn: dsn,
		writes: gate.New("database writes", gate.Options{Capacity: share, PerKey: max(1, share/2), MaxQueue: 1024, Lend: true}),
		reads:  gate.New("database reads", gate.Options{Capacity: share, PerKey: max(1, share/4), MaxQueue: 1024, Lend: true}),
	}
	db.runTx = db.pipelinedTx
	if err := db.Ping(ctx); err != nil {
		db.Close()
		return nil, err
	}
	citus, err := detectCitus(ctx, pool)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	var schema string
	if err := pool.QueryRowContext(ctx, `SELECT COALESCE(current_schema(), '')`).Scan(&schema); err != nil {
		db.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	pg := postgresDialect{channel: changesChannel(schema)}
	db.dialect = pg
	if citus {
		db.dialect = citusDialect{pg}
	}
	listen, stop := context.WithCancel(context.Background())
	db.stopListening, db.listening = stop, make(chan struct{})
	go db.listenChanges(listen, cfg, pg.channel)
	return db, nil
}

// postgresConfig parses dsn and bounds every wait of a connection: the
// dial and start-up (connect_timeout), each statement (statement_timeout,
// unless the URL sets its own), an idle open transaction, and a peer that
// stops answering (TCP keep-alives). Waits for answers are bounded by the
// caller's context, which closes the connection when it ends.
func postgresConfig(dsn string, opts Options) (*pgx.ConnConfig, error) {
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if cfg.ConnectTimeout == 0 {
		cfg.ConnectTimeout = connectTimeout
	}
	setDefault := func(name string, d time.Duration) {
		if _, ok := cfg.RuntimeParams[name]; !ok && d > 0 {
			cfg.RuntimeParams[name] = fmt.Sprint(d.Milliseconds())
		}
	}
	setDefault("statement_timeout", opts.StatementTimeout)
	setDefault("idle_in_transaction_session_timeout", idleInTransaction)
	dialer := &net.Dialer{Timeout: cfg.ConnectTimeout, KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: 15 * time.Second, Interval: 5 * time.Second, Count: 3}}
	cfg.DialFunc = dialer.DialContext
	switch {
	case opts.Trace && opts.Statements != nil:
		cfg.Tracer = multitracer.New(pgxLog{opts.Statements}, otelpgx.NewTracer())
	case opts.Trace:
		cfg.Tracer = otelpgx.NewTracer()
	case opts.Statements != nil:
		cfg.Tracer = pgxLog{opts.Statements}
	}
	return cfg, nil
}

// Shares are the fair shares of the pools, for monitoring.
func (db *DB) Shares() []*gate.Gate { return []*gate.Gate{db.writes, db.reads} }

// Engine names the database engine: "sqlite" or "postgres".
func (db *DB) Engine() string { return db.dialect.name() }

// Ping checks that the database answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.write.PingContext(ctx); err != nil {
		return fmt.Errorf("ping %s: %w", db.dialect.name(), err)
	}
	if db.read.DB != db.write {
		if err := db.read.PingContext(ctx); err != nil {
			return fmt.Errorf("ping %s readers: %w", db.dialect.name(), err)
		}
		if err := db.lookup.PingContext(ctx); err != nil {
			return fmt.Errorf("ping %s lookups: %w", db.dialect.name(), err)
		}
	}
	return nil
}

// Ready checks on a connection of its own that the database answers a
// read, so that a check never waits behind requests holding the pools.
func (db *DB) Ready(ctx context.Context) error {
	var v int64
	// schema_migrations exists in every migrated database of either engine;
	// reading it makes SQLite open the file, which SELECT 1 would not.
	err := db.health.QueryRowContext(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return Fault(fmt.Errorf("ready %s: %w", db.dialect.name(), err))
	}
	return nil
}

// Close closes all connections.
func (db *DB) Close() error {
	if db.committer != nil {
		db.committer.close()
	}
	if db.stopListening != nil {
		db.stopListening()
		<-db.listening
	}
	err := errors.Join(db.write.Close(), db.health.Close())
	if db.read.DB != db.write {
		err = errors.Join(err, db.read.Close(), db.lookup.Close())
	}
	return err
}

// Pools names the connection pools, for monitoring.
func (db *DB) Pools() map[string]*sql.DB {
	if db.read.DB == db.write {
		return map[string]*sql.DB{"planwerk_db": db.write}
	}
	return map[string]*sql.DB{"planwerk_db_writes": db.write, "planwerk_db_reads": db.read.DB, "planwerk_db_lookups": db.lookup.DB}
}

// ExecContext, QueryContext and QueryRowContext make *DB a Querier. They
// use the write pool, so statements that write (INSERT ... RETURNING
// included) work on it; plain reads of the store use the read pool.

// ExecContext runs a statement outside a transaction.
func (db *DB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return db.write.ExecContext(ctx, query, args...)
}

// QueryContext runs a query outside a transaction.
func (db *DB) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return db.write.QueryContext(ctx, query, args...)
}

// QueryRowContext runs a one-row query outside a transaction.
func (db *DB) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return db.write.QueryRowContext(ctx, query, args...)
}

// Tx runs fn in a transaction that commits when fn returns nil and rolls
// back on error or panic. On PostgreSQL, serialization failures and
// deadlocks are retried a few times with fn run afresh. Every wait of it
// ends by ctx's deadline, and a transaction that has not committed by
// then is not committed afterwards (deadline.go).
func (db *DB) Tx(ctx context.Context, fn func(q Querier) error) error {
	release, err := db.writes.Acquire(ctx)
	if err != nil {
		return err
	}
	defer release()
	const attempts = 5
	for i := 0; i < attempts; i++ {
		if db.committer != nil {
			err = db.groupTx(ctx, fn)
			if !errors.Is(err, errBatchAborted) {
				return err
			}
			continue
		}
		if db.runTx != nil {
			err = db.runTx(ctx, fn)
		} else {
			err = db.tx(ctx, fn)
		}
		if err == nil || !db.dialect.retryable(err) {
			return err
		}
		// Another attempt only within the request's deadline.
		if !pause(ctx, time.Duration(i+1)*5*time.Millisecond) {
			return err
		}
	}
	return err
}

func (db *DB) tx(ctx context.Context, fn func(q Querier) error) (err error) {
	tx, err := db.write.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	defer func() {
		if p := recover(); p != nil {
			_ = tx.Rollback()
			panic(p)
		}
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	t := &txn{Querier: tx}
	if err = fn(t); err != nil {
		return err
	}
	// The changes go last: their positions' lock is the transaction's last.
	tenants, err := db.flushChanges(ctx, t)
	if err != nil {
		return err
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	if len(tenants) > 0 {
		db.signal.fire(tenants...)
	}
	return nil
}

// nextID allocates an identifier for a new record of the tenant. Identifiers
// are unique across all resources of a tenant, so an upload id never equals
// the id of the record it belongs to.
func (db *DB) nextID(ctx context.Context, q Querier, tenantID int64) (int64, error) {
	return db.dialect.nextID(ctx, q, tenantID)
}

// FreeBytes is the free space on the disk of a database in a local file;
// for a database on a server (PostgreSQL), whose disk is the server's, it
// reports plenty.
func (db *DB) FreeBytes() (uint64, error) {
	path, ok := db.dialect.file()
	if !ok {
		return math.MaxUint64, nil
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(filepath.Dir(path), &st); err != nil {
		return 0, fmt.Errorf("free space of the database folder: %w", err)
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// LocalFile is the path of the database when it is a file of this
// machine's (SQLite), which this process can copy and measure; ok is false
// for a database on a server (PostgreSQL).
func (db *DB) LocalFile() (path string, ok bool) { return db.dialect.file() }

// DSN is the connection string the database was opened with.
func (db *DB) DSN() string { return db.dsn }
