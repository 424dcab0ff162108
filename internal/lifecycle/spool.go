package lifecycle

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"os"
)

// spool is an unlinked temporary file that an export writes its members
// to, region after region, before the archive is written: a tar member
// needs its size before its bytes, and the manifest, first of all,
// needs every member's size and SHA-256.
type spool struct {
	f    *os.File
	w    *bufio.Writer
	size int64
}

// newSpool makes a spool in dir ("" for the system's temporary folder).
func newSpool(dir string) (*spool, error) {
	f, err := os.CreateTemp(dir, ".planwerk-export-*")
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	// Unlinked at once: the file goes when it is closed, or when the
	// process ends however it ends.
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: %w", err)
	}
	return &spool{f: f, w: bufio.NewWriterSize(f, 256<<10)}, nil
}

func (s *spool) Close() error { return s.f.Close() }

// region is a stretch of the spool, with its SHA-256 and lines.
type region struct {
	off, size int64
	sum       string
	lines     int64
}

// regionWriter appends a region to the spool.
type regionWriter struct {
	s     *spool
	off   int64
	h     hash.Hash
	lines int64
}

// begin starts a region at the spool's end; nothing else may be written
// to the spool until it ends.
func (s *spool) begin() *regionWriter {
	return &regionWriter{s: s, off: s.size, h: sha256.New()}
}

func (r *regionWriter) Write(p []byte) (int, error) {
	n, err := r.s.w.Write(p)
	r.h.Write(p[:n])
	r.s.size += int64(n)
	return n, err
}

// line counts a line written.
func (r *regionWriter) line() { r.lines++ }

// end ends the region and makes it readable.
func (r *regionWriter) end() (region, error) {
	if err := r.s.w.Flush(); err != nil {
		return region{}, fmt.Errorf("spool: %w", err)
	}
	return region{off: r.off, size: r.s.size - r.off, sum: hex.EncodeToString(r.h.Sum(nil)), lines: r.lines}, nil
}

// reader reads a region that has ended.
func (s *spool) reader(r region) io.Reader {
	return io.NewSectionReader(s.f, r.off, r.size)
}
