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

// TestAround: the tag of a document with another value where the mark
// was is the hash of the parts around it and that value; a mark that is
// not one member's, once, is refused.
func TestAround(t *testing.T) {
	t.Parallel()
	const mark = `"id":918273645546372`
	doc := []byte(`{"name": "x", "id": 918273645546372, "tags": [{"id": 7}], "z": 1.5}`)
	before, after, ok := Around(doc, mark)
	if !ok {
		t.Fatal("Around refused a document holding the mark once")
	}
	want := Of([]byte(`{"name":"x","id":42,"tags":[{"id":7}],"z":1.5}`))
	if got := ofBytes([]byte(string(before) + "42" + string(after))); got != want {
		t.Errorf("tag from the parts %s, of the document %s", got, want)
	}
	for _, refused := range []string{
		`{"id": 918273645546372, "n": {"id": 918273645546372}}`, // twice
		`{"id": 9182736455463721}`,                              // a longer number
		`{"a": "\"id\":918273645546372"}`,                       // inside a string
		`{"name": "x"}`,                                         // absent
	} {
		if _, _, ok := Around([]byte(refused), mark); ok {
			t.Errorf("Around(%s) = ok, want refused", refused)
		}
	}
}
