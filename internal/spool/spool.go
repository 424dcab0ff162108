// Package spool holds a sequence of byte records briefly: in memory while
// they are few, then in an unlinked temporary file. A list is read from
// the database into a spool as fast as the database delivers it, so that
// no connection or snapshot waits on a slow client while the answer is
// written. The answer is written while the spool still fills: one
// reader follows the writer, so a long list costs the longer of reading
// and writing it, not their sum.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"planwerk/internal/fault"
)

// fileChunk is how many bytes of records the writer gathers before it
// writes them to the file, where the reader can see them.
const fileChunk = 64 << 10

// Spool is an append-only sequence of records, read back in order.
// One goroutine adds records and then calls Finish; one other may read
// them meanwhile.
type Spool struct {
	dir      string
	memLimit int
	// The writer's own.
	n      int
	size   int64
	chunk  []byte // framed records not yet in the file
	lenBuf [binary.MaxVarintLen64]byte

	mu      sync.Mutex
	changed sync.Cond // signalled when the fields below change
	mem     []byte    // framed records while they fit in memLimit
	file    *os.File  // all framed records up to avail, once spilled
	avail   int64     // bytes of framed records the reader may read
	done    bool
	err     error // why the writer stopped early, once done
}

// New returns an empty spool that keeps up to memLimit bytes in memory
// and the rest in a temporary file in dir ("" for the system's).
func New(dir string, memLimit int) *Spool {
	s := &Spool{dir: dir, memLimit: memLimit}
	s.changed.L = &s.mu
	return s
}

// Add appends a copy of rec.
func (s *Spool) Add(rec []byte) error {
	n := binary.PutUvarint(s.lenBuf[:], uint64(len(rec)))
	s.n++
	s.size += int64(n + len(rec))
	if s.file == nil && len(s.mem)+n+len(rec) <= s.memLimit {
		// The reader only reads below avail, and append leaves what it
		// has taken of an earlier array untouched.
		s.mu.Lock()
		s.mem = append(s.mem, s.lenBuf[:n]...)
		s.mem = append(s.mem, rec...)
		s.avail = int64(len(s.mem))
		s.mu.Unlock()
		s.changed.Broadcast()
		return nil
	}
	if s.file == nil {
		if err := s.spill(); err != nil {
			return err
		}
	}
	s.chunk = append(s.chunk, s.lenBuf[:n]...)
	if len(rec) >= fileChunk {
		// A large record goes to the file as it is: copying it into the
		// chunk would grow the chunk to its size for the spool's life.
		return s.flush(rec)
	}
	s.chunk = append(s.chunk, rec...)
	if len(s.chunk) >= fileChunk {
		return s.flush(nil)
	}
	return nil
}

// spill moves the records held in memory to a temporary file. The file is
// unlinked at once: it vanishes with the process, whatever happens.
func (s *Spool) spill() error {
	f, err := os.CreateTemp(s.dir, "planwerk-spool-*")
	if err != nil {
		return diskError(err)
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return diskError(err)
	}
	if _, err := f.Write(s.mem); err != nil {
		f.Close()
		return diskError(err)
	}
	s.mu.Lock()
	s.file = f
	s.mem = nil // a reader still in it keeps its own slice of it
	s.mu.Unlock()
	s.changed.Broadcast()
	return nil
}

// flush writes the gathered records, and then rest, to the file and lets
// the reader see them.
func (s *Spool) flush(rest []byte) error {
	if len(s.chunk)+len(rest) == 0 {
		return nil
	}
	if _, err := s.file.Write(s.chunk); err != nil {
		return diskError(err)
	}
	if _, err := s.file.Write(rest); err != nil {
		return diskError(err)
	}
	s.mu.Lock()
	s.avail += int64(len(s.chunk) + len(rest))
	s.mu.Unlock()
	s.changed.Broadcast()
	s.chunk = s.chunk[:0]
	return nil
}

// Finish ends the sequence. A reader gets err after the last record, or
// io.EOF when err is nil.
func (s *Spool) Finish(err error) {
	if s.file != nil {
		if ferr := s.flush(nil); err == nil {
			err = ferr
		}
	}
	s.mu.Lock()
	s.done, s.err = true, err
	s.mu.Unlock()
	s.changed.Broadcast()
}

// Long waits until the spool is finished or has spilled to its file, and
// reports which: a short sequence is complete before anyone reads it,
// with the writer's error if it stopped early.
func (s *Spool) Long() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for !s.done && s.file == nil {
		s.changed.Wait()
	}
	if s.done {
		return false, s.err
	}
	return true, nil
}

func diskError(err error) error {
	if fault.NoSpace(err) {
		return fault.Full(fault.Disk, fmt.Errorf("spool: %w", err))
	}
	return fault.Unavailable(fault.Disk, fmt.Errorf("spool: %w", err))
}

// Len is the number of records added.
func (s *Spool) Len() int { return s.n }

// Size is the number of bytes the records added take, framing included.
func (s *Spool) Size() int64 { return s.size }

// Reader returns a reader of the records from the first, including those
// added after it was made: once it has caught up with the writer it waits
// for more, until Finish. A finished spool can be read again, by one
// reader after another, until Close.
func (s *Spool) Reader() (*Reader, error) {
	return &Reader{s: s, r: bufio.NewReaderSize(&follower{s: s}, 64<<10)}, nil
}

// Close releases the memory and the temporary file. The writer must have
// finished, and the reader be done.
func (s *Spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mem = nil
	if s.file != nil {
		err := s.file.Close()
		s.file = nil
		return err
	}
	return nil
}

// follower reads the framed records as far as the writer has made them
// available, waiting for more while it has not finished.
type follower struct {
	s   *Spool
	off int64
}

func (f *follower) Read(p []byte) (int, error) {
	s := f.s
	s.mu.Lock()
	for f.off == s.avail && !s.done {
		s.changed.Wait()
	}
	avail := s.avail - f.off
	mem, file := s.mem, s.file
	s.mu.Unlock()
	if avail == 0 {
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), avail)]
	var n int
	if file == nil {
		n = copy(p, mem[f.off:])
	} else {
		var err error
		if n, err = file.ReadAt(p, f.off); n == 0 && err != nil {
			return 0, err
		}
	}
	f.off += int64(n)
	return n, nil
}

// Reader reads the records of a spool in order.
type Reader struct {
	s   *Spool
	r   *bufio.Reader
	buf []byte
}

// Next returns the next record, valid until the next call; after the last
// one, the error the writer finished with, or io.EOF.
func (r *Reader) Next() ([]byte, error) {
	n, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
		r.s.mu.Lock()
		err := r.s.err
		r.s.mu.Unlock()
		if err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	if err != nil {
		return nil, diskError(err)
	}
	if uint64(cap(r.buf)) < n {
		r.buf = make([]byte, n)
	}
	r.buf = r.buf[:n]
	if _, err := io.ReadFull(r.r, r.buf); err != nil {
		return nil, diskError(err)
	}
	return r.buf, nil
}
