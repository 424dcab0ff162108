package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"planwerk/internal/fault"
)

// The batches of group commit are made deterministic here: the first
// write holds its turn until the others are queued behind it, so all of
// them run in the batch it opened.

// batchDB is a migrated SQLite database with group commit and a table
// of its own, and the sizes of the batches it commits.
type batchDB struct {
	*DB
	mu      sync.Mutex
	batches []int
}

func openBatchDB(t *testing.T) *batchDB {
	t.Helper()
	ctx := context.Background()
	opts := DefaultOptions()
	opts.GroupCommit, opts.CommitWait = true, 0
	db, err := OpenWith(ctx, "sqlite:"+filepath.Join(t.TempDir(), "batch.db"), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.ExecContext(ctx, `CREATE TABLE marks (name TEXT PRIMARY KEY)`); err != nil {
		t.Fatal(err)
	}
	b := &batchDB{DB: db}
	db.ObserveBatches(func(n int) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.batches = append(b.batches, n)
	})
	return b
}

func (b *batchDB) sizes() []int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.batches)
}

func mark(ctx context.Context, q Querier, name string) error {
	_, err := q.ExecContext(ctx, `INSERT INTO marks (name) VALUES ($1)`, name)
	return err
}

func (b *batchDB) marks(t *testing.T) []string {
	t.Helper()
	rows, err := b.read.Query(`SELECT name FROM marks ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		names = append(names, n)
	}
	return names
}

// holdFirst starts a write that marks "a" and keeps its turn until
// release is closed; it returns the write's outcome channel and how many
// times its function ran.
func (b *batchDB) holdFirst(t *testing.T, release <-chan struct{}) (<-chan error, *int) {
	t.Helper()
	started := make(chan struct{})
	runs := new(int)
	done := make(chan error, 1)
	go func() {
		done <- b.Tx(context.Background(), func(q Querier) error {
			*runs++
			if *runs == 1 {
				close(started)
				<-release
			}
			return mark(context.Background(), q, "a")
		})
	}()
	<-started
	return done, runs
}

// queued waits until n writes wait behind the one holding its turn.
func (b *batchDB) queued(t *testing.T, n int) {
	t.Helper()
	for len(b.committer.queue) < n {
		time.Sleep(time.Millisecond)
	}
}

// behind starts a write of fn and waits until it is the n-th write queued
// behind the one holding its turn; it returns the write's outcome.
func (b *batchDB) behind(t *testing.T, ctx context.Context, n int, fn func(q Querier) error) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- b.Tx(ctx, fn) }()
	b.queued(t, n)
	return done
}

// markC is a write that marks "c".
func markC(q Querier) error { return mark(context.Background(), q, "c") }

// release lets the first write go on and checks that it and the third
// (marking "c") committed, and nothing else of the batch did.
func (b *batchDB) release(t *testing.T, release chan struct{}, first, third <-chan error) {
	t.Helper()
	close(release)
	if err := <-first; err != nil {
		t.Errorf("first write: %v", err)
	}
	if err := <-third; err != nil {
		t.Errorf("third write: %v", err)
	}
	if got := b.marks(t); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("stored %v, want [a c]", got)
	}
}

// TestBatchNeighbours: of three writes in one batch, the one that fails
// is rolled back alone; the other two commit together, in one commit.
func TestBatchNeighbours(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first, _ := b.holdFirst(t, release)
	failing := errors.New("refused")
	errB := b.behind(t, ctx, 1, func(q Querier) error {
		if err := mark(ctx, q, "b"); err != nil {
			return err
		}
		return failing
	})
	errC := b.behind(t, ctx, 2, markC)
	b.release(t, release, first, errC)
	if err := <-errB; !errors.Is(err, failing) {
		t.Errorf("failing write: %v, want its own error", err)
	}
	if got := b.sizes(); !slices.Equal(got, []int{2}) {
		t.Errorf("batches %v, want one of 2 writes", got)
	}
}

// TestBatchBroken: a write that leaves the transaction unusable fails;
// its neighbours' work, rolled back with the batch, runs again and
// commits once.
func TestBatchBroken(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first, runs := b.holdFirst(t, release)
	errB := b.behind(t, ctx, 1, func(q Querier) error {
		// Ends the batch's transaction under everyone's feet.
		if _, err := q.ExecContext(ctx, `ROLLBACK`); err != nil {
			return err
		}
		return errors.New("broke the transaction")
	})
	errC := b.behind(t, ctx, 2, markC)
	b.release(t, release, first, errC)
	if *runs != 2 {
		t.Errorf("first write ran %d times, want 2 (once more after the batch was rolled back)", *runs)
	}
	if err := <-errB; err == nil {
		t.Error("the breaking write succeeded")
	}
}

// TestBatchLeftWaiting: a write whose request ends while it waits for
// its turn changes nothing and says so; the batch goes on without it.
func TestBatchLeftWaiting(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first, _ := b.holdFirst(t, release)
	gone, cancel := context.WithCancel(ctx)
	errB := b.behind(t, gone, 1, func(q Querier) error { return mark(ctx, q, "b") })
	errC := b.behind(t, ctx, 2, markC)
	cancel()
	if err := <-errB; !errors.Is(err, context.Canceled) {
		t.Errorf("abandoned write: %v, want context.Canceled", err)
	}
	b.release(t, release, first, errC)
}

// TestBatchGivenUp: a write whose request gives up after its turn, while
// the batch is still open, fails and is not committed; the batch is rolled
// back, and the others run again and commit.
func TestBatchGivenUp(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first, runs := b.holdFirst(t, release)
	gone, cancel := context.WithCancel(ctx)
	errB := b.behind(t, gone, 1, func(q Querier) error { return mark(ctx, q, "b") })
	inTurn, goOn := make(chan struct{}), make(chan struct{})
	var once sync.Once
	errC := b.behind(t, ctx, 2, func(q Querier) error {
		// The batch stays open, b's turn done, until b has given up.
		once.Do(func() { close(inTurn) })
		<-goOn
		return markC(q)
	})
	close(release)
	<-inTurn
	cancel()
	if err := <-errB; !errors.Is(err, context.Canceled) {
		t.Errorf("write given up after its turn: %v, want context.Canceled", err)
	}
	close(goOn)
	if err := <-first; err != nil {
		t.Errorf("first write: %v", err)
	}
	if err := <-errC; err != nil {
		t.Errorf("third write: %v", err)
	}
	if got := b.marks(t); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("stored %v, want [a c]: the write given up must not be committed", got)
	}
	if *runs != 2 {
		t.Errorf("first write ran %d times, want 2 (once more after the batch was rolled back)", *runs)
	}
}

// TestBatchPanic: a write that panics is rolled back alone and the
// panic reaches its caller; the batch commits the others.
func TestBatchPanic(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	ctx := context.Background()
	release := make(chan struct{})
	first, _ := b.holdFirst(t, release)
	recovered := make(chan any, 1)
	go func() {
		defer func() { recovered <- recover() }()
		_ = b.Tx(ctx, func(q Querier) error {
			if err := mark(ctx, q, "b"); err != nil {
				return err
			}
			panic("boom")
		})
	}()
	b.queued(t, 1)
	errC := b.behind(t, ctx, 2, markC)
	b.release(t, release, first, errC)
	if p := <-recovered; p != "boom" {
		t.Errorf("recovered %v, want the write's panic", p)
	}
}

// TestCloseTwice: closing a database twice does not fail.
func TestCloseTwice(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_ = b.Close()
}

// TestWriteAfterClose: a write after the database closed is refused as a
// database fault (503 with Retry-After), not as an internal error.
func TestWriteAfterClose(t *testing.T) {
	t.Parallel()
	b := openBatchDB(t)
	b.Close()
	err := b.Tx(context.Background(), func(q Querier) error { return mark(context.Background(), q, "late") })
	if _, ok := fault.As(Fault(err)); !ok {
		t.Fatalf("write after close: %v, want a database fault", err)
	}
}
