package query

import (
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
	// Where writes a boolean SQL expression for n (nil: true).
	Where(s *SQL, n Node)
	// OrderBy writes the ORDER BY list for keys; id always breaks ties.
	OrderBy(s *SQL, keys []SortKey)
}

// For returns the dialect of an engine: "sqlite" or "postgres".
func For(engine string) Dialect {
	if engine == "postgres" {
		return compiler{postgresExprs{}}
	}
	return compiler{sqliteExprs{}}
}

// exprs is what differs between the engines.
type exprs interface {
	// declared is the typed expression of a declared field.
	declared(f Field) string
	// param binds a value with the type the engine needs to see.
	param(s *SQL, v Value) string
	// open-attribute expressions for the JSON path/key placeholder p.
	isNull(p string) string
	isType(p string, k Kind) string // the attribute holds a JSON value of kind k
	text(p string) string           // the attribute's string value
	num(p string) string            // the attribute's numeric value, NULL unless a number
	isBool(p string, b bool) string
	openPath(s *SQL, name string) string
	// textOf is the text form of a declared expression.
	textOf(expr string, t Type) string
	startsWith(x, v string) string
	endsWith(x, v string) string
	contains(x, v string) string
	sortBool(p string) string
	nulls(d Direction) string
}

type compiler struct{ e exprs }

func (c compiler) Where(s *SQL, n Node) {
	if n == nil {
		s.Write("(1=1)")
		return
	}
	c.node(s, n)
}

func (c compiler) node(s *SQL, n Node) {
	switch n := n.(type) {
	case *And:
		c.group(s, n.Terms, " AND ", "(1=1)")
	case *Or:
		c.group(s, n.Terms, " OR ", "(1=0)")
	case *Cond:
		if n.Field.Column != "" || (n.Field.Type != 0 && n.Field.Type != Any) {
			c.declaredCond(s, n)
		} else {
			c.openCond(s, n)
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

func (c compiler) expr(f Field) string {
	if f.Column != "" {
		return f.Column
	}
	return c.e.declared(f)
}

// declaredCond compares a typed column or document attribute.
func (c compiler) declaredCond(s *SQL, n *Cond) {
	x := c.expr(n.Field)
	switch n.Op {
	case Eq:
		c.declaredEq(s, x, n.Field, n.Values[0])
	case Ne:
		s.Write("NOT COALESCE(")
		c.declaredEq(s, x, n.Field, n.Values[0])
		s.Write(", FALSE)")
	case In, Nin:
		if n.Op == Nin {
			s.Write("NOT COALESCE(")
		}
		if len(n.Values) == 0 {
			s.Write("(1=0)")
		} else {
			balanced(s, len(n.Values), " OR ", func(i int) { c.declaredEq(s, x, n.Field, n.Values[i]) })
		}
		if n.Op == Nin {
			s.Write(", FALSE)")
		}
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

func (c compiler) declaredEq(s *SQL, x string, f Field, v Value) {
	switch {
	case v.Kind == KindNull:
		s.Write("(", x, " IS NULL)")
	case f.Type == Timestamp && isDay(v.Str):
		// A day matches the whole UTC day.
		day, _ := time.Parse(time.DateOnly, v.Str)
		next := day.AddDate(0, 0, 1).Format(time.DateOnly)
		s.Write("(", x, " >= ", c.e.param(s, Value{Kind: KindString, Str: v.Str}),
			" AND ", x, " < ", c.e.param(s, Value{Kind: KindString, Str: next}), ")")
	default:
		s.Write("(", x, " = ", c.e.param(s, v), ")")
	}
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
	p := c.e.openPath(s, n.Field.Name)
	switch n.Op {
	case Eq:
		c.openEq(s, p, n.Values[0])
	case Ne:
		s.Write("NOT COALESCE(")
		c.openEq(s, p, n.Values[0])
		s.Write(", FALSE)")
	case In, Nin:
		if n.Op == Nin {
			s.Write("NOT COALESCE(")
		}
		balanced(s, len(n.Values), " OR ", func(i int) { c.openEq(s, p, n.Values[i]) })
		if n.Op == Nin {
			s.Write(", FALSE)")
		}
	case Lt, Le, Gt, Ge:
		v := n.Values[0]
		if v.Kind == KindNumber {
			s.Write("(", c.e.num(p), " ", string(n.Op), " ", c.e.param(s, v), ")")
		} else {
			s.Write("(", c.e.isType(p, KindString), " AND ", c.e.text(p), " ", string(n.Op), " ", c.e.param(s, v), ")")
		}
	case StartsWith, EndsWith, Contains:
		s.Write("(", c.e.isType(p, KindString), " AND ")
		c.textOp(s, n.Op, c.e.text(p), n.Values[0])
		s.Write(")")
	}
}

func (c compiler) openEq(s *SQL, p string, v Value) {
	switch v.Kind {
	case KindNull:
		s.Write(c.e.isNull(p))
	case KindBool:
		s.Write(c.e.isBool(p, v.Bool))
	case KindNumber:
		s.Write("(", c.e.num(p), " = ", c.e.param(s, v), ")")
	case KindString:
		if !v.Loose {
			s.Write("(", c.e.isType(p, KindString), " AND ", c.e.text(p), " = ", c.e.param(s, v), ")")
			return
		}
		// A plain query parameter: the stored string, or the number or
		// boolean it spells.
		s.Write("((", c.e.isType(p, KindString), " AND ", c.e.text(p), " = ", c.e.param(s, Value{Kind: KindString, Str: v.Str}), ")")
		if num, err := number(Field{}, v.Str); err == nil {
			s.Write(" OR (", c.e.num(p), " = ", c.e.param(s, num), ")")
		}
		if v.Str == "true" || v.Str == "false" {
			s.Write(" OR ", c.e.isBool(p, v.Str == "true"))
		}
		s.Write(")")
	}
}

// sortRank orders open attributes by kind: missing or null, numbers,
// strings, booleans, others.
func (c compiler) sortRank(p string) string {
	return "(CASE WHEN " + c.e.isNull(p) + " THEN 0 WHEN " + c.e.isType(p, KindNumber) + " THEN 1 WHEN " +
		c.e.isType(p, KindString) + " THEN 2 WHEN " + c.e.isType(p, KindBool) + " THEN 3 ELSE 4 END)"
}

func (c compiler) OrderBy(s *SQL, keys []SortKey) {
	hasID := false
	for i, k := range keys {
		if i > 0 {
			s.Write(", ")
		}
		dir := " ASC"
		if k.Dir == Desc {
			dir = " DESC"
		}
		if k.Field.Column != "" || (k.Field.Type != 0 && k.Field.Type != Any) {
			if k.Field.Column == "id" {
				hasID = true
			}
			s.Write(c.expr(k.Field), dir, c.e.nulls(k.Dir))
			continue
		}
		// Open attributes sort by kind (missing/null, numbers, strings,
		// booleans, others), then by value within the kind.
		p := c.e.openPath(s, k.Field.Name)
		s.Write(c.sortRank(p), dir, ", ",
			c.e.num(p), dir, c.e.nulls(k.Dir), ", ",
			"CASE WHEN ", c.e.isType(p, KindString), " THEN ", c.e.text(p), " END", dir, c.e.nulls(k.Dir), ", ",
			c.e.sortBool(p), dir, c.e.nulls(k.Dir))
	}
	if !hasID {
		if len(keys) > 0 {
			s.Write(", ")
		}
		s.Write("id ASC")
	}
}

// sqliteExprs reads documents with SQLite's JSON functions.
type sqliteExprs struct{}

func (sqliteExprs) declared(f Field) string {
	return "json_extract(doc, '$." + f.Name + "')"
}

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

func (sqliteExprs) openPath(s *SQL, name string) string {
	return s.Arg(`$."` + name + `"`)
}

func (sqliteExprs) isNull(p string) string {
	return "(json_type(doc, " + p + ") IS NULL OR json_type(doc, " + p + ") = 'null')"
}

func (sqliteExprs) isType(p string, k Kind) string {
	switch k {
	case KindString:
		return "(json_type(doc, " + p + ") = 'text')"
	case KindNumber:
		return "(json_type(doc, " + p + ") IN ('integer', 'real'))"
	}
	return "(json_type(doc, " + p + ") IN ('true', 'false'))"
}

func (sqliteExprs) text(p string) string { return "json_extract(doc, " + p + ")" }

func (e sqliteExprs) num(p string) string {
	return "(CASE WHEN " + e.isType(p, KindNumber) + " THEN json_extract(doc, " + p + ") END)"
}

func (sqliteExprs) isBool(p string, b bool) string {
	if b {
		return "(json_type(doc, " + p + ") = 'true')"
	}
	return "(json_type(doc, " + p + ") = 'false')"
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

func (sqliteExprs) sortBool(p string) string {
	return "(CASE json_type(doc, " + p + ") WHEN 'false' THEN 0 WHEN 'true' THEN 1 END)"
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

// declared casts only values of the right JSON type: another resource in
// the same table may hold a string under the same name, and PostgreSQL
// does not promise to test the resource before the cast.
func (postgresExprs) declared(f Field) string {
	a := "(doc ->> '" + f.Name + "')"
	typeIs := func(t string) string { return "jsonb_typeof(doc -> '" + f.Name + "') = '" + t + "'" }
	switch f.Type {
	case Integer, Number:
		return "(CASE WHEN " + typeIs("number") + " THEN " + a + "::numeric END)"
	case Boolean:
		return "(CASE WHEN " + typeIs("boolean") + " THEN " + a + "::boolean END)"
	}
	return "(" + a + ` COLLATE "C")`
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

func (postgresExprs) openPath(s *SQL, name string) string { return s.Arg(name) + "::text" }

func (postgresExprs) isNull(p string) string {
	return "(doc -> " + p + " IS NULL OR jsonb_typeof(doc -> " + p + ") = 'null')"
}

func (postgresExprs) isType(p string, k Kind) string {
	switch k {
	case KindString:
		return "(jsonb_typeof(doc -> " + p + ") = 'string')"
	case KindNumber:
		return "(jsonb_typeof(doc -> " + p + ") = 'number')"
	}
	return "(jsonb_typeof(doc -> " + p + ") = 'boolean')"
}

func (postgresExprs) text(p string) string { return "((doc ->> " + p + `) COLLATE "C")` }

// num guards the cast with CASE: PostgreSQL does not promise to evaluate
// AND terms in order.
func (postgresExprs) num(p string) string {
	return "(CASE WHEN jsonb_typeof(doc -> " + p + ") = 'number' THEN (doc ->> " + p + ")::numeric END)"
}

func (postgresExprs) isBool(p string, b bool) string {
	if b {
		return "(doc -> " + p + " = 'true'::jsonb)"
	}
	return "(doc -> " + p + " = 'false'::jsonb)"
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

func (postgresExprs) sortBool(p string) string {
	return "(CASE WHEN doc -> " + p + " = 'false'::jsonb THEN 0 WHEN doc -> " + p + " = 'true'::jsonb THEN 1 END)"
}

func (postgresExprs) nulls(d Direction) string {
	if d == Desc {
		return " NULLS LAST"
	}
	return " NULLS FIRST"
}
