package testenv

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Pipe is a named pipe whose writer writes n zero bytes (for ever when n
// is negative), or fewer when its reader goes first: a file that does
// not end, as /dev/zero, without taking the machine's memory when a
// reader under test reads it without bound.
func Pipe(t testing.TB, n int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		w, err := os.OpenFile(p, os.O_WRONLY, 0) // waits for the reader
		if err != nil {
			return
		}
		defer w.Close()
		zeros := make([]byte, 64<<10)
		for n != 0 {
			chunk := zeros
			if n > 0 && n < int64(len(chunk)) {
				chunk = chunk[:n]
			}
			if _, err := w.Write(chunk); err != nil {
				return // the reader has gone
			}
			if n > 0 {
				n -= int64(len(chunk))
			}
		}
	}()
	t.Cleanup(func() {
		// A reader that never came: open and leave, so the writer ends.
		if r, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		<-done
	})
	return p
}
