package httpapi

import (
	"testing"

	"planwerk/internal/errs"
)

// TestEveryKindHasAStatus: the edge's one table covers the vocabulary, so
// no refusal of a domain becomes a 500.
func TestEveryKindHasAStatus(t *testing.T) {
	t.Parallel()
	for _, k := range errs.Kinds() {
		if statusOf[k] < 400 {
			t.Errorf("kind %s has no status", k)
		}
		if a := errorFor(errs.New(k, "c", "m")); a.status != statusOf[k] {
			t.Errorf("kind %s answered %d, want %d", k, a.status, statusOf[k])
		}
	}
	if a := errorFor(errs.New(0, "c", "m")); a.status != 500 || a.Code != "internal_error" {
		t.Errorf("an Error without kind answered %d %s, want a generic 500", a.status, a.Code)
	}
}
