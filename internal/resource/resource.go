// Package resource is the registry of Planwerk's resources: one
// declarative table of every resource, its path, its declared attributes
// with their types and references, whether it can be written, and who may
// write it. Routing, validation, storage, policy and the API description
// are all driven from this table; adding a resource is adding an entry.
package resource

import (
	"slices"
	"sort"

	"planwerk/internal/query"
)

// Attr is a declared attribute: typed and validated. Attributes a
// resource does not declare are stored and returned as sent.
type Attr struct {
	Name string
	Type query.Type
	Enum []string // query.Enum: the allowed strings
	Ints []int64  // query.Integer: when set, the allowed values
	// Ref names the resource an Integer attribute refers to; the record
	// must exist in the same tenant.
	Ref string
	// RefByModel names the attribute holding the model of a polymorphic
	// reference (Document.record is a record of Document.model).
	RefByModel string
	// ReadOnly attributes belong to the service; values sent are ignored.
	ReadOnly bool
	// WriteOnly attributes are accepted but never stored in the document
	// nor returned (a user's password).
	WriteOnly bool
	// Required attributes must be present and not null on create.
	Required bool
	Doc      string // one line for the API description
}

// Owner says which members may write a resource's records.
type Owner int

// Write policies.
const (
	// AdminOnly: only admins create, change and delete.
	AdminOnly Owner = iota
	// OwnRecords: members write records whose "user" attribute is
	// themselves (it defaults to the caller on create); admins all.
	OwnRecords
)

// Resource is one entry of the registry.
type Resource struct {
	Name  string // path segment and collection name: "time-entries"
	Model string // the model's name in the API description: "TimeEntry"
	Doc   string // one line for the API description
	Attrs []Attr
	// DeclaredOnly resources have exactly their declared attributes;
	// criteria on others are refused.
	DeclaredOnly bool
	// ReadOnly resources answer writes with 405.
	ReadOnly bool
	// NoContains refuses the contains modifier in where.
	NoContains bool
	// Deprecated resources answer with a Deprecation header.
	Deprecated bool
	// Write is who may write records.
	Write Owner
	// Params are extra list parameters that are not attribute filters.
	Params []string
	// Table is the table holding the records: "records" unless the
	// resource has one of its own.
	Table string
	// Source is the resource whose records a derived, read-only resource
	// shows (holidays are absences of the PublicHoliday type).
	Source string

	schema query.Schema // built once by New
}

// Attr returns the declared attribute name.
func (r *Resource) Attr(name string) (Attr, bool) {
	for _, a := range r.Attrs {
		if a.Name == name {
			return a, true
		}
	}
	return Attr{}, false
}

// Path is the resource's collection path.
func (r *Resource) Path() string { return "/v1/" + r.Name }

// Schema is the resource as the list query language sees it. It is built
// once; callers must not change it.
func (r *Resource) Schema() query.Schema {
	if r.schema.Fields == nil {
		r.schema = r.buildSchema()
	}
	return r.schema
}

func (r *Resource) buildSchema() query.Schema {
	s := query.Schema{
		Fields: map[string]query.Field{
			"id":        {Name: "id", Type: query.Integer, Column: "id"},
			"createdAt": {Name: "createdAt", Type: query.Timestamp, Column: "created_at"},
			"updatedAt": {Name: "updatedAt", Type: query.Timestamp, Column: "updated_at"},
		},
		DeclaredOnly: r.DeclaredOnly,
		NoContains:   r.NoContains,
		Params:       map[string]bool{},
	}
	for _, a := range r.Attrs {
		if a.WriteOnly {
			continue // never stored in the document, so not queryable
		}
		s.Fields[a.Name] = query.Field{Name: a.Name, Type: a.Type, Enum: a.Enum, Ref: a.Ref != "" || a.RefByModel != ""}
	}
	for _, p := range r.Params {
		s.Params[p] = true
	}
	return s
}

// Registry is the table of resources.
type Registry struct {
	byName map[string]*Resource
	names  []string
}

// New returns the registry of all resources.
func New() *Registry {
	reg := &Registry{byName: map[string]*Resource{}}
	for _, r := range all() {
		r := r
		if r.Table == "" {
			r.Table = "records"
		}
		r.schema = r.buildSchema()
		reg.byName[r.Name] = &r
		reg.names = append(reg.names, r.Name)
	}
	sort.Strings(reg.names)
	return reg
}

// Get returns the resource of a name.
func (reg *Registry) Get(name string) (*Resource, bool) {
	r, ok := reg.byName[name]
	return r, ok
}

// Must returns the resource of a name the code itself names (a rule's own
// resource); a missing one is a programming error, found at start-up.
func (reg *Registry) Must(name string) *Resource {
	r, ok := reg.byName[name]
	if !ok {
		panic("registry: no resource " + name)
	}
	return r
}

// All returns every resource, sorted by name.
func (reg *Registry) All() []*Resource {
	out := make([]*Resource, 0, len(reg.names))
	for _, n := range reg.names {
		out = append(out, reg.byName[n])
	}
	return out
}

// Models maps the model names used in (model, record) pairs to resources.
var Models = map[string]string{
	"user":            "users",
	"project":         "projects",
	"client":          "clients",
	"task":            "tasks",
	"expense":         "expenses",
	"expenseCategory": "expense-categories",
	"skillSet":        "skill-sets",
	"document":        "documents",
}

// ModelNames returns the model names of Models, sorted.
func ModelNames(only ...string) []string {
	var out []string
	for m := range Models {
		if len(only) == 0 || slices.Contains(only, m) {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}
