package spool_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"planwerk/internal/spool"
)

// Records come back in order and unchanged, whether they stayed in
// memory, spilled to the file, or straddle the two; the file leaves no
// name behind.
func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		name     string
		memLimit int
		count    int
		size     func(i int) int
	}{
		{"empty", 1 << 10, 0, nil},
		{"in memory", 1 << 20, 100, func(i int) int { return i }},
		{"spilled", 64, 500, func(i int) int { return i % 300 }},
		{"one big record", 16, 1, func(int) int { return 3 << 20 }},
		{"empty records", 8, 50, func(int) int { return 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			sp := spool.New(dir, c.memLimit)
			defer sp.Close()
			var want [][]byte
			for i := 0; i < c.count; i++ {
				rec := bytes.Repeat([]byte{byte('a' + i%26)}, c.size(i))
				rec = append(rec, fmt.Sprint(i)...)
				want = append(want, bytes.Clone(rec))
				if err := sp.Add(rec); err != nil {
					t.Fatal(err)
				}
				rec[len(rec)-1] = '!' // the spool keeps its own copy
			}
			if sp.Len() != c.count {
				t.Fatalf("Len = %d, want %d", sp.Len(), c.count)
			}
			if names, _ := os.ReadDir(dir); len(names) != 0 {
				t.Fatalf("the spool left %d names in its folder", len(names))
			}
			r, err := sp.Reader()
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				got, err := r.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if !bytes.Equal(got, want[i]) {
					t.Fatalf("record %d: %d bytes %.20q, want %d bytes %.20q", i, len(got), got, len(want[i]), want[i])
				}
			}
			if _, err := r.Next(); !errors.Is(err, io.EOF) {
				t.Fatalf("after the last record: %v, want EOF", err)
			}
		})
	}
}
