package records

import (
	"context"
	"strings"
	"testing"

	"planwerk/internal/auth"
	"planwerk/internal/resource"
)

// TestRulesCheckedAtStart: a rule bound to a name the registry does not
// know, or one that could never run, stops the service from starting
// instead of silently switching a rule off.
func TestRulesCheckedAtStart(t *testing.T) {
	t.Parallel()
	reg := resource.New()
	check := func(context.Context, Change) error { return nil }
	normalize := func(context.Context, *Write) error { return nil }
	tests := []struct {
		name  string
		rules Rules
		want  string // in the error; "" for none
	}{
		{"every registry name", Rules{"time-entries": {Check: check}, "holidays": {}}, ""},
		{"a typo", Rules{"time-entry": {Check: check}}, `"time-entry" is no resource of the registry`},
		{"a model name instead of a path name", Rules{"TimeEntry": {Check: check}}, `"TimeEntry" is no resource`},
		{"write rules on a read-only resource", Rules{"holidays": {Check: check}}, `"holidays" is read-only`},
		{"a Normalize on a read-only resource", Rules{"holidays": {Normalize: normalize}}, `"holidays" is read-only`},
		{"Visible without its list filter", Rules{"documents": {Visible: func(context.Context, auth.Principal, DocView) (bool, error) { return true, nil }}}, "needs its ReadFilter"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(nil, reg, tc.rules)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("New: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("New: error %v, want one saying %q", err, tc.want)
			}
		})
	}
}
