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
	t.Parallel()
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
			sp.Finish(nil)
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

// A reader that starts before the writer finishes reads every record in
// order as the writer adds them, across the spill to the file, and then
// the writer's error.
func TestFollow(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
	}{{"complete", nil}, {"failed", errors.New("the database went away")}} {
		t.Run(c.name, func(t *testing.T) {
			sp := spool.New(t.TempDir(), 4<<10)
			defer sp.Close()
			const count = 20000
			record := func(i int) []byte { return fmt.Appendf(nil, "%d:%s", i, bytes.Repeat([]byte{'x'}, i%97)) }
			go func() {
				for i := 0; i < count; i++ {
					if err := sp.Add(record(i)); err != nil {
						sp.Finish(err)
						return
					}
				}
				sp.Finish(c.err)
			}()
			if long, err := sp.Long(); err != nil || !long {
				t.Fatalf("Long = %v, %v; want true (the records outgrow memory)", long, err)
			}
			r, err := sp.Reader()
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < count; i++ {
				got, err := r.Next()
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				if want := record(i); !bytes.Equal(got, want) {
					t.Fatalf("record %d: %.30q, want %.30q", i, got, want)
				}
			}
			_, err = r.Next()
			if want := c.err; want == nil {
				if !errors.Is(err, io.EOF) {
					t.Fatalf("after the last record: %v, want EOF", err)
				}
			} else if !errors.Is(err, want) {
				t.Fatalf("after the last record: %v, want %v", err, want)
			}
		})
	}
}

// A short sequence is complete when Long returns, with the writer's error.
func TestShortIsComplete(t *testing.T) {
	t.Parallel()
	sp := spool.New(t.TempDir(), 1<<20)
	defer sp.Close()
	failure := errors.New("query failed")
	go func() {
		_ = sp.Add([]byte("one"))
		sp.Finish(failure)
	}()
	if long, err := sp.Long(); long || !errors.Is(err, failure) {
		t.Fatalf("Long = %v, %v; want false, %v", long, err, failure)
	}
	if sp.Len() != 1 {
		t.Fatalf("Len = %d, want 1", sp.Len())
	}
}
