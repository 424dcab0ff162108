package timetrack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"planwerk/internal/auth"
	"planwerk/internal/errs"
	"planwerk/internal/jsontext"
	"planwerk/internal/query"
	"planwerk/internal/records"
	"planwerk/internal/store"
	"planwerk/internal/tally"
)

// MaxReportGroups bounds the groups of the deepest level a report holds
// (and so its memory): a report that would hold more is refused, naming
// groupBy.
const MaxReportGroups = 100_000

// maxReportLevels is how many groupings a report nests.
const maxReportLevels = 3

// The periods a report groups by, each read from the entry's day.
var periods = []string{"day", "week", "month", "year"}

// ReportRequest is what GET /v1/reports/time asks, as sent.
type ReportRequest struct {
	From, To string
	// Where is the where parameter (the list language of time entries);
	// HasWhere says whether it was given at all.
	Where    string
	HasWhere bool
	GroupBy  string
	// Rounding is the rounding parameter; HasRounding says whether it
	// was given.
	Rounding    string
	HasRounding bool
	// Only is what the caller's list of time entries shows at most (nil:
	// every entry).
	Only query.Node
}

// Report is the answer of GET /v1/reports/time.
type Report struct {
	From     string         `json:"from"`
	To       string         `json:"to"`
	GroupBy  []string       `json:"groupBy"`
	Rounding *string        `json:"rounding"`
	Groups   []*ReportGroup `json:"groups"`
	Totals   ReportTotals   `json:"totals"`
}

// ReportTotals are the sums of all the report's entries.
type ReportTotals struct {
	Seconds Seconds `json:"seconds"`
	Entries int64   `json:"entries"`
}

// Seconds are the seconds of each trackingType, in the order of
// tally.Types.
type Seconds [3]int64

// MarshalJSON writes every trackingType, 0 when it has none.
func (s Seconds) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, `{"WORK":%d,"WORKTIME":%d,"BREAK":%d}`, s[0], s[1], s[2]), nil
}

// ReportGroup is one group of a level: its key, sums, and the groups of
// the next level (none at the deepest).
type ReportGroup struct {
	Level   string
	Key     any // int64, float64, string, bool, a JSON object or array, or nil
	Seconds Seconds
	Entries int64
	Groups  []*ReportGroup
}

// MarshalJSON writes {"key": {level: key}, "seconds", "entries",
// "groups"}; the deepest level's groups have no "groups".
func (g *ReportGroup) MarshalJSON() ([]byte, error) {
	return jsontext.Marshal(struct {
		Key     map[string]any `json:"key"`
		Seconds Seconds        `json:"seconds"`
		Entries int64          `json:"entries"`
		Groups  []*ReportGroup `json:"groups,omitempty"`
	}{map[string]any{g.Level: g.Key}, g.Seconds, g.Entries, g.Groups})
}

// level is a parsed grouping.
type level struct {
	name string
	// json: the keys are the JSON text of an attribute; else the text of
	// a period or a timestamp column.
	json bool
	db   store.ReportLevel
}

// reportPlan is a checked report request.
type reportPlan struct {
	from, to string
	levels   []level
	where    query.Node // the client's criteria; nil: none
	hasWhere bool
	only     query.Node
	round    string
	step     int64
	rounding *string
}

// TimeReport sums the time entries the caller's list of time entries
// shows in the days from … to, grouped and rounded as req asks.
func (s *Service) TimeReport(ctx context.Context, caller auth.Principal, req ReportRequest) (*Report, error) {
	p, err := s.planReport(req)
	if err != nil {
		return nil, err
	}
	return s.runReport(ctx, caller, p)
}

// planReport checks every parameter of a report, naming each at fault.
func (s *Service) planReport(req ReportRequest) (reportPlan, error) {
	p := reportPlan{from: req.From, to: req.To, hasWhere: req.HasWhere, only: req.Only}
	problems := checkRange(req.From, req.To)
	var err error
	if p.levels, err = s.parseGroupBy(req.GroupBy); err != nil {
		problems = append(problems, errs.Problem{Field: "groupBy", Message: err.Error()})
	}
	if req.HasRounding {
		mode, n, ok := strings.Cut(req.Rounding, ":")
		minutes, nerr := strconv.Atoi(n)
		if !ok || (mode != "up" && mode != "down" && mode != "nearest") || nerr != nil ||
			minutes < 1 || minutes > 60 || strconv.Itoa(minutes) != n {
			problems = append(problems, errs.Problem{Field: "rounding",
				Message: "must be up:N, down:N or nearest:N, N a whole number of minutes from 1 to 60"})
		} else {
			p.round, p.step = mode, int64(minutes)*60
			r := req.Rounding
			p.rounding = &r
		}
	}
	if req.HasWhere {
		q, err := query.Parse(url.Values{"where": {req.Where}}, s.entries.Schema())
		var qe *query.Error
		switch {
		case errors.As(err, &qe):
			problems = append(problems, errs.Problem{Field: "where", Message: strings.TrimPrefix(qe.Message, "where ")})
		case err != nil:
			return p, err
		default:
			p.where = q.Where
		}
	}
	if len(problems) > 0 {
		return p, errs.Fields(problems...)
	}
	return p, nil
}

// checkRange names the problems of a report's days.
func checkRange(from, to string) []errs.Problem {
	var problems []errs.Problem
	fromDay, err1 := time.Parse(time.DateOnly, from)
	toDay, err2 := time.Parse(time.DateOnly, to)
	if err1 != nil || len(from) != 10 {
		problems = append(problems, errs.Problem{Field: "from", Message: "must be a date YYYY-MM-DD"})
	}
	if err2 != nil || len(to) != 10 {
		problems = append(problems, errs.Problem{Field: "to", Message: "must be a date YYYY-MM-DD"})
	}
	if err1 == nil && err2 == nil && toDay.Before(fromDay) {
		problems = append(problems, errs.Problem{Field: "to", Message: "must not be before from"})
	}
	if err1 == nil && err2 == nil && toDay.Sub(fromDay) > maxTotalsDays*24*time.Hour {
		problems = append(problems, errs.Problem{Field: "to", Message: "the range may span at most five years"})
	}
	return problems
}

// parseGroupBy reads 0 to 3 comma-separated groupings.
func (s *Service) parseGroupBy(raw string) ([]level, error) {
	if raw == "" {
		return nil, nil
	}
	names := strings.Split(raw, ",")
	if len(names) > maxReportLevels {
		return nil, fmt.Errorf("names at most %d groupings, not %d", maxReportLevels, len(names))
	}
	var out []level
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			return nil, fmt.Errorf("names %q twice", name)
		}
		l := level{name: name, json: true, db: store.ReportLevel{Attr: name}}
		switch f, declared := s.entries.Schema().Fields[name]; {
		case slices.Contains(periods, name):
			l = level{name: name, db: store.ReportLevel{Bucket: name}}
		case declared && f.Column != "":
			l = level{name: name, json: f.Type != query.Timestamp, db: store.ReportLevel{Column: f.Column}}
		case !declared && !validAttrName(name):
			return nil, fmt.Errorf("grouping %q must be user, project, task, trackingType, validationStatus, day, week, month, year "+
				"or the name of another attribute (1 to 128 bytes of text without quotes, backslashes or control characters)", name)
		}
		out = append(out, l)
	}
	return out, nil
}

// validAttrName accepts the attribute names a client can store: as the
// list language does.
func validAttrName(s string) bool {
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

// row is one sum of a group (its keys per level, and their identities)
// and trackingType.
type row struct {
	keys    []any
	ids     []string
	typ     int
	seconds int64
	entries int64
}

// runReport reads the sums and nests them.
func (s *Service) runReport(ctx context.Context, caller auth.Principal, p reportPlan) (*Report, error) {
	b := newTree(p.levels)
	var err error
	if p.rolledUp() {
		err = s.db.Scan(ctx, func(q store.Querier) error { return s.rollupReport(ctx, q, caller.TenantID, p, b) })
	} else {
		err = s.db.Scan(ctx, func(q store.Querier) error { return s.sumReport(ctx, q, caller.TenantID, p, b) })
	}
	if err != nil {
		return nil, err
	}
	rep := &Report{From: p.from, To: p.to, GroupBy: make([]string, len(p.levels)), Rounding: p.rounding}
	for i, l := range p.levels {
		rep.GroupBy[i] = l.name
	}
	rep.Groups, rep.Totals = b.finish()
	return rep, nil
}

// rolledUp says whether the totals kept by the writes (internal/tally)
// answer the report: the caller sees every entry, no criteria and no
// rounding, and the levels are at most one of user and project, one
// period and trackingType.
func (p reportPlan) rolledUp() bool {
	if p.hasWhere || p.only != nil || p.step != 0 {
		return false
	}
	var dims, buckets int
	for _, l := range p.levels {
		switch {
		case l.name == "user" || l.name == "project":
			dims++
		case l.db.Bucket != "":
			buckets++
		case l.name != "trackingType":
			return false
		}
	}
	return dims <= 1 && buckets <= 1
}

// rollupReport reads the report from the totals.
func (s *Service) rollupReport(ctx context.Context, q store.Querier, tenantID int64, p reportPlan, b *tree) error {
	var dim, period string
	for _, l := range p.levels {
		switch {
		case l.name == "user" || l.name == "project":
			dim = l.name
		case l.db.Bucket == "week":
			period = "day"
		case l.db.Bucket != "":
			period = l.db.Bucket
		}
	}
	rows, err := tally.Rollup(ctx, q, tenantID, p.from, p.to, dim, period)
	if err != nil {
		return err
	}
	for _, r := range rows {
		typ := slices.Index(tally.Types, r.Type)
		if typ < 0 || r.Entries == 0 {
			continue
		}
		out := row{keys: make([]any, len(p.levels)), ids: make([]string, len(p.levels)), typ: typ,
			seconds: r.Seconds, entries: r.Entries}
		for i, l := range p.levels {
			switch {
			case l.name == "trackingType":
				out.keys[i], out.ids[i] = r.Type, r.Type
			case l.db.Bucket == "week":
				out.keys[i] = isoWeek(r.Period)
				out.ids[i] = out.keys[i].(string)
			case l.db.Bucket != "":
				out.keys[i], out.ids[i] = r.Period, r.Period
			case r.Key != 0:
				out.keys[i], out.ids[i] = r.Key, strconv.FormatInt(r.Key, 10)
			}
		}
		if err := b.add(out); err != nil {
			return err
		}
	}
	return nil
}

// isoWeek is the ISO week of a day: "2026-W05".
func isoWeek(day string) string {
	d, _ := time.Parse(time.DateOnly, day)
	y, w := d.ISOWeek()
	return fmt.Sprintf("%04d-W%02d", y, w)
}

// sumReport reads the report in one GROUP BY over the entries of the
// range.
func (s *Service) sumReport(ctx context.Context, q store.Querier, tenantID int64, p reportPlan, b *tree) error {
	day := field(s.entries, "day")
	terms := []query.Node{
		&query.Cond{Field: day, Op: query.Ge, Values: []query.Value{query.Str(p.from)}},
		&query.Cond{Field: day, Op: query.Le, Values: []query.Value{query.Str(p.to)}},
	}
	if p.where != nil {
		terms = append(terms, p.where)
	}
	if p.only != nil {
		terms = append(terms, p.only)
	}
	rep := store.TimeReport{Where: query.All(terms...), Step: p.step, Round: p.round, MaxRows: len(tally.Types) * MaxReportGroups}
	for _, l := range p.levels {
		rep.Levels = append(rep.Levels, l.db)
	}
	n := 0
	return s.db.SumTimeEntries(ctx, q, tenantID, rep, func(r store.ReportRow) error {
		if n++; n > rep.MaxRows {
			return tooManyGroups()
		}
		typ := slices.Index(tally.Types, r.Type)
		if typ < 0 {
			return nil
		}
		out := row{keys: make([]any, len(p.levels)), ids: make([]string, len(p.levels)), typ: typ,
			seconds: r.Seconds, entries: r.Entries}
		for i, k := range r.Keys {
			if k == nil {
				continue
			}
			out.ids[i] = *k
			if !p.levels[i].json {
				out.keys[i] = *k
				continue
			}
			v, err := jsonKey(*k)
			if err != nil {
				return fmt.Errorf("time report: group %s: %w", p.levels[i].name, err)
			}
			out.keys[i] = v
		}
		return b.add(out)
	})
}

// jsonKey is the value of an attribute's JSON text: whole numbers as
// int64, other numbers as float64.
func jsonKey(text string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if n, ok := v.(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			return i, nil
		}
		f, err := n.Float64()
		return f, err
	}
	return v, nil
}

func tooManyGroups() error {
	return errs.Field("groupBy", fmt.Sprintf("makes more than %d groups; group by fewer or coarser levels, or narrow from, to or where", MaxReportGroups))
}

// tree nests the sums of groups as they come.
type tree struct {
	levels []level
	root   node
	groups int // of the deepest level
	totals ReportTotals
}

type node struct {
	g        *ReportGroup
	children map[string]*node
}

func newTree(levels []level) *tree {
	return &tree{levels: levels, root: node{g: &ReportGroup{}, children: map[string]*node{}}}
}

// add counts a row in its group and every group above it.
func (t *tree) add(r row) error {
	t.totals.Seconds[r.typ] += r.seconds
	t.totals.Entries += r.entries
	n := &t.root
	for i, l := range t.levels {
		// A null key and a key whose text is empty differ: an id
		// never starts with a NUL.
		id := "\x00"
		if r.keys[i] != nil {
			id = "v" + r.ids[i]
		}
		c := n.children[id]
		if c == nil {
			if i == len(t.levels)-1 {
				if t.groups++; t.groups > MaxReportGroups {
					return tooManyGroups()
				}
			}
			c = &node{g: &ReportGroup{Level: l.name, Key: r.keys[i]}}
			if i < len(t.levels)-1 {
				c.children = map[string]*node{}
			}
			n.children[id] = c
		}
		c.g.Seconds[r.typ] += r.seconds
		c.g.Entries += r.entries
		n = c
	}
	return nil
}

// finish orders each level's groups by key and returns the top level's.
func (t *tree) finish() ([]*ReportGroup, ReportTotals) {
	var order func(n *node) []*ReportGroup
	order = func(n *node) []*ReportGroup {
		out := make([]*ReportGroup, 0, len(n.children))
		for _, c := range n.children {
			if c.children != nil {
				c.g.Groups = order(c)
			}
			out = append(out, c.g)
		}
		slices.SortFunc(out, func(a, b *ReportGroup) int { return compareReportKeys(a.Key, b.Key) })
		n.children = nil
		return out
	}
	return order(&t.root), t.totals
}

// keyRank orders keys of different kinds: numbers, strings, booleans,
// objects and arrays, null last.
func keyRank(k any) int {
	switch k.(type) {
	case int64, float64:
		return 0
	case string:
		return 1
	case bool:
		return 2
	case nil:
		return 4
	}
	return 3
}

// compareReportKeys orders group keys by kind (keyRank), then by value.
func compareReportKeys(a, b any) int {
	if c := cmp.Compare(keyRank(a), keyRank(b)); c != 0 {
		return c
	}
	switch x := a.(type) {
	case int64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, y)
		case float64:
			return cmp.Compare(float64(x), y)
		}
	case float64:
		switch y := b.(type) {
		case int64:
			return cmp.Compare(x, float64(y))
		case float64:
			return cmp.Compare(x, y)
		}
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case nil:
		return 0
	}
	ja, _ := jsontext.Marshal(a)
	jb, _ := jsontext.Marshal(b)
	return bytes.Compare(ja, jb)
}

// Labels are the names of the users, projects and tasks a report's
// groups name, per level and id: a record's name; a user without one,
// their email.
type Labels map[string]map[int64]string

// The levels whose keys name records, and the resources they name.
var labelled = map[string]string{"user": "users", "project": "projects", "task": "tasks"}

// ReportLabels reads the labels of the records rep's groups name.
func (s *Service) ReportLabels(ctx context.Context, caller auth.Principal, rep *Report) (Labels, error) {
	ids := map[string]map[int64]bool{}
	var walk func(gs []*ReportGroup)
	walk = func(gs []*ReportGroup) {
		for _, g := range gs {
			if id, ok := g.Key.(int64); ok && labelled[g.Level] != "" {
				if ids[g.Level] == nil {
					ids[g.Level] = map[int64]bool{}
				}
				ids[g.Level][id] = true
			}
			walk(g.Groups)
		}
	}
	walk(rep.Groups)
	out := Labels{}
	for lvl, set := range ids {
		out[lvl] = map[int64]string{}
		r := s.reg.Must(labelled[lvl])
		all := make([]int64, 0, len(set))
		for id := range set {
			all = append(all, id)
		}
		slices.Sort(all)
		for chunk := range slices.Chunk(all, 1000) {
			vals := make([]query.Value, len(chunk))
			for i, id := range chunk {
				vals[i] = query.Int(id)
			}
			in := &query.Cond{Field: query.Field{Name: "id", Type: query.Integer, Column: "id"}, Op: query.In, Values: vals}
			err := s.db.Scan(ctx, func(q store.Querier) error {
				recs, err := s.db.Records(q, caller.TenantID, records.Collection(r)).Find(ctx, in, len(chunk))
				if err != nil {
					return err
				}
				for _, rec := range recs {
					var doc struct{ Name, Email any }
					if err := json.Unmarshal(rec.Doc, &doc); err != nil {
						return fmt.Errorf("time report: %s %d: %w", r.Name, rec.ID, err)
					}
					name, _ := doc.Name.(string)
					if email, _ := doc.Email.(string); name == "" && lvl == "user" {
						name = email
					}
					out[lvl][rec.ID] = name
				}
				return nil
			})
			if err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}
