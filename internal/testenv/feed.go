package testenv

import (
	"testing"

	"planwerk/internal/feed"
)

// FeedCursor is a cursor ahead positions past another: a cursor the feed
// never handed out.
func FeedCursor(t testing.TB, cursor string, ahead int64) string {
	t.Helper()
	seq, err := feed.ParseCursor(cursor)
	if err != nil {
		t.Fatal(err)
	}
	return feed.Cursor(seq + ahead)
}
