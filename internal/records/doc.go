package records

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"planwerk/internal/jsontext"
	"planwerk/internal/query"
)

// Doc is a decoded document: its attributes by name, in the forms the
// registry's types take (strings for String, Enum, Date and Timestamp
// attributes; int64 or json.Number for Integer ones; bool). Hooks read it
// through the accessors, which know those forms; the hooks that may change
// a record write to it as a map.
type Doc map[string]any

// Has reports whether the attribute is set: present and not null (a null
// clears an attribute).
func (d Doc) Has(name string) bool { return d[name] != nil }

// Names reports whether the document names the attribute at all, even as
// null: a write-only attribute sent as null is named but not set.
func (d Doc) Names(name string) bool {
	_, ok := d[name]
	return ok
}

// String reads a String, Enum or Date attribute (a date as "YYYY-MM-DD").
func (d Doc) String(name string) (string, bool) {
	s, ok := d[name].(string)
	return s, ok
}

// Int reads an Integer attribute.
func (d Doc) Int(name string) (int64, bool) { return AsID(d[name]) }

// Ref reads the id a reference attribute names.
func (d Doc) Ref(name string) (int64, bool) { return AsID(d[name]) }

// Bool reports whether a Boolean attribute is true (false when unset).
func (d Doc) Bool(name string) bool { return d[name] == true }

// Time reads a Timestamp attribute.
func (d Doc) Time(name string) (time.Time, bool) {
	s, ok := d.String(name)
	if !ok || s == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(query.TimestampLayout, s)
	return t, err == nil
}

// View returns the document read-only.
func (d Doc) View() DocView { return DocView{d} }

// doc names the Doc a DocView holds, unexported so that only its
// accessors show.
type doc = Doc

// DocView is a document read-only: it has Doc's accessors (Has, Names,
// String, Int, Ref, Bool, Time) but not its map. Checks and visibility
// rules see documents so, and so cannot change them.
type DocView struct{ doc }

// AsID reads a whole number of a decoded document (an id, a status).
func AsID(v any) (int64, bool) { return jsontext.Whole(v) }

// Decode decodes a stored document, keeping numbers exact.
func Decode(b []byte) (Doc, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m Doc
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("decode record: %w", err)
	}
	return m, nil
}
