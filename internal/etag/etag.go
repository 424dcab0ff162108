// Package etag computes the entity tags of records and evaluates the
// conditional headers that name them (RFC 9110 §8.8.3, §13.1).
//
// A record's tag is a hash of its content, not of the bytes an answer
// happens to carry: PostgreSQL's JSONB hands a document back with its
// keys and spaces rearranged, and the tag of a record must be the same
// whichever engine stored it and whether it came from a write or a read.
// So the document is decoded and encoded again in one canonical form
// (sorted keys, numbers as float64, no spaces) before it is hashed. Any
// change of content changes the tag; the same content has the same tag.
package etag

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"
)

// Of returns the strong entity tag of a JSON document, quoted. A document
// that is not JSON is hashed as it is.
func Of(doc []byte) string { return ofBytes(formOf(doc)) }

// formOf is the form of doc that its tag hashes: the canonical form, or
// doc as it is when it is not JSON.
func formOf(doc []byte) []byte {
	form, ok := canonical(doc)
	if !ok {
		if form, ok = decodeAgain(doc); !ok {
			form = doc
		}
	}
	return form
}

// ofBytes is the tag of a document's canonical form.
func ofBytes(form []byte) string {
	sum := sha256.Sum256(form)
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// Around returns the canonical form of doc cut around mark, a member
// written as the canonical form writes it (`"id":918273645546372`: a
// whole number of at most 15 digits is kept as it is), so that the tag of
// the document with another value there is the SHA-256 of before, that
// value's canonical text and after, as Of computes it. ok is false when
// mark is not in the canonical form exactly once.
func Around(doc []byte, mark string) (before, after []byte, ok bool) {
	form := formOf(doc)
	i := bytes.Index(form, []byte(mark))
	end := i + len(mark)
	// A member's own: after the object's brace or a comma, before the
	// next comma or the closing brace.
	if i < 1 || (form[i-1] != '{' && form[i-1] != ',') || end >= len(form) || (form[end] != ',' && form[end] != '}') ||
		bytes.Contains(form[i+1:], []byte(mark)) {
		return nil, nil, false
	}
	name, _, _ := strings.Cut(mark, ":")
	return form[:i+len(name)+1], form[end:], true
}

// OfValue returns the entity tag of a value as it is answered in JSON.
func OfValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return Of(nil)
	}
	return Of(b)
}

// Match evaluates an If-Match header against a record's current tag
// (strong comparison): true when the header is absent, is "*", or lists
// the tag. A weak tag never matches.
func Match(header, current string) bool {
	header = strings.TrimSpace(header)
	if header == "" || header == "*" {
		return true
	}
	for _, t := range tags(header) {
		if t == current {
			return true
		}
	}
	return false
}

// NoneMatch evaluates an If-None-Match header against a record's current
// tag (weak comparison): true when the GET should be answered 304.
func NoneMatch(header, current string) bool {
	header = strings.TrimSpace(header)
	if header == "" {
		return false
	}
	if header == "*" {
		return true
	}
	for _, t := range tags(header) {
		if strings.TrimPrefix(t, "W/") == current {
			return true
		}
	}
	return false
}

// maxTags bounds the work a header costs.
const maxTags = 64

// tags splits a list of entity tags; quoted tags may hold commas.
func tags(header string) []string {
	var out []string
	for len(out) < maxTags {
		header = strings.TrimLeft(header, " \t,")
		if header == "" {
			break
		}
		weak := strings.HasPrefix(header, "W/")
		rest := strings.TrimPrefix(header, "W/")
		if !strings.HasPrefix(rest, `"`) {
			break // not an entity tag: the rest cannot match
		}
		end := strings.IndexByte(rest[1:], '"')
		if end < 0 {
			break
		}
		t := rest[:end+2]
		if weak {
			t = "W/" + t
		}
		out = append(out, t)
		header = rest[end+2:]
	}
	return out
}
