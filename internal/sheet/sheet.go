// Package sheet holds what every spreadsheet Planwerk writes (CSV, and
// XLSX) shares: text cells that no program opening them takes for a
// formula. A spreadsheet program runs a cell that begins with "=", "+",
// "-" or "@" as a formula (a tab or a carriage return before them too),
// so a value a client wrote, such as a Change-Reason of
// "=HYPERLINK(…)", would otherwise act in the reader's program (OWASP
// "CSV injection"). Such text is written with a leading "'", which the
// programs show as text; numbers are written as numbers by the callers
// and never pass through here.
//
// It also writes records as sheets (Writer): one row per record, one
// column per attribute, each cell from the JSON value the record holds.
package sheet

// Text is s as a text cell: with a leading "'" when it begins with a
// character that starts a formula.
func Text(s string) string {
	if s != "" && formulaStart(s[0]) {
		return "'" + s
	}
	return s
}

// formulaStart reports whether a text cell beginning with c would be
// taken for a formula.
func formulaStart(c byte) bool {
	switch c {
	case '=', '+', '-', '@', '\t', '\r':
		return true
	}
	return false
}
