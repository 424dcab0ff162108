package query

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"
)

// SQL accumulates a statement and its parameters. Trusted text (from
// Planwerk's own code and schema) is written; everything from a client is
// bound with Arg.
type SQL struct {
	b    strings.Builder
	Args []any
}

// Write appends trusted SQL text.
func (s *SQL) Write(parts ...string) {
	for _, p := range parts {
		s.b.WriteString(p)
	}
}

// Arg binds v and returns its placeholder.
func (s *SQL) Arg(v any) string {
	s.Args = append(s.Args, v)
	return "$" + strconv.Itoa(len(s.Args))
}

// String returns the statement text.
func (s *SQL) String() string { return s.b.String() }

// Dialect compiles criteria and sort keys for one engine. Records are
// rows with the columns id, created_at, updated_at and doc (the record's
// JSON document); declared fields with a Column are read from it, all
// others from doc.
type Dialect interface {
	// Where writes a boolean SQL expression for n (nil: true) that reads
	// the document itself wherever it needs an attribute.
	Where(s *SQL, n Node)
	// OrderBy writes the ORDER BY list for keys; id always breaks ties.
	OrderBy(s *SQL, keys []SortKey)
	// Select writes a whole statement reading records, in which each
	// attribute the criteria and sort keys need is taken out of the
	// document once per row.
	Select(s *SQL, sel Select)
}

// The dialects of the two engines.
var (
	SQLite   Dialect = compiler{e: sqliteExprs{}}
	Postgres Dialect = compiler{e: postgresExprs{}}
)

// ref is the SQL that reads one attribute of a record's document: two
// expressions whose meaning is the engine's. PostgreSQL: the jsonb value
// (NULL when missing) and its text. SQLite: the JSON type and the value.
type ref struct{ a, b string }

// exprs is what differs between the engines.
type exprs interface {
	// inline reads an open attribute out of the document where it is
	// used; the name is bound.
	inline(s *SQL, name string) ref
	// direct reads a declared attribute out of the document with the
	// expressions its indexes are built on.
	direct(f Field) ref
	// hoisted reads attribute i of the row's extraction (see rows).
	hoisted(i int) ref
	// rows writes the FROM clause, " WHERE ", filter, and what the rest of
	// the condition is joined on; names are the attributes to take out of
	// each row's document once. order, when not nil, writes an ORDER BY
	// clause on the table's own columns, the order the rows are wanted in.
	rows(s *SQL, table string, names []string, filter, order func())
	// declared is the typed value of a declared attribute.
	declared(r ref, t Type) string
	// param binds a value with the type the engine needs to see.
	param(s *SQL, v Value) string
	// in tests x against values that bind as one SQL type (see byBind).
	in(s *SQL, x string, vs []Value) string
	isNull(r ref) string
	isType(r ref, k Kind) string // the attribute holds a JSON value of kind k
	text(r ref) string           // the attribute's string value
	num(r ref) string            // the attribute's numeric value, NULL unless a number
	isBool(r ref, b bool) string
	// textOf is the text form of a declared expression.
	textOf(expr string, t Type) string
	startsWith(x, v string) string
	endsWith(x, v string) string
	contains(x, v string) string
	sortBool(r ref) string
	nulls(d Direction) string
	// key binds a cursor's value of a term of kind k (see cursor.go).
	key(s *SQL, k termKind, v any) string
	// keyColumn is a term as a column a cursor is made of.
	keyColumn(t term) string
}

// compiler writes criteria and sort keys. Without a plan every condition
// reads the document itself; with one, attributes come from the row's
// extraction.
type compiler struct {
	e exprs
	p *plan
}

func (c compiler) Where(s *SQL, n Node) {
	c.node(s, simplify(n))
}

func (c compiler) node(s *SQL, n Node) {
	switch n := n.(type) {
	case nil:
		s.Write("(1=1)")
	case *And:
		c.group(s, n.Terms, " AND ", "(1=1)")
	case *Or:
		c.group(s, n.Terms, " OR ", "(1=0)")
	case *Cond:
		if n.Field.open() {
			c.openCond(s, n)
		} else {
			c.declaredCond(s, n)
		}
	}
}

func (c compiler) group(s *SQL, terms []Node, sep, empty string) {
	if len(terms) == 0 {
		s.Write(empty)
		return
	}
	balanced(s, len(terms), sep, func(i int) { c.node(s, terms[i]) })
}

// balanced writes term(0) sep term(1) sep ... as a balanced tree of
// parenthesised halves. A flat chain of n terms is an expression tree n
// deep, and SQLite refuses trees deeper than 1000 (SQLITE_MAX_EXPR_DEPTH);
// halving keeps the depth near log2(n) for the MaxValues terms a request
// may hold.
func balanced(s *SQL, n int, sep string, term func(i int)) {
	var half func(lo, hi int)
	half = func(lo, hi int) {
		if hi-lo == 1 {
			term(lo)
			return
		}
		mid := (lo + hi) / 2
		s.Write("(")
		half(lo, mid)
		s.Write(sep)
		half(mid, hi)
		s.Write(")")
	}
	half(0, n)
}

// anyOf writes the disjunction of terms; none is false.
func anyOf(s *SQL, terms []string) {
	if len(terms) == 0 {
		s.Write("(1=0)")
		return
	}
	balanced(s, len(terms), " OR ", func(i int) { s.Write(terms[i]) })
}

// open returns how to read an open attribute.
func (c compiler) open(s *SQL, name string) ref {
	if i, ok := c.p.slot(name); ok {
		return c.e.hoisted(i)
	}
	return c.e.inline(s, name)
}

// expr is the typed expression of a declared field in a condition.
func (c compiler) expr(f Field) string {
	if f.Column != "" {
		return f.Column
	}
	if i, ok := c.p.slot(f.Name); ok {
		return c.e.declared(c.e.hoisted(i), f.Type)
	}
	return c.e.declared(c.e.direct(f), f.Type)
}

// declaredCond compares a typed column or document attribute.
func (c compiler) declaredCond(s *SQL, n *Cond) {
	x := c.expr(n.Field)
	switch n.Op {
	case Eq, In:
		c.declaredIn(s, x, n.Field, n.Values)
	case Ne, Nin:
		s.Write("NOT COALESCE(")
		c.declaredIn(s, x, n.Field, n.Values)
		s.Write(", FALSE)")
	case Lt, Le, Gt, Ge:
		v := n.Values[0]
		if n.Field.Type == Timestamp && isDay(v.Str) {
			v.Str += "T00:00:00.000Z" // a day stands for its first instant
		}
		s.Write("(", x, " ", string(n.Op), " ", c.e.param(s, v), ")")
	case StartsWith, EndsWith, Contains:
		c.textOp(s, n.Op, c.e.textOf(x, n.Field.Type), n.Values[0])
	}
}

// declaredIn matches any of the values: null is a missing value, a day
// matches the whole UTC day of a timestamp, and the other values are one
// membership test per kind.
func (c compiler) declaredIn(s *SQL, x string, f Field, vs []Value) {
	var terms []string
	var rest []Value
	null := false
	for _, v := range vs {
		switch {
		case v.Kind == KindNull:
			null = true
		case f.Type == Timestamp && isDay(v.Str):
			terms = append(terms, c.day(s, x, v.Str))
		default:
			rest = append(rest, v)
		}
	}
	if null {
		terms = append([]string{"(" + x + " IS NULL)"}, terms...)
	}
	for _, g := range byBind(rest) {
		terms = append(terms, c.e.in(s, x, g))
	}
	anyOf(s, terms)
}

// day matches the timestamps of one UTC day.
func (c compiler) day(s *SQL, x, day string) string {
	d, _ := time.Parse(time.DateOnly, day)
	next := d.AddDate(0, 0, 1).Format(time.DateOnly)
	return "(" + x + " >= " + c.e.param(s, Value{Kind: KindString, Str: day}) +
		" AND " + x + " < " + c.e.param(s, Value{Kind: KindString, Str: next}) + ")"
}

// byBind groups values that bind as one SQL type: whole numbers,
// other numbers, strings, booleans.
func byBind(vs []Value) [][]Value {
	var ints, floats, strs, bools []Value
	for _, v := range vs {
		switch {
		case v.Kind == KindNumber && v.IsInt:
			ints = append(ints, v)
		case v.Kind == KindNumber:
			floats = append(floats, v)
		case v.Kind == KindString:
			strs = append(strs, v)
		case v.Kind == KindBool:
			bools = append(bools, v)
		}
	}
	var out [][]Value
	for _, g := range [][]Value{ints, floats, strs, bools} {
		if len(g) > 0 {
			out = append(out, g)
		}
	}
	return out
}

func (c compiler) textOp(s *SQL, op Op, x string, v Value) {
	p := c.e.param(s, Value{Kind: KindString, Str: v.Str})
	switch op {
	case StartsWith:
		s.Write(c.e.startsWith(x, p))
	case EndsWith:
		s.Write(c.e.endsWith(x, p))
	default:
		s.Write(c.e.contains(x, p))
	}
}

// openCond compares an attribute that only the document holds, whatever
// JSON type it has: values match only values of their own kind.
func (c compiler) openCond(s *SQL, n *Cond) {
	if (n.Op == In || n.Op == Nin) && len(n.Values) == 0 {
		// No path parameter: PostgreSQL refuses a parameter that the
		// statement does not use.
		if n.Op == In {
			s.Write("(1=0)")
		} else {
			s.Write("(1=1)")
		}
		return
	}
	r := c.open(s, n.Field.Name)
	switch n.Op {
	case Eq, In:
		c.openIn(s, r, n.Values)
	case Ne, Nin:
		s.Write("NOT COALESCE(")
		c.openIn(s, r, n.Values)
		s.Write(", FALSE)")
	case Lt, Le, Gt, Ge:
		v := n.Values[0]
		if v.Kind == KindNumber {
			s.Write("(", c.e.num(r), " ", string(n.Op), " ", c.e.param(s, v), ")")
		} else {
			s.Write("(", c.e.isType(r, KindString), " AND ", c.e.text(r), " ", string(n.Op), " ", c.e.param(s, v), ")")
		}
	case StartsWith, EndsWith, Contains:
		s.Write("(", c.e.isType(r, KindString), " AND ")
		c.textOp(s, n.Op, c.e.text(r), n.Values[0])
		s.Write(")")
	}
}

// openIn matches an open attribute holding any of the values. A value
// matches only stored values of its own JSON kind; a plain query
// parameter (Loose) also the number or boolean it spells. The values of
// one kind are one membership test, however many there are.
func (c compiler) openIn(s *SQL, r ref, vs []Value) {
	var nums, strs []Value
	var null, isTrue, isFalse bool
	for _, v := range vs {
		switch v.Kind {
		case KindNull:
			null = true
		case KindBool:
			isTrue, isFalse = isTrue || v.Bool, isFalse || !v.Bool
		case KindNumber:
			nums = append(nums, v)
		case KindString:
			strs = append(strs, Value{Kind: KindString, Str: v.Str})
			if !v.Loose {
				continue
			}
			if num, err := number(Field{}, v.Str); err == nil {
				nums = append(nums, num)
			}
			isTrue, isFalse = isTrue || v.Str == "true", isFalse || v.Str == "false"
		}
	}
	var terms []string
	if null {
		terms = append(terms, c.e.isNull(r))
	}
	if isFalse {
		terms = append(terms, c.e.isBool(r, false))
	}
	if isTrue {
		terms = append(terms, c.e.isBool(r, true))
	}
	for _, g := range byBind(nums) {
		terms = append(terms, c.e.in(s, c.e.num(r), g))
	}
	if len(strs) > 0 {
		terms = append(terms, "("+c.e.isType(r, KindString)+" AND "+c.e.in(s, c.e.text(r), strs)+")")
	}
	anyOf(s, terms)
}

// sortRank orders open attributes by kind: missing or null, numbers,
// strings, booleans, others.
func (c compiler) sortRank(r ref) string {
	return "(CASE WHEN " + c.e.isNull(r) + " THEN 0 WHEN " + c.e.isType(r, KindNumber) + " THEN 1 WHEN " +
		c.e.isType(r, KindString) + " THEN 2 WHEN " + c.e.isType(r, KindBool) + " THEN 3 ELSE 4 END)"
}

func (c compiler) OrderBy(s *SQL, keys []SortKey) {
	c.orderBy(s, c.terms(s, keys))
}

func (c compiler) orderBy(s *SQL, ts []term) {
	for i, t := range ts {
		if i > 0 {
			s.Write(", ")
		}
		dir, d := " ASC", Asc
		if t.desc {
			dir, d = " DESC", Desc
		}
		s.Write(t.expr, dir)
		if t.nulls {
			s.Write(c.e.nulls(d))
		}
	}
}

// sqliteExprs reads documents with SQLite's JSON functions.
type sqliteExprs struct{}

func (sqliteExprs) inline(s *SQL, name string) ref {
	p := s.Arg(`$."` + name + `"`)
	return ref{"json_type(doc, " + p + ")", "json_extract(doc, " + p + ")"}
}

func (sqliteExprs) direct(f Field) ref {
	return ref{"json_type(doc, '$." + f.Name + "')", "json_extract(doc, '$." + f.Name + "')"}
}

func (sqliteExprs) hoisted(i int) ref {
	n := strconv.Itoa(i)
	return ref{"x.t" + n, "x.v" + n}
}

// rows reads the attributes in a subquery, which SQLite runs as a
// co-routine: each JSON function then parses the document once per row,
// and the conditions compare the stored results. OFFSET keeps SQLite
// from flattening the subquery into the statement (which would copy the
// function calls back into every condition), and LIMIT from pushing the
// conditions down into it. The filter stays inside, where the indexes
// are; so does an order by columns, which an index may deliver and which
// SQLite then knows it need not sort again.
func (sqliteExprs) rows(s *SQL, table string, names []string, filter, order func()) {
	if len(names) == 0 {
		s.Write(table, " WHERE ")
		filter()
		s.Write(" AND ")
		return
	}
	s.Write("(SELECT *")
	for i, name := range names {
		p := s.Arg(`$."` + name + `"`)
		n := strconv.Itoa(i)
		s.Write(", json_type(doc, ", p, ") AS t", n, ", json_extract(doc, ", p, ") AS v", n)
	}
	s.Write(" FROM ", table, " WHERE ")
	filter()
	if order != nil {
		order()
	}
	s.Write(" LIMIT -1 OFFSET 0) AS x WHERE ")
}

func (sqliteExprs) declared(r ref, _ Type) string { return r.b }

func (sqliteExprs) param(s *SQL, v Value) string {
	switch v.Kind {
	case KindNumber:
		if v.IsInt {
			return s.Arg(v.Int)
		}
		return s.Arg(v.Num)
	case KindBool:
		return s.Arg(v.Bool)
	case KindString:
		return s.Arg(v.Str)
	}
	return "NULL"
}

// in writes an IN list: SQLite looks a list up in an index of its own,
// built once per statement.
func (e sqliteExprs) in(s *SQL, x string, vs []Value) string {
	if len(vs) == 1 {
		return "(" + x + " = " + e.param(s, vs[0]) + ")"
	}
	var b strings.Builder
	b.WriteString("(" + x + " IN (")
	for i, v := range vs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(e.param(s, v))
	}
	b.WriteString("))")
	return b.String()
}

func (sqliteExprs) isNull(r ref) string {
	return "(" + r.a + " IS NULL OR " + r.a + " = 'null')"
}

func (sqliteExprs) isType(r ref, k Kind) string {
	switch k {
	case KindString:
		return "(" + r.a + " = 'text')"
	case KindNumber:
		return "(" + r.a + " IN ('integer', 'real'))"
	}
	return "(" + r.a + " IN ('true', 'false'))"
}

func (sqliteExprs) text(r ref) string { return r.b }

func (e sqliteExprs) num(r ref) string {
	return "(CASE WHEN " + e.isType(r, KindNumber) + " THEN " + r.b + " END)"
}

func (sqliteExprs) isBool(r ref, b bool) string {
	if b {
		return "(" + r.a + " = 'true')"
	}
	return "(" + r.a + " = 'false')"
}

func (sqliteExprs) textOf(x string, t Type) string {
	switch t {
	case String, Date, Timestamp, Enum:
		return x
	case Boolean:
		// json_extract reads JSON true and false as 1 and 0; their text
		// form is "true" and "false", as on PostgreSQL.
		return "(CASE " + x + " WHEN 1 THEN 'true' WHEN 0 THEN 'false' END)"
	}
	return "CAST(" + x + " AS TEXT)"
}

// SQLite compares text with the BINARY collation: byte-wise, and these
// functions take % and _ literally.
func (sqliteExprs) startsWith(x, v string) string {
	return "(substr(" + x + ", 1, length(" + v + ")) = " + v + ")"
}

func (sqliteExprs) endsWith(x, v string) string {
	return "(length(" + x + ") >= length(" + v + ") AND substr(" + x + ", length(" + x + ") - length(" + v + ") + 1) = " + v + ")"
}

func (sqliteExprs) contains(x, v string) string { return "(instr(" + x + ", " + v + ") > 0)" }

func (sqliteExprs) sortBool(r ref) string {
	return "(CASE " + r.a + " WHEN 'false' THEN 0 WHEN 'true' THEN 1 END)"
}

// SQLite compares integers and reals by value: a number binds as the one
// it is.
func (sqliteExprs) key(s *SQL, _ termKind, v any) string {
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return s.Arg(i)
		}
		f, _ := n.Float64()
		return s.Arg(f)
	}
	return s.Arg(v)
}

func (sqliteExprs) nulls(d Direction) string {
	if d == Desc {
		return " NULLS LAST"
	}
	return " NULLS FIRST"
}

// postgresExprs reads jsonb documents. Text is compared in the "C"
// collation, byte-wise, as on SQLite.
type postgresExprs struct{}

func (postgresExprs) inline(s *SQL, name string) ref {
	p := s.Arg(name) + "::text"
	return ref{"(doc -> " + p + ")", "(doc ->> " + p + ")"}
}

func (postgresExprs) direct(f Field) ref {
	return ref{"(doc -> '" + f.Name + "')", "(doc ->> '" + f.Name + "')"}
}

func (postgresExprs) hoisted(i int) ref {
	a := "x.a" + strconv.Itoa(i)
	return ref{a, "(" + a + " #>> '{}')"}
}

// rows takes the attributes out of the document in a lateral subquery,
// once per row. A document larger than about 2 KB is stored compressed
// and out of line (TOAST), and every operator applied to the column
// fetches and decompresses all of it again; the subquery y does that once
// (jsonb || '{}' returns its left operand as it was read), and x looks
// each attribute up once in the result. OFFSET 0 keeps the planner from
// pulling the subqueries up, which would copy the expressions back into
// every condition.
func (postgresExprs) rows(s *SQL, table string, names []string, filter, _ func()) {
	s.Write(table)
	if len(names) > 0 {
		s.Write(" CROSS JOIN LATERAL (SELECT ")
		for i, name := range names {
			if i > 0 {
				s.Write(", ")
			}
			s.Write("y.d -> ", s.Arg(name), "::text AS a", strconv.Itoa(i))
		}
		s.Write(" FROM (SELECT ", table, ".doc || '{}'::jsonb AS d OFFSET 0) AS y OFFSET 0) AS x")
	}
	s.Write(" WHERE ")
	filter()
	s.Write(" AND ")
}

// declared casts only values of the right JSON type: another resource in
// the same table may hold a string under the same name, and PostgreSQL
// does not promise to test the resource before the cast.
func (postgresExprs) declared(r ref, t Type) string {
	switch t {
	case Integer, Number:
		return "(CASE WHEN jsonb_typeof(" + r.a + ") = 'number' THEN " + r.b + "::numeric END)"
	case Boolean:
		return "(CASE WHEN jsonb_typeof(" + r.a + ") = 'boolean' THEN " + r.b + "::boolean END)"
	}
	return "(" + r.b + ` COLLATE "C")`
}

func (postgresExprs) param(s *SQL, v Value) string {
	switch v.Kind {
	case KindNumber:
		if v.IsInt {
			return s.Arg(v.Int) + "::bigint"
		}
		return s.Arg(v.Num) + "::float8"
	case KindBool:
		return s.Arg(v.Bool) + "::boolean"
	case KindString:
		return s.Arg(v.Str) + "::text"
	}
	return "NULL"
}

// in binds several values as one array: = ANY compares with the same
// operator as = does with each of them.
func (e postgresExprs) in(s *SQL, x string, vs []Value) string {
	if len(vs) == 1 {
		return "(" + x + " = " + e.param(s, vs[0]) + ")"
	}
	var arr string
	switch v := vs[0]; {
	case v.Kind == KindNumber && v.IsInt:
		arr = s.Arg(collect(vs, func(v Value) int64 { return v.Int })) + "::bigint[]"
	case v.Kind == KindNumber:
		arr = s.Arg(collect(vs, func(v Value) float64 { return v.Num })) + "::float8[]"
	case v.Kind == KindBool:
		arr = s.Arg(collect(vs, func(v Value) bool { return v.Bool })) + "::boolean[]"
	default:
		arr = s.Arg(collect(vs, func(v Value) string { return v.Str })) + "::text[]"
	}
	return "(" + x + " = ANY(" + arr + "))"
}

func collect[T any](vs []Value, f func(Value) T) []T {
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = f(v)
	}
	return out
}

func (postgresExprs) isNull(r ref) string {
	return "(" + r.a + " IS NULL OR jsonb_typeof(" + r.a + ") = 'null')"
}

func (postgresExprs) isType(r ref, k Kind) string {
	switch k {
	case KindString:
		return "(jsonb_typeof(" + r.a + ") = 'string')"
	case KindNumber:
		return "(jsonb_typeof(" + r.a + ") = 'number')"
	}
	return "(jsonb_typeof(" + r.a + ") = 'boolean')"
}

func (postgresExprs) text(r ref) string { return "(" + r.b + ` COLLATE "C")` }

// num guards the cast with CASE: PostgreSQL does not promise to evaluate
// AND terms in order.
func (postgresExprs) num(r ref) string {
	return "(CASE WHEN jsonb_typeof(" + r.a + ") = 'number' THEN " + r.b + "::numeric END)"
}

func (postgresExprs) isBool(r ref, b bool) string {
	if b {
		return "(" + r.a + " = 'true'::jsonb)"
	}
	return "(" + r.a + " = 'false'::jsonb)"
}

func (postgresExprs) textOf(x string, t Type) string {
	switch t {
	case String, Date, Timestamp, Enum:
		return x
	}
	return "((" + x + `)::text COLLATE "C")`
}

func (postgresExprs) startsWith(x, v string) string {
	return "(left(" + x + ", length(" + v + ")) = " + v + ")"
}

func (postgresExprs) endsWith(x, v string) string {
	return "(right(" + x + ", length(" + v + ")) = " + v + ")"
}

func (postgresExprs) contains(x, v string) string { return "(strpos(" + x + ", " + v + ") > 0)" }

func (postgresExprs) sortBool(r ref) string {
	return "(CASE WHEN " + r.a + " = 'false'::jsonb THEN 0 WHEN " + r.a + " = 'true'::jsonb THEN 1 END)"
}

func (sqliteExprs) keyColumn(t term) string { return t.expr }

// A numeric is read as its exact text.
func (postgresExprs) keyColumn(t term) string {
	if t.kind == termNum {
		return "(" + t.expr + ")::text"
	}
	return t.expr
}

// PostgreSQL is told each value's type; a number binds as its exact text.
func (postgresExprs) key(s *SQL, k termKind, v any) string {
	if n, ok := v.(json.Number); ok {
		v = string(n)
	}
	switch k {
	case termInt:
		return s.Arg(v) + "::bigint"
	case termNum:
		return s.Arg(v) + "::numeric"
	case termBool:
		return s.Arg(v) + "::boolean"
	}
	return s.Arg(v) + "::text"
}

func (postgresExprs) nulls(d Direction) string {
	if d == Desc {
		return " NULLS LAST"
	}
	return " NULLS FIRST"
}
