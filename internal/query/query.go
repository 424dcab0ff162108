// Package query is the list query language of the API: per-attribute
// filters, Waterline-style "where" criteria, sort, limit, skip and
// populate. It parses a request's query string against a schema of known
// attributes and compiles the criteria into one parameterised SQL
// condition for SQLite or PostgreSQL. Client text never becomes SQL: it
// is matched against the schema or bound as a parameter.
package query

import (
	"fmt"
	"net/url"
)

// Type is the type of a declared attribute.
type Type int

// Attribute types.
const (
	String    Type = iota + 1
	Integer        // whole numbers, references included
	Number         // any JSON number
	Boolean        // true or false
	Date           // "YYYY-MM-DD"
	Timestamp      // "YYYY-MM-DDTHH:mm:ss.sssZ"
	Enum           // one of a fixed set of strings
	Any            // declared, but any JSON value
)

func (t Type) String() string {
	switch t {
	case String:
		return "a string"
	case Integer:
		return "an integer"
	case Number:
		return "a number"
	case Boolean:
		return "true or false"
	case Date:
		return "a date YYYY-MM-DD"
	case Timestamp:
		return "an RFC 3339 date-time (stored as YYYY-MM-DDTHH:mm:ss.sssZ)"
	case Enum:
		return "one of the listed values"
	default:
		return "a JSON value"
	}
}

// Field is a declared attribute as the query language sees it.
type Field struct {
	Name   string
	Type   Type
	Enum   []string // for Enum
	Column string   // a table column holding the value; empty: the document's attribute
	Ref    bool     // names another record; populate may expand it
}

// Schema describes the attributes of one resource.
type Schema struct {
	Fields map[string]Field
	// DeclaredOnly refuses criteria on attributes not in Fields.
	DeclaredOnly bool
	// NoContains refuses the contains modifier.
	NoContains bool
	// Params are extra query parameters of the resource that are not
	// attribute filters (for example includeSkills).
	Params map[string]bool
}

// Limits of the language.
const (
	DefaultLimit = 10000
	MaxLimit     = 50000
	MaxDepth     = 32
	MaxWhereLen  = 64 << 10 // bytes of the where parameter
	MaxValues    = 2000     // values in all criteria of one request
	MaxSortKeys  = 8
	// MaxConditions bounds the comparisons in the criteria of one request:
	// each is evaluated on every record the scope holds. The equalities and
	// in-lists of one attribute within an or count as one, since they
	// compile to one membership test.
	MaxConditions = 128
	// MaxAttributes bounds the distinct undeclared attributes that the
	// criteria of one request read: each is taken out of every record's
	// document.
	MaxAttributes = 32
)

// Op is a comparison.
type Op string

// Comparisons; In and Nin are expanded into Eq and Ne terms.
const (
	Eq         Op = "="
	Ne         Op = "!="
	Lt         Op = "<"
	Le         Op = "<="
	Gt         Op = ">"
	Ge         Op = ">="
	In         Op = "in"
	Nin        Op = "nin"
	StartsWith Op = "startsWith"
	EndsWith   Op = "endsWith"
	Contains   Op = "contains"
)

// Node is a criteria tree node: *And, *Or or *Cond.
type Node interface{ node() }

// And matches when every term matches; no terms match everything.
type And struct{ Terms []Node }

// Or matches when any term matches; no terms match nothing.
type Or struct{ Terms []Node }

// Cond compares one attribute.
type Cond struct {
	Field  Field // Name always set; Type zero for an open attribute
	Op     Op
	Values []Value // one, except for In and Nin
}

func (*And) node()  {}
func (*Or) node()   {}
func (*Cond) node() {}

// Kind is the JSON kind of a Value.
type Kind int

// Value kinds.
const (
	KindNull Kind = iota
	KindString
	KindNumber
	KindBool
)

// Value is a criteria value.
type Value struct {
	Kind Kind
	Str  string  // KindString
	Num  float64 // KindNumber
	Int  int64   // KindNumber, when IsInt
	// IsInt: the number is whole and fits int64; it is bound as an integer
	// so that large identifiers compare exactly.
	IsInt bool
	Bool  bool // KindBool
	// Loose: a value from a plain query parameter on an open attribute. It
	// matches the stored string, or the number or boolean it spells.
	Loose bool
}

func (v Value) String() string {
	switch v.Kind {
	case KindString:
		return fmt.Sprintf("%q", v.Str)
	case KindNumber:
		if v.IsInt {
			return fmt.Sprint(v.Int)
		}
		return fmt.Sprint(v.Num)
	case KindBool:
		return fmt.Sprint(v.Bool)
	}
	return "null"
}

// Direction of a sort key.
type Direction int

// Sort directions.
const (
	Asc Direction = iota
	Desc
)

// SortKey orders by one attribute.
type SortKey struct {
	Field Field
	Dir   Direction
}

// Query is a parsed list request.
type Query struct {
	Where Node // nil: everything
	Sort  []SortKey
	Limit int
	Skip  int
	// After are the keys of a cursor (the after parameter): the list goes
	// on after that row, in the query's order (nil: from the first).
	After    []any
	Populate []string // reference attributes to expand
	// Params is the query string the query was parsed from, for rules that
	// look at resource-specific parameters (includeSkills).
	Params url.Values
}

// Error is a problem with the query, answered with 400.
type Error struct {
	Param   string // the query parameter at fault
	Message string
}

func (e *Error) Error() string { return e.Param + ": " + e.Message }

func errorf(param, format string, args ...any) *Error {
	return &Error{Param: param, Message: fmt.Sprintf(format, args...)}
}
