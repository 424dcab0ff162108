package httpapi_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"planwerk/internal/testenv"
)

const xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// timeEntryColumns: id and the declared attributes of time entries, in
// the registry's order: the first columns of every sheet of them.
var timeEntryColumns = []string{"id", "user", "trackingType", "project", "task", "day", "duration", "sorting",
	"startTime", "endTime", "validationStatus"}

// cell is a cell of a sheet: its text (XLSX: its raw value), and in XLSX
// its type ("s" text, "n" number, "b" boolean, "" none; CSV has none).
type cell struct{ text, kind string }

// sheetEntries writes time entries with declared and custom attributes:
// nested values, missing and null ones, text that starts a formula, -2
// as text and as a number.
func sheetEntries(t *testing.T, c *testenv.Client) {
	t.Helper()
	pid := testenv.ID(t, c.Create(t, "projects", M{"name": "=cmd|' /C calc'!A0", "budget": 12.5}))
	tid := testenv.ID(t, c.Create(t, "tasks", M{"name": "T", "project": pid}))
	work := func(day string, extra M) M {
		m := M{"day": day, "trackingType": "WORK", "project": pid, "task": tid, "duration": 3600, "sorting": 1}
		for k, v := range extra {
			m[k] = v
		}
		return m
	}
	for _, e := range []M{
		work("2026-01-05", M{"notes": "plain, with \"quotes\"", "rate": 2.5, "tags": []any{"a", "=b"}, "meta": M{"k": "v", "n": []any{1}}, "billable": true}),
		work("2026-01-06", M{"notes": `=HYPERLINK("https://evil.example","open")`, "billable": false, "n": -2, "gone": nil}),
		work("2026-01-07", M{"notes": "+1", "line": "one\ntwo"}),
		work("2026-01-06", M{"notes": "-2", "alias": "@x", "tab": "\tx", "cr": "\rx", "Zeta": "last?", "ümlaut": "ä"}),
		{"day": "2026-01-08", "trackingType": "WORKTIME", "startTime": "2026-01-08T08:00:00.000Z", "endTime": "2026-01-08T16:00:00.000Z"},
	} {
		c.Create(t, "time-entries", e)
	}
}

// TestListSheets: a list as CSV and as XLSX holds the records of the JSON
// answer to the same request (filters, sort, limit, populate), one row
// each, under a header of id, the declared attributes and the others
// sorted byte-wise; each cell as the JSON value: text with a leading "'"
// where it would start a formula, numbers as numbers, booleans, nested
// values as JSON text, nothing where the record has nothing.
func TestListSheets(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "sheets"))
		sheetEntries(t, c)
		for _, q := range []string{
			"",
			"sort=" + url.QueryEscape("day DESC,id") + "&where=" + url.QueryEscape(`{"trackingType":"WORK","day":{">=":"2026-01-06"}}`),
			"populate=project,task",
			"notes=%2B1",
			"limit=0",
		} {
			for _, media := range []string{"text/csv", xlsxType} {
				t.Run(media+"?"+q, func(t *testing.T) {
					path := "/v1/time-entries?" + q
					want := rawList(t, c, path)
					header, rows, _ := sheetGet(t, c, path, media)
					wantHeader := sheetHeader(want)
					if !slices.Equal(header, wantHeader) {
						t.Fatalf("header %q\nwant %q", header, wantHeader)
					}
					if len(rows) != len(want) {
						t.Fatalf("%d rows, want the JSON answer's %d records", len(rows), len(want))
					}
					for i, rec := range want {
						for j, col := range header {
							if got, exp := rows[i][j], expectedCell(t, rec[col], media); got != exp {
								t.Errorf("row %d, %s: %q, want %q (JSON %s)", i+1, col, got, exp, rec[col])
							}
						}
					}
				})
			}
		}
	})
}

// TestListSheetFormulas: text that a spreadsheet would run is a text
// cell with a leading "'" in both formats; -2 stored as text is "'-2",
// -2 stored as a number the number -2.
func TestListSheetFormulas(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "formulas"))
		c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1,
			"a": `=HYPERLINK("https://evil.example","x")`, "b": "+1", "c": "-2", "d": -2, "e": "@x", "f": "\tx", "g": "\rx", "h": "a=b"})
		want := map[string]cell{"a": {`'=HYPERLINK("https://evil.example","x")`, "s"}, "b": {"'+1", "s"}, "c": {"'-2", "s"},
			"d": {"-2", "n"}, "e": {"'@x", "s"}, "f": {"'\tx", "s"}, "g": {"'\rx", "s"}, "h": {"a=b", "s"}}
		// RFC 4180: a carriage return only inside quotes (readers take a
		// bare one for a line end).
		_, _, raw := testenv.Do(t, c.With("Accept", "text/csv").Request(t, http.MethodGet, "/v1/time-entries", nil))
		if !bytes.Contains(raw, []byte(",\"'\rx\",")) || bytes.Count(raw, []byte("\r")) != 3 {
			t.Errorf("the CSV does not quote the cell with a carriage return, or has others: %q", raw)
		}
		for _, media := range []string{"text/csv", xlsxType} {
			header, rows, _ := sheetGet(t, c, "/v1/time-entries", media)
			if len(rows) != 1 {
				t.Fatalf("%s: %d rows, want 1", media, len(rows))
			}
			for col, w := range want {
				if media == "text/csv" {
					w.kind = ""
				}
				i := slices.Index(header, col)
				if i < 0 || rows[0][i] != w {
					t.Errorf("%s: %s is %v, want %q", media, col, rows[0][max(i, 0)], w)
				}
			}
		}
	})
}

// TestListSheetPages: a sheet cut short by limit carries the JSON
// answer's Link; following it page by page gives the same columns on
// every page (the records have the same attributes) and the JSON list's
// rows in order.
func TestListSheetPages(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "pages"))
		for i := range 5 {
			c.Create(t, "time-entries", M{"day": fmt.Sprintf("2026-01-%02d", 10-i), "trackingType": "BREAK", "duration": 60 * i, "sorting": 1, "note": fmt.Sprint("n", i)})
		}
		all := rawList(t, c, "/v1/time-entries?sort=day")
		for _, media := range []string{"text/csv", xlsxType} {
			path := "/v1/time-entries?sort=day&limit=2"
			var first []string
			var got [][]cell
			for pages := 0; path != ""; pages++ {
				if pages > 3 {
					t.Fatalf("%s: more than 3 pages of 2 for 5 records", media)
				}
				_, jsonHdr, _ := testenv.Do(t, c.Request(t, http.MethodGet, path, nil))
				header, rows, hdr := sheetGet(t, c, path, media)
				if hdr.Get("Link") != jsonHdr.Get("Link") {
					t.Errorf("%s %s: Link %q, the JSON answer's %q", media, path, hdr.Get("Link"), jsonHdr.Get("Link"))
				}
				if first == nil {
					first = header
				} else if !slices.Equal(header, first) {
					t.Errorf("%s %s: header %q, the first page's %q", media, path, header, first)
				}
				got = append(got, rows...)
				path = ""
				if link := hdr.Get("Link"); link != "" {
					u, err := url.Parse(strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`))
					if err != nil {
						t.Fatal(err)
					}
					path = u.RequestURI()
				}
			}
			if len(got) != len(all) {
				t.Fatalf("%s: %d rows over the pages, want %d", media, len(got), len(all))
			}
			for i, rec := range all {
				if id := expectedCell(t, rec["id"], media); got[i][0] != id {
					t.Errorf("%s: row %d is record %v, want %v", media, i+1, got[i][0], id)
				}
			}
		}
	})
}

// TestListAccept: the list, and the audit log, choose JSON, CSV or XLSX
// by the Accept header's qualities (a sheet only when named; JSON for no
// header and for wildcards); an Accept that allows none of the types the
// endpoint answers → 406 not_acceptable, a JSON error.
func TestListAccept(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "accept"))
		c.Create(t, "time-entries", M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1})
		const j, s, x = "application/json", "text/csv", xlsxType
		for _, tc := range []struct{ accept, list, audit string }{
			{"", j, j},
			{"*/*", j, j},
			{"text/*", s, s},
			{"text/html,application/xhtml+xml,*/*;q=0.8", j, j},
			{"application/json", j, j},
			{"text/csv", s, s},
			{"text/csv; charset=utf-8", s, s},
			{x, x, ""},
			{x + ", application/json;q=0.5", x, j},
			{"text/csv;q=0.5, " + x, x, s},
			{"text/csv, " + x, s, s},
			{x + ";q=0.9, text/csv;q=0.9", x, s},
			{"application/json;q=0.9, text/csv", s, s},
			{"application/json, text/csv;q=0.9", j, j},
			{"text/csv;q=0.2, application/json;q=0.3", j, j},
			{"text/csv, */*;q=0.1", s, s},
			{"application/json, text/csv", s, s},
			{"application/xml", "", ""},
			{"text/html", "", ""},
			{"text/csv;q=0", "", ""},
			{"application/json;q=0, text/csv;q=0", "", ""},
			{"*/*;q=0", "", ""},
			{"garbage", j, j},
		} {
			for _, e := range []struct{ path, want string }{{"/v1/time-entries", tc.list}, {"/v1/audit-log?limit=5", tc.audit}} {
				req := c.Request(t, http.MethodGet, e.path, nil)
				if tc.accept != "" {
					req.Header.Set("Accept", tc.accept)
				}
				status, hdr, raw := testenv.Do(t, req)
				mt, _, _ := mime.ParseMediaType(hdr.Get("Content-Type"))
				if e.want == "" {
					testenv.WantError(t, "GET "+e.path+" Accept "+tc.accept, status, raw, http.StatusNotAcceptable, "not_acceptable")
					if mt != "application/json" {
						t.Errorf("GET %s Accept %q: the refusal is %q, want JSON", e.path, tc.accept, mt)
					}
					continue
				}
				if status != http.StatusOK || mt != e.want {
					t.Errorf("GET %s Accept %q: %d %q, want 200 %s", e.path, tc.accept, status, mt, e.want)
				}
				if !slices.Contains(headerList(hdr, "Vary"), "Accept") {
					t.Errorf("GET %s Accept %q: Vary %q lacks Accept", e.path, tc.accept, hdr.Values("Vary"))
				}
			}
		}
		// Refusals of the query stay JSON errors, and come first.
		status, _, raw := testenv.Do(t, c.With("Accept", "text/csv").Request(t, http.MethodGet, "/v1/time-entries?limit=x", nil))
		testenv.WantError(t, "CSV limit=x", status, raw, http.StatusBadRequest, "invalid_query")
	})
}

// TestListSheetColumns: a sheet holds at most 1,000 columns: a list
// whose records have more distinct attributes → 406 too_many_columns
// (JSON still answers it); a page of it within the bound is a sheet.
func TestListSheetColumns(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "columns"))
		for r := range 2 {
			m := M{"day": "2026-01-05", "trackingType": "BREAK", "duration": 60, "sorting": 1}
			for i := range 495 {
				m[fmt.Sprintf("r%d_%03d", r, i)] = i
			}
			c.Create(t, "time-entries", m)
		}
		// 11 declared and 2 × 495 others: 1,001 columns.
		for _, media := range []string{"text/csv", xlsxType} {
			status, _, raw := testenv.Do(t, c.With("Accept", media).Request(t, http.MethodGet, "/v1/time-entries", nil))
			testenv.WantError(t, media+" of 1,001 columns", status, raw, http.StatusNotAcceptable, "too_many_columns")
			header, rows, _ := sheetGet(t, c, "/v1/time-entries?limit=1", media)
			if len(header) != 11+495+2 || len(rows) != 1 { // createdAt, updatedAt
				t.Errorf("%s, one record: %d columns and %d rows, want %d and 1", media, len(header), len(rows), 11+495+2)
			}
		}
		if got := rawList(t, c, "/v1/time-entries"); len(got) != 2 {
			t.Errorf("JSON: %d records, want 2", len(got))
		}
	})
}

// rawList GETs a JSON list, each record's members as their JSON text.
func rawList(t *testing.T, c *testenv.Client, path string) []map[string]json.RawMessage {
	t.Helper()
	status, _, raw := testenv.Do(t, c.Request(t, http.MethodGet, path, nil))
	var out []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &out); status != http.StatusOK || err != nil {
		t.Fatalf("GET %s: %d %v: %.300s", path, status, err, raw)
	}
	return out
}

// sheetHeader is the header a sheet of records must have: id, the
// declared attributes, the others the records have sorted byte-wise.
func sheetHeader(recs []map[string]json.RawMessage) []string {
	var others []string
	for _, rec := range recs {
		for k := range rec {
			if !slices.Contains(timeEntryColumns, k) && !slices.Contains(others, k) {
				others = append(others, k)
			}
		}
	}
	slices.Sort(others)
	return append(slices.Clone(timeEntryColumns), others...)
}

// expectedCell is the cell a sheet of media holds for a record's member
// (nil: the record lacks it).
func expectedCell(t *testing.T, v json.RawMessage, media string) cell {
	t.Helper()
	xlsx := media == xlsxType
	kind := func(k string) string {
		if xlsx {
			return k
		}
		return ""
	}
	s := string(v)
	switch {
	case len(v) == 0 || s == "null":
		return cell{}
	case v[0] == '"':
		var text string
		if err := json.Unmarshal(v, &text); err != nil {
			t.Fatal(err)
		}
		if text != "" && strings.ContainsRune("=+-@\t\r", rune(text[0])) {
			text = "'" + text
		}
		return cell{text, kind("s")}
	case s == "true" || s == "false":
		if xlsx {
			return cell{map[string]string{"true": "1", "false": "0"}[s], "b"}
		}
		return cell{s, ""}
	case v[0] == '{' || v[0] == '[':
		return cell{s, kind("s")}
	}
	return cell{s, kind("n")}
}

// sheetGet GETs path as media (CSV or XLSX), which must answer 200 with
// that Content-Type, and returns the header row and the other rows, each
// as long as the header.
func sheetGet(t *testing.T, c *testenv.Client, path, media string) ([]string, [][]cell, http.Header) {
	t.Helper()
	status, hdr, raw := testenv.Do(t, c.With("Accept", media).Request(t, http.MethodGet, path, nil))
	if mt, _, _ := mime.ParseMediaType(hdr.Get("Content-Type")); status != http.StatusOK || mt != media {
		t.Fatalf("GET %s as %s: %d %q: %.300s", path, media, status, hdr.Get("Content-Type"), raw)
	}
	var rows [][]cell
	if media == "text/csv" {
		rows = csvCells(t, raw)
	} else {
		rows = xlsxCells(t, raw)
	}
	if len(rows) == 0 {
		t.Fatalf("GET %s as %s: no header row", path, media)
	}
	var header []string
	for _, c := range rows[0] {
		header = append(header, c.text)
	}
	for i, r := range rows[1:] {
		if len(r) > len(header) {
			t.Fatalf("GET %s as %s: row %d has %d cells, the header %d", path, media, i+1, len(r), len(header))
		}
		rows[i+1] = append(r, make([]cell, len(header)-len(r))...)
	}
	return header, rows[1:], hdr
}

// csvCells parses a CSV answer (CRLF line ends, every row as long as the
// header); encoding/csv drops a carriage return before a line end only.
func csvCells(t *testing.T, raw []byte) [][]cell {
	t.Helper()
	if len(raw) > 0 && !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Errorf("the CSV's lines do not end with CRLF: %q", raw[max(0, len(raw)-20):])
	}
	r := csv.NewReader(bytes.NewReader(raw))
	var rows [][]cell
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return rows
		}
		if err != nil {
			t.Fatalf("the CSV does not parse: %v\n%s", err, raw)
		}
		row := make([]cell, len(rec))
		for i, f := range rec {
			row[i] = cell{f, ""}
		}
		rows = append(rows, row)
	}
}

// xlsxCells reads the one worksheet of an XLSX answer with excelize: raw
// values and cell types.
func xlsxCells(t *testing.T, raw []byte) [][]cell {
	t.Helper()
	f, err := excelize.OpenReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatalf("the XLSX does not open: %v", err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	if len(sheets) != 1 {
		t.Fatalf("the XLSX has sheets %q, want one", sheets)
	}
	values, err := f.GetRows(sheets[0], excelize.Options{RawCellValue: true})
	if err != nil {
		t.Fatal(err)
	}
	// A number's cell has no type attribute: unset.
	kinds := map[excelize.CellType]string{excelize.CellTypeUnset: "n", excelize.CellTypeNumber: "n", excelize.CellTypeBool: "b",
		excelize.CellTypeInlineString: "s", excelize.CellTypeSharedString: "s"}
	rows := make([][]cell, len(values))
	for i, vs := range values {
		rows[i] = make([]cell, len(vs))
		for j, v := range vs {
			name, _ := excelize.CoordinatesToCellName(j+1, i+1)
			ct, err := f.GetCellType(sheets[0], name)
			k, ok := kinds[ct]
			if err != nil || !ok {
				t.Fatalf("cell %s: type %v: %v", name, ct, err)
			}
			if v == "" {
				k = "" // a text cell of nothing: none
			}
			rows[i][j] = cell{v, k}
		}
	}
	return rows
}
