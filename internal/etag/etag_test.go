package etag

import "testing"

// TestOf: the tag is of the content, not of its spelling.
func TestOf(t *testing.T) {
	t.Parallel()
	a, b := Of([]byte(`{"b":1,"a":"x"}`)), Of([]byte(`{"a": "x", "b": 1.0}`))
	if a != b {
		t.Errorf("same content, tags %s and %s", a, b)
	}
	if a == Of([]byte(`{"a":"y","b":1}`)) {
		t.Error("different content, same tag")
	}
}

// TestConditions: If-Match compares strongly, If-None-Match weakly.
func TestConditions(t *testing.T) {
	t.Parallel()
	tag := `"abc"`
	for _, c := range []struct {
		header           string
		match, noneMatch bool
	}{
		{"", true, false},
		{"*", true, true},
		{`"abc"`, true, true},
		{`W/"abc"`, false, true},
		{`"x", "abc"`, true, true},
		{`"x,y", "abc"`, true, true},
		{`"x"`, false, false},
		{`garbage`, false, false},
		{`"unterminated`, false, false},
	} {
		if got := Match(c.header, tag); got != c.match {
			t.Errorf("Match(%q) = %v", c.header, got)
		}
		if got := NoneMatch(c.header, tag); got != c.noneMatch {
			t.Errorf("NoneMatch(%q) = %v", c.header, got)
		}
	}
}
