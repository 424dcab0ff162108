package files

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// maxFilename bounds a stored filename, in bytes.
const maxFilename = 200

// Sanitize keeps only the characters allowed in a stored filename
// (docs/api.md "Stored filenames"):
// ASCII letters and digits, '_', '.', and the German letters ä ö ü Ä Ö Ü ß.
// Input is NFC-normalised first, so an "a" followed by a combining
// diaeresis is kept as "ä". A name that sanitises to nothing is "file".
func Sanitize(name string) string {
	var b strings.Builder
	for _, r := range norm.NFC.String(name) {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '_', r == '.':
		case strings.ContainsRune("äöüÄÖÜß", r):
		default:
			continue
		}
		if b.Len()+len(string(r)) > maxFilename {
			break
		}
		b.WriteRune(r)
	}
	if b.Len() == 0 {
		return "file"
	}
	return b.String()
}
