package sheet_test

import (
	"testing"

	"planwerk/internal/sheet"
)

// TestText: text that starts a formula gets a leading "'"; any other
// text, and the characters elsewhere than first, stay as they are.
func TestText(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"=HYPERLINK(\"https://evil.example\",\"x\")": "'=HYPERLINK(\"https://evil.example\",\"x\")",
		"+1":       "'+1",
		"-1":       "'-1",
		"@SUM(A1)": "'@SUM(A1)",
		"\tx":      "'\tx",
		"\rx":      "'\rx",
		"":         "",
		"typo":     "typo",
		"a=b":      "a=b",
		"'quoted":  "'quoted",
		" =x":      " =x",
		"\n=x":     "\n=x",
	} {
		if got := sheet.Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}
