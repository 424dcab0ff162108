package resource_test

// Unit tests of attribute conversion: how (*Resource).Apply turns a
// decoded JSON write into a stored document, attribute type by attribute
// type, and what it refuses. The values are decoded as the API decodes a
// body: numbers as json.Number.

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/query"
	"planwerk/internal/resource"
)

// decode reads a JSON object as the API does.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader([]byte(s)))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("%s: %v", s, err)
	}
	return m
}

// get returns a resource of the registry.
func get(t *testing.T, name string) *resource.Resource {
	t.Helper()
	r, ok := resource.New().Get(name)
	if !ok {
		t.Fatalf("no resource %s", name)
	}
	return r
}

// problemsOf maps the fields of problems (the problems Apply returns) to
// their messages, reading only their Field and Message; it fails on a
// field named twice or a problem without a message.
func problemsOf(t *testing.T, ps any) map[string]string {
	t.Helper()
	out := map[string]string{}
	list := reflect.ValueOf(ps)
	for i := range list.Len() {
		field, msg := list.Index(i).FieldByName("Field").String(), list.Index(i).FieldByName("Message").String()
		if _, dup := out[field]; dup {
			t.Errorf("%s is named twice: %v", field, ps)
		}
		if msg == "" {
			t.Errorf("problem of %s without a message", field)
		}
		out[field] = msg
	}
	return out
}

// measures is a resource with a Number attribute, which no resource of
// the registry declares.
func measures() *resource.Resource {
	return &resource.Resource{Name: "measures", Attrs: []resource.Attr{{Name: "hours", Type: query.Number}}}
}

// convertCase is one value of one attribute and what Apply makes of it.
type convertCase struct {
	res, attr string
	json      string // the attribute's value
	want      any    // the stored value, when accepted
	refusal   string // a part of the message, when refused
}

// TestConvert: each attribute type's accepted values and their stored
// form, and the values it refuses with what the message says.
func TestConvert(t *testing.T) {
	t.Parallel()
	reg := resource.New()
	cases := []convertCase{
		// Integers: json.Number of a whole value, stored as int64.
		{"time-entries", "duration", `3600`, int64(3600), ""},
		{"time-entries", "duration", `0`, int64(0), ""},
		{"time-entries", "duration", `-60`, int64(-60), ""},
		{"time-entries", "duration", `2.0`, int64(2), ""},
		{"time-entries", "duration", `1e3`, int64(1000), ""},
		{"time-entries", "duration", `9007199254740993`, int64(9007199254740993), ""},
		{"time-entries", "duration", `1.5`, nil, "must be an integer"},
		{"time-entries", "duration", `1e300`, nil, "must be an integer"},
		{"time-entries", "duration", `"3600"`, nil, "must be an integer"},
		{"time-entries", "duration", `true`, nil, "must be an integer"},
		{"time-entries", "duration", `[1]`, nil, "must be an integer"},
		// Integers with a list of allowed values.
		{"documents", "category", `7`, int64(7), ""},
		{"documents", "category", `14.0`, int64(14), ""},
		{"documents", "category", `15`, nil, "must be one of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14"},
		{"documents", "category", `0`, nil, "must be one of"},
		{"skill-assignments", "proficiency", `5`, int64(5), ""},
		{"skill-assignments", "proficiency", `6`, nil, "must be one of 1, 2, 3, 4, 5"},
		{"tags", "type", `"1"`, nil, "must be an integer"},
		// References are integers; whether the record exists is the
		// store's to say.
		{"time-entries", "project", `42`, int64(42), ""},
		{"time-entries", "project", `"Alpha"`, nil, "must be an integer"},
		{"time-entries", "project", `4.5`, nil, "must be an integer"},
		{"tag-assignments", "record", `7`, int64(7), ""},
		{"tag-assignments", "record", `{"id": 7}`, nil, "must be an integer"},
		// Numbers: any JSON number, kept as sent.
		{"measures", "hours", `1.5`, json.Number("1.5"), ""},
		{"measures", "hours", `-2e3`, json.Number("-2e3"), ""},
		{"measures", "hours", `7`, json.Number("7"), ""},
		{"measures", "hours", `"1.5"`, nil, "must be a number"},
		{"measures", "hours", `false`, nil, "must be a number"},
		// Strings.
		{"users", "email", `"ada@example.test"`, "ada@example.test", ""},
		{"documents", "name", `""`, "", ""},
		{"documents", "name", `5`, nil, "must be a string"},
		{"documents", "name", `["a"]`, nil, "must be a string"},
		{"documents", "name", `{"a": 1}`, nil, "must be a string"},
		// Booleans.
		{"users", "isAdmin", `true`, true, ""},
		{"documents", "visibleToUser", `false`, false, ""},
		{"users", "isAdmin", `"true"`, nil, "must be true or false"},
		{"users", "isAdmin", `1`, nil, "must be true or false"},
		// Dates: YYYY-MM-DD of a real day.
		{"time-entries", "day", `"2026-03-02"`, "2026-03-02", ""},
		{"documents", "date", `"2024-02-29"`, "2024-02-29", ""},
		{"time-entries", "day", `"2026-02-30"`, nil, "must be a date YYYY-MM-DD"},
		{"time-entries", "day", `"2026-3-2"`, nil, "must be a date YYYY-MM-DD"},
		{"time-entries", "day", `"02.03.2026"`, nil, "must be a date YYYY-MM-DD"},
		{"time-entries", "day", `"2026-03-02T00:00:00.000Z"`, nil, "must be a date YYYY-MM-DD"},
		{"time-entries", "day", `20260302`, nil, "must be a date YYYY-MM-DD"},
		// Enums: one of the declared strings, as spelt.
		{"time-entries", "trackingType", `"WORKTIME"`, "WORKTIME", ""},
		{"time-entries", "trackingType", `"work"`, nil, "must be one of WORK, WORKTIME, BREAK"},
		{"time-entries", "trackingType", `"OVERTIME"`, nil, "must be one of WORK, WORKTIME, BREAK"},
		{"time-entries", "trackingType", `1`, nil, "must be one of"},
		{"documents", "model", `"client"`, "client", ""},
		{"documents", "model", `"task"`, nil, "must be one of user, project, client"},
		// Null clears an attribute that is not required, whatever its type.
		{"time-entries", "duration", `null`, nil, ""},
		{"time-entries", "startTime", `null`, nil, ""},
		{"time-entries", "trackingType", `null`, nil, ""},
		{"documents", "visibleToUser", `null`, nil, ""},
		{"measures", "hours", `null`, nil, ""},
	}
	cases = append(cases, dateTimeCases()...)
	for _, c := range cases {
		t.Run(c.res+"."+c.attr+"="+c.json, func(t *testing.T) {
			r, ok := reg.Get(c.res)
			if c.res == "measures" {
				r, ok = measures(), true
			}
			if !ok {
				t.Fatalf("no resource %s", c.res)
			}
			if _, declared := r.Attr(c.attr); !declared {
				t.Fatalf("%s does not declare %s", c.res, c.attr)
			}
			input := decode(t, `{"`+c.attr+`": `+c.json+`}`)
			// The old document holds every required attribute, so only
			// the attribute under test can be refused.
			old := map[string]any{}
			for _, a := range r.Attrs {
				if a.Required {
					old[a.Name] = "kept"
				}
			}
			doc, writeOnly, ps := r.Apply(input, old)
			problems := problemsOf(t, ps)
			if c.refusal != "" {
				if len(problems) != 1 || !strings.Contains(problems[c.attr], c.refusal) {
					t.Errorf("problems %v, want %s: %q", problems, c.attr, c.refusal)
				}
				if got, kept := doc[c.attr]; kept && got != old[c.attr] {
					t.Errorf("refused value stored: %#v", got)
				}
				return
			}
			if len(problems) != 0 {
				t.Fatalf("problems %v", problems)
			}
			got, stored := doc[c.attr]
			if !stored || !reflect.DeepEqual(got, c.want) {
				t.Errorf("stored %#v (present %v), want %#v (%T)", got, stored, c.want, c.want)
			}
			if len(writeOnly) != 0 {
				t.Errorf("write-only values %v", writeOnly)
			}
		})
	}
}

// dateTimeCases: date-times are any RFC 3339 date-time, stored in UTC
// with milliseconds (further digits cut off), and nothing else.
func dateTimeCases() []convertCase {
	const form = "must be an RFC 3339 date-time"
	accepted := [][2]string{ // sent, stored
		{"2026-03-02T08:00:00.000Z", "2026-03-02T08:00:00.000Z"},
		{"2026-11-20T08:00:00Z", "2026-11-20T08:00:00.000Z"},             // Go's time.RFC3339
		{"2026-03-02T08:00:00+00:00", "2026-03-02T08:00:00.000Z"},        // Python's isoformat()
		{"2026-03-02T08:00:00.123456+00:00", "2026-03-02T08:00:00.123Z"}, // isoformat() with microseconds
		{"2026-03-02T08:00:00-00:00", "2026-03-02T08:00:00.000Z"},        // UTC, local offset unknown
		{"2026-03-02T09:00:00+01:00", "2026-03-02T08:00:00.000Z"},        // CET
		{"2026-03-02T02:30:00-05:30", "2026-03-02T08:00:00.000Z"},        // a half-hour offset
		{"2026-03-02T23:59:00+23:59", "2026-03-02T00:00:00.000Z"},        // the largest offset
		{"2026-03-02t08:00:00z", "2026-03-02T08:00:00.000Z"},             // RFC 3339 allows lower case
		{"2026-03-02T08:00:00.5Z", "2026-03-02T08:00:00.500Z"},           // 1 fractional digit
		{"2026-03-02T08:00:00.25Z", "2026-03-02T08:00:00.250Z"},          // 2
		{"2026-03-02T08:00:00.1239Z", "2026-03-02T08:00:00.123Z"},        // 4: cut, not rounded
		{"2026-03-02T08:00:00.999999Z", "2026-03-02T08:00:00.999Z"},      // 6
		{"2026-12-31T23:59:59.999999999Z", "2026-12-31T23:59:59.999Z"},   // 9: stays in its year
		{"2026-03-01T23:30:00-01:00", "2026-03-02T00:30:00.000Z"},        // the next UTC day
		{"2027-01-01T00:30:00.75+01:00", "2026-12-31T23:30:00.750Z"},     // the previous UTC year
		{"2024-02-29T12:00:00Z", "2024-02-29T12:00:00.000Z"},             // a leap day
		{"2016-12-31T23:59:60Z", "2016-12-31T23:59:59.999Z"},             // a leap second
		{"2017-01-01T00:59:60.5+01:00", "2016-12-31T23:59:59.999Z"},      // the same, with an offset
		{"0000-01-01T00:00:00Z", "0000-01-01T00:00:00.000Z"},             // the first instant stored
		{"9999-12-31T23:59:59.9999Z", "9999-12-31T23:59:59.999Z"},        // the last
	}
	refused := [][2]string{ // sent, a part of the message
		{`"2026-03-02T08:00:00"`, form},             // no offset
		{`"2026-03-02T08:00:00.000"`, form},         // no offset
		{`"2026-03-02"`, form},                      // a date only
		{`"2026-03-02T08:00Z"`, form},               // no seconds
		{`"2026-03-02 08:00:00Z"`, form},            // a space for T
		{`"20260302T080000Z"`, form},                // ISO 8601 basic format
		{`"+2026-03-02T08:00:00Z"`, form},           // an expanded year
		{`"2026-03-02T08:00:00.Z"`, form},           // an empty fraction
		{`"2026-03-02T08:00:00,5Z"`, form},          // a decimal comma
		{`"2026-03-02T08:00:00.1234567890Z"`, form}, // 10 fractional digits
		{`"2026-03-02T08:00:00+0100"`, form},        // an offset without colon
		{`"2026-03-02T08:00:00+01"`, form},          // an offset without minutes
		{`"2026-03-02T08:00:00+01:00:00"`, form},    // an offset with seconds
		{`"2026-03-02T08:00:00+24:00"`, form},       // offset hour 24
		{`"2026-03-02T08:00:00+01:60"`, form},       // offset minute 60
		{`"2026-03-02T08:00:00UTC"`, form},          // a zone name
		{`"2026-03-02T08:00:00+01:00[Europe/Berlin]"`, form},
		{`"2026-03-02T08:00:00ZZ"`, form},
		{`" 2026-03-02T08:00:00Z"`, form}, // leading space
		{`"2026-03-02T08:00:00Z "`, form}, // trailing space
		{`"2026-13-02T08:00:00Z"`, form},  // month 13
		{`"2026-00-02T08:00:00Z"`, form},  // month 0
		{`"2026-03-00T08:00:00Z"`, form},  // day 0
		{`"2026-02-29T08:00:00Z"`, form},  // not a leap year
		{`"2026-04-31T08:00:00Z"`, form},  // April has 30 days
		{`"2026-03-02T24:00:00Z"`, form},  // hour 24
		{`"2026-03-02T08:60:00Z"`, form},  // minute 60
		{`"2026-03-02T08:00:61Z"`, form},  // second 61
		{`"2026-03-02T25:00:00.000Z"`, form},
		{`"２０２６-03-02T08:00:00Z"`, form},                      // digits other than ASCII
		{`"2026-03-02T08:00:60Z"`, "leap second"},             // not the last minute of a day
		{`"2016-12-30T23:59:60Z"`, "leap second"},             // not the last day of a month
		{`"2016-12-31T23:59:60+01:00"`, "leap second"},        // 22:59:60 UTC
		{`"0000-01-01T00:30:00+01:00"`, "years 0000 to 9999"}, // before year 0 in UTC
		{`"9999-12-31T23:30:00-01:00"`, "years 0000 to 9999"}, // after year 9999 in UTC
		{`1772438400000`, form},
		{`true`, form},
		{`["2026-03-02T08:00:00Z"]`, form},
	}
	var cases []convertCase
	for i, a := range accepted {
		attr := []string{"startTime", "endTime"}[i%2]
		cases = append(cases, convertCase{"time-entries", attr, `"` + a[0] + `"`, a[1], ""})
	}
	for i, r := range refused {
		attr := []string{"startTime", "endTime"}[i%2]
		cases = append(cases, convertCase{"time-entries", attr, r[0], nil, r[1]})
	}
	return cases
}

// TestApplyMerge: a change is merged onto the stored document; the
// attributes the service owns are never taken from the client nor kept
// from the old document.
func TestApplyMerge(t *testing.T) {
	t.Parallel()
	r := get(t, "time-entries")
	old := map[string]any{"id": int64(3), "createdAt": "2026-01-01T00:00:00.000Z", "updatedAt": "2026-01-01T00:00:00.000Z",
		"day": "2026-03-02", "duration": int64(60), "sorting": int64(1), "note": "kept"}
	input := decode(t, `{"id": 99, "createdAt": "x", "updatedAt": 5, "duration": 120, "sorting": null, "colour": "red"}`)
	doc, writeOnly, ps := r.Apply(input, old)
	if problems := problemsOf(t, ps); len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	want := map[string]any{"day": "2026-03-02", "duration": int64(120), "sorting": nil, "note": "kept", "colour": "red"}
	if !reflect.DeepEqual(doc, want) || len(writeOnly) != 0 {
		t.Errorf("doc %#v, write-only %v; want %#v", doc, writeOnly, want)
	}
	if old["duration"] != int64(60) {
		t.Errorf("Apply changed the old document: %v", old)
	}
}

// TestApplyReadOnly: values sent for read-only attributes are ignored,
// even invalid ones, and the stored value stays.
func TestApplyReadOnly(t *testing.T) {
	t.Parallel()
	r := get(t, "time-entries")
	if a, _ := r.Attr("validationStatus"); !a.ReadOnly {
		t.Fatalf("time-entries.validationStatus is not read-only: %+v", a)
	}
	for _, v := range []string{`"APPROVED"`, `"BOGUS"`, `7`, `null`} {
		doc, _, ps := r.Apply(decode(t, `{"day": "2026-03-02", "validationStatus": `+v+`}`), map[string]any{"validationStatus": "NOTAPPROVED"})
		if problems := problemsOf(t, ps); len(problems) != 0 || doc["validationStatus"] != "NOTAPPROVED" {
			t.Errorf("validationStatus %s: doc %v, problems %v", v, doc, problems)
		}
		doc, _, ps = r.Apply(decode(t, `{"day": "2026-03-02", "validationStatus": `+v+`}`), nil)
		if _, set := doc["validationStatus"]; set || len(ps) != 0 {
			t.Errorf("create with validationStatus %s: doc %v, problems %v", v, doc, problemsOf(t, ps))
		}
	}
}

// TestApplyUndeclared: resources that declare only some attributes store
// the others as sent (arrays and objects too); declared-only resources
// refuse them.
func TestApplyUndeclared(t *testing.T) {
	t.Parallel()
	doc, _, ps := get(t, "projects").Apply(decode(t, `{"name": "Alpha", "budget": 1.5, "tags": [1, "a", null], "meta": {"a": {"b": [true]}}, "archived": false, "note": null}`), nil)
	if problems := problemsOf(t, ps); len(problems) != 0 {
		t.Fatalf("problems %v", problems)
	}
	want := map[string]any{"name": "Alpha", "budget": json.Number("1.5"), "tags": []any{json.Number("1"), "a", nil},
		"meta": map[string]any{"a": map[string]any{"b": []any{true}}}, "archived": false, "note": nil}
	if !reflect.DeepEqual(doc, want) {
		t.Errorf("doc %#v, want %#v", doc, want)
	}

	r := get(t, "project-days")
	if !r.DeclaredOnly {
		t.Fatal("project-days is not declared-only")
	}
	doc, _, ps = r.Apply(decode(t, `{"day": "2026-03-02", "project": 4, "comment": "x", "extra": [1]}`), nil)
	problems := problemsOf(t, ps)
	if !reflect.DeepEqual(fields(problems), []string{"comment", "extra"}) || !strings.Contains(problems["comment"], "unknown attribute") {
		t.Errorf("problems %v, want comment and extra unknown", problems)
	}
	if _, stored := doc["comment"]; stored || doc["day"] != "2026-03-02" || doc["project"] != int64(4) {
		t.Errorf("doc %v", doc)
	}
}

// TestApplyRequired: required attributes must be present and not null
// once the change is merged; each is named once.
func TestApplyRequired(t *testing.T) {
	t.Parallel()
	docs := get(t, "documents")
	cases := []struct {
		name  string
		input string
		old   map[string]any
		want  []string
	}{
		{"create without them", `{"name": "a"}`, nil, []string{"model", "record"}},
		{"create with them", `{"model": "user", "record": 3}`, nil, nil},
		{"null", `{"model": null, "record": 3}`, nil, []string{"model"}},
		{"null over a stored value", `{"record": null}`, map[string]any{"model": "user", "record": int64(3)}, []string{"record"}},
		{"kept from the stored document", `{"name": "b"}`, map[string]any{"model": "user", "record": int64(3)}, nil},
		{"invalid and required", `{"model": "task"}`, nil, []string{"model", "record"}},
		{"invalid required value", `{"model": "user", "record": "x"}`, nil, []string{"record"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, ps := docs.Apply(decode(t, c.input), c.old)
			problems := problemsOf(t, ps)
			if got := fields(problems); !slices.Equal(got, c.want) {
				t.Fatalf("problems %v, want %v", problems, c.want)
			}
			for f, msg := range problems {
				if !strings.Contains(msg, "required") && !strings.Contains(msg, "must be") {
					t.Errorf("%s: message %q", f, msg)
				}
			}
		})
	}
	_, _, ps := docs.Apply(decode(t, `{"name": "a"}`), nil)
	if msg := problemsOf(t, ps)["model"]; msg != "is required" {
		t.Errorf("missing model: %q, want \"is required\"", msg)
	}
}

// TestApplyWriteOnly: write-only attributes are converted like others but
// kept out of the document.
func TestApplyWriteOnly(t *testing.T) {
	t.Parallel()
	r := get(t, "users")
	if a, _ := r.Attr("password"); !a.WriteOnly {
		t.Fatalf("users.password is not write-only: %+v", a)
	}
	doc, writeOnly, ps := r.Apply(decode(t, `{"email": "ada@example.test", "password": "secret"}`), map[string]any{"password": "stale"})
	if len(ps) != 0 || !reflect.DeepEqual(writeOnly, map[string]any{"password": "secret"}) {
		t.Errorf("write-only %v, problems %v", writeOnly, problemsOf(t, ps))
	}
	if !reflect.DeepEqual(doc, map[string]any{"email": "ada@example.test", "password": "stale"}) {
		t.Errorf("doc %v: the password sent must not enter it", doc)
	}
	doc, writeOnly, ps = r.Apply(decode(t, `{"password": 12345}`), nil)
	if problems := problemsOf(t, ps); !strings.Contains(problems["password"], "must be a string") || len(writeOnly) != 0 || doc["password"] != nil {
		t.Errorf("password 12345: problems %v, write-only %v, doc %v", problems, writeOnly, doc)
	}
	if _, queryable := r.Schema().Fields["password"]; queryable {
		t.Error("the write-only password is a list field")
	}
}

// TestRefTarget: the resource a reference's value points at.
func TestRefTarget(t *testing.T) {
	t.Parallel()
	te := get(t, "time-entries")
	project, _ := te.Attr("project")
	if target, ok := te.RefTarget(project, nil); !ok || target != "projects" {
		t.Errorf("time-entries.project refers to %q, %v", target, ok)
	}
	duration, _ := te.Attr("duration")
	if target, ok := te.RefTarget(duration, nil); ok {
		t.Errorf("time-entries.duration refers to %q", target)
	}
	ta := get(t, "tag-assignments")
	record, _ := ta.Attr("record")
	for model, want := range resource.Models {
		if target, ok := ta.RefTarget(record, map[string]any{"model": model}); !ok || target != want {
			t.Errorf("record of model %s refers to %q, %v; want %s", model, target, ok, want)
		}
	}
	for _, model := range []any{"task-set", nil, 3} {
		if target, ok := ta.RefTarget(record, map[string]any{"model": model}); ok {
			t.Errorf("record of model %v refers to %q", model, target)
		}
	}
}

func fields(problems map[string]string) []string {
	var out []string
	for f := range problems {
		out = append(out, f)
	}
	slices.Sort(out)
	return out
}
