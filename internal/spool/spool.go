// Package spool holds a sequence of byte records briefly: in memory while
// they are few, then in an unlinked temporary file. A list is read from
// the database into a spool as fast as the database delivers it, so that
// no connection or snapshot waits on a slow client while the answer is
// written.
package spool

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"planwerk/internal/fault"
)

// Spool is an append-only sequence of records, read back once in order.
// It is not safe for concurrent use.
type Spool struct {
	dir      string
	memLimit int
	mem      []byte // framed records while they fit in memLimit
	file     *os.File
	w        *bufio.Writer
	n        int
	size     int64
	lenBuf   [binary.MaxVarintLen64]byte
}

// New returns an empty spool that keeps up to memLimit bytes in memory
// and the rest in a temporary file in dir ("" for the system's).
func New(dir string, memLimit int) *Spool {
	return &Spool{dir: dir, memLimit: memLimit}
}

// Add appends a copy of rec.
func (s *Spool) Add(rec []byte) error {
	n := binary.PutUvarint(s.lenBuf[:], uint64(len(rec)))
	s.n++
	s.size += int64(n + len(rec))
	if s.file == nil && len(s.mem)+n+len(rec) <= s.memLimit {
		s.mem = append(s.mem, s.lenBuf[:n]...)
		s.mem = append(s.mem, rec...)
		return nil
	}
	if s.file == nil {
		if err := s.spill(); err != nil {
			return err
		}
	}
	if _, err := s.w.Write(s.lenBuf[:n]); err != nil {
		return diskError(err)
	}
	if _, err := s.w.Write(rec); err != nil {
		return diskError(err)
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
	s.file = f
	s.w = bufio.NewWriterSize(f, 64<<10)
	if _, err := s.w.Write(s.mem); err != nil {
		return diskError(err)
	}
	s.mem = nil
	return nil
}

func diskError(err error) error {
	if fault.NoSpace(err) {
		return fault.Full(fault.Disk, fmt.Errorf("spool: %w", err))
	}
	return fault.Unavailable(fault.Disk, fmt.Errorf("spool: %w", err))
}

// Len is the number of records.
func (s *Spool) Len() int { return s.n }

// Size is the number of bytes the records take, framing included.
func (s *Spool) Size() int64 { return s.size }

// Reader returns a reader of the records from the first. Add must not be
// called afterwards.
func (s *Spool) Reader() (*Reader, error) {
	if s.file == nil {
		return &Reader{r: bufio.NewReaderSize(&memReader{b: s.mem}, 64<<10)}, nil
	}
	if err := s.w.Flush(); err != nil {
		return nil, diskError(err)
	}
	if _, err := s.file.Seek(0, io.SeekStart); err != nil {
		return nil, diskError(err)
	}
	return &Reader{r: bufio.NewReaderSize(s.file, 64<<10)}, nil
}

// Close releases the memory and the temporary file.
func (s *Spool) Close() error {
	s.mem = nil
	if s.file != nil {
		err := s.file.Close()
		s.file = nil
		return err
	}
	return nil
}

// memReader reads a byte slice; unlike bytes.Reader it lets go of it.
type memReader struct{ b []byte }

func (m *memReader) Read(p []byte) (int, error) {
	if len(m.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p, m.b)
	m.b = m.b[n:]
	return n, nil
}

// Reader reads the records of a spool in order.
type Reader struct {
	r   *bufio.Reader
	buf []byte
}

// Next returns the next record, valid until the next call, or io.EOF
// after the last.
func (r *Reader) Next() ([]byte, error) {
	n, err := binary.ReadUvarint(r.r)
	if errors.Is(err, io.EOF) {
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
