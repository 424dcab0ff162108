package query

import "slices"

// Select is a statement that reads records:
//
//	SELECT Columns FROM Table WHERE Scope AND Where ORDER BY Sort LIMIT Limit OFFSET Skip
//
// Columns and Table are Planwerk's own text; Scope writes the condition
// that confines the statement to one tenant's records.
type Select struct {
	Columns string
	Table   string
	Scope   func(s *SQL)
	Where   Node // nil: every record of the scope
	Sort    []SortKey
	Limit   int64
	Skip    int64
	// After are a cursor's keys (see Cursor): only the rows after them in
	// the order are read (nil: from the first).
	After []any
	// Keys adds the order's terms as columns after Columns, one each: the
	// keys of a cursor after that row.
	Keys bool
}

// Terms is the number of key columns a Select of keys adds.
func Terms(keys []SortKey) int { return len(shapes(keys)) }

// Select writes sel. Each attribute of the document that the criteria and
// the sort keys read is taken out of it once per row, however many
// conditions and keys use it; conditions that an index may serve read the
// document with the index's expressions instead.
func (c compiler) Select(s *SQL, sel Select) {
	p := newPlan(simplify(sel.Where), sel.Sort)
	hoisted := compiler{e: c.e, p: p}
	ts := hoisted.terms(s, sel.Sort)
	s.Write("SELECT ", sel.Columns)
	if sel.Keys {
		for _, t := range ts {
			s.Write(", ", c.e.keyColumn(t))
		}
	}
	s.Write(" FROM ")
	// A cursor on the table's columns and declared attributes is a
	// condition next to the scope, where an index may serve it; one on
	// open attributes compares their extraction.
	inner := sel.After != nil && !slices.ContainsFunc(sel.Sort, func(k SortKey) bool { return k.Field.open() })
	filter := c.filter(s, sel.Scope, p.direct, func() {
		if inner {
			s.Write(" AND ")
			c.after(s, c.terms(s, sel.Sort), sel.After)
		}
	})
	c.e.rows(s, sel.Table, p.names, filter, c.columnOrder(s, sel.Sort))
	hoisted.node(s, p.rest)
	if sel.After != nil && !inner {
		s.Write(" AND ")
		hoisted.after(s, ts, sel.After)
	}
	s.Write(" ORDER BY ")
	hoisted.orderBy(s, ts)
	s.Write(" LIMIT ", s.Arg(sel.Limit), " OFFSET ", s.Arg(sel.Skip))
}

// filter writes the scope and the conditions left to the table's columns
// and indexes, which read the document itself, then more.
func (c compiler) filter(s *SQL, scope func(*SQL), direct []*Cond, more func()) func() {
	return func() {
		scope(s)
		for _, d := range direct {
			s.Write(" AND ")
			c.node(s, d)
		}
		more()
	}
}

// columnOrder writes the ORDER BY clause of keys that all name table
// columns (nil for other keys), for an engine that orders the rows where
// it reads them.
func (c compiler) columnOrder(s *SQL, keys []SortKey) func() {
	if slices.ContainsFunc(keys, func(k SortKey) bool { return k.Field.Column == "" }) {
		return nil
	}
	return func() {
		s.Write(" ORDER BY ")
		c.OrderBy(s, keys)
	}
}

// maxDirect bounds the conditions that read a declared attribute from the
// document (for its index) rather than from the row's extraction: each of
// them costs a read of the whole document per row.
const maxDirect = 4

// plan is how one statement reads the documents.
type plan struct {
	// direct are top-level conditions left to the table's own columns and
	// to the expressions of the indexes, written next to the scope.
	direct []*Cond
	// rest is the remaining criteria (nil: none).
	rest Node
	// names are the attributes taken out of each row's document once, in
	// the order of their slots.
	names []string
	slots map[string]int
}

func newPlan(where Node, keys []SortKey) *plan {
	p := &plan{slots: map[string]int{}}
	p.rest = p.split(where)
	p.collect(p.rest)
	for _, k := range keys {
		if k.Field.open() {
			p.add(k.Field.Name)
		}
	}
	return p
}

// slot returns the extraction slot of an attribute; a nil plan has none.
func (p *plan) slot(name string) (int, bool) {
	if p == nil {
		return 0, false
	}
	i, ok := p.slots[name]
	return i, ok
}

func (p *plan) add(name string) {
	if _, ok := p.slots[name]; !ok {
		p.slots[name] = len(p.names)
		p.names = append(p.names, name)
	}
}

// split moves the top-level conditions an index may serve out of n and
// returns what remains (nil: nothing).
func (p *plan) split(n Node) Node {
	switch n := n.(type) {
	case *And:
		rest := &And{}
		for _, t := range n.Terms {
			if r := p.split(t); r != nil {
				rest.Terms = append(rest.Terms, r)
			}
		}
		return rest
	case *Cond:
		if p.indexable(n) {
			p.direct = append(p.direct, n)
			return nil
		}
	}
	return n
}

// indexable: conditions on the table's columns cost nothing to evaluate
// wherever they are; equalities and ranges on declared attributes may
// match an expression index, up to maxDirect of them.
func (p *plan) indexable(c *Cond) bool {
	if c.Field.Column != "" {
		return true
	}
	if c.Field.open() || !slices.Contains([]Op{Eq, In, Lt, Le, Gt, Ge}, c.Op) {
		return false
	}
	docs := 0
	for _, d := range p.direct {
		if d.Field.Column == "" {
			docs++
		}
	}
	return docs < maxDirect
}

// collect gives a slot to every document attribute that n reads.
func (p *plan) collect(n Node) {
	switch n := n.(type) {
	case *And:
		for _, t := range n.Terms {
			p.collect(t)
		}
	case *Or:
		for _, t := range n.Terms {
			p.collect(t)
		}
	case *Cond:
		if n.Field.Column == "" {
			p.add(n.Field.Name)
		}
	}
}

// open reports whether f is compiled as an open attribute: read from the
// document, whatever JSON type it holds.
func (f Field) open() bool {
	return f.Column == "" && (f.Type == 0 || f.Type == Any)
}

// simplify rewrites criteria into an equivalent tree that is cheaper to
// evaluate: the equalities and in-lists of one attribute within an or
// become one in-list, which compiles to one membership test per JSON kind
// instead of a chain of comparisons; groups and in-lists that are true or
// false whatever the record holds are folded away. The tree it returns
// shares the conditions it keeps unchanged.
func simplify(n Node) Node {
	switch n := n.(type) {
	case *And:
		terms := make([]Node, 0, len(n.Terms))
		for _, t := range n.Terms {
			switch t = simplify(t); {
			case isFalse(t):
				return t
			case !isTrue(t):
				terms = append(terms, t)
			}
		}
		return single(&And{Terms: terms})
	case *Or:
		terms := make([]Node, 0, len(n.Terms))
		merged := map[string]*Cond{}
		for _, t := range n.Terms {
			t = simplify(t)
			c, ok := t.(*Cond)
			switch {
			case isTrue(t):
				return t
			case isFalse(t):
			case !ok || (c.Op != Eq && c.Op != In):
				terms = append(terms, t)
			case merged[c.Field.Name] != nil:
				m := merged[c.Field.Name]
				m.Values = append(m.Values, c.Values...)
			default:
				m := &Cond{Field: c.Field, Op: In, Values: slices.Clone(c.Values)}
				merged[c.Field.Name] = m
				terms = append(terms, m)
			}
		}
		return single(&Or{Terms: terms})
	case *Cond:
		// in: [] matches nothing and nin: [] everything.
		if n.Op == In && len(n.Values) == 0 {
			return &Or{}
		}
		if n.Op == Nin && len(n.Values) == 0 {
			return &And{}
		}
	}
	return n
}

// single returns the one term of a group, or the group.
func single(n Node) Node {
	switch g := n.(type) {
	case *And:
		if len(g.Terms) == 1 {
			return g.Terms[0]
		}
	case *Or:
		if len(g.Terms) == 1 {
			return g.Terms[0]
		}
	}
	return n
}

// isTrue reports a group that matches every record: and of nothing.
func isTrue(n Node) bool {
	a, ok := n.(*And)
	return ok && len(a.Terms) == 0
}

// isFalse reports a group that matches no record: or of nothing.
func isFalse(n Node) bool {
	o, ok := n.(*Or)
	return ok && len(o.Terms) == 0
}
