package filestore_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// TestWalkPrefix: a walk with a prefix reports the keys that start with
// it, and only those: a tenant's keys, not another's whose id starts the
// same; a prefix reaching outside the folder is refused.
func TestWalkPrefix(t *testing.T) {
	t.Parallel()
	testenv.EachFiles(t, func(t *testing.T, fb testenv.FileBackend) {
		ctx := context.Background()
		fs := open(t, testenv.Files(t, fb))
		keys := []string{"t1/u1-a", "t1/u2-b", "t12/u3-c", "t2/u4-d"}
		for _, k := range keys {
			if _, err := fs.Put(ctx, k, strings.NewReader(k)); err != nil {
				t.Fatal(err)
			}
		}
		walk := func(prefix string) []string {
			var got []string
			if err := fs.Walk(ctx, prefix, func(key string, _ time.Time) error { got = append(got, key); return nil }); err != nil {
				t.Fatalf("walk %q: %v", prefix, err)
			}
			slices.Sort(got)
			return got
		}
		for prefix, want := range map[string][]string{
			"":     keys,
			"t1/":  {"t1/u1-a", "t1/u2-b"},
			"t1/u": {"t1/u1-a", "t1/u2-b"},
			"t12/": {"t12/u3-c"},
			"t9/":  nil,
		} {
			if got := walk(prefix); !slices.Equal(got, want) {
				t.Errorf("walk %q: %v, want %v", prefix, got, want)
			}
		}
		if fb.Name == "folder" {
			if err := fs.Walk(ctx, "t1/../../", func(string, time.Time) error { return nil }); err == nil {
				t.Error("a prefix out of the folder was walked")
			}
		}
	})
}
