package errs_test

import (
	"fmt"
	"testing"

	"planwerk/internal/errs"
)

func TestFieldsNameEachFieldOnce(t *testing.T) {
	t.Parallel()
	e := errs.Fields(errs.Problem{Field: "day", Message: "must be a date"},
		errs.Problem{Field: "project", Message: "is required"}, errs.Problem{Field: "day", Message: "is taken"})
	if e.Kind != errs.Invalid || e.Code != "invalid" || len(e.Problems) != 3 {
		t.Fatalf("Fields: %+v", e)
	}
	if want := "the request is not valid: see day, project"; e.Message != want {
		t.Errorf("message %q, want %q", e.Message, want)
	}
}

func TestAsFindsWrapped(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("create time entry: %w", errs.Forbid("only admins"))
	e, ok := errs.As(err)
	if !ok || e.Kind != errs.Forbidden || e.Code != "forbidden" {
		t.Fatalf("As(%v) = %+v, %v", err, e, ok)
	}
	if _, ok := errs.As(fmt.Errorf("plain")); ok {
		t.Error("As found an Error in a plain error")
	}
}

func TestKindsAreNamed(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for _, k := range errs.Kinds() {
		name := k.String()
		if name == "" || name == "unknown" || seen[name] {
			t.Errorf("kind %d has name %q", int(k), name)
		}
		seen[name] = true
	}
	if errs.Kind(0).String() != "unknown" {
		t.Error("the zero kind has a name")
	}
}
