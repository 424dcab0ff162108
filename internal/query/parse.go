package query

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// reserved are the query parameters that are not attribute filters.
var reserved = map[string]bool{"where": true, "limit": true, "skip": true, "sort": true, "populate": true, "after": true}

// Parse reads a list request's query string against the schema.
func Parse(params url.Values, s Schema) (*Query, error) {
	q := &Query{Limit: DefaultLimit, Params: params}
	var err error
	if q.Limit, err = intParam(params, "limit", DefaultLimit); err != nil {
		return nil, err
	}
	if q.Limit > MaxLimit {
		q.Limit = MaxLimit
	}
	if q.Skip, err = intParam(params, "skip", 0); err != nil {
		return nil, err
	}
	if q.Sort, err = parseSort(params["sort"], s); err != nil {
		return nil, err
	}
	if after, ok := params["after"]; ok {
		if len(after) != 1 {
			return nil, errorf("after", "give after once")
		}
		if q.After, err = parseAfter(after[0], q.Sort); err != nil {
			return nil, err
		}
	}
	if q.Populate, err = parsePopulate(params["populate"], s); err != nil {
		return nil, err
	}
	p := &parser{schema: s}
	if where, ok := params["where"]; ok {
		// where is the entire criteria; per-attribute filters are ignored.
		if len(where) != 1 {
			return nil, errorf("where", "give where once")
		}
		if q.Where, err = p.parseWhere(where[0]); err == nil {
			err = checkCost(q.Where)
		}
	} else {
		q.Where, err = p.parseFilters(params)
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// checkCost refuses where criteria whose evaluation on each record costs
// more than the limits allow. Parsing bounds the depth and the values;
// this bounds the work: conditions, and attributes to take out of the
// document.
func checkCost(n Node) error {
	conds := 0
	open := map[string]bool{}
	var walk func(Node)
	walk = func(n Node) {
		switch n := n.(type) {
		case *And:
			for _, t := range n.Terms {
				walk(t)
			}
		case *Or:
			for _, t := range n.Terms {
				walk(t)
			}
		case *Cond:
			conds++
			if n.Field.open() {
				open[n.Field.Name] = true
			}
		}
	}
	walk(simplify(n))
	if conds > MaxConditions {
		return errorf("where", "the criteria hold %d conditions; at most %d are allowed (equalities and in-lists of one attribute within an or count as one)", conds, MaxConditions)
	}
	if len(open) > MaxAttributes {
		return errorf("where", "the criteria read %d undeclared attributes; at most %d are allowed", len(open), MaxAttributes)
	}
	return nil
}

func intParam(params url.Values, name string, def int) (int, error) {
	vs, ok := params[name]
	if !ok {
		return def, nil
	}
	if len(vs) != 1 {
		return 0, errorf(name, "give %s once", name)
	}
	v := strings.TrimSpace(vs[0])
	n, err := strconv.ParseUint(v, 10, 63)
	if err != nil {
		if ne := (*strconv.NumError)(nil); errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
			// A huge limit is still a limit: it is capped like any other.
			return math.MaxInt32, nil
		}
		return 0, errorf(name, "%s must be a non-negative integer, not %q", name, v)
	}
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	return int(n), nil
}

type parser struct {
	schema Schema
	values int // values seen, against MaxValues
}

// field returns the schema field of an attribute name, or an open field.
func (p *parser) field(param, name string) (Field, error) {
	if f, ok := p.schema.Fields[name]; ok {
		return f, nil
	}
	if p.schema.DeclaredOnly {
		return Field{}, errorf(param, "unknown attribute %q; this resource has %s", name, p.fieldList())
	}
	if !validName(name) {
		return Field{}, errorf(param, "attribute name %q must be 1 to 128 bytes of text without quotes, backslashes or control characters", name)
	}
	return Field{Name: name}, nil
}

func (p *parser) fieldList() string {
	names := make([]string, 0, len(p.schema.Fields))
	for n := range p.schema.Fields {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// validName accepts the attribute names a client can store and query: any
// UTF-8 text of 1 to 128 bytes without quotes, backslashes or control
// characters (the names are bound as JSON paths, never written into SQL).
func validName(s string) bool {
	if len(s) == 0 || len(s) > 128 || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}

// parseFilters turns per-attribute parameters into criteria: several
// values of one attribute match any of them; attributes all apply.
func (p *parser) parseFilters(params url.Values) (Node, error) {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	slices.Sort(names)
	byName := map[string][]string{}
	var order []string
	for _, k := range names {
		name := strings.TrimSuffix(k, "[]")
		if reserved[name] || p.schema.Params[name] {
			continue
		}
		if _, seen := byName[name]; !seen {
			order = append(order, name)
		}
		byName[name] = append(byName[name], params[k]...)
	}
	and := &And{}
	open := 0
	for _, name := range order {
		f, err := p.field(name, name)
		if err != nil {
			return nil, err
		}
		if f.open() {
			// Each filter is one condition; declared attributes are as
			// many as the schema has.
			if open++; open > MaxAttributes {
				return nil, errorf(name, "too many attributes: at most %d undeclared attributes in one request", MaxAttributes)
			}
		}
		c := &Cond{Field: f, Op: Eq}
		for _, raw := range byName[name] {
			v, err := p.queryValue(f, raw)
			if err != nil {
				return nil, err
			}
			c.Values = append(c.Values, v)
		}
		if len(c.Values) > 1 {
			c.Op = In
		}
		and.Terms = append(and.Terms, c)
	}
	return and, nil
}

// queryValue converts a plain query parameter value.
func (p *parser) queryValue(f Field, raw string) (Value, error) {
	if err := p.count(f.Name, 1); err != nil {
		return Value{}, err
	}
	if err := checkText(f, f.Name, raw); err != nil {
		return Value{}, err
	}
	if f.Type == 0 || f.Type == Any {
		return Value{Kind: KindString, Str: raw, Loose: true}, nil
	}
	return typed(f, f.Name, raw)
}

func (p *parser) count(param string, n int) error {
	p.values += n
	if p.values > MaxValues {
		return errorf(param, "too many values: at most %d in one request", MaxValues)
	}
	return nil
}

// parseWhere reads the where parameter.
func (p *parser) parseWhere(raw string) (Node, error) {
	if len(raw) > MaxWhereLen {
		return nil, errorf("where", "where is longer than %d bytes", MaxWhereLen)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, errorf("where", "where is not valid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errorf("where", "where is not valid JSON: text after the object")
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, errorf("where", "where must be a JSON object")
	}
	if depth(v) > MaxDepth {
		return nil, errorf("where", "where is nested deeper than %d levels", MaxDepth)
	}
	return p.object(obj)
}

// depth counts nested criteria objects; the arrays of and, or and in do
// not add a level of their own.
func depth(v any) int {
	switch x := v.(type) {
	case map[string]any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d + 1
	case []any:
		d := 0
		for _, e := range x {
			d = max(d, depth(e))
		}
		return d
	}
	return 0
}

// object reads one criteria object: all its keys must hold.
func (p *parser) object(obj map[string]any) (Node, error) {
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	and := &And{}
	for _, k := range keys {
		var (
			n   Node
			err error
		)
		switch k {
		case "or", "and":
			n, err = p.group(k, obj[k])
		default:
			n, err = p.attribute(k, obj[k])
		}
		if err != nil {
			return nil, err
		}
		and.Terms = append(and.Terms, n)
	}
	if len(and.Terms) == 1 {
		return and.Terms[0], nil
	}
	return and, nil
}

func (p *parser) group(k string, v any) (Node, error) {
	arr, ok := v.([]any)
	if !ok {
		return nil, errorf("where", "%q needs an array of criteria objects", k)
	}
	terms := make([]Node, 0, len(arr))
	for _, e := range arr {
		obj, ok := e.(map[string]any)
		if !ok {
			return nil, errorf("where", "%q needs an array of criteria objects", k)
		}
		n, err := p.object(obj)
		if err != nil {
			return nil, err
		}
		terms = append(terms, n)
	}
	if k == "or" {
		return &Or{Terms: terms}, nil
	}
	return &And{Terms: terms}, nil
}

// attribute reads the constraint on one attribute: a value, an array
// (in), or an object of modifiers.
func (p *parser) attribute(name string, v any) (Node, error) {
	f, err := p.field("where", name)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case []any:
		return p.cond(f, In, x)
	case map[string]any:
		if len(x) == 0 {
			return nil, errorf("where", "empty constraint on %q", name)
		}
		mods := make([]string, 0, len(x))
		for m := range x {
			mods = append(mods, m)
		}
		slices.Sort(mods)
		and := &And{}
		for _, m := range mods {
			op, ok := modifiers[m]
			if !ok {
				return nil, errorf("where", "unknown modifier %q on %q; use one of <, <=, >, >=, !=, in, nin, startsWith, endsWith, contains", m, name)
			}
			if op == Contains && p.schema.NoContains {
				return nil, errorf("where", "the contains modifier is not supported on this resource")
			}
			c, err := p.cond(f, op, x[m])
			if err != nil {
				return nil, err
			}
			and.Terms = append(and.Terms, c)
		}
		if len(and.Terms) == 1 {
			return and.Terms[0], nil
		}
		return and, nil
	default:
		return p.cond(f, Eq, v)
	}
}

var modifiers = map[string]Op{
	"<": Lt, "<=": Le, ">": Gt, ">=": Ge, "!=": Ne, "in": In, "nin": Nin,
	"startsWith": StartsWith, "endsWith": EndsWith, "contains": Contains,
}

func (p *parser) cond(f Field, op Op, v any) (Node, error) {
	c := &Cond{Field: f, Op: op}
	if op == In || op == Nin {
		arr, ok := v.([]any)
		if !ok {
			return nil, errorf("where", "%s on %q needs an array", op, f.Name)
		}
		if err := p.count("where", len(arr)); err != nil {
			return nil, err
		}
		for _, e := range arr {
			val, err := jsonValue(f, e)
			if err != nil {
				return nil, err
			}
			c.Values = append(c.Values, val)
		}
		return c, nil
	}
	if err := p.count("where", 1); err != nil {
		return nil, err
	}
	if op == StartsWith || op == EndsWith || op == Contains {
		// Text modifiers match the text form of declared non-string
		// attributes, so their value is any text, not a value of the
		// attribute's type: {"day": {"startsWith": "2026-01"}}.
		str, isStr := v.(string)
		if !isStr {
			return nil, errorf("where", "%s on %q needs a string", op, f.Name)
		}
		if err := checkText(f, "where", str); err != nil {
			return nil, err
		}
		c.Values = []Value{{Kind: KindString, Str: str}}
		return c, nil
	}
	val, err := jsonValue(f, v)
	if err != nil {
		return nil, err
	}
	switch op {
	case Lt, Le, Gt, Ge:
		if val.Kind != KindString && val.Kind != KindNumber {
			return nil, errorf("where", "%s on %q needs a string or a number", op, f.Name)
		}
	}
	c.Values = []Value{val}
	return c, nil
}

// checkText refuses text that no stored JSON string can equal and that
// PostgreSQL refuses as a text parameter: NUL characters and invalid
// UTF-8.
func checkText(f Field, param, s string) error {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return errorf(param, "%q: a value must be UTF-8 text without NUL characters", f.Name)
	}
	return nil
}

// jsonValue converts a criteria value from where.
func jsonValue(f Field, v any) (Value, error) {
	switch x := v.(type) {
	case nil:
		return Value{Kind: KindNull}, nil
	case map[string]any, []any:
		return Value{}, errorf("where", "%q: a value must be a string, number, boolean or null", f.Name)
	case string:
		if err := checkText(f, "where", x); err != nil {
			return Value{}, err
		}
	}
	if f.Type == 0 || f.Type == Any {
		switch x := v.(type) {
		case string:
			return Value{Kind: KindString, Str: x}, nil
		case bool:
			return Value{Kind: KindBool, Bool: x}, nil
		case json.Number:
			return number(f, string(x))
		}
	}
	switch x := v.(type) {
	case string:
		return typed(f, "where", x)
	case json.Number:
		if f.Type == Integer || f.Type == Number {
			return number(f, string(x))
		}
	case bool:
		if f.Type == Boolean {
			return Value{Kind: KindBool, Bool: x}, nil
		}
	}
	if f.Type == Timestamp {
		return Value{}, errorf("where", "%q must be YYYY-MM-DD or %s", f.Name, TimestampHint)
	}
	return Value{}, errorf("where", "%q must be %s", f.Name, f.Type)
}

func number(f Field, s string) (Value, error) {
	if strings.Trim(s, "0123456789+-.eE") != "" {
		// Decimal only: strconv would also read 0x1p4, Inf or NaN.
		return Value{}, errorf(f.Name, "%q is not a usable number", s)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return Value{Kind: KindNumber, Int: n, Num: float64(n), IsInt: true}, nil
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(n, 0) || math.IsNaN(n) {
		return Value{}, errorf(f.Name, "%q is not a usable number", s)
	}
	if f.Type == Integer {
		if n != math.Trunc(n) || math.Abs(n) > 1<<53 {
			return Value{}, errorf(f.Name, "%q must be an integer", f.Name)
		}
		return Value{Kind: KindNumber, Int: int64(n), Num: n, IsInt: true}, nil
	}
	if n == math.Trunc(n) && math.Abs(n) < 1<<53 {
		return Value{Kind: KindNumber, Int: int64(n), Num: n, IsInt: true}, nil
	}
	return Value{Kind: KindNumber, Num: n}, nil
}

// typed converts text to the type of a declared field.
func typed(f Field, param, s string) (Value, error) {
	switch f.Type {
	case Integer, Number:
		v, err := number(f, strings.TrimSpace(s))
		if err != nil {
			return Value{}, errorf(param, "%q must be %s, not %q", f.Name, f.Type, s)
		}
		return v, nil
	case Boolean:
		switch s {
		case "true":
			return Value{Kind: KindBool, Bool: true}, nil
		case "false":
			return Value{Kind: KindBool}, nil
		}
	case Date:
		if _, err := time.Parse(time.DateOnly, s); err == nil && len(s) == 10 {
			return Value{Kind: KindString, Str: s}, nil
		}
	case Timestamp:
		// A day stays a day (the compiler reads it as a UTC day or its
		// first instant); a date-time is compared in its stored form.
		if isDay(s) {
			return Value{Kind: KindString, Str: s}, nil
		}
		norm, err := NormalTimestamp(s)
		if err != nil {
			return Value{}, timestampError(f, param, s, err)
		}
		return Value{Kind: KindString, Str: norm}, nil
	case Enum:
		if slices.Contains(f.Enum, s) {
			return Value{Kind: KindString, Str: s}, nil
		}
		return Value{}, errorf(param, "%q must be one of %s, not %q", f.Name, strings.Join(f.Enum, ", "), s)
	case String:
		return Value{Kind: KindString, Str: s}, nil
	default:
		return Value{Kind: KindString, Str: s, Loose: true}, nil
	}
	return Value{}, errorf(param, "%q must be %s, not %q", f.Name, f.Type, s)
}

func isDay(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil && len(s) == 10
}

// timestampError refuses a value of a date-time field, saying why.
func timestampError(f Field, param, s string, err error) error {
	if errors.Is(err, errForm) {
		return errorf(param, "%q must be YYYY-MM-DD or %s, not %q", f.Name, TimestampHint, s)
	}
	return errorf(param, "%q: %q: %v", f.Name, s, err)
}

// parseSort reads sort parameters: "attr DIR" lists, or JSON arrays of
// such strings or of {"attr": "DIR"} objects.
func parseSort(values []string, s Schema) ([]SortKey, error) {
	var keys []SortKey
	add := func(name, dir string) error {
		name = strings.TrimSpace(name)
		f, ok := s.Fields[name]
		if !ok {
			if s.DeclaredOnly {
				return errorf("sort", "unknown attribute %q", name)
			}
			if !validName(name) {
				return errorf("sort", "attribute name %q must be 1 to 128 bytes of text without quotes, backslashes or control characters", name)
			}
			f = Field{Name: name}
		}
		k := SortKey{Field: f}
		switch strings.ToUpper(strings.TrimSpace(dir)) {
		case "", "ASC":
		case "DESC":
			k.Dir = Desc
		default:
			return errorf("sort", "unknown direction %q for %q; use ASC or DESC", dir, name)
		}
		keys = append(keys, k)
		if len(keys) > MaxSortKeys {
			return errorf("sort", "at most %d sort keys", MaxSortKeys)
		}
		return nil
	}
	// "attr", "attr DIR", or, for a name with spaces, "first name DIR".
	addText := func(text string) error {
		fields := strings.Fields(text)
		switch {
		case len(fields) == 1:
			return add(fields[0], "")
		case len(fields) == 2:
			return add(fields[0], fields[1])
		case len(fields) > 2:
			last := fields[len(fields)-1]
			if strings.EqualFold(last, "ASC") || strings.EqualFold(last, "DESC") {
				name := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(text), last))
				return add(name, last)
			}
		}
		return errorf("sort", "%q is not \"attribute ASC|DESC\"", strings.TrimSpace(text))
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case v == "":
			continue
		case strings.HasPrefix(v, "["), strings.HasPrefix(v, "{"):
			if err := sortJSON(v, add, addText); err != nil {
				return nil, err
			}
		default:
			for _, part := range strings.Split(v, ",") {
				if err := addText(part); err != nil {
					return nil, err
				}
			}
		}
	}
	return keys, nil
}

// sortJSON reads a JSON sort specification, keeping the key order of objects.
func sortJSON(v string, add func(name, dir string) error, addText func(string) error) error {
	bad := errorf("sort", "sort must be \"attribute ASC|DESC\", or a JSON array of such strings or {\"attribute\": \"ASC|DESC\"} objects")
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	tok, err := dec.Token()
	if err != nil {
		return bad
	}
	readObject := func() error {
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return bad
			}
			d, err := dec.Token()
			if err != nil {
				return bad
			}
			name, _ := k.(string)
			dir, ok := d.(string)
			if !ok {
				return errorf("sort", "direction of %q must be \"ASC\" or \"DESC\"", name)
			}
			if err := add(name, dir); err != nil {
				return err
			}
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('}') {
			return bad
		}
		return nil
	}
	switch tok {
	case json.Delim('{'):
		if err := readObject(); err != nil {
			return err
		}
	case json.Delim('['):
		for dec.More() {
			t, err := dec.Token()
			if err != nil {
				return bad
			}
			switch t := t.(type) {
			case string:
				if err := addText(t); err != nil {
					return err
				}
			case json.Delim:
				if t != '{' {
					return bad
				}
				if err := readObject(); err != nil {
					return err
				}
			default:
				return bad
			}
		}
		if t, err := dec.Token(); err != nil || t != json.Delim(']') {
			return bad
		}
	default:
		return bad
	}
	if _, err := dec.Token(); err != io.EOF {
		return bad
	}
	return nil
}

// parsePopulate reads populate: a comma-separated list or JSON array of
// reference attributes; empty or "true" means all, "false" none. Names
// that are not references of the resource expand nothing.
func parsePopulate(values []string, s Schema) ([]string, error) {
	var names []string
	all := func() {
		for n, f := range s.Fields {
			if f.Ref {
				names = append(names, n)
			}
		}
	}
	for _, v := range values {
		v = strings.TrimSpace(v)
		switch {
		case v == "" || v == "true":
			all()
			continue
		case v == "false":
			continue
		case strings.HasPrefix(v, "["):
			var arr []string
			if err := json.Unmarshal([]byte(v), &arr); err != nil {
				return nil, errorf("populate", "populate must be attribute names, comma-separated or a JSON array of strings")
			}
			names = append(names, arr...)
		default:
			names = append(names, strings.Split(v, ",")...)
		}
	}
	out := names[:0]
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if f, ok := s.Fields[n]; !ok || !f.Ref {
			continue // populate is accepted; only references can be expanded
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}
