package flagfile_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"planwerk/internal/flagfile"
	"planwerk/internal/testenv"
)

// TestReadFile: a file is read whole up to the limit; one byte more, or
// a pipe that goes on past it, is refused. (A pipe of a MiB stands for
// /dev/zero, so that a helper reading without bound fails this test
// rather than take the machine's memory.)
func TestReadFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, n), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		name  string
		path  string
		limit int64
		size  int    // read, when no error
		err   string // in the error
	}{
		{"empty", write("empty", 0), 10, 0, ""},
		{"at the limit", write("ten", 10), 10, 10, ""},
		{"one byte over", write("eleven", 11), 10, 0, "larger than 10 bytes"},
		{"1 MiB", write("mib", flagfile.Max), flagfile.Max, flagfile.Max, ""},
		{"1 MiB and a byte", write("mib1", flagfile.Max+1), flagfile.Max, 0, "larger than 1 MiB"},
		{"a pipe that goes on", testenv.Pipe(t, 1<<20), 10, 0, "larger than 10 bytes"},
		{"a folder", dir, 10, 0, "is a directory"},
		{"missing", filepath.Join(dir, "missing"), 10, 0, "no such file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := flagfile.Read(c.path, c.limit)
			if c.err == "" {
				if err != nil || len(got) != c.size {
					t.Errorf("read %d bytes, %v; want %d", len(got), err, c.size)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("read %d bytes, %v; want an error %q", len(got), err, c.err)
			}
			var tl *flagfile.TooLargeError
			if strings.HasPrefix(c.err, "larger") && (!errors.As(err, &tl) || tl.Max != c.limit) {
				t.Errorf("%v is no *TooLargeError of %d", err, c.limit)
			}
		})
	}
}
