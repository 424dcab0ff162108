package query_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	"planwerk/internal/query"
)

// render writes a criteria tree compactly: and(...), or(...), and
// conditions as "name op value" (a Loose value is marked with ~; a value
// of a declared field shows its kind by its form: "5" is a string, 5 a
// number).
func render(n query.Node) string {
	switch n := n.(type) {
	case nil:
		return "nil"
	case *query.And:
		return "and(" + renderTerms(n.Terms) + ")"
	case *query.Or:
		return "or(" + renderTerms(n.Terms) + ")"
	case *query.Cond:
		vs := make([]string, len(n.Values))
		for i, v := range n.Values {
			vs[i] = v.String()
			if v.Loose {
				vs[i] += "~"
			}
		}
		val := strings.Join(vs, ",")
		if n.Op == query.In || n.Op == query.Nin {
			val = "[" + val + "]"
		}
		return fmt.Sprintf("%s %s %s", n.Field.Name, n.Op, val)
	}
	return fmt.Sprintf("?%T", n)
}

func renderTerms(ts []query.Node) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = render(t)
	}
	return strings.Join(parts, ", ")
}

func renderSort(keys []query.SortKey) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		dir := "ASC"
		if k.Dir == query.Desc {
			dir = "DESC"
		}
		parts[i] = k.Field.Name + " " + dir
	}
	return strings.Join(parts, ",")
}

// nest wraps a criteria object in n levels of {"and":[...]}.
func nest(n int, inner string) string {
	for range n {
		inner = `{"and":[` + inner + `]}`
	}
	return inner
}

type parseCase struct {
	name   string
	params url.Values
	open   bool // openSchema; else projectDaySchema

	// on success
	where    string // render of Where; "" = not checked
	sort     string // renderSort; "-" = not checked
	limit    int    // -1 = not checked
	skip     int
	populate string // comma-joined; "-" = not checked

	// on failure
	errParam string // "" = success expected
	errText  string // substring of the message
}

func ok(name string, p url.Values, where string) parseCase {
	return parseCase{name: name, params: p, where: where, sort: "-", limit: -1, populate: "-"}
}

func okOpen(name string, p url.Values, where string) parseCase {
	c := ok(name, p, where)
	c.open = true
	return c
}

func bad(name string, p url.Values, param, text string) parseCase {
	return parseCase{name: name, params: p, errParam: param, errText: text}
}

func badOpen(name string, p url.Values, param, text string) parseCase {
	c := bad(name, p, param, text)
	c.open = true
	return c
}

func parseCases() []parseCase {
	lim := func(name string, p url.Values, limit, skip int) parseCase {
		c := ok(name, p, "")
		c.limit, c.skip = limit, skip
		return c
	}
	srt := func(name string, p url.Values, sort string) parseCase {
		c := ok(name, p, "")
		c.sort = sort
		return c
	}
	srtOpen := func(name string, p url.Values, sort string) parseCase {
		c := srt(name, p, sort)
		c.open = true
		return c
	}
	pop := func(name string, p url.Values, populate string) parseCase {
		c := ok(name, p, "")
		c.open = true
		c.populate = populate
		return c
	}
	return []parseCase{
		// limit and skip
		lim("defaults", qs(), query.DefaultLimit, 0),
		lim("limit 5 skip 3", qs("limit", "5", "skip", "3"), 5, 3),
		lim("limit max", qs("limit", "50000"), 50000, 0),
		lim("limit above max", qs("limit", "50001"), 50000, 0),
		lim("limit huge", qs("limit", "99999999999999999999999"), 50000, 0),
		lim("limit 0", qs("limit", "0"), 0, 0),
		lim("limit spaces", qs("limit", " 7 "), 7, 0),
		lim("skip large", qs("skip", "123456"), query.DefaultLimit, 123456),
		bad("limit negative", qs("limit", "-1"), "limit", "non-negative integer"),
		bad("limit float", qs("limit", "1.5"), "limit", "non-negative integer"),
		bad("limit text", qs("limit", "ten"), "limit", "non-negative integer"),
		bad("limit empty", qs("limit", ""), "limit", "non-negative integer"),
		bad("limit plus", qs("limit", "+5"), "limit", "non-negative integer"),
		bad("limit twice", qs("limit", "1", "limit", "2"), "limit", ""),
		bad("skip negative", qs("skip", "-3"), "skip", "non-negative integer"),
		bad("skip float", qs("skip", "2.0"), "skip", "non-negative integer"),
		bad("skip text", qs("skip", "x"), "skip", "non-negative integer"),

		// sort
		srt("sort none", qs(), ""),
		srt("sort empty", qs("sort", ""), ""),
		srt("sort day DESC", qs("sort", "day DESC"), "day DESC"),
		srt("sort a ASC,b", qs("sort", "project ASC,day"), "project ASC,day ASC"),
		srt("sort spaces", qs("sort", "  project   DESC , day  asc "), "project DESC,day ASC"),
		srt("sort lowercase", qs("sort", "day desc"), "day DESC"),
		srt("sort mixed case", qs("sort", "day Desc"), "day DESC"),
		srt("sort repeated param", qs("sort", "day", "sort", "id DESC"), "day ASC,id DESC"),
		srt("sort JSON strings", qs("sort", `["day DESC","project"]`), "day DESC,project ASC"),
		srt("sort JSON objects", qs("sort", `[{"day":"DESC"},{"project":"asc"}]`), "day DESC,project ASC"),
		srt("sort JSON object keeps key order", qs("sort", `[{"validationStatus":"DESC","day":"ASC","id":"DESC"}]`), "validationStatus DESC,day ASC,id DESC"),
		srt("sort JSON bare object", qs("sort", `{"createdAt":"DESC"}`), "createdAt DESC"),
		srt("sort JSON mixed", qs("sort", `["day",{"id":"DESC"}]`), "day ASC,id DESC"),
		srt("sort JSON empty", qs("sort", `[]`), ""),
		srtOpen("sort open attribute", qs("sort", "whatever DESC,x-y"), "whatever DESC,x-y ASC"),
		srtOpen("sort unicode attribute", qs("sort", "größe DESC,名前"), "größe DESC,名前 ASC"),
		srtOpen("sort dotted attribute", qs("sort", "a.b DESC"), "a.b DESC"),
		srtOpen("sort name with a space", qs("sort", "first name DESC,größe"), "first name DESC,größe ASC"),
		srtOpen("sort JSON name with a space", qs("sort", `[{"first name":"ASC"},"a.b DESC"]`), "first name ASC,a.b DESC"),
		srtOpen("sort name of 128 bytes", qs("sort", strings.Repeat("é", 64)+" DESC"), strings.Repeat("é", 64)+" DESC"),
		bad("sort unknown direction", qs("sort", "day DOWN"), "sort", "unknown direction"),
		bad("sort unknown direction JSON", qs("sort", `[{"day":"UP"}]`), "sort", "unknown direction"),
		bad("sort unknown direction JSON string", qs("sort", `["day SIDEWAYS"]`), "sort", "unknown direction"),
		bad("sort direction not a string", qs("sort", `[{"day":1}]`), "sort", ""),
		bad("sort three words", qs("sort", "day DESC now"), "sort", ""),
		bad("sort unknown attribute", qs("sort", "name"), "sort", "unknown attribute"),
		bad("sort unknown attribute JSON", qs("sort", `["name DESC"]`), "sort", "unknown attribute"),
		bad("sort unknown attribute object", qs("sort", `[{"name":"DESC"}]`), "sort", "unknown attribute"),
		bad("sort bad JSON", qs("sort", `["day"`), "sort", ""),
		bad("sort JSON number", qs("sort", `[1]`), "sort", ""),
		bad("sort JSON trailing", qs("sort", `["day"]x`), "sort", ""),
		bad("sort empty part", qs("sort", "day,,id"), "sort", ""),
		badOpen("sort bad open name", qs("sort", `a"b`), "sort", ""),
		badOpen("sort name with a backslash", qs("sort", `a\b DESC`), "sort", "quotes, backslashes or control characters"),
		badOpen("sort name with a control character", qs("sort", "a\x01b"), "sort", "quotes, backslashes or control characters"),
		badOpen("sort JSON name with a quote", qs("sort", `[{"a\"b":"ASC"}]`), "sort", ""),
		badOpen("sort name of 129 bytes", qs("sort", "x"+strings.Repeat("é", 64)), "sort", "1 to 128 bytes"),
		badOpen("sort too many keys", qs("sort", "a,b,c,d,e,f,g,h,i"), "sort", ""),

		// populate
		pop("populate none", qs(), ""),
		pop("populate one", qs("populate", "project"), "project"),
		pop("populate comma list", qs("populate", "user, project"), "project,user"),
		pop("populate JSON array", qs("populate", `["user","project"]`), "project,user"),
		pop("populate duplicates", qs("populate", "user,user", "populate", "user"), "user"),
		pop("populate all", qs("populate", "true"), "project,user"),
		pop("populate empty", qs("populate", ""), "project,user"),
		pop("populate false", qs("populate", "false"), ""),
		// Names that are not references of the resource are ignored.
		pop("populate non-reference", qs("populate", "day"), ""),
		pop("populate unknown", qs("populate", "nope"), ""),
		pop("populate JSON non-reference", qs("populate", `["project","title"]`), "project"),
		pop("populate mixed list", qs("populate", "nope, user,day", "populate", "title"), "user"),
		pop("populate JSON empty", qs("populate", `[]`), ""),
		badOpen("populate bad JSON", qs("populate", `["project"`), "populate", ""),
		badOpen("populate JSON numbers", qs("populate", `[1]`), "populate", ""),

		// where: errors
		bad("where invalid JSON", w(`{"day":`), "where", "not valid JSON"),
		bad("where not JSON", w(`day=5`), "where", "not valid JSON"),
		bad("where empty", w(``), "where", "not valid JSON"),
		bad("where trailing", w(`{} {}`), "where", "not valid JSON"),
		bad("where array", w(`[{"day":"2026-01-05"}]`), "where", "object"),
		bad("where string", w(`"day"`), "where", "object"),
		bad("where null", w(`null`), "where", "object"),
		bad("where number", w(`5`), "where", "object"),
		bad("where twice", qs("where", `{}`, "where", `{}`), "where", ""),
		bad("unknown modifier", w(`{"project":{"like":"1"}}`), "where", "unknown modifier"),
		bad("unknown modifier case", w(`{"project":{"IN":[1]}}`), "where", "unknown modifier"),
		bad("unknown modifier startswith", w(`{"project":{"startswith":"1"}}`), "where", "unknown modifier"),
		bad("empty constraint", w(`{"project":{}}`), "where", "empty constraint"),
		bad("empty constraint nested", w(`{"or":[{"day":{}}]}`), "where", "empty constraint"),
		bad("in without array", w(`{"project":{"in":1}}`), "where", "array"),
		bad("in with object", w(`{"project":{"in":{"a":1}}}`), "where", "array"),
		bad("nin without array", w(`{"project":{"nin":"1"}}`), "where", "array"),
		bad("nin null", w(`{"project":{"nin":null}}`), "where", "array"),
		bad("in nested array", w(`{"project":{"in":[[1]]}}`), "where", ""),
		bad("or not array", w(`{"or":{"day":"2026-01-05"}}`), "where", "array of criteria objects"),
		bad("and not array", w(`{"and":"x"}`), "where", "array of criteria objects"),
		bad("or of non-objects", w(`{"or":[1,2]}`), "where", "array of criteria objects"),
		bad("and of arrays", w(`{"and":[[{"day":"2026-01-05"}]]}`), "where", "array of criteria objects"),
		bad("or null", w(`{"or":null}`), "where", "array of criteria objects"),
		bad("and with null", w(`{"and":[null]}`), "where", "array of criteria objects"),
		// Depth counts nested criteria objects; the arrays of and, or and
		// in add no level: 31 "and" groups around {"project":1} are 32
		// levels, 32 groups are 33.
		bad("too deep", w(nest(32, `{"project":1}`)), "where", "deeper than 32"),
		bad("too deep with or", w(strings.Repeat(`{"or":[`, 32)+`{"project":1}`+strings.Repeat(`]}`, 32)), "where", "deeper than 32"),
		bad("in with nested arrays", w(`{"project":{"in":`+strings.Repeat("[", 40)+strings.Repeat("]", 40)+`}}`), "where", ""),
		ok("deep but within limit", w(nest(31, `{"project":1}`)), nest2Render(31)),
		ok("deep with an in array", w(nest(31, `{"project":[1]}`)), ""),
		ok("deep with a modifier object", w(nest(30, `{"project":{"in":[1]}}`)), ""),
		bad("unknown attribute", w(`{"name":"x"}`), "where", "unknown attribute"),
		bad("unknown attribute in or", w(`{"or":[{"day":"2026-01-05"},{"title":"x"}]}`), "where", "unknown attribute"),
		bad("unknown attribute case", w(`{"Day":"2026-01-05"}`), "where", "unknown attribute"),
		bad("contains refused", w(`{"project":{"contains":"1"}}`), "where", "contains"),
		bad("contains refused in or", w(`{"or":[{"day":{"contains":"01"}}]}`), "where", "contains"),
		bad("range on null", w(`{"project":{"<":null}}`), "where", ""),
		bad("range on bool", w(`{"day":{">":true}}`), "where", ""),
		bad("startsWith number", w(`{"day":{"startsWith":5}}`), "where", ""),
		bad("value object", w(`{"project":{"!=":{"a":1}}}`), "where", ""),
		bad("value array in !=", w(`{"project":{"!=":[1]}}`), "where", ""),
		badOpen("bad open name", w(`{"a\\b":1}`), "where", ""),
		badOpen("empty open name", w(`{"":1}`), "where", ""),
		badOpen("open name with a quote", w(`{"a\"b":1}`), "where", "quotes, backslashes or control characters"),
		badOpen("open name with a control character", w(`{"a\u0001b":1}`), "where", "quotes, backslashes or control characters"),
		badOpen("open name with a tab", w(`{"a\tb":1}`), "where", ""),
		badOpen("open name with DEL", w(`{"a\u007fb":1}`), "where", ""),
		badOpen("open name of 129 bytes", w(`{"x`+strings.Repeat("é", 64)+`":1}`), "where", "1 to 128 bytes"),
		badOpen("bad open name in or", w(`{"or":[{"a":1},{"a\"b":1}]}`), "where", ""),
		badOpen("contains allowed but needs string", w(`{"a":{"contains":1}}`), "where", ""),

		// where: declared conversion
		ok("integer from string", w(`{"project":"5"}`), "project = 5"),
		ok("integer from number", w(`{"project":5}`), "project = 5"),
		ok("integer from 5.0", w(`{"project":5.0}`), "project = 5"),
		ok("integer big", w(`{"project":9007199254740993}`), "project = 9007199254740993"),
		bad("integer from text", w(`{"project":"abc"}`), "where", "project"),
		bad("integer from hex float", w(`{"project":"0x1p1"}`), "where", "project"),
		bad("integer from Inf", w(`{"project":"Inf"}`), "where", "project"),
		bad("filter integer hex", qs("id", "0x10"), "id", "id"),
		bad("filter integer hex float", qs("id", "0x10p0"), "id", "id"),
		okOpen("declared number from +text", w(`{"hours":"+7.5"}`), `hours = 7.5`),
		badOpen("declared number from NaN", w(`{"hours":"NaN"}`), "where", "hours"),
		bad("integer from fraction", w(`{"project":1.5}`), "", "project"),
		bad("integer from bool", w(`{"project":true}`), "where", "project"),
		bad("integer in list", w(`{"project":["1","x"]}`), "where", "project"),
		bad("date bad", w(`{"day":"2026-13-01"}`), "where", "day"),
		bad("date short", w(`{"day":"2026-1-5"}`), "where", "day"),
		bad("date number", w(`{"day":20260105}`), "where", "day"),
		bad("date timestamp", w(`{"day":"2026-01-05T00:00:00.000Z"}`), "where", "day"),
		bad("enum bad", w(`{"validationStatus":"approved"}`), "where", "validationStatus"),
		bad("enum number", w(`{"validationStatus":1}`), "where", "validationStatus"),
		bad("timestamp bad", w(`{"createdAt":"2026-01-05T00:00:00"}`), "where", "createdAt"),
		bad("timestamp bad range", w(`{"createdAt":{">":"yesterday"}}`), "where", "createdAt"),
		ok("date", w(`{"day":"2026-01-05"}`), `day = "2026-01-05"`),
		ok("enum", w(`{"validationStatus":"APPROVED"}`), `validationStatus = "APPROVED"`),
		ok("timestamp day", w(`{"createdAt":"2026-01-05"}`), `createdAt = "2026-01-05"`),
		ok("timestamp full", w(`{"updatedAt":{"<":"2026-01-05T10:00:00.000Z"}}`), `updatedAt < "2026-01-05T10:00:00.000Z"`),
		// Date-times: any RFC 3339 form, compared in the stored form
		// (UTC, milliseconds, further digits cut off); days stay days.
		ok("timestamp without fraction", w(`{"createdAt":"2026-01-05T10:00:00Z"}`), `createdAt = "2026-01-05T10:00:00.000Z"`),
		ok("timestamp offset in range", w(`{"updatedAt":{">=":"2026-01-05T11:00:00+01:00"}}`), `updatedAt >= "2026-01-05T10:00:00.000Z"`),
		ok("timestamp offsets in a range", w(`{"createdAt":{">":"2026-01-05T00:30:00+01:00","<":"2026-01-05T09:00:00.999999-05:30"}}`),
			`and(createdAt < "2026-01-05T14:30:00.999Z", createdAt > "2026-01-04T23:30:00.000Z")`),
		ok("timestamp lower case", w(`{"createdAt":{"!=":"2026-01-05t10:00:00.1z"}}`), `createdAt != "2026-01-05T10:00:00.100Z"`),
		ok("timestamp days and offsets in", w(`{"createdAt":["2026-01-05","2026-01-05T10:00:00.1239+00:00",null]}`),
			`createdAt in ["2026-01-05","2026-01-05T10:00:00.123Z",null]`),
		ok("timestamp nin", w(`{"updatedAt":{"nin":["2026-01-05T10:00:00-00:00"]}}`), `updatedAt nin ["2026-01-05T10:00:00.000Z"]`),
		ok("timestamp filter with offset", qs("createdAt", "2026-01-05T10:00:00+01:00"), `and(createdAt = "2026-01-05T09:00:00.000Z")`),
		ok("timestamp filters", qs("updatedAt", "2026-01-05", "updatedAt[]", "2026-01-05T10:00:00.5Z"), `and(updatedAt in ["2026-01-05","2026-01-05T10:00:00.500Z"])`),
		ok("timestamp startsWith is text", w(`{"createdAt":{"startsWith":"2026-01-05T10"}}`), `createdAt startsWith "2026-01-05T10"`),
		bad("timestamp without offset", w(`{"createdAt":{"<":"2026-01-05T10:00:00.000"}}`), "where", "RFC 3339"),
		bad("timestamp with a space", w(`{"createdAt":"2026-01-05 10:00:00Z"}`), "where", "createdAt"),
		bad("timestamp 10 fractional digits", w(`{"createdAt":"2026-01-05T10:00:00.0123456789Z"}`), "where", "createdAt"),
		bad("timestamp offset without colon", w(`{"updatedAt":{"in":["2026-01-05T10:00:00+0100"]}}`), "where", "updatedAt"),
		bad("timestamp leap second", w(`{"createdAt":"2026-01-05T10:00:60Z"}`), "where", "leap second"),
		bad("timestamp year 10000", w(`{"createdAt":{">":"9999-12-31T23:00:00-01:30"}}`), "where", "years 0000 to 9999"),
		bad("timestamp number", w(`{"createdAt":{">":1767607200000}}`), "where", "RFC 3339"),
		bad("timestamp bool", w(`{"createdAt":true}`), "where", "createdAt"),
		bad("timestamp filter without offset", qs("createdAt", "2026-01-05T10:00:00"), "createdAt", "RFC 3339"),
		bad("timestamp filter month 13", qs("updatedAt", "2026-13-05T10:00:00Z"), "updatedAt", "updatedAt"),
		ok("null", w(`{"day":null}`), "day = null"),
		ok("array is in", w(`{"project":[1,"2",null]}`), "project in [1,2,null]"),
		ok("in empty", w(`{"project":{"in":[]}}`), "project in []"),
		ok("nin", w(`{"id":{"nin":["3"]}}`), "id nin [3]"),
		ok("several modifiers", w(`{"project":{">":1,"<=":"9","!=":5}}`), "and(project != 5, project <= 9, project > 1)"),
		ok("startsWith on integer", w(`{"project":{"startsWith":"1"}}`), `project startsWith "1"`),
		ok("startsWith on id", w(`{"id":{"startsWith":"12"}}`), `id startsWith "12"`),
		ok("startsWith partial day", w(`{"day":{"startsWith":"2026-01"}}`), `day startsWith "2026-01"`),
		ok("endsWith partial day", w(`{"day":{"endsWith":"-05"}}`), `day endsWith "-05"`),
		ok("startsWith partial enum", w(`{"validationStatus":{"startsWith":"APP"}}`), `validationStatus startsWith "APP"`),
		ok("startsWith partial timestamp", w(`{"createdAt":{"startsWith":"2026-01-05T1"}}`), `createdAt startsWith "2026-01-05T1"`),
		ok("startsWith minus on integer", w(`{"project":{"startsWith":"-"}}`), `project startsWith "-"`),
		ok("where {}", w(`{}`), "and()"),
		ok("or empty", w(`{"or":[]}`), "or()"),
		ok("and empty", w(`{"and":[]}`), "and()"),
		ok("or", w(`{"or":[{"project":1},{"day":"2026-01-05","id":2}]}`), `or(project = 1, and(day = "2026-01-05", id = 2))`),
		ok("keys sorted", w(`{"project":1,"day":"2026-01-05"}`), `and(day = "2026-01-05", project = 1)`),
		okOpen("open values keep kind", w(`{"a":"5","b":5,"c":true,"d":null,"e":1.5}`), `and(a = "5", b = 5, c = true, d = null, e = 1.5)`),
		okOpen("open contains", w(`{"a":{"contains":"%_"}}`), `a contains "%_"`),
		okOpen("open range string", w(`{"a":{">":"m"}}`), `a > "m"`),
		okOpen("declared Any keeps kind", w(`{"extra":"5"}`), `extra = "5"`),
		okOpen("unicode open name", w(`{"größe":1}`), `größe = 1`),
		okOpen("open name with a space", w(`{"first name":"x"}`), `first name = "x"`),
		okOpen("dotted open name", w(`{"a.b":{"!=":null}}`), `a.b != null`),
		okOpen("open name with punctuation", w(`{"a/b:c[0]-$@":true}`), `a/b:c[0]-$@ = true`),
		okOpen("open name of 128 bytes", w(`{"`+strings.Repeat("é", 64)+`":1}`), strings.Repeat("é", 64)+` = 1`),
		okOpen("declared number", w(`{"hours":"7.5"}`), `hours = 7.5`),
		okOpen("declared bool", w(`{"billable":true}`), `billable = true`),
		badOpen("declared bool from text", w(`{"billable":"yes"}`), "where", "billable"),
		badOpen("declared string from number", w(`{"title":5}`), "where", "title"),

		// where present: per-attribute parameters ignored
		ok("where wins", qs("where", `{"day":"2026-01-05"}`, "project", "3", "id", "abc"), `day = "2026-01-05"`),
		ok("where wins over unknown", qs("where", `{}`, "name", "x"), "and()"),

		// per-attribute filters
		ok("filter one", qs("project", "5"), "and(project = 5)"),
		ok("filter repeated", qs("project", "5", "project", "6"), "and(project in [5,6])"),
		ok("filter brackets", qs("project[]", "5", "project[]", "6"), "and(project in [5,6])"),
		ok("filter bracket single", qs("id[]", "5"), "and(id = 5)"),
		ok("filter both forms", qs("project", "5", "project[]", "6"), "and(project in [5,6])"),
		ok("filter several", qs("project", "5", "day", "2026-01-05", "validationStatus", "APPROVED"),
			`and(day = "2026-01-05", project = 5, validationStatus = "APPROVED")`),
		ok("filter timestamp day", qs("createdAt", "2026-01-05"), `and(createdAt = "2026-01-05")`),
		ok("filter timestamp", qs("updatedAt", "2026-01-05T10:00:00.000Z"), `and(updatedAt = "2026-01-05T10:00:00.000Z")`),
		ok("filter with paging", qs("project", "5", "limit", "3", "skip", "1", "sort", "day", "populate", "project"), "and(project = 5)"),
		ok("no filters", qs(), "and()"),
		bad("filter integer text", qs("project", "abc"), "project", "project"),
		bad("filter integer empty", qs("project", ""), "project", "project"),
		bad("filter integer fraction", qs("id", "1.5"), "id", "id"),
		bad("filter one bad of several", qs("project", "1", "project", "x"), "project", "project"),
		bad("filter bad date", qs("day", "2026-02-30"), "day", "day"),
		bad("filter bad date form", qs("day", "05.01.2026"), "day", "day"),
		bad("filter bad enum", qs("validationStatus", "PENDING"), "validationStatus", "validationStatus"),
		bad("filter bad timestamp", qs("createdAt", "2026-01-05 10:00"), "createdAt", "createdAt"),
		bad("filter unknown attribute", qs("name", "x"), "name", "unknown attribute"),
		okOpen("open filter loose", qs("name", "5"), `and(name = "5"~)`),
		okOpen("open filter repeated", qs("name", "a", "name[]", "b"), `and(name in ["a"~,"b"~])`),
		okOpen("open filter extra params ignored", qs("includeSkills", "true", "name", "a"), `and(name = "a"~)`),
		okOpen("declared string filter", qs("title", "5"), `and(title = "5")`),
		okOpen("declared number filter", qs("hours", "7.25"), `and(hours = 7.25)`),
		okOpen("declared bool filter", qs("billable", "false"), `and(billable = false)`),
		badOpen("declared bool filter bad", qs("billable", "yes"), "billable", "billable"),
		badOpen("open filter bad name", qs("a\"b", "1"), "a\"b", ""),
		badOpen("open filter name with a backslash", qs(`a\b`, "1"), `a\b`, ""),
		badOpen("open filter name with a control character", qs("a\x01b", "1"), "a\x01b", ""),
		okOpen("open filter unicode name", qs("größe", "3"), `and(größe = "3"~)`),
		okOpen("open filter dotted name", qs("a.b", "3"), `and(a.b = "3"~)`),
	}
}

// nest2Render is the render of nest(n, {"project":1}).
func nest2Render(n int) string {
	s := "project = 1"
	for range n {
		s = "and(" + s + ")"
	}
	return s
}

func TestParse(t *testing.T) {
	t.Parallel()
	cases := parseCases()
	t.Logf("%d cases", len(cases))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := projectDaySchema()
			if c.open {
				s = openSchema()
			}
			q, err := query.Parse(c.params, s)
			if c.errParam != "" || c.errText != "" {
				if err == nil {
					t.Fatalf("Parse(%v) = where %s, want an error", c.params, render(q.Where))
				}
				var qe *query.Error
				if !errors.As(err, &qe) {
					t.Fatalf("error %T %v is not a *query.Error", err, err)
				}
				if c.errParam != "" && qe.Param != c.errParam {
					t.Errorf("error param %q, want %q (%v)", qe.Param, c.errParam, err)
				}
				if !strings.Contains(qe.Message, c.errText) {
					t.Errorf("error %q does not mention %q", qe.Message, c.errText)
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse(%v): %v", c.params, err)
			}
			if c.where != "" {
				if got := render(q.Where); got != c.where {
					t.Errorf("where\n got %s\nwant %s", got, c.where)
				}
			}
			if c.sort != "-" {
				if got := renderSort(q.Sort); got != c.sort {
					t.Errorf("sort %q, want %q", got, c.sort)
				}
			}
			if c.limit >= 0 {
				if q.Limit != c.limit || q.Skip != c.skip {
					t.Errorf("limit %d skip %d, want %d %d", q.Limit, q.Skip, c.limit, c.skip)
				}
			}
			if c.populate != "-" {
				if got := strings.Join(q.Populate, ","); got != c.populate {
					t.Errorf("populate %q, want %q", got, c.populate)
				}
			}
		})
	}
}

// TestParseConvertsDeclared checks the values of converted criteria.
func TestParseConvertsDeclared(t *testing.T) {
	t.Parallel()
	q, err := query.Parse(qs("project", "5", "id", " 7 "), projectDaySchema())
	if err != nil {
		t.Fatal(err)
	}
	for _, term := range q.Where.(*query.And).Terms {
		c := term.(*query.Cond)
		v := c.Values[0]
		if v.Kind != query.KindNumber || !v.IsInt || v.Loose {
			t.Errorf("%s: value %+v, want a whole number", c.Field.Name, v)
		}
	}
	q, err = query.Parse(w(`{"createdAt":{">":"2026-01-05"}}`), projectDaySchema())
	if err != nil {
		t.Fatal(err)
	}
	c := q.Where.(*query.Cond)
	if c.Field.Column != "created_at" || c.Field.Type != query.Timestamp {
		t.Errorf("field %+v, want the created_at column", c.Field)
	}
}

// TestParseLimits: the value budget and the where length.
func TestParseLimits(t *testing.T) {
	t.Parallel()
	arr := strings.TrimSuffix(strings.Repeat("1,", query.MaxValues+1), ",")
	if _, err := query.Parse(w(`{"project":{"in":[`+arr+`]}}`), projectDaySchema()); err == nil {
		t.Error("more than MaxValues values accepted")
	}
	p := url.Values{}
	for range query.MaxValues + 1 {
		p.Add("project", "1")
	}
	if _, err := query.Parse(p, projectDaySchema()); err == nil {
		t.Error("more than MaxValues filter values accepted")
	}
	long := `{"project":{"in":[` + strings.Repeat(" ", query.MaxWhereLen) + `]}}`
	if _, err := query.Parse(w(long), projectDaySchema()); err == nil {
		t.Error("where longer than MaxWhereLen accepted")
	}
}
