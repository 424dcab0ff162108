package files_test

import (
	"bytes"
	"context"
	"testing"

	"planwerk/internal/files"
	"planwerk/internal/testenv"
)

// TestSecretKept: a service secret is made once and then read back, the
// same for every instance on the database; secrets of other names are
// their own.
func TestSecretKept(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db := testenv.OpenDB(t, b)
		first, err := files.NewTables(db).Secret(ctx, "signing", 32)
		if err != nil || len(first) != 32 {
			t.Fatalf("first secret: %d bytes, %v", len(first), err)
		}
		again, err := files.NewTables(db).Secret(ctx, "signing", 32)
		if err != nil || !bytes.Equal(again, first) {
			t.Errorf("the secret read again: %x %v, want %x", again, err, first)
		}
		other, err := files.NewTables(db).Secret(ctx, "other", 32)
		if err != nil || bytes.Equal(other, first) {
			t.Errorf("another name's secret: %x %v", other, err)
		}
	})
}
