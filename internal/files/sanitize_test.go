package files

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestSanitize: docs/api.md "Stored filenames": a
// stored filename keeps ASCII letters and digits, '_', '.', and ä ö ü Ä Ö
// Ü ß; everything else goes; a name that sanitises to nothing is "file".
func TestSanitize(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"report.pdf", "report.pdf"},
		{"My Report - final (2).pdf", "MyReportfinal2.pdf"},
		{"a-b_c.d", "ab_c.d"},
		{"Über Größe.txt", "ÜberGröße.txt"},
		{"äöüÄÖÜß", "äöüÄÖÜß"},
		{"a\u0308.txt", "ä.txt"},         // NFD input is composed
		{"A\u0308O\u0308U\u0308", "ÄÖÜ"}, // NFD capitals too
		{"e\u0301cole.txt", "cole.txt"},  // é is not an allowed letter
		{"café.txt", "caf.txt"},
		{"ẞ.txt", ".txt"}, // capital sharp s is not in the list
		{"!@#$%^&*()+=[]{};:'\",<>/?\\|`~", "file"},
		{"", "file"},
		{"   ", "file"},
		{"---", "file"},
		{"日本語", "file"},
		{"😀.png", ".png"},
		{"..", ".."},
		{"tab\there\nnewline\x00nul", "tabherenewlinenul"},
		{"\xff\xfe.bin", ".bin"}, // invalid UTF-8
		{"dir/sub/name.txt", "dirsubname.txt"},
		{`C:\Users\x.txt`, "CUsersx.txt"},
		{"file", "file"},
		{"0123456789_", "0123456789_"},
	}
	for _, c := range cases {
		if got := Sanitize(c.in); got != c.want {
			t.Errorf("Sanitize(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestSanitizeLength(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 1000) + ".pdf"
	got := Sanitize(long)
	if len(got) > maxFilename || got != strings.Repeat("a", maxFilename) {
		t.Errorf("long name: %d bytes %q", len(got), got)
	}
	// A two-byte letter never gets cut in half.
	umlauts := strings.Repeat("ä", 150)
	got = Sanitize(umlauts)
	if !utf8.ValidString(got) || len(got) > maxFilename || got != strings.Repeat("ä", maxFilename/2) {
		t.Errorf("long umlaut name: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
	odd := "a" + strings.Repeat("ß", 150)
	got = Sanitize(odd)
	if !utf8.ValidString(got) || len(got) > maxFilename {
		t.Errorf("odd-length name: %d bytes, valid %v", len(got), utf8.ValidString(got))
	}
}

// allowedName reports whether s uses only the allowed characters.
func allowedName(s string) bool {
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.':
		case strings.ContainsRune("äöüÄÖÜß", r):
		default:
			return false
		}
	}
	return true
}

func FuzzSanitize(f *testing.F) {
	for _, s := range []string{
		"", "file", "report.pdf", "My Report - final (2).pdf", "a\u0308", "A\u0308", "u\u0308\u0301",
		"äöüÄÖÜß", "Über Größe.txt", "\xff\xfe", "日本語", "😀", "..", "/etc/passwd", `C:\x`,
		strings.Repeat("ä", 300), "a" + strings.Repeat("ß", 150), strings.Repeat("a\u0308", 120),
		"\u212B", "ﬁle", "\x00\x01\x7f", "ẞ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := Sanitize(in)
		if got == "" {
			t.Fatalf("Sanitize(%q) is empty", in)
		}
		if !utf8.ValidString(got) || !allowedName(got) {
			t.Fatalf("Sanitize(%q) = %q has characters outside the allowed set", in, got)
		}
		if len(got) > maxFilename {
			t.Fatalf("Sanitize(%q) = %d bytes, over %d", in, len(got), maxFilename)
		}
		if again := Sanitize(got); again != got {
			t.Fatalf("not idempotent: Sanitize(%q) = %q, Sanitize of that = %q", in, got, again)
		}
	})
}
