// Reading the audit log over HTTP (docs/api.md "Audit log"): the page of
// GET /v1/audit-log with its cursor, filters and CSV, who may read it, and
// the history of one record.
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
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// auditEntry is an entry as the JSON answers show it.
type auditEntry struct {
	Seq   int64  `json:"seq"`
	At    string `json:"at"`
	Actor struct {
		User      *int64 `json:"user"`
		APIClient *int64 `json:"apiClient"`
		Via       string `json:"via"`
	} `json:"actor"`
	RequestID *string         `json:"requestId"`
	Reason    *string         `json:"reason"`
	Resource  string          `json:"resource"`
	Record    *int64          `json:"record"`
	Op        string          `json:"op"`
	Changed   []string        `json:"changed"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	PrevHash  string          `json:"prevHash"`
	Hash      string          `json:"hash"`
}

// auditMembers are the members every entry has.
var auditMembers = []string{"seq", "at", "actor", "requestId", "reason", "resource", "record", "op", "changed",
	"before", "after", "prevHash", "hash"}

// auditGet GETs path, which must answer 200 with a JSON object of entries
// (and, for the log, next); every entry must have exactly the members of
// an entry.
func auditGet(t *testing.T, c *testenv.Client, path string) ([]auditEntry, string) {
	t.Helper()
	status, _, raw := c.Send(t, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	var members struct{ Entries []map[string]json.RawMessage }
	testenv.DecodeInto(t, raw, &members)
	for _, e := range members.Entries {
		if len(e) != len(auditMembers) {
			t.Errorf("GET %s: an entry has %d members, want %v: %v", path, len(e), auditMembers, e)
		}
		for _, m := range auditMembers {
			if _, ok := e[m]; !ok {
				t.Errorf("GET %s: an entry without %s", path, m)
			}
		}
	}
	var page struct {
		Entries []auditEntry
		Next    *string
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&page); err != nil || page.Entries == nil {
		t.Fatalf("GET %s: %v: %s", path, err, raw)
	}
	if strings.HasPrefix(path, "/v1/audit-log") == (page.Next == nil) {
		t.Fatalf("GET %s: next %v: %s", path, page.Next, raw)
	}
	if page.Next == nil {
		return page.Entries, ""
	}
	return page.Entries, *page.Next
}

// auditAll follows the log's cursor from the start with pages of limit
// entries (and the query q) until a page is empty, and returns every
// entry read.
func auditAll(t *testing.T, c *testenv.Client, q string, limit int) []auditEntry {
	t.Helper()
	var all []auditEntry
	after := ""
	for range 10000 {
		path := "/v1/audit-log?limit=" + strconv.Itoa(limit)
		if q != "" {
			path += "&" + q
		}
		if after != "" {
			path += "&after=" + url.QueryEscape(after)
		}
		page, next := auditGet(t, c, path)
		if len(page) > limit {
			t.Fatalf("GET %s: %d entries", path, len(page))
		}
		if len(page) == 0 {
			if after != "" && next != after {
				t.Errorf("GET %s: an empty page's next is %q, want the after sent", path, next)
			}
			return all
		}
		if last := page[len(page)-1]; next != strconv.FormatInt(last.Seq, 10) {
			t.Errorf("GET %s: next %q, want past the last entry (%d)", path, next, last.Seq)
		}
		all = append(all, page...)
		after = next
	}
	t.Fatal("the audit log does not end")
	return nil
}

func seqs(es []auditEntry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Seq
	}
	return out
}

// auditTenant is a tenant whose admin and member have written through
// the API: projects created, changed (with and without a Change-Reason)
// and deleted, a member's expenses, the member themselves.
func auditTenant(t *testing.T, srv *testenv.Server, slug string) (admin, member *testenv.Client, project int64) {
	t.Helper()
	admin = srv.SignIn(t, srv.CreateTenant(t, slug))
	member = admin.Member(t, "member@"+slug+".test")
	for i := range 3 {
		p := testenv.ID(t, admin.Create(t, "projects", M{"name": fmt.Sprint("P", i), "budget": i}))
		admin.With("Change-Reason", "budget%20agreed").Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", p), M{"budget": 10 + i}, http.StatusOK)
		if i == 1 {
			admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", p), nil, http.StatusOK)
		}
		project = p
	}
	for i := range 2 {
		e := testenv.ID(t, member.Create(t, "expenses", M{"amount": i + 1, "note": "<b>&</b>"}))
		member.With("Change-Reason", "typo").Object(t, http.MethodPatch, fmt.Sprintf("/v1/expenses/%d", e), M{"amount": 5}, http.StatusOK)
	}
	return admin, member, project
}

// TestAuditLogPages: following next with any limit yields every entry
// once, in seq order, and the entries count 1, 2, 3… without gaps; each
// links to the one before it; a limit of 10000 is taken, one over is a
// 400.
func TestAuditLogPages(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin, _, _ := auditTenant(t, srv, "pages")
		all := auditAll(t, admin, "", 10000)
		if len(all) < 15 {
			t.Fatalf("%d entries, want the 15 or more the writes made", len(all))
		}
		for i, e := range all {
			if e.Seq != int64(i+1) {
				t.Fatalf("entry %d has seq %d: %v", i, e.Seq, seqs(all))
			}
			if i > 0 && e.PrevHash != all[i-1].Hash || i == 0 && e.PrevHash != strings.Repeat("0", 64) {
				t.Errorf("entry %d: prevHash %s, the one before has hash %s", e.Seq, e.PrevHash, all[max(i-1, 0)].Hash)
			}
		}
		for _, limit := range []int{1, 2, 7, 1000} {
			if got := seqs(auditAll(t, admin, "", limit)); !slices.Equal(got, seqs(all)) {
				t.Errorf("limit %d: %v, want %v", limit, got, seqs(all))
			}
		}
		// The default page is 1000 entries; a page starts after its cursor.
		if page, _ := auditGet(t, admin, "/v1/audit-log"); !slices.Equal(seqs(page), seqs(all)) {
			t.Errorf("default page: %v", seqs(page))
		}
		if page, next := auditGet(t, admin, "/v1/audit-log?after=3&limit=2"); !slices.Equal(seqs(page), []int64{4, 5}) || next != "5" {
			t.Errorf("after=3&limit=2: %v next %q", seqs(page), next)
		}
		if page, next := auditGet(t, admin, fmt.Sprintf("/v1/audit-log?after=%d", len(all)+5)); len(page) != 0 || next != strconv.Itoa(len(all)+5) {
			t.Errorf("after the end: %v next %q", seqs(page), next)
		}
		admin.Fail(t, http.MethodGet, "/v1/audit-log?limit=10001", nil, http.StatusBadRequest, "invalid", "limit")
		// Another tenant's log is its own.
		other := srv.SignIn(t, srv.CreateTenant(t, "other"))
		for _, e := range auditAll(t, other, "", 1000) {
			if e.Resource == "projects" || e.Resource == "expenses" {
				t.Errorf("another tenant's log shows %s %d", e.Resource, *e.Record)
			}
		}
	})
}

// TestAuditLogFilters: each filter, and all of them together, selects
// exactly the entries that match it; from is inclusive and to exclusive,
// to the instant, whatever offset or fraction the bound is written with.
func TestAuditLogFilters(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin, member, project := auditTenant(t, srv, "filters")
		all := auditAll(t, admin, "", 10000)
		at := func(e auditEntry) time.Time {
			v, err := time.Parse(time.RFC3339Nano, e.At)
			if err != nil {
				t.Fatalf("at %q: %v", e.At, err)
			}
			return v
		}
		mid := all[len(all)/2]
		midAt := at(mid)
		inBerlin := midAt.In(time.FixedZone("", 2*3600)).Format("2006-01-02T15:04:05.000-07:00")
		justAfter := strings.TrimSuffix(mid.At, "Z") + "5Z" // half a millisecond after mid
		afterMid := midAt.Add(time.Millisecond / 2)
		is := func(p *int64, v int64) bool { return p != nil && *p == v }
		cases := []struct {
			name, query string
			want        func(e auditEntry) bool
		}{
			{"resource", "resource=projects", func(e auditEntry) bool { return e.Resource == "projects" }},
			{"record", fmt.Sprintf("resource=projects&record=%d", project),
				func(e auditEntry) bool { return e.Resource == "projects" && is(e.Record, project) }},
			{"user", fmt.Sprintf("user=%d", member.UserID), func(e auditEntry) bool { return is(e.Actor.User, member.UserID) }},
			{"op create", "op=create", func(e auditEntry) bool { return e.Op == "create" }},
			{"op update", "op=update", func(e auditEntry) bool { return e.Op == "update" }},
			{"op delete", "op=delete", func(e auditEntry) bool { return e.Op == "delete" }},
			{"from, inclusive", "from=" + url.QueryEscape(mid.At), func(e auditEntry) bool { return !at(e).Before(midAt) }},
			{"to, exclusive", "to=" + url.QueryEscape(mid.At), func(e auditEntry) bool { return at(e).Before(midAt) }},
			{"from with an offset", "from=" + url.QueryEscape(inBerlin), func(e auditEntry) bool { return !at(e).Before(midAt) }},
			{"from between two milliseconds", "from=" + url.QueryEscape(justAfter),
				func(e auditEntry) bool { return !at(e).Before(afterMid) }},
			{"to between two milliseconds", "to=" + url.QueryEscape(justAfter),
				func(e auditEntry) bool { return at(e).Before(afterMid) }},
			{"all together", fmt.Sprintf("resource=expenses&op=update&user=%d&from=%s&to=%s", member.UserID,
				url.QueryEscape(all[1].At), url.QueryEscape(all[len(all)-1].At)),
				func(e auditEntry) bool {
					return e.Resource == "expenses" && e.Op == "update" && is(e.Actor.User, member.UserID) &&
						!at(e).Before(at(all[1])) && at(e).Before(at(all[len(all)-1]))
				}},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				var want []int64
				for _, e := range all {
					if c.want(e) {
						want = append(want, e.Seq)
					}
				}
				if len(want) == 0 || len(want) == len(all) {
					t.Fatalf("the case selects %d of %d entries: it proves nothing", len(want), len(all))
				}
				for _, limit := range []int{2, 1000} {
					if got := seqs(auditAll(t, admin, c.query, limit)); !slices.Equal(got, want) {
						t.Errorf("%s (limit %d): %v, want %v", c.query, limit, got, want)
					}
				}
			})
		}
	})
}

// TestAuditLogRefusals: unknown parameters, parameters given twice or
// empty, and bad values → 400 naming the parameter; members → 403, also
// with an API client's token; an admin's API client of the scope read
// reads the log.
func TestAuditLogRefusals(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "refusals"))
		member := admin.Member(t, "member@refusals.test")
		adminReader := admin.ClientSignIn(t, admin.APIClient(t, "auditor", admin.UserID, "read"))
		memberClient := admin.ClientSignIn(t, admin.APIClient(t, "member's", member.UserID, "read write"))
		for _, c := range []struct{ query, param string }{
			{"color=red", "color"},
			{"limit=0", "limit"},
			{"limit=10001", "limit"},
			{"limit=ten", "limit"},
			{"limit=1&limit=2", "limit"},
			{"limit=", "limit"},
			{"after=-1", "after"},
			{"after=abc", "after"},
			{"record=0", "record"},
			{"record=x", "record"},
			{"user=-3", "user"},
			{"user=1.5", "user"},
			{"op=move", "op"},
			{"op=CREATE", "op"},
			{"resource=", "resource"},
			{"from=2026-11-27", "from"},
			{"from=yesterday", "from"},
			{"to=2026-13-01T00:00:00Z", "to"},
			{"to=2026-11-27T10:00:00", "to"},
			{"to=9999-12-31T23:59:59.9999Z", "to"},
		} {
			admin.Fail(t, http.MethodGet, "/v1/audit-log?"+c.query, nil, http.StatusBadRequest, "invalid", c.param)
		}
		auditGet(t, admin, "/v1/audit-log?limit=10000")
		auditGet(t, admin, "/v1/audit-log?to=9999-12-31T23:59:59.999Z&from=0000-01-01T00:00:00Z")
		for name, c := range map[string]*testenv.Client{"member": member, "member's API client": memberClient} {
			status, _, body := c.Call(t, http.MethodGet, "/v1/audit-log", nil)
			if status != http.StatusForbidden || body["code"] != "forbidden" {
				t.Errorf("%s: %d %v, want 403 forbidden", name, status, body)
			}
		}
		if entries, _ := auditGet(t, adminReader, "/v1/audit-log"); len(entries) == 0 {
			t.Error("the admin's read-scope API client reads an empty log")
		}
	})
}

// TestAuditLogCSV: with Accept: text/csv the same page is CSV that
// encoding/csv reads: a header row, one row per entry with the members
// of the JSON entry (actor, changed, before and after as JSON text), and
// the cursor in the Audit-Next header.
func TestAuditLogCSV(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin, _, _ := auditTenant(t, srv, "csv")
		for _, q := range []string{"limit=1000", "limit=4&after=2", "resource=expenses", "resource=nothing"} {
			t.Run(q, func(t *testing.T) {
				want, next := auditGet(t, admin, "/v1/audit-log?"+q)
				rows, hdr := auditCSV(t, admin, "/v1/audit-log?"+q, "text/csv")
				if got := hdr.Get("Audit-Next"); got != next {
					t.Errorf("Audit-Next %q, want the JSON page's next %q", got, next)
				}
				wantRow := []string{"seq", "at", "actor", "requestId", "reason", "resource", "record", "op", "changed",
					"before", "after", "prevHash", "hash"}
				if len(rows) == 0 || !slices.Equal(rows[0], wantRow) {
					t.Fatalf("header row %v, want %v", rows, wantRow)
				}
				if len(rows)-1 != len(want) {
					t.Fatalf("%d rows, want %d entries", len(rows)-1, len(want))
				}
				for i, e := range want {
					if got := csvEntry(t, wantRow, rows[i+1]); !reflect.DeepEqual(got, jsonValue(t, e)) {
						t.Errorf("row %d: %v\nwant %v", i+1, got, jsonValue(t, e))
					}
				}
			})
		}
		// JSON unless text/csv (or text/*) is named and application/json
		// not preferred (an Accept that allows neither: TestListAccept).
		for accept, isCSV := range map[string]bool{
			"text/csv":                            true,
			"text/csv, */*;q=0.1":                 true,
			"application/json;q=0.5, text/csv":    true,
			"application/json, text/csv;q=0.9":    false,
			"*/*":                                 false,
			"text/*":                              true,
			"text/html,application/xhtml+xml,*/*": false,
		} {
			_, hdr := auditCSV(t, admin, "/v1/audit-log?limit=1", accept)
			if mt, _, _ := mime.ParseMediaType(hdr.Get("Content-Type")); (mt == "text/csv") != isCSV {
				t.Errorf("Accept %q: Content-Type %q", accept, hdr.Get("Content-Type"))
			}
			if !slices.Contains(headerList(hdr, "Vary"), "Accept") {
				t.Errorf("Accept %q: Vary %q lacks Accept", accept, hdr.Values("Vary"))
			}
		}
		// Refusals stay JSON errors.
		status, hdr, raw := testenv.Do(t, admin.With("Accept", "text/csv").Request(t, http.MethodGet, "/v1/audit-log?limit=0", nil))
		testenv.WantError(t, "CSV limit=0", status, raw, http.StatusBadRequest, "invalid")
		if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
			t.Errorf("a refusal of a CSV request: Content-Type %q", hdr.Get("Content-Type"))
		}
	})
}

// TestAuditLogCSVFormulas: a member's Change-Reason that a spreadsheet
// would run as a formula (=, +, -, @, a tab, a carriage return first) is
// a text cell with a leading "'" in the admin's CSV, and as sent in the
// JSON; a reason that starts no formula is as sent in both.
func TestAuditLogCSVFormulas(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "formulas"))
		member := admin.Member(t, "member@formulas.test")
		// A tab and a carriage return percent-encoded: a header value
		// cannot begin with the one nor hold the other.
		reasons := []string{`=HYPERLINK("https://evil.example","open")`, "+1+1", "-2+3", "@SUM(A1:A9)", "%09=1", "%0D=1", "a=b"}
		for _, reason := range reasons {
			member.With("Change-Reason", reason).Create(t, "expenses", M{"amount": 1})
		}
		rows, _ := auditCSV(t, admin, "/v1/audit-log?resource=expenses", "text/csv")
		entries, _ := auditGet(t, admin, "/v1/audit-log?resource=expenses")
		if len(rows) != len(reasons)+1 || len(entries) != len(reasons) {
			t.Fatalf("%d rows and %d entries for %d writes", len(rows)-1, len(entries), len(reasons))
		}
		for i, reason := range reasons {
			sent := strings.NewReplacer("%09", "\t", "%0D", "\r").Replace(reason)
			// Rows end with CRLF (RFC 4180), and a lone CR in a cell
			// is left out (encoding/csv): the cell begins with "'".
			want := strings.ReplaceAll("'"+sent, "\r", "")
			if reason == "a=b" {
				want = sent
			}
			if got := rows[i+1][4]; got != want {
				t.Errorf("reason %q: CSV cell %q, want %q", reason, got, want)
			}
			if got := entries[i].Reason; got == nil || *got != sent {
				t.Errorf("reason %q: JSON %v, want it as sent", reason, got)
			}
		}
	})
}

// auditCSV GETs path with the Accept header, which must answer 200; a CSV
// answer is parsed with encoding/csv.
func auditCSV(t *testing.T, c *testenv.Client, path, accept string) ([][]string, http.Header) {
	t.Helper()
	status, hdr, raw := testenv.Do(t, c.With("Accept", accept).Request(t, http.MethodGet, path, nil))
	if status != http.StatusOK {
		t.Fatalf("GET %s (Accept %s): %d %s", path, accept, status, raw)
	}
	if mt, _, _ := mime.ParseMediaType(hdr.Get("Content-Type")); mt != "text/csv" {
		return nil, hdr
	}
	if len(raw) > 0 && !bytes.HasSuffix(raw, []byte("\r\n")) {
		t.Errorf("the CSV's lines do not end with CRLF: %q", raw[max(0, len(raw)-20):])
	}
	r := csv.NewReader(bytes.NewReader(raw))
	r.FieldsPerRecord = 13
	var rows [][]string
	for {
		row, err := r.Read()
		if err == io.EOF {
			return rows, hdr
		}
		if err != nil {
			t.Fatalf("GET %s: the CSV does not parse: %v\n%s", path, err, raw)
		}
		rows = append(rows, row)
	}
}

// csvEntry turns a CSV row back into the JSON value of its entry: the
// JSON cells decoded, the empty ones of requestId, reason and record null.
func csvEntry(t *testing.T, columns, row []string) map[string]any {
	t.Helper()
	m := map[string]any{}
	for i, name := range columns {
		cell := row[i]
		switch name {
		case "actor", "changed", "before", "after":
			var v any
			if err := json.Unmarshal([]byte(cell), &v); err != nil {
				t.Fatalf("the %s cell is not JSON: %q", name, cell)
			}
			m[name] = v
		case "seq", "record":
			if cell == "" {
				m[name] = nil
				continue
			}
			n, err := strconv.ParseFloat(cell, 64)
			if err != nil {
				t.Fatalf("the %s cell is not a number: %q", name, cell)
			}
			m[name] = n
		case "requestId", "reason":
			m[name] = nil
			if cell != "" {
				m[name] = cell
			}
		default:
			m[name] = cell
		}
	}
	return m
}

// jsonValue is an entry as a decoded JSON object.
func jsonValue(t *testing.T, e auditEntry) map[string]any {
	t.Helper()
	raw, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	testenv.DecodeInto(t, raw, &m)
	return m
}

// TestAuditHistoryAsSeen: a member reads only the states of a record that
// they could read at the time: a document about another user that is
// then moved to the member shows the member nothing of what it was (its
// create, its changes, the move itself), only what followed; one hidden
// from the member for a while shows the entries of before and after,
// not those of the time between; the admin reads every entry.
func TestAuditHistoryAsSeen(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "seen"))
		member := admin.Member(t, "member@seen.test")
		other := admin.Member(t, "other@seen.test")
		patch := func(id int64, body M) {
			admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/documents/%d", id), body, http.StatusOK)
		}
		history := func(c *testenv.Client, id int64) []string {
			entries, _ := auditGet(t, c, fmt.Sprintf("/v1/documents/%d/history", id))
			var names []string
			for _, e := range entries {
				var after struct{ Name string }
				_ = json.Unmarshal(e.After, &after)
				names = append(names, e.Op+" "+after.Name)
				for _, state := range []json.RawMessage{e.Before, e.After} {
					if c == member && bytes.Contains(state, []byte("secret")) {
						t.Errorf("the member reads a state of the document from before it was theirs: %s", state)
					}
				}
			}
			return names
		}
		moved := testenv.ID(t, admin.Create(t, "documents", M{"model": "user", "record": other.UserID, "category": 3,
			"visibleToUser": true, "name": "secret diagnosis"}))
		patch(moved, M{"name": "secret diagnosis, confirmed"})
		patch(moved, M{"record": member.UserID, "name": "contract"})
		patch(moved, M{"name": "contract, signed"})
		if got, want := history(member, moved), []string{"update contract, signed"}; !slices.Equal(got, want) {
			t.Errorf("the member's history of the document moved to them: %q, want %q", got, want)
		}
		if got := history(admin, moved); len(got) != 4 {
			t.Errorf("the admin's history of it: %q, want all 4 entries", got)
		}

		hidden := testenv.ID(t, admin.Create(t, "documents", M{"model": "user", "record": member.UserID, "category": 1,
			"visibleToUser": true, "name": "offer"}))
		patch(hidden, M{"visibleToUser": false, "name": "offer, secret terms"})
		patch(hidden, M{"name": "offer, more secret terms"})
		member.Fail(t, http.MethodGet, fmt.Sprintf("/v1/documents/%d/history", hidden), nil, http.StatusNotFound, "not_found")
		patch(hidden, M{"visibleToUser": true, "name": "offer, final"})
		patch(hidden, M{"name": "offer, signed"})
		if got, want := history(member, hidden), []string{"create offer", "update offer, signed"}; !slices.Equal(got, want) {
			t.Errorf("the member's history of the document hidden for a while: %q, want %q", got, want)
		}
		if got := history(admin, hidden); len(got) != 5 {
			t.Errorf("the admin's history of it: %q, want all 5 entries", got)
		}
	})
}

// TestAuditHistory: GET /v1/NAME/{id}/history shows the record's entries
// oldest first to whoever may GET the record: a create, an update and a
// delete are three entries; a member reads the history of what they see
// and gets 404 for what they do not; once the record is gone an admin
// still reads it and a member gets 404; an id with no entries is a 404.
func TestAuditHistory(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "history"))
		member := admin.Member(t, "member@history.test")
		doc := func(visible bool) int64 {
			return testenv.ID(t, admin.Create(t, "documents", M{"model": "user", "record": member.UserID, "category": 1,
				"visibleToUser": visible, "name": "contract"}))
		}
		shown, hidden := doc(true), doc(false)
		path := func(res string, id int64) string { return fmt.Sprintf("/v1/%s/%d/history", res, id) }
		admin.With("Change-Reason", "renamed%20on%20request").Object(t, http.MethodPatch, fmt.Sprintf("/v1/documents/%d", shown),
			M{"name": "signed contract"}, http.StatusOK)
		// A malformed reason refuses the write: no entry.
		admin.With("Change-Reason", strings.Repeat("x", 501)).Fail(t, http.MethodPatch, fmt.Sprintf("/v1/documents/%d", shown),
			M{"name": "never"}, http.StatusBadRequest, "invalid_reason")

		entries, _ := auditGet(t, member, path("documents", shown))
		ops := []string{}
		for _, e := range entries {
			ops = append(ops, e.Op)
			if e.Resource != "documents" || e.Record == nil || *e.Record != shown {
				t.Errorf("the history of document %d shows %s %v", shown, e.Resource, e.Record)
			}
		}
		if !slices.Equal(ops, []string{"create", "update"}) || entries[0].Seq >= entries[1].Seq {
			t.Fatalf("history %v (seqs %v), want create, update oldest first", ops, seqs(entries))
		}
		if u := entries[1]; u.Reason == nil || *u.Reason != "renamed on request" || !slices.Contains(u.Changed, "name") ||
			len(slices.DeleteFunc(slices.Clone(u.Changed), func(a string) bool { return a == "name" || a == "updatedAt" })) > 0 ||
			u.Actor.User == nil || *u.Actor.User != admin.UserID {
			t.Errorf("the update: reason %v, changed %v, actor %v", u.Reason, u.Changed, u.Actor.User)
		}
		member.Fail(t, http.MethodGet, path("documents", hidden), nil, http.StatusNotFound, "not_found")
		if got, _ := auditGet(t, admin, path("documents", hidden)); len(got) != 1 || got[0].Op != "create" {
			t.Errorf("the admin's history of the hidden document: %v", got)
		}

		// Deleted: the admin still reads the history, the member no more.
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/documents/%d", shown), nil, http.StatusOK)
		entries, _ = auditGet(t, admin, path("documents", shown))
		ops = ops[:0]
		for _, e := range entries {
			ops = append(ops, e.Op)
		}
		if !slices.Equal(ops, []string{"create", "update", "delete"}) || entries[2].After == nil || string(entries[2].After) != "null" {
			t.Errorf("the history of a deleted document: %v, after %s", ops, entries[len(entries)-1].After)
		}
		member.Fail(t, http.MethodGet, path("documents", shown), nil, http.StatusNotFound, "not_found")

		// No such record, and no entries of it.
		for _, p := range []string{path("documents", 999999), path("projects", shown), "/v1/documents/abc/history", "/v1/documents/0/history"} {
			admin.Fail(t, http.MethodGet, p, nil, http.StatusNotFound, "not_found")
		}

		// Users have a history too: the member's creation, and a change.
		admin.With("Change-Reason", "married").Object(t, http.MethodPatch, fmt.Sprintf("/v1/users/%d", member.UserID),
			M{"lastName": "Neu"}, http.StatusOK)
		for _, c := range []*testenv.Client{admin, member} {
			entries, _ := auditGet(t, c, path("users", member.UserID))
			if len(entries) != 2 || entries[0].Op != "create" || entries[1].Op != "update" || entries[1].Reason == nil ||
				*entries[1].Reason != "married" || entries[0].Resource != "users" {
				t.Errorf("the member's history: %+v", entries)
			}
			for _, e := range entries {
				if bytes.Contains(e.After, []byte("password")) {
					t.Errorf("a user's history shows the password: %s", e.After)
				}
			}
		}

		// A read-only resource derived from another has the history of
		// its records there; an admin-only one refuses members as GET does.
		var absenceType int64
		if types := admin.List(t, "/v1/absence-types?name=PublicHoliday"); len(types) > 0 {
			absenceType = testenv.ID(t, types[0])
		} else {
			absenceType = testenv.ID(t, admin.Create(t, "absence-types", M{"name": "PublicHoliday"}))
		}
		holiday := testenv.ID(t, admin.Create(t, "absences", M{"absenceType": absenceType, "name": "New Year"}))
		admin.Get(t, "holidays", holiday)
		if got, _ := auditGet(t, admin, path("holidays", holiday)); len(got) != 1 || got[0].Resource != "absences" {
			t.Errorf("the history of holiday %d: %+v", holiday, got)
		}
		client := testenv.ID(t, admin.APIClient(t, "sync", member.UserID, "read"))
		auditGet(t, admin, path("api-clients", client))
		member.Fail(t, http.MethodGet, path("api-clients", client), nil, http.StatusForbidden, "forbidden")
	})
}
