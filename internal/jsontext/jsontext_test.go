package jsontext_test

import (
	"encoding/json"
	"strings"
	"testing"

	"planwerk/internal/jsontext"
)

// TestMarshal: markup as itself, everything else as encoding/json writes
// it (keys sorted, control characters and invalid UTF-8 escaped), and no
// trailing newline.
func TestMarshal(t *testing.T) {
	t.Parallel()
	v := map[string]any{"b": "<a href=\"x?y=1&z=2\">", "a": "\x01\u2028\xff", "n": 1.5}
	got, err := jsontext.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a":"\u0001\u2028\ufffd","b":"<a href=\"x?y=1&z=2\">","n":1.5}`; string(got) != want {
		t.Errorf("Marshal = %s, want %s", got, want)
	}
	std, _ := json.Marshal(v)
	if unescaped := strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(std)); unescaped != string(got) {
		t.Errorf("Marshal = %s, json.Marshal with markup unescaped = %s", got, unescaped)
	}
}
