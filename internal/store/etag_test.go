package store_test

import (
	"context"
	"testing"

	"planwerk/internal/etag"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// TestStoredTags: a record's stored entity tag is always its content's
// (wantDoc checks it), whichever way the record was written: a plain
// create and an update store it; a document whose canonical form holds
// the id the create stands in for the drawn one (a client's own number)
// is stored with the content's tag or none, never another; a change made
// inside the database (Set) leaves none, and the record's Tag is its
// content's.
func TestStoredTags(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		db, alpha, _ := twoTenants(t, b)
		h := on(db, alpha, notes)
		plain := insertVia(t, db, h, map[string]any{"title": "plain"})
		if plain.ETag == "" {
			t.Error("a plain create stored no tag")
		}
		wantDoc(t, h, plain, "a plain create")

		// The stand-in nested in the document: the create cannot compute
		// the tag around the id, and must not store a wrong one.
		odd := insertVia(t, db, h, map[string]any{"title": "odd", "nested": map[string]any{"id": 918273645546372}})
		wantDoc(t, h, odd, "a create holding the stand-in id")

		var upd store.Record
		inTx(t, db, func(q store.Querier) error {
			var err error
			upd, err = h(q).Update(ctx, odd.ID, created(t, odd), map[string]any{"title": "odd, changed"})
			return err
		})
		if upd.ETag == "" || upd.ETag == odd.Tag() {
			t.Errorf("an update stored the tag %q (before: %q), want a new one", upd.ETag, odd.Tag())
		}
		wantDoc(t, h, upd, "an update")

		before := plain.Tag()
		if n := set(t, db, h, titled(plain), "status", "done"); n != 1 {
			t.Fatalf("Set changed %d records, want 1", n)
		}
		after := get(t, h, plain.ID)
		if after.ETag != "" {
			t.Errorf("Set left the stored tag %q, want none", after.ETag)
		}
		if after.Tag() == before || after.Tag() != etag.Of(after.Doc) {
			t.Errorf("Set: the record's tag %s (before: %s), want its new content's", after.Tag(), before)
		}
	})
}
