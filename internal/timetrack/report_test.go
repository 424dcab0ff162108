package timetrack_test

import (
	"bytes"
	"cmp"
	"compress/zlib"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"planwerk/internal/testenv"
)

// The report's trackingTypes, in the order of its answers.
var reportTypes = []string{"WORK", "WORKTIME", "BREAK"}

const (
	xlsxType = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
	repFrom  = "2025-12-29"
	repTo    = "2027-01-03"
)

// reportOffice is a tenant with time entries of two users, two projects
// and their tasks, of every trackingType, across two year ends, with a
// custom attribute "ticket" of strings, a number, and none.
type reportOffice struct {
	*office
	// lists are the entries each caller's list shows, the oracle of the
	// reports.
	lists map[*testenv.Client][]M
}

func newReportOffice(t *testing.T, b testenv.Backend) *reportOffice {
	t.Helper()
	o := &reportOffice{office: newOffice(t, b)}
	a, mb := o.admin, o.member
	ts := func(day, clock string) string { return day + "T" + clock + "Z" }
	work := func(project, task int64, day string, kv ...any) M {
		e := with(M{"project": project, "task": task, "day": day}, kv...)
		if _, ok := e["duration"]; ok {
			e["sorting"] = 1
		}
		return e
	}
	a.Create(t, "time-entries", work(o.p1, o.t1, "2025-12-29", "duration", 3600, "ticket", "A-1"))              // 2026-W01
	mb.Create(t, "time-entries", work(o.p1, o.t1, "2026-01-02", "duration", 1800, "ticket", "A-1"))             // 2026-W01
	a.Create(t, "time-entries", work(o.p2, o.t2, "2026-01-05", "duration", 600, "ticket", 7))                   // 10 minutes
	a.Create(t, "time-entries", work(o.p2, o.t2, "2026-01-07", "duration", 0, "ticket", 7))                     // 0 s: 0 however rounded
	a.Create(t, "time-entries", M{"trackingType": "BREAK", "day": "2026-01-05", "duration": 900, "sorting": 3}) // no project
	mb.Create(t, "time-entries", work(o.p2, o.t2, "2026-02-10", "duration", 1000, "ticket", "B"))               // 16:40
	mb.Create(t, "time-entries", work(o.p1, o.t1, "2026-12-31", "duration", 449, "ticket", "A-1"))              // 7:29
	a.Create(t, "time-entries", work(o.p2, o.t2, "2027-01-01", "duration", 451))                                // 2026-W53
	a.Create(t, "time-entries", work(o.p1, o.t1, "2025-12-28", "duration", 99999, "ticket", "A-1"))             // outside
	a.Create(t, "time-entries", work(o.p1, o.t1, "2027-01-04", "duration", 77777, "ticket", "A-1"))             // outside
	o.settings(t, "START_TIME_END_TIME", true)
	mb.Create(t, "time-entries", M{"trackingType": "WORKTIME", "day": "2026-01-05",
		"startTime": ts("2026-01-05", "08:00:00.250"), "endTime": ts("2026-01-05", "16:00:00.125")}) // 28799
	mb.Create(t, "time-entries", work(o.p1, o.t1, "2026-01-06", "startTime", ts("2026-01-06", "09:00:00.000"))) // running: 0
	mb.Create(t, "time-entries", work(o.p2, o.t2, "2026-06-15", "startTime", ts("2026-06-15", "10:00:00.000"),
		"endTime", ts("2026-06-15", "10:22:30.000"), "ticket", "B")) // 1350
	o.settings(t, "DURATION", false)
	o.lists = map[*testenv.Client][]M{}
	for _, c := range []*testenv.Client{a, mb} {
		o.lists[c] = c.List(t, "/v1/time-entries?limit=1000")
	}
	return o
}

// repAnswer is the JSON answer of a report.
type repAnswer struct {
	From     string    `json:"from"`
	To       string    `json:"to"`
	GroupBy  []string  `json:"groupBy"`
	Rounding *string   `json:"rounding"`
	Groups   []repNode `json:"groups"`
	Totals   struct {
		Seconds map[string]int64 `json:"seconds"`
		Entries int64            `json:"entries"`
	} `json:"totals"`
}

type repNode struct {
	Key     map[string]any   `json:"key"`
	Seconds map[string]int64 `json:"seconds"`
	Entries int64            `json:"entries"`
	Groups  []repNode        `json:"groups"`
}

// sums are the seconds per trackingType and the entries of a group.
type sums struct {
	seconds [3]int64
	entries int64
}

func reportPath(from, to, groupBy, rounding string, where M) string {
	v := url.Values{"from": {from}, "to": {to}}
	if groupBy != "" {
		v.Set("groupBy", groupBy)
	}
	if rounding != "" {
		v.Set("rounding", rounding)
	}
	if where != nil {
		w, _ := json.Marshal(where)
		v.Set("where", string(w))
	}
	return "/v1/reports/time?" + v.Encode()
}

// report GETs a report as JSON.
func report(t *testing.T, c *testenv.Client, path string) repAnswer {
	t.Helper()
	st, _, raw := c.Send(t, http.MethodGet, path, nil)
	if st != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, st, raw)
	}
	var ans repAnswer
	testenv.DecodeInto(t, raw, &ans)
	return ans
}

// entrySeconds is what an entry counts: endTime − startTime, else its
// duration; a running entry nothing.
func entrySeconds(t *testing.T, e M) int64 {
	st, ok1 := e["startTime"].(string)
	et, ok2 := e["endTime"].(string)
	if ok1 && ok2 {
		a, err1 := time.Parse(time.RFC3339Nano, st)
		b, err2 := time.Parse(time.RFC3339Nano, et)
		if err1 != nil || err2 != nil {
			t.Fatalf("entry %v: times do not parse", e)
		}
		return int64(b.Sub(a) / time.Second)
	}
	if ok1 {
		return 0
	}
	return testenv.Num(e["duration"])
}

// round rounds seconds per entry as the rounding parameter says.
func round(secs int64, rounding string) int64 {
	if rounding == "" {
		return secs
	}
	mode, n, _ := strings.Cut(rounding, ":")
	m, _ := strconv.Atoi(n)
	step := float64(m * 60)
	x := float64(secs) / step
	switch mode {
	case "up":
		x = math.Ceil(x)
	case "down":
		x = math.Floor(x)
	default:
		x = math.Floor(x + 0.5)
	}
	return int64(x * step)
}

// keyOf is an entry's key of a level, as JSON text ("null" for none).
func keyOf(e M, level string) string {
	day := e["day"].(string)
	d, _ := time.Parse(time.DateOnly, day)
	switch level {
	case "day":
		return strconv.Quote(day)
	case "week":
		y, w := d.ISOWeek()
		return strconv.Quote(fmt.Sprintf("%04d-W%02d", y, w))
	case "month":
		return strconv.Quote(day[:7])
	case "year":
		return strconv.Quote(day[:4])
	}
	v, ok := e[level]
	if !ok || v == nil {
		return "null"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// expected computes a report from the entries: the sums of every group
// of every level, by the path of its keys.
func expected(t *testing.T, entries []M, from, to string, levels []string, rounding string, keep func(M) bool) map[string]sums {
	out := map[string]sums{}
	for _, e := range entries {
		day := e["day"].(string)
		typ := slices.Index(reportTypes, e["trackingType"].(string))
		if day < from || day > to || typ < 0 || (keep != nil && !keep(e)) {
			continue
		}
		secs := round(entrySeconds(t, e), rounding)
		path := ""
		for i := 0; i <= len(levels); i++ {
			s := out[path]
			s.seconds[typ] += secs
			s.entries++
			out[path] = s
			if i < len(levels) {
				path += "/" + keyOf(e, levels[i])
			}
		}
	}
	return out
}

// flatten is the answer's groups by the path of their keys ("" for the
// totals), checking the shape and order of every level.
func flatten(t *testing.T, ans repAnswer) map[string]sums {
	t.Helper()
	out := map[string]sums{"": toSums(t, ans.Totals.Seconds, ans.Totals.Entries)}
	var walk func(path string, depth int, gs []repNode)
	walk = func(path string, depth int, gs []repNode) {
		var prev any
		for i, g := range gs {
			level := ans.GroupBy[depth]
			k, ok := g.Key[level]
			if !ok || len(g.Key) != 1 {
				t.Fatalf("group %v: key names not %s alone", g, level)
			}
			if i > 0 && compareKey(prev, k) >= 0 {
				t.Errorf("groups of %s out of order: %v before %v", level, prev, k)
			}
			prev = k
			b, _ := json.Marshal(k)
			p := path + "/" + string(b)
			out[p] = toSums(t, g.Seconds, g.Entries)
			if depth == len(ans.GroupBy)-1 {
				if g.Groups != nil {
					t.Errorf("deepest group %s has groups", p)
				}
				continue
			}
			walk(p, depth+1, g.Groups)
		}
	}
	walk("", 0, ans.Groups)
	if len(ans.GroupBy) == 0 && (ans.Groups == nil || len(ans.Groups) != 0) {
		t.Errorf("groups without groupBy: %v, want []", ans.Groups)
	}
	return out
}

func toSums(t *testing.T, seconds map[string]int64, entries int64) sums {
	t.Helper()
	if len(seconds) != 3 {
		t.Errorf("seconds %v: want every trackingType", seconds)
	}
	var s sums
	for i, typ := range reportTypes {
		v, ok := seconds[typ]
		if !ok {
			t.Errorf("seconds %v: no %s", seconds, typ)
		}
		s.seconds[i] = v
	}
	s.entries = entries
	return s
}

// compareKey orders keys: numbers, strings, null last.
func compareKey(a, b any) int {
	rank := func(v any) int {
		switch v.(type) {
		case float64:
			return 0
		case string:
			return 1
		case nil:
			return 3
		}
		return 2
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	switch x := a.(type) {
	case float64:
		return cmp.Compare(x, b.(float64))
	case string:
		return strings.Compare(x, b.(string))
	}
	return 0
}

func diff(t *testing.T, what string, got, want map[string]sums) {
	t.Helper()
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s: group %q = %+v (present %v), want %+v", what, k, g, ok, w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: group %q = %+v, want none", what, k, g)
		}
	}
}

// TestTimeReport: every grouping of up to three levels, with and without
// rounding and criteria, sums what the caller's list of time entries
// shows, nested and ordered by key.
func TestTimeReport(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newReportOffice(t, b)
		groupings := []string{"", "user", "project", "task", "trackingType", "validationStatus", "day", "week",
			"month", "year", "ticket", "project,user", "user,project", "week,project", "month,trackingType,user",
			"user,ticket,day", "year,project", "trackingType,month", "project,task,week"}
		type where struct {
			where M
			keep  func(M) bool
		}
		wheres := []where{
			{nil, nil},
			{M{}, nil},
			{M{"project": o.p1}, func(e M) bool { return testenv.Num(e["project"]) == o.p1 }},
			{M{"ticket": "A-1"}, func(e M) bool { return e["ticket"] == "A-1" }},
			{M{"ticket": nil}, func(e M) bool { return e["ticket"] == nil }},
			{M{"duration": M{">": 700}}, func(e M) bool { d, ok := e["duration"].(float64); return ok && d > 700 }},
		}
		for _, c := range []*testenv.Client{o.admin, o.member} {
			for _, g := range groupings {
				for _, rounding := range []string{"", "up:15", "down:15", "nearest:15", "nearest:60", "up:1"} {
					for wi, w := range wheres {
						if wi > 0 && rounding != "" && rounding != "up:15" {
							continue
						}
						path := reportPath(repFrom, repTo, g, rounding, w.where)
						ans := report(t, c, path)
						var levels []string
						if g != "" {
							levels = strings.Split(g, ",")
						}
						if ans.From != repFrom || ans.To != repTo || !slices.Equal(ans.GroupBy, levels) || len(ans.GroupBy) != len(levels) {
							t.Errorf("%s: echoes %s %s %v", path, ans.From, ans.To, ans.GroupBy)
						}
						if (rounding == "") != (ans.Rounding == nil) || (ans.Rounding != nil && *ans.Rounding != rounding) {
							t.Errorf("%s: rounding %v", path, ans.Rounding)
						}
						diff(t, path, flatten(t, ans), expected(t, o.lists[c], repFrom, repTo, levels, rounding, w.keep))
					}
				}
			}
		}
		// The same entries through the totals and through the entries.
		for _, g := range []string{"user", "project,week", "year,trackingType"} {
			fast := report(t, o.admin, reportPath("2026-01-01", "2026-12-31", g, "", nil))
			slow := report(t, o.admin, reportPath("2026-01-01", "2026-12-31", g, "", M{}))
			diff(t, g+" by the totals and by the entries", flatten(t, fast), flatten(t, slow))
		}
		// A week across the year's end, and the days of one week.
		weeks := report(t, o.admin, reportPath(repFrom, repTo, "week", "", nil))
		var keys []any
		for _, g := range weeks.Groups {
			keys = append(keys, g.Key["week"])
		}
		if want := []any{"2026-W01", "2026-W02", "2026-W07", "2026-W25", "2026-W53"}; !slices.Equal(keys, want) {
			t.Errorf("weeks %v, want %v", keys, want)
		}
	})
}

// TestTimeReportRefusals: every bad parameter is a 400 naming it; an
// Accept the report cannot answer is a 406.
func TestTimeReportRefusals(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		c := srv.SignIn(t, srv.CreateTenant(t, "repbad"))
		ok := "from=2026-01-01&to=2026-01-31"
		for _, tc := range []struct{ query, field string }{
			{"to=2026-01-31", "from"},
			{"from=2026-01-01", "to"},
			{"from=2026-1-01&to=2026-01-31", "from"},
			{"from=2026-01-01&to=2026-02-30", "to"},
			{"from=2026-02-01&to=2026-01-31", "to"},
			{"from=2020-01-01&to=2026-01-31", "to"},
			{"from=2026-01-01&from=2026-01-02&to=2026-01-31", "from"},
			{ok + "&groupBy=user,project,task,day", "groupBy"},
			{ok + "&groupBy=user,user", "groupBy"},
			{ok + "&groupBy=user,,day", "groupBy"},
			{ok + "&groupBy=" + url.QueryEscape(`a"b`), "groupBy"},
			{ok + "&rounding=up", "rounding"},
			{ok + "&rounding=up:0", "rounding"},
			{ok + "&rounding=up:61", "rounding"},
			{ok + "&rounding=up:1.5", "rounding"},
			{ok + "&rounding=up:+5", "rounding"},
			{ok + "&rounding=sideways:5", "rounding"},
			{ok + "&rounding=", "rounding"},
			{ok + "&where=" + url.QueryEscape(`{"day":`), "where"},
			{ok + "&where=" + url.QueryEscape(`[1]`), "where"},
			{ok + "&where=" + url.QueryEscape(`{"day":{"near":"x"}}`), "where"},
			{ok + "&where=" + url.QueryEscape(`{"duration":"many"}`), "where"},
		} {
			c.Fail(t, http.MethodGet, "/v1/reports/time?"+tc.query, nil, http.StatusBadRequest, "invalid", tc.field)
		}
		for _, accept := range []string{"text/html", "application/xml, image/*", "text/csv;q=0, application/json;q=0"} {
			st, _, raw := testenv.Do(t, c.With("Accept", accept).Request(t, http.MethodGet, "/v1/reports/time?"+ok, nil))
			testenv.WantError(t, "Accept "+accept, st, raw, http.StatusNotAcceptable, "not_acceptable")
		}
		for accept, want := range map[string]string{"*/*": "application/json", "application/*": "application/json",
			"text/*": "text/csv", "application/pdf, text/csv;q=0.5": "application/pdf"} {
			st, h, raw := testenv.Do(t, c.With("Accept", accept).Request(t, http.MethodGet, "/v1/reports/time?"+ok, nil))
			if st != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), want) {
				t.Errorf("Accept %s: %d %s %.100s, want %s", accept, st, h.Get("Content-Type"), raw, want)
			}
		}
	})
}

// get sends a report request asking for accept; it must answer 200 in
// that type.
func get(t *testing.T, c *testenv.Client, path, accept string) []byte {
	t.Helper()
	st, h, raw := testenv.Do(t, c.With("Accept", accept).Request(t, http.MethodGet, path, nil))
	if st != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), accept) {
		t.Fatalf("GET %s as %s: %d %s %.300s", path, accept, st, h.Get("Content-Type"), raw)
	}
	return raw
}

// TestTimeReportFormats: the JSON, CSV, XLSX and PDF of one request hold
// the same numbers; the sheets label users, projects and tasks, and
// write text that would start a formula with a leading "'".
func TestTimeReportFormats(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		o := newReportOffice(t, b)
		const formula = `=HYPERLINK("http://evil.test","x")`
		o.admin.Send(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", o.p2), M{"name": formula})
		o.admin.Create(t, "time-entries", M{"project": o.p2, "task": o.t2, "day": "2026-03-03", "duration": 60, "sorting": 2, "ticket": "@SUM(1)"})
		path := reportPath(repFrom, repTo, "project,user,ticket", "nearest:15", nil)
		ans := report(t, o.admin, path)

		// The deepest groups of the JSON, as the sheets' rows.
		type sheetRow struct {
			keys    []string // project, its label, user, its label, ticket
			seconds [3]int64
			hours   [3]string
			entries int64
		}
		var want []sheetRow
		var hoursAll []string // every group's hours, and the totals', as the PDF lists them
		hrs := func(s int64) string { return strconv.FormatFloat(float64(s)/3600, 'f', 2, 64) }
		users := map[float64]string{}
		for _, c := range []*testenv.Client{o.admin, o.member} {
			u := o.admin.Get(t, "users", c.UserID)
			users[float64(c.UserID)] = cmp.Or(fmt.Sprint(u["name"]), "")
			if _, ok := u["name"].(string); !ok {
				users[float64(c.UserID)] = u["email"].(string)
			}
		}
		projects := map[float64]string{float64(o.p1): "Alpha", float64(o.p2): "'" + formula}
		text := func(v any) string {
			switch x := v.(type) {
			case nil:
				return ""
			case float64:
				return strconv.FormatFloat(x, 'f', -1, 64)
			case string:
				if strings.ContainsAny(x[:1], "=+-@") {
					return "'" + x
				}
				return x
			}
			return fmt.Sprint(v)
		}
		for _, p := range ans.Groups {
			hoursAll = append(hoursAll, hoursOf(p.Seconds, hrs)...)
			for _, u := range p.Groups {
				hoursAll = append(hoursAll, hoursOf(u.Seconds, hrs)...)
				for _, k := range u.Groups {
					hoursAll = append(hoursAll, hoursOf(k.Seconds, hrs)...)
					pk, uk := p.Key["project"], u.Key["user"]
					pl := ""
					if id, ok := pk.(float64); ok {
						pl = projects[id]
					}
					r := sheetRow{keys: []string{text(pk), pl, text(uk), users[uk.(float64)], text(k.Key["ticket"])}, entries: k.Entries}
					for i, typ := range reportTypes {
						r.seconds[i] = k.Seconds[typ]
						r.hours[i] = hrs(k.Seconds[typ])
					}
					want = append(want, r)
				}
			}
		}
		hoursAll = append(hoursAll, hoursOf(ans.Totals.Seconds, hrs)...)
		if len(want) < 5 {
			t.Fatalf("only %d groups: %+v", len(want), ans)
		}
		header := []string{"project", "projectName", "user", "userName", "ticket", "WORK seconds", "WORK hours",
			"WORKTIME seconds", "WORKTIME hours", "BREAK seconds", "BREAK hours", "entries"}
		asRow := func(rec []string) sheetRow {
			var r sheetRow
			r.keys = rec[:5]
			for i := range reportTypes {
				r.seconds[i], _ = strconv.ParseInt(rec[5+2*i], 10, 64)
				r.hours[i] = rec[6+2*i]
			}
			r.entries, _ = strconv.ParseInt(rec[11], 10, 64)
			return r
		}
		check := func(what string, recs [][]string) {
			t.Helper()
			if len(recs) == 0 || !slices.Equal(recs[0], header) {
				t.Fatalf("%s: header %v, want %v", what, recs[:min(1, len(recs))], header)
			}
			if len(recs)-1 != len(want) {
				t.Fatalf("%s: %d rows, want %d", what, len(recs)-1, len(want))
			}
			for i, rec := range recs[1:] {
				if got := asRow(rec); fmt.Sprint(got) != fmt.Sprint(want[i]) {
					t.Errorf("%s row %d: %v, want %v", what, i+1, got, want[i])
				}
			}
		}

		raw := get(t, o.admin, path, "text/csv")
		if !bytes.Contains(raw, []byte("\r\n")) {
			t.Errorf("CSV rows do not end in CRLF")
		}
		recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
		if err != nil {
			t.Fatalf("CSV: %v\n%s", err, raw)
		}
		check("CSV", recs)

		raw = get(t, o.admin, path, xlsxType)
		f, err := excelize.OpenReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatalf("XLSX: %v", err)
		}
		sheetName := f.GetSheetName(0)
		rows, err := f.GetRows(sheetName, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			for len(rows[i]) < len(header) {
				rows[i] = append(rows[i], "")
			}
			if i > 0 { // hours as the sheet shows them
				for j := range reportTypes {
					v, _ := strconv.ParseFloat(rows[i][6+2*j], 64)
					rows[i][6+2*j] = strconv.FormatFloat(v, 'f', 2, 64)
				}
			}
		}
		check("XLSX", rows)
		for i := 2; i <= len(rows); i++ {
			for _, col := range []string{"A", "F", "G", "L"} { // numbers are numbers
				cell := fmt.Sprintf("%s%d", col, i)
				if typ, _ := f.GetCellType(sheetName, cell); rows[i-1][0] != "" && col == "A" && typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
					t.Errorf("XLSX %s is of type %v, want a number", cell, typ)
				} else if col != "A" && typ != excelize.CellTypeUnset && typ != excelize.CellTypeNumber {
					t.Errorf("XLSX %s is of type %v, want a number", cell, typ)
				}
			}
			for _, col := range []string{"B", "E"} {
				cell := fmt.Sprintf("%s%d", col, i)
				if fm, _ := f.GetCellFormula(sheetName, cell); fm != "" {
					t.Errorf("XLSX %s holds the formula %q", cell, fm)
				}
			}
		}
		f.Close()
		labels := strings.Join(slices.Concat(recs[1:]...), "\n")
		if !strings.Contains(labels, "'"+formula) || !strings.Contains(labels, "'@SUM(1)") || strings.Contains(labels, "\n"+formula) {
			t.Errorf("CSV cells that start a formula are not neutralised:\n%s", labels)
		}

		// A grouping is any attribute's name, and heads a column.
		raw = get(t, o.admin, reportPath(repFrom, repTo, "=cmd", "", nil), "text/csv")
		if recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll(); err != nil || len(recs) == 0 || recs[0][0] != "'=cmd" {
			t.Errorf("CSV of groupBy =cmd: %q (%v), want the header cell '=cmd", raw, err)
		}

		raw = get(t, o.admin, path, "application/pdf")
		pdf := pdfText(t, raw)
		for _, s := range []string{"ttco", repFrom, repTo, "project, user, ticket", "nearest:15", "Alpha", "Totals"} {
			if !strings.Contains(pdf, s) {
				t.Errorf("PDF does not say %q:\n%s", s, pdf)
			}
		}
		got := regexp.MustCompile(`(?m)^-?\d+\.\d\d$`).FindAllString(pdf, -1)
		if !slices.Equal(got, hoursAll) {
			t.Errorf("PDF hours %v, want %v", got, hoursAll)
		}
	})
}

func hoursOf(s map[string]int64, hrs func(int64) string) []string {
	out := make([]string, len(reportTypes))
	for i, typ := range reportTypes {
		out[i] = hrs(s[typ])
	}
	return out
}

// pdfText is the text a PDF shows, a line per string drawn: its content
// streams inflated and their strings read.
func pdfText(t *testing.T, raw []byte) string {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %.40q", raw)
	}
	streams := regexp.MustCompile(`(?s)stream\r?\n(.*?)\r?\nendstream`).FindAllSubmatch(raw, -1)
	str := regexp.MustCompile(`\(((?:\\.|[^\\)])*)\)\s*Tj`)
	var lines []string
	for _, s := range streams {
		r, err := zlib.NewReader(bytes.NewReader(s[1]))
		if err != nil {
			continue
		}
		content, err := io.ReadAll(r)
		if err != nil {
			continue
		}
		for _, m := range str.FindAllSubmatch(content, -1) {
			unescaped := regexp.MustCompile(`\\(.)`).ReplaceAll(m[1], []byte("$1"))
			lines = append(lines, strings.TrimSpace(string(unescaped)))
		}
	}
	if len(lines) == 0 {
		t.Fatal("the PDF draws no text")
	}
	return strings.Join(lines, "\n")
}
