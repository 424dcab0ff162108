package records

import (
	"encoding/json"
	"testing"
)

// TestWriteChanged: a write changes an attribute when its value differs,
// numbers compared by value, and a null or missing value differs from
// false.
func TestWriteChanged(t *testing.T) {
	t.Parallel()
	w := &Write{
		Old: Doc{"status": json.Number("1"), "isAdmin": nil, "name": "a", "tags": []any{"x"}},
		New: Doc{"status": int64(1), "isAdmin": false, "name": "b", "tags": []any{"x"}},
	}
	for name, want := range map[string]bool{"status": false, "isAdmin": true, "name": true, "tags": false, "missing": false} {
		if got := w.Changed(name); got != want {
			t.Errorf("Changed(%s) = %v, want %v", name, got, want)
		}
	}
}
