package httpapi

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"codeberg.org/go-pdf/fpdf"
	"github.com/xuri/excelize/v2"

	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/query"
	"planwerk/internal/sheet"
	"planwerk/internal/tally"
	"planwerk/internal/timetrack"
)

// pdfContentType is the media type of a report as PDF.
const pdfContentType = "application/pdf"

// reportTypes are the types a report is answered in (negotiate), JSON
// the default.
var reportTypes = []string{jsonMedia, csvMedia, xlsxMedia, pdfContentType}

// maxPDFGroups bounds the groups a PDF report lists (of every level):
// fpdf builds the document in memory. A larger report is for CSV or
// XLSX.
const maxPDFGroups = 20_000

// reportParams are the report's query parameters; each may be given once.
var reportParams = []string{"from", "to", "where", "groupBy", "rounding"}

// timeReport answers GET /v1/reports/time as JSON, CSV, XLSX or PDF.
func (s *Server) timeReport(w http.ResponseWriter, r *http.Request) error {
	w.Header().Add("Vary", "Accept")
	format, err := negotiate(r, reportTypes...)
	if err != nil {
		return err
	}
	q, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		return err
	}
	var problems []errs.Problem
	for _, name := range reportParams {
		if len(q[name]) > 1 {
			problems = append(problems, errs.Problem{Field: name, Message: "must be given once"})
		}
	}
	if len(problems) > 0 {
		return errs.Fields(problems...)
	}
	get := func(name string) string {
		if v := q[name]; len(v) > 0 {
			return v[0]
		}
		return ""
	}
	caller := principalOf(r)
	entries := s.reg.Must("time-entries")
	only, err := s.records.Restriction(r.Context(), caller, entries, &query.Query{Params: q})
	if err != nil {
		return err
	}
	_, hasWhere := q["where"]
	_, hasRounding := q["rounding"]
	rep, err := s.time.TimeReport(r.Context(), caller, timetrack.ReportRequest{From: get("from"), To: get("to"),
		Where: get("where"), HasWhere: hasWhere, GroupBy: get("groupBy"), Rounding: get("rounding"), HasRounding: hasRounding, Only: only})
	if err != nil {
		return err
	}
	if format == "application/json" {
		writeJSON(w, http.StatusOK, rep)
		return nil
	}
	if format == pdfContentType && countGroups(rep.Groups) > maxPDFGroups {
		return errs.Field("groupBy", fmt.Sprintf("makes more than %d groups for a PDF; ask for CSV or XLSX, or group by fewer levels", maxPDFGroups))
	}
	labels, err := s.time.ReportLabels(r.Context(), caller, rep)
	if err != nil {
		return err
	}
	var body bytes.Buffer
	ext := ""
	switch format {
	case "text/csv":
		err, ext = writeReportCSV(&body, rep, labels), "csv"
		format = csvContentType
	case xlsxMedia:
		err, ext = writeReportXLSX(&body, rep, labels), "xlsx"
	default:
		err, ext = writeReportPDF(&body, infoFrom(r.Context()).tenant.Name, rep, labels), "pdf"
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", format)
	h.Set("Content-Disposition", `attachment; filename="time-report-`+rep.From+`-`+rep.To+`.`+ext+`"`)
	h.Set("Content-Length", strconv.Itoa(body.Len()))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body.Bytes())
	return nil
}

func countGroups(gs []*timetrack.ReportGroup) int {
	n := len(gs)
	for _, g := range gs {
		n += countGroups(g.Groups)
	}
	return n
}

// leaf is a group of the deepest level with the groups above it.
type leaf struct {
	path []*timetrack.ReportGroup
	g    *timetrack.ReportGroup
}

// leaves calls fn with each group of the deepest level, in order; a
// report without groupings has one, its totals.
func leaves(rep *timetrack.Report, fn func(l leaf) error) error {
	if len(rep.GroupBy) == 0 {
		return fn(leaf{g: &timetrack.ReportGroup{Seconds: rep.Totals.Seconds, Entries: rep.Totals.Entries}})
	}
	var walk func(path []*timetrack.ReportGroup, gs []*timetrack.ReportGroup) error
	walk = func(path []*timetrack.ReportGroup, gs []*timetrack.ReportGroup) error {
		for _, g := range gs {
			p := append(path[:len(path):len(path)], g)
			if len(g.Groups) == 0 {
				if err := fn(leaf{path: p, g: g}); err != nil {
					return err
				}
				continue
			}
			if err := walk(p, g.Groups); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(nil, rep.Groups)
}

// labelled says whether a level's keys name records, which a label
// column follows.
func labelled(level string) bool { return level == "user" || level == "project" || level == "task" }

// sheetHeader is the header row of a report's CSV and XLSX.
func sheetHeader(rep *timetrack.Report) []string {
	var out []string
	for _, l := range rep.GroupBy {
		out = append(out, sheet.Text(l)) // a grouping may be any attribute's name
		if labelled(l) {
			out = append(out, l+"Name")
		}
	}
	for _, t := range tally.Types {
		out = append(out, t+" seconds", t+" hours")
	}
	return append(out, "entries")
}

// cell is one value of a report's sheet row: an int64, a float64 (hours)
// or text, already made safe for spreadsheets (sheet.Text); nil is empty.
type cell = any

// sheetRow is the row of a deepest group.
func sheetRow(rep *timetrack.Report, labels timetrack.Labels, l leaf) []cell {
	var out []cell
	for i, level := range rep.GroupBy {
		k := l.path[i].Key
		out = append(out, keyCell(k))
		if labelled(level) {
			var label cell
			if id, ok := k.(int64); ok {
				label = sheet.Text(labels[level][id])
			}
			out = append(out, label)
		}
	}
	for i := range tally.Types {
		out = append(out, l.g.Seconds[i], hours(l.g.Seconds[i]))
	}
	return append(out, l.g.Entries)
}

// keyCell is a group's key as a cell: numbers as numbers, the rest as
// text (objects and arrays as their JSON).
func keyCell(k any) cell {
	switch v := k.(type) {
	case nil:
		return nil
	case int64, float64:
		return v
	case string:
		return sheet.Text(v)
	case bool:
		return strconv.FormatBool(v)
	}
	b, _ := jsontext.Marshal(k)
	return sheet.Text(string(b))
}

// hours are seconds in hours, to two decimals.
func hours(seconds int64) float64 {
	f, _ := strconv.ParseFloat(hoursText(seconds), 64)
	return f
}

func hoursText(seconds int64) string { return strconv.FormatFloat(float64(seconds)/3600, 'f', 2, 64) }

// writeReportCSV writes a row per deepest group (RFC 4180).
func writeReportCSV(w *bytes.Buffer, rep *timetrack.Report, labels timetrack.Labels) error {
	cw := csv.NewWriter(w)
	cw.UseCRLF = true
	if err := cw.Write(sheetHeader(rep)); err != nil {
		return err
	}
	err := leaves(rep, func(l leaf) error {
		cells := sheetRow(rep, labels, l)
		rec := make([]string, len(cells))
		for i, c := range cells {
			switch v := c.(type) {
			case int64:
				rec[i] = strconv.FormatInt(v, 10)
			case float64:
				rec[i] = strconv.FormatFloat(v, 'f', -1, 64)
			case string:
				rec[i] = v
			}
		}
		// The hours keep their two decimals.
		base := len(cells) - 1 - 2*len(tally.Types)
		for i := range tally.Types {
			rec[base+2*i+1] = hoursText(l.g.Seconds[i])
		}
		return cw.Write(rec)
	})
	if err != nil {
		return err
	}
	cw.Flush()
	return cw.Error()
}

// writeReportXLSX writes the rows of the CSV as a workbook, through
// excelize's stream writer; numbers are numbers, hours shown with two
// decimals.
func writeReportXLSX(w *bytes.Buffer, rep *timetrack.Report, labels timetrack.Labels) error {
	f := excelize.NewFile()
	defer f.Close()
	const name = "Time report"
	if err := f.SetSheetName("Sheet1", name); err != nil {
		return err
	}
	sw, err := f.NewStreamWriter(name)
	if err != nil {
		return err
	}
	twoDecimals, err := f.NewStyle(&excelize.Style{NumFmt: 2}) // 0.00
	if err != nil {
		return err
	}
	head := sheetHeader(rep)
	row := make([]any, len(head))
	for i, h := range head {
		row[i] = h
	}
	if err := sw.SetRow("A1", row); err != nil {
		return err
	}
	n := 1
	err = leaves(rep, func(l leaf) error {
		n++
		cells := sheetRow(rep, labels, l)
		row := make([]any, len(cells))
		for i, c := range cells {
			if h, ok := c.(float64); ok && strings.HasSuffix(head[i], " hours") {
				row[i] = excelize.Cell{StyleID: twoDecimals, Value: h}
				continue
			}
			row[i] = c
		}
		cellName, err := excelize.CoordinatesToCellName(1, n)
		if err != nil {
			return err
		}
		return sw.SetRow(cellName, row)
	})
	if err != nil {
		return err
	}
	if err := sw.Flush(); err != nil {
		return err
	}
	_, err = f.WriteTo(w)
	return err
}

// writeReportPDF writes a printable A4 report: the tenant, the period,
// the groupings and rounding, every group with its label and hours, and
// the totals.
func writeReportPDF(w *bytes.Buffer, tenant string, rep *timetrack.Report, labels timetrack.Labels) error {
	pdf := fpdf.New("P", "mm", "A4", "")
	pdf.SetTitle("Time report", true)
	pdf.SetAutoPageBreak(true, 15)
	tr := pdf.UnicodeTranslatorFromDescriptor("")
	pdf.AddPage()
	pdf.SetFont("Helvetica", "B", 14)
	pdf.CellFormat(0, 8, tr("Time report"), "", 1, "", false, 0, "")
	pdf.SetFont("Helvetica", "", 10)
	groupings, rounding := "none", "none"
	if len(rep.GroupBy) > 0 {
		groupings = strings.Join(rep.GroupBy, ", ")
	}
	if rep.Rounding != nil {
		rounding = *rep.Rounding
	}
	for _, line := range []string{"Tenant: " + tenant, "Period: " + rep.From + " to " + rep.To,
		"Grouped by: " + groupings, "Rounding: " + rounding} {
		pdf.CellFormat(0, 6, tr(line), "", 1, "", false, 0, "")
	}
	pdf.Ln(3)
	widths := []float64{100, 22, 22, 22, 24}
	row := func(label string, indent int, s timetrack.Seconds, entries int64, style string) {
		pdf.SetFont("Helvetica", style, 9)
		pad := strings.Repeat("   ", indent)
		pdf.CellFormat(widths[0], 5.5, tr(pad+label), "B", 0, "", false, 0, "")
		for i := range tally.Types {
			pdf.CellFormat(widths[1+i], 5.5, hoursText(s[i]), "B", 0, "R", false, 0, "")
		}
		pdf.CellFormat(widths[4], 5.5, strconv.FormatInt(entries, 10), "B", 1, "R", false, 0, "")
	}
	pdf.SetFont("Helvetica", "B", 9)
	for i, h := range []string{"Group", "WORK h", "WORKTIME h", "BREAK h", "Entries"} {
		align := "R"
		if i == 0 {
			align = ""
		}
		pdf.CellFormat(widths[i], 6, h, "B", 0, align, false, 0, "")
	}
	pdf.Ln(-1)
	var walk func(gs []*timetrack.ReportGroup, depth int)
	walk = func(gs []*timetrack.ReportGroup, depth int) {
		for _, g := range gs {
			row(groupLabel(g, labels), depth, g.Seconds, g.Entries, "")
			walk(g.Groups, depth+1)
		}
	}
	walk(rep.Groups, 0)
	row("Totals", 0, rep.Totals.Seconds, rep.Totals.Entries, "B")
	if err := pdf.Error(); err != nil {
		return fmt.Errorf("time report PDF: %w", err)
	}
	return pdf.Output(w)
}

// groupLabel names a group in the PDF: its level, key and, for a user,
// project or task, the record's label.
func groupLabel(g *timetrack.ReportGroup, labels timetrack.Labels) string {
	switch k := g.Key.(type) {
	case nil:
		return g.Level + ": (none)"
	case int64:
		if labelled(g.Level) {
			return fmt.Sprintf("%s: %s (#%d)", g.Level, labels[g.Level][k], k)
		}
	case string:
		return g.Level + ": " + k
	}
	b, _ := jsontext.Marshal(g.Key)
	return g.Level + ": " + string(b)
}
