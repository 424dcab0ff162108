package sheet

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/klauspost/compress/flate"
	"github.com/xuri/excelize/v2"
)

// Writer writes records as a sheet: a header row, then one row per
// record. A row's cells are JSON texts, nil where the record has no
// value: null and nil are empty cells; a string is a text cell (through
// Text); a number a number; true and false a boolean (CSV: the words
// true and false); an object or an array its JSON text, as text.
type Writer interface {
	// Header writes the header row: the column names, as text cells.
	Header(names []string) error
	// Row writes one record's cells, one per column.
	Row(values [][]byte) error
	// Flush ends the sheet and writes what it holds.
	Flush() error
	// Close releases what the writer holds (an XLSX's temporary file),
	// whether or not it was flushed.
	Close() error
}

// NewCSV returns a writer of RFC 4180 CSV (CRLF line ends, fields
// quoted where needed) to w. Text is written exactly, line breaks and
// carriage returns included.
func NewCSV(w io.Writer) Writer {
	return &csvWriter{w: bufio.NewWriterSize(w, 32<<10)}
}

type csvWriter struct {
	w   *bufio.Writer
	buf []byte // a string's text once its escapes are resolved
}

func (c *csvWriter) Header(names []string) error {
	for i, n := range names {
		if i > 0 {
			c.w.WriteByte(',')
		}
		c.field([]byte(n), true)
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

func (c *csvWriter) Row(values [][]byte) error {
	for i, v := range values {
		if i > 0 {
			c.w.WriteByte(',')
		}
		switch kind(v) {
		case none:
		case text:
			s, err := c.text(v)
			if err != nil {
				return err
			}
			c.field(s, true)
		default: // numbers, booleans and JSON text as they are
			c.field(v, false)
		}
	}
	_, err := c.w.WriteString("\r\n")
	return err
}

// text is the text of a JSON string, valid until the next call.
func (c *csvWriter) text(v []byte) ([]byte, error) {
	inner := v[1 : len(v)-1]
	if bytes.IndexByte(inner, '\\') < 0 {
		return inner, nil // stored text is UTF-8 without control characters
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return nil, fmt.Errorf("sheet: a cell's string: %w", err)
	}
	c.buf = append(c.buf[:0], s...)
	return c.buf, nil
}

// field writes one field, quoted when it holds a comma, a quote or a
// line break; asText: through Text.
func (c *csvWriter) field(b []byte, asText bool) {
	quoted := bytes.ContainsAny(b, ",\"\r\n")
	if quoted {
		c.w.WriteByte('"')
	}
	if asText && len(b) > 0 && formulaStart(b[0]) {
		c.w.WriteByte('\'')
	}
	if !quoted {
		c.w.Write(b)
		return
	}
	for {
		i := bytes.IndexByte(b, '"')
		if i < 0 {
			break
		}
		c.w.Write(b[:i+1])
		c.w.WriteByte('"')
		b = b[i+1:]
	}
	c.w.Write(b)
	c.w.WriteByte('"')
}

func (c *csvWriter) Flush() error { return c.w.Flush() }
func (c *csvWriter) Close() error { return nil }

// The kinds of a cell, by its JSON value.
const (
	none = iota
	text
	number
	boolean
	jsonText
)

func kind(v []byte) int {
	if len(v) == 0 {
		return none
	}
	switch v[0] {
	case 'n':
		return none
	case '"':
		return text
	case 't', 'f':
		return boolean
	case '{', '[':
		return jsonText
	}
	return number
}

// NewXLSX returns a writer of an XLSX workbook of one worksheet, named
// name (its first 31 bytes; an ASCII name without []:*?/\), to w. The rows go to the worksheet as they come (into memory up
// to 16 MiB, then a temporary file, as excelize's StreamWriter keeps
// them); Flush writes the workbook, compressed as it goes, to w: nothing
// reaches w before. Numbers are numbers, true and false booleans. A cell
// holds at most 32,767 characters (Excel's bound): longer text is cut
// there.
func NewXLSX(w io.Writer, name string) (Writer, error) {
	if len(name) > excelize.MaxSheetNameLength {
		name = name[:excelize.MaxSheetNameLength] // Excel's bound
	}
	f := excelize.NewFile()
	if err := f.SetSheetName("Sheet1", name); err != nil {
		f.Close()
		return nil, fmt.Errorf("sheet: %w", err)
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("sheet: %w", err)
	}
	return &xlsxWriter{f: f, sw: sw, w: w}, nil
}

type xlsxWriter struct {
	f     *excelize.File
	sw    *excelize.StreamWriter
	w     io.Writer
	row   int
	cells []any
}

func (x *xlsxWriter) Header(names []string) error {
	x.cells = make([]any, len(names))
	for i, n := range names {
		x.cells[i] = Text(n)
	}
	return x.next()
}

func (x *xlsxWriter) Row(values [][]byte) error {
	if len(x.cells) != len(values) {
		x.cells = make([]any, len(values))
	}
	for i, v := range values {
		switch kind(v) {
		case none:
			x.cells[i] = nil
		case text:
			var s string
			if err := json.Unmarshal(v, &s); err != nil {
				return fmt.Errorf("sheet: a cell's string: %w", err)
			}
			x.cells[i] = Text(s)
		case number:
			x.cells[i] = xlsxNumber(v)
		case boolean:
			x.cells[i] = v[0] == 't'
		default:
			x.cells[i] = string(v)
		}
	}
	return x.next()
}

// xlsxNumber is a JSON number as a cell's value: a whole number exactly,
// any other as the nearest 64-bit float (Excel's own numbers).
func xlsxNumber(v []byte) any {
	if n, err := strconv.ParseInt(string(v), 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(string(v), 64); err == nil {
		return f
	}
	return string(v) // not a number a store keeps; shown as it is
}

func (x *xlsxWriter) next() error {
	x.row++
	cell, err := excelize.CoordinatesToCellName(1, x.row)
	if err != nil {
		return fmt.Errorf("sheet: %w", err)
	}
	if err := x.sw.SetRow(cell, x.cells); err != nil {
		return fmt.Errorf("sheet: row %d: %w", x.row, err)
	}
	return nil
}

// Flush ends the worksheet and writes the workbook to w: the zip archive
// goes straight to w (not, as excelize's own Write does, into memory
// first), compressed at flate's fastest level.
func (x *xlsxWriter) Flush() error {
	if err := x.sw.Flush(); err != nil {
		return fmt.Errorf("sheet: %w", err)
	}
	x.f.SetZipWriter(func(io.Writer) excelize.ZipWriter {
		zw := zip.NewWriter(x.w)
		zw.RegisterCompressor(zip.Deflate, func(out io.Writer) (io.WriteCloser, error) {
			return flate.NewWriter(out, flate.BestSpeed)
		})
		return zw
	})
	if _, err := x.f.WriteToBuffer(); err != nil {
		return fmt.Errorf("sheet: write the workbook: %w", err)
	}
	return nil
}

func (x *xlsxWriter) Close() error { return x.f.Close() }
