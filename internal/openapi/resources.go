package openapi

import (
	"slices"
	"strconv"
	"strings"

	"planwerk/internal/query"
	"planwerk/internal/resource"
)

// The generic operations of a resource.
const (
	opList    = "list"
	opGet     = "get"
	opCreate  = "create"
	opUpdate  = "update"
	opReplace = "replace"
	opDelete  = "delete"
	opHistory = "history"
)

type resOp struct {
	kind, method, path string
}

// resourceOps are the generic endpoints of a resource, exactly as the
// HTTP edge registers them: list, get and the record's history, and
// unless read-only create, update (PATCH), replace (PUT, the same) and
// delete.
func resourceOps(r *resource.Resource) []resOp {
	base, one := r.Path(), r.Path()+"/{id}"
	ops := []resOp{{opList, "GET", base}, {opGet, "GET", one}, {opHistory, "GET", one + "/history"}}
	if r.ReadOnly {
		return ops
	}
	return append(ops, resOp{opCreate, "POST", base}, resOp{opUpdate, "PATCH", one},
		resOp{opReplace, "PUT", one}, resOp{opDelete, "DELETE", one})
}

// resources documents every resource of the registry and returns the
// route keys its generic operations cover.
func (b *builder) resources(routes []Route) map[string]bool {
	auth := map[string]Auth{}
	for _, rt := range routes {
		auth[rt.key()] = rt.Auth
	}
	covered := map[string]bool{}
	for _, r := range b.reg.All() {
		b.resourceSchemas(r)
		for _, op := range resourceOps(r) {
			k := op.method + " " + op.path
			covered[k] = true
			a, ok := auth[k]
			if !ok {
				a = Bearer
			}
			b.add(op.method, op.path, b.resourceOperation(r, op, a))
		}
	}
	return covered
}

// xlsxMedia is the media type of an XLSX workbook.
const xlsxMedia = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"

// sheetMedia are the media types a list answers beside JSON, and how.
var sheetMedia = map[string]string{
	"text/csv": "RFC 4180 (CRLF line ends): a header row of `id`, the declared attributes and the others the records " +
		"have sorted byte-wise, then one row per record. Nested values are JSON text, booleans `true` or `false`, " +
		"nothing for null or missing; text that would start a formula (`=`, `+`, `-`, `@`, a tab or a carriage " +
		"return first) has a leading `'`.",
	xlsxMedia: "An XLSX workbook of one worksheet named " +
		"after the resource, with the columns and rows of the CSV: numbers as numbers, booleans as booleans, text " +
		"(at most 32,767 characters a cell) as text.",
}

// camel turns a resource name into an identifier part: "project-days" → "ProjectDays".
func camel(name string) string {
	var sb strings.Builder
	for _, part := range strings.Split(name, "-") {
		if part != "" {
			sb.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return sb.String()
}

func article(model string) string {
	if strings.ContainsRune("AEIO", rune(model[0])) { // not U: "a User"
		return "an " + model
	}
	return "a " + model
}

func (b *builder) resourceOperation(r *resource.Resource, o resOp, a Auth) *Operation {
	op := &Operation{
		Tags:       []string{r.Model},
		Deprecated: r.Deprecated,
		Responses:  map[string]*Response{},
		record:     o.kind != opList && o.kind != opHistory,
	}
	record := schemaRef(SchemaName(r.Model))
	ok := func(status int, desc string, s Schema, headers ...string) {
		resp := &Response{Description: desc, Content: map[string]MediaType{"application/json": {Schema: s}}}
		if r.Deprecated {
			headers = append(headers, "Deprecation")
		}
		for _, h := range headers {
			if resp.Headers == nil {
				resp.Headers = map[string]Header{}
			}
			resp.Headers[h] = Header{Ref: "#/components/headers/" + h}
		}
		op.Responses[strconv.Itoa(status)] = resp
	}
	idParam := Parameter{Name: "id", In: "path", Required: true, Description: "The " + r.Model + "'s id.", Schema: idSchema()}
	var extra []int
	switch o.kind {
	case opList:
		op.OperationID = "list" + camel(r.Name)
		op.Summary = "List " + r.Model + " records"
		op.Description = b.listDescription(r)
		op.Parameters = b.listParameters(r)
		// The sheets are told, not listed as media types of the answer:
		// a typed client (openapi-fetch) types an answer as the union of
		// its media types, and every list's data would become a string or
		// an array, which code written for the array no longer compiles.
		ok(200, "The matching records, a JSON array (`[]` when none match). When `limit` cut the list short, `Link` "+
			"names the next page. With `Accept: text/csv` the same records as CSV: "+sheetMedia["text/csv"]+
			" With `Accept: "+xlsxMedia+"`: "+sheetMedia[xlsxMedia],
			Schema{"type": "array", "items": record}, "Link")
		extra = []int{406, 414}
	case opGet:
		op.OperationID = "get" + r.Model
		op.Summary = "Read " + article(r.Model)
		op.Description = "Reads one record by id. `populate` expands reference attributes."
		op.Parameters = []Parameter{idParam}
		if p, ok := b.populateParam(r); ok {
			op.Parameters = append(op.Parameters, p)
		}
		ok(200, "The record.", record)
	case opHistory:
		op.OperationID = "get" + r.Model + "History"
		op.Summary = "Read the history of " + article(r.Model)
		op.Description = historyDescription("The caller must be allowed to read the record (else 404, as GET answers); " +
			"admins also after it was deleted (404 when it has no entries then).")
		op.Parameters = []Parameter{idParam}
		ok(200, "The record's entries, oldest first.", schemaRef("AuditHistory"))
	case opCreate:
		op.OperationID = "create" + r.Model
		op.Summary = "Create " + article(r.Model)
		op.Description = writeDescription(r, "Creates a record. `id`, `createdAt` and `updatedAt` are set by the service and ignored when sent.")
		op.RequestBody = &RequestBody{Required: true, Description: "The record's attributes.",
			Content: map[string]MediaType{"application/json": {Schema: schemaRef(r.Model + "Create")}}}
		ok(201, "The created record.", record, "Location")
		extra = []int{403, 409, 413, 415}
	case opUpdate, opReplace:
		if o.kind == opUpdate {
			op.OperationID = "update" + r.Model
			op.Summary = "Change " + article(r.Model)
			op.Description = writeDescription(r, "Changes the attributes sent; the others keep their values.")
		} else {
			op.OperationID = "replace" + r.Model
			op.Summary = "Change " + article(r.Model) + " (PUT)"
			op.Description = writeDescription(r, "The same as PATCH: changes the attributes sent; the others keep their values.")
		}
		op.Parameters = []Parameter{idParam}
		op.RequestBody = &RequestBody{Required: true, Description: "The attributes to change.",
			Content: map[string]MediaType{"application/json": {Schema: schemaRef(r.Model + "Update")}}}
		ok(200, "The changed record.", record)
		extra = []int{403, 409, 413, 415}
	case opDelete:
		op.OperationID = "delete" + r.Model
		op.Summary = "Delete " + article(r.Model)
		op.Description = writeDescription(r, "Deletes a record and returns it.")
		op.Parameters = []Parameter{idParam}
		ok(200, "The deleted record.", record)
		extra = []int{403, 409}
	}
	// Path parameters first, then the tenant headers.
	params := op.Parameters
	op.Parameters = nil
	b.secure(op, a)
	op.Parameters = append(params, op.Parameters...)
	b.errors(op, a, strings.Contains(o.path, "{"), extra...)
	if r.Deprecated {
		b.deprecate(op)
	}
	return op
}

// deprecate gives every answer of an operation the Deprecation header:
// shared responses are copied in, since a reference cannot add headers.
func (b *builder) deprecate(op *Operation) {
	for status, resp := range op.Responses {
		if name, ok := strings.CutPrefix(resp.Ref, "#/components/responses/"); ok {
			if shared := b.doc.Components.Responses[name]; shared != nil {
				c := *shared
				c.Headers = map[string]Header{}
				for k, v := range shared.Headers {
					c.Headers[k] = v
				}
				resp = &c
				op.Responses[status] = resp
			}
		}
		if resp.Headers == nil {
			resp.Headers = map[string]Header{}
		}
		resp.Headers["Deprecation"] = Header{Ref: "#/components/headers/Deprecation"}
	}
}

func writeDescription(r *resource.Resource, what string) string {
	d := what
	switch r.Write {
	case resource.AdminOnly:
		d += " Admins only; other users get 403."
	case resource.OwnRecords:
		d += " Members may write their own records (`user` defaults to the caller); admins all."
	}
	var refs []string
	for _, a := range r.Attrs {
		if a.Ref != "" || a.RefByModel != "" {
			refs = append(refs, "`"+a.Name+"`")
		}
	}
	if len(refs) > 0 {
		d += " References (" + strings.Join(refs, ", ") + ") must name records of the same tenant, else 400."
	}
	return d
}

func (b *builder) listDescription(r *resource.Resource) string {
	var sb strings.Builder
	sb.WriteString(r.Doc + "\n\n")
	if r.DeclaredOnly {
		sb.WriteString("The attributes are exactly those documented; `where` on any other attribute → 400.")
	} else {
		sb.WriteString("Besides the documented attributes, any other attribute name is a filter too (`?color=red`), " +
			"matched against the stored value or the number or boolean it spells.")
	}
	if r.NoContains {
		sb.WriteString(" The `contains` modifier is not supported here.")
	}
	sb.WriteString(" The per-attribute parameters match exactly; `where` replaces all of them. " +
		"See \"List endpoints\" in the introduction for the query language.")
	return sb.String()
}

func boolPtr(v bool) *bool { return &v }

// listParameters are a resource's list parameters: the language's, the
// resource's own, and one exact filter per declared attribute.
func (b *builder) listParameters(r *resource.Resource) []Parameter {
	params := []Parameter{{Ref: "#/components/parameters/listWhere"}}
	if r.DeclaredOnly {
		params[0] = whereParam(r.Model + "Where")
	}
	for _, name := range []string{"limit", "skip", "sort", "after"} {
		params = append(params, Parameter{Ref: "#/components/parameters/list" + capitalize(name)})
	}
	if p, ok := b.populateParam(r); ok {
		params = append(params, p)
	}
	for _, name := range r.Params {
		p := Parameter{Name: name, In: "query", Schema: Schema{"type": "string"}}
		if d, ok := resourceParams[r.Name+" "+name]; ok {
			p.Description, p.Schema = d.Description, d.Schema
		}
		params = append(params, p)
	}
	params = append(params, Parameter{Ref: "#/components/parameters/listFilterId"})
	for _, a := range r.Attrs {
		if a.WriteOnly {
			continue // never stored, so never matched
		}
		doc, schema := capitalize(a.Doc), valueSchema(a)
		if a.Type == query.Timestamp {
			// The declared doc is the stored form; a filter takes more.
			doc, schema = "`YYYY-MM-DD` (the whole UTC day) or an RFC 3339 date-time", dayOrDateTime()
		}
		params = append(params, filterParam(a.Name, doc, schema))
	}
	return append(params, Parameter{Ref: "#/components/parameters/listFilterCreatedAt"},
		Parameter{Ref: "#/components/parameters/listFilterUpdatedAt"})
}

// filterParam is a per-attribute list filter.
func filterParam(name, doc string, s Schema) Parameter {
	return Parameter{
		Name: name, In: "query",
		Description: doc + ". Exact match; repeat the parameter (or use `" + name + "[]`) for several values, " +
			"any of which matches. Ignored when `where` is given.",
		Style: "form", Explode: boolPtr(true),
		Schema: Schema{"type": "array", "items": s},
	}
}

// whereParam is the where parameter: a plain string holding JSON, so that
// every client sends it as given; the criteria's schema is named.
func whereParam(schema string) Parameter {
	return Parameter{Name: "where", In: "query", Description: "Waterline-style criteria as a JSON object, sent as one " +
		"URL-encoded string (`where={\"day\":{\">=\":\"2026-01-01\"}}`); its form is the schema `" + schema + "`. When given, " +
		"the per-attribute filters are ignored; `limit`, `skip`, `sort` and `populate` still apply. Invalid JSON, " +
		"an unknown modifier, an empty constraint, nesting deeper than " + strconv.Itoa(query.MaxDepth) + ", more than " +
		strconv.Itoa(query.MaxConditions) + " conditions or more than " + strconv.Itoa(query.MaxAttributes) +
		" undeclared attributes → 400 `invalid_query`.",
		Schema: Schema{"type": "string", "examples": []string{`{"day":{">=":"2026-01-01","<":"2026-02-01"}}`}}}
}

// listParams are the list parameters every resource shares.
func listParams() map[string]Parameter {
	stamp := dayOrDateTime()
	return map[string]Parameter{
		"where": whereParam("Where"),
		"limit": {Name: "limit", In: "query", Description: "Maximum number of records. Above " + strconv.Itoa(query.MaxLimit) +
			" it is taken as " + strconv.Itoa(query.MaxLimit) + "; `0` → `[]`.",
			Schema: Schema{"type": "integer", "minimum": 0, "default": query.DefaultLimit}},
		"skip": {Name: "skip", In: "query", Description: "Number of records to skip (stable: `id` breaks sort ties); with " +
			"`after`, counted from the cursor. Each skipped record is still read: to page through a long list, follow the " +
			"`Link` header instead, whose page costs the same however deep.",
			Schema: Schema{"type": "integer", "minimum": 0, "default": 0}},
		"after": {Name: "after", In: "query", Description: "An opaque cursor: the list goes on after the record it was " +
			"made from, in the list's order, whatever was added or deleted since. Take it from the `rel=\"next\"` URL " +
			"of the `Link` header of the page before, which is the same request continued. A cursor made for another " +
			"`sort`, or not made by the service → 400 `invalid_query`.",
			Schema: Schema{"type": "string"}},
		"sort": {Name: "sort", In: "query", Description: "`attr ASC|DESC` (direction optional, default ASC), several " +
			"comma-separated, or a JSON array of such strings or of `{\"attr\": \"ASC\"}` objects; at most " +
			strconv.Itoa(query.MaxSortKeys) + " keys. Default: ascending `id`.",
			Schema: Schema{"type": "string", "default": "id ASC", "examples": []string{"createdAt DESC", `["day ASC", {"id": "DESC"}]`}}},
		"filterId": filterParam("id", "The record's id", idSchema()),
		"filterCreatedAt": filterParam("createdAt",
			"Creation time: `YYYY-MM-DD` (the whole UTC day) or an RFC 3339 date-time", stamp),
		"filterUpdatedAt": filterParam("updatedAt",
			"Last change: `YYYY-MM-DD` (the whole UTC day) or an RFC 3339 date-time", stamp),
	}
}

// resourceParams describes resource-specific list parameters.
var resourceParams = map[string]Parameter{
	"tags includeSkills": {Description: "`true`: list skills (tags with a type) too; otherwise only plain tags, " +
		"unless a criteria names `type`.", Schema: Schema{"type": "string", "enum": []string{"true", "false"}}},
}

// populateParam is the populate parameter of a resource with reference
// attributes: a plain string, and the description says what each
// reference becomes when expanded (the record schemas keep the ids).
func (b *builder) populateParam(r *resource.Resource) (Parameter, bool) {
	var refs, forms []string
	for _, a := range r.Attrs {
		if !a.WriteOnly && (a.Ref != "" || a.RefByModel != "") {
			refs = append(refs, a.Name)
			forms = append(forms, "`"+a.Name+"` becomes "+b.populated(a))
		}
	}
	if len(refs) == 0 {
		return Parameter{}, false
	}
	return Parameter{Name: "populate", In: "query",
		Description: "Reference attributes to expand into the records they name, comma-separated (`" +
			strings.Join(refs, ",") + "`) or a JSON array (`[\"" + strings.Join(refs, "\", \"") + "\"]`). " +
			"Without it each reference is the integer id (or null) the schema shows; with it " +
			strings.Join(forms, "; ") + ". Unaffected by `where`; an attribute that is not a reference → 400 `invalid_query`.",
		Schema: Schema{"type": "string", "examples": []string{strings.Join(refs, ",")}}}, true
}

// populated says what a reference attribute holds when populated.
func (b *builder) populated(a resource.Attr) string {
	const gone = ", or null when that record is gone or not visible"
	if a.Ref != "" {
		m := b.model(a.Ref)
		return "the " + m + " record itself (schema `" + SchemaName(m) + "`)" + gone
	}
	return "the record itself (of the kind `" + a.RefByModel + "` names)" + gone
}

// reservedNames are schema names that generated clients use for their
// own types (oapi-codegen's and ogen's Client, Server, Handler, ...).
var reservedNames = map[string]string{"Client": "ClientRecord"}

// SchemaName is the schema name of a model's record.
func SchemaName(model string) string {
	if n, ok := reservedNames[model]; ok {
		return n
	}
	return model
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// valueSchema is the schema of a declared attribute's non-null value.
func valueSchema(a resource.Attr) Schema {
	s := Schema{}
	switch a.Type {
	case query.String:
		s["type"] = "string"
	case query.Integer:
		s["type"] = "integer"
		s["format"] = "int64"
		if len(a.Ints) > 0 {
			s["enum"] = a.Ints
		}
	case query.Number:
		s["type"] = "number"
	case query.Boolean:
		s["type"] = "boolean"
	case query.Date:
		s["type"] = "string"
		s["format"] = "date"
		s["pattern"] = datePattern
		s["examples"] = []string{exampleDay}
	case query.Timestamp:
		s["type"] = "string"
		s["format"] = "date-time"
		s["pattern"] = timestampPattern
		s["examples"] = []string{exampleTimestamp}
	case query.Enum:
		s["type"] = "string"
		s["enum"] = a.Enum
	}
	return s
}

// inputSchema is the schema of a declared attribute's non-null value in
// a create or a change: a date-time may be any RFC 3339 date-time.
func inputSchema(a resource.Attr) Schema {
	if a.Type != query.Timestamp {
		return valueSchema(a)
	}
	return Schema{"type": "string", "format": "date-time", "pattern": dateTimePattern,
		"examples": []string{exampleDateTime, exampleTimestamp}}
}

// dayOrDateTime is the schema of a list filter value on a date-time.
func dayOrDateTime() Schema {
	return Schema{"type": "string", "pattern": dayOrDateTimePattern, "examples": []string{exampleDay, exampleDateTime}}
}

// nullable lets a value schema be null too.
func nullable(s Schema) Schema {
	out := Schema{}
	for k, v := range s {
		out[k] = v
	}
	if t, ok := out["type"].(string); ok {
		out["type"] = []string{t, "null"}
	}
	switch e := out["enum"].(type) {
	case []string:
		vals := make([]any, 0, len(e)+1)
		for _, v := range e {
			vals = append(vals, v)
		}
		out["enum"] = append(vals, nil)
	case []int64:
		vals := make([]any, 0, len(e)+1)
		for _, v := range e {
			vals = append(vals, v)
		}
		out["enum"] = append(vals, nil)
	}
	return out
}

func refDoc(a resource.Attr, reg *resource.Registry) string {
	switch {
	case a.Ref != "":
		if t, ok := reg.Get(a.Ref); ok {
			return " The id of " + article(t.Model) + " (`" + t.Path() + "`) of the same tenant."
		}
	case a.RefByModel != "":
		return " The id of a record of the kind `" + a.RefByModel + "` names, in the same tenant."
	}
	return ""
}

// resourceSchemas adds a resource's schemas: the record as returned, the
// body of a create and of a change, and for declared-only resources the
// criteria its where accepts.
func (b *builder) resourceSchemas(r *resource.Resource) {
	c := b.doc.Components.Schemas
	stamp := func(doc string) Schema {
		return Schema{"type": "string", "format": "date-time", "pattern": timestampPattern, "readOnly": true, "description": doc,
			"examples": []string{exampleTimestamp}}
	}
	record := map[string]Schema{
		"id":        {"type": "integer", "format": "int64", "minimum": 1, "readOnly": true, "description": "The record's id, set by the service."},
		"createdAt": stamp("Creation time (UTC), set by the service."),
		"updatedAt": stamp("Last change (UTC), set by the service."),
	}
	required := []string{"id", "createdAt", "updatedAt"}
	create := map[string]Schema{}
	update := map[string]Schema{}
	var createRequired []string
	for _, a := range r.Attrs {
		doc := capitalize(a.Doc) + "."
		base := valueSchema(a)
		in, out := inputSchema(a), base
		if !a.Required {
			in, out = nullable(in), nullable(out)
		}
		in = with(in, "description", doc+refDoc(a, b.reg)+inputNote(a))
		out = with(out, "description", doc+refDoc(a, b.reg))
		if !a.WriteOnly {
			if a.Ref != "" || a.RefByModel != "" {
				// The record holds the id; populate's description says
				// what it becomes when expanded.
				out = with(out, "description", doc+refDoc(a, b.reg)+" With `populate`, "+b.populated(a)+".")
			}
			if a.ReadOnly {
				out = with(out, "readOnly", true)
			}
			record[a.Name] = out
			if a.Required {
				required = append(required, a.Name)
			}
		}
		if a.ReadOnly {
			continue
		}
		if a.WriteOnly {
			in = with(in, "writeOnly", true)
		}
		create[a.Name] = in
		update[a.Name] = in
		if a.Required {
			createRequired = append(createRequired, a.Name)
		}
	}
	additional := !r.DeclaredOnly
	s := Schema{
		"type":                 "object",
		"description":          r.Doc + openNote(r),
		"properties":           record,
		"required":             required,
		"additionalProperties": additional,
	}
	if r.Deprecated {
		s["deprecated"] = true
	}
	c[SchemaName(r.Model)] = s
	if !r.ReadOnly {
		cs := Schema{"type": "object", "description": "The attributes of a new " + r.Model + "." + openNote(r),
			"properties": create, "additionalProperties": additional}
		if len(createRequired) > 0 {
			cs["required"] = createRequired
		}
		c[r.Model+"Create"] = cs
		c[r.Model+"Update"] = Schema{"type": "object", "description": "The attributes to change; the others keep their values." + openNote(r),
			"properties": update, "additionalProperties": additional}
	}
	if r.DeclaredOnly {
		crit := "Criterion"
		if r.NoContains {
			crit = "CriterionNoContains"
		}
		props := map[string]Schema{
			"or":  {"type": "array", "items": schemaRef(r.Model + "Where"), "description": "any of; `[]` matches nothing"},
			"and": {"type": "array", "items": schemaRef(r.Model + "Where"), "description": "all of; `[]` matches everything"},
		}
		names := []string{"id", "createdAt", "updatedAt"}
		for _, a := range r.Attrs {
			if !a.WriteOnly {
				names = append(names, a.Name)
			}
		}
		slices.Sort(names)
		for _, n := range names {
			props[n] = schemaRef(crit)
		}
		c[r.Model+"Where"] = Schema{
			"type": "object",
			"description": "Criteria on " + r.Model + " records: only its attributes (" + strings.Join(names, ", ") +
				"); any other → 400.",
			"properties":           props,
			"additionalProperties": false,
		}
	}
}

// inputNote tells how a sent value is stored, where that is not as sent.
func inputNote(a resource.Attr) string {
	if a.Type == query.Timestamp {
		return " " + dateTimeNote
	}
	return ""
}

func openNote(r *resource.Resource) string {
	note := " Attributes not listed here are stored and returned as sent."
	if r.DeclaredOnly {
		note = " No other attributes."
	}
	if rules, ok := fieldRules[r.Name]; ok {
		note += "\n\n" + rules
	}
	return note
}

// fieldRules are the rules between a resource's fields that a schema
// does not express (internal/timetrack's fieldRules), as text: generators
// handle no conditional schema alike.
var fieldRules = map[string]string{
	"time-entries": "**Field rules.** Which fields an entry needs or must omit depends on its `trackingType` and on the " +
		"account settings (`timerMode`, `useWorktime`; `GET /v1/account/settings`) at the time of the write; a create " +
		"and a change (checked on the resulting entry) that breaks one → 400 `invalid` with `problems` naming each field.\n\n" +
		"| trackingType | settings | required | must be omitted |\n" +
		"| --- | --- | --- | --- |\n" +
		"| WORK | timerMode DURATION | `project`, `task`, `duration`, `sorting` | `startTime`, `endTime` |\n" +
		"| WORK | timerMode START_TIME_END_TIME | `project`, `task`, `startTime` (`endTime` stays omitted while the entry runs) | `duration`, `sorting` |\n" +
		"| WORKTIME | any | `startTime`, `endTime` | `project`, `task`, `duration`, `sorting` |\n" +
		"| BREAK | useWorktime true | `startTime`, `endTime` | `project`, `task`, `duration` |\n" +
		"| BREAK | useWorktime false, timerMode DURATION | `duration`, `sorting` | `project`, `task`, `startTime`, `endTime` |\n" +
		"| BREAK | useWorktime false, timerMode START_TIME_END_TIME | `startTime` | `project`, `task`, `duration`, `sorting` |\n\n" +
		"Omitted means absent or null. Always: `duration` is not negative, and `endTime` is after `startTime`. A WORK " +
		"entry on an approved (project, day) cannot be created, changed, deleted or moved there: 403 `day_approved`.",
}

// model returns the model name of a resource name.
func (b *builder) model(name string) string {
	if t, ok := b.reg.Get(name); ok {
		return t.Model
	}
	return name
}

// with returns a copy of s with one more keyword.
func with(s Schema, k string, v any) Schema {
	out := make(Schema, len(s)+1)
	for kk, vv := range s {
		out[kk] = vv
	}
	out[k] = v
	return out
}
