package audit

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gowebpki/jcs"
)

// An entry's canonical JSON has its members in a fixed order (RFC 8785
// sorts them by name): actor, after, at, before, changed, op, prevHash,
// reason, record, requestId, resource, seq. Only prevHash and seq depend
// on the entries before it, so a sealed entry's canonical JSON is
//
//	Head + prevHash + Mid + seq + "}"
//
// where Head and Mid are known as soon as the write is: the store
// computes them with the write and links the entry into its tenant's
// chain when it commits, under the lock that orders the tenant's commits
// (on PostgreSQL inside the statement that takes it, see the store's
// dialects). Their documents must be canonical already: CanonicalDoc
// makes them so once, and the store keeps them in that form, so that
// neither sealing nor verifying parses a document again.

// Pieces are the parts of an entry's canonical JSON around its prevHash
// and its seq.
type Pieces struct {
	Head string // up to and including `"prevHash":"`
	Mid  string // from the quote after prevHash up to and including `"seq":`
}

// CanonicalDoc returns a document's RFC 8785 canonical JSON; an empty or
// null document is null.
func CanonicalDoc(doc []byte) ([]byte, error) {
	if len(doc) == 0 || string(doc) == "null" {
		return nil, nil
	}
	return jcs.Transform(doc)
}

// PiecesOf returns the entry's pieces. Its Before and After must be
// canonical JSON (CanonicalDoc's) or empty.
func PiecesOf(e Entry) Pieces {
	b, mid := appendPieces(make([]byte, 0, 192+len(e.Before)+len(e.After)), e)
	return Pieces{Head: string(b[:mid]), Mid: string(b[mid:])}
}

// appendPieces appends the entry's Head and then its Mid; mid is where
// Mid starts.
func appendPieces(b []byte, e Entry) (out []byte, mid int) {
	b = append(b, `{"actor":{"apiClient":`...)
	b = appendID(b, e.Actor.APIClient)
	b = append(b, `,"user":`...)
	b = appendID(b, e.Actor.User)
	b = append(b, `,"via":`...)
	b = AppendString(b, e.Actor.Via)
	b = append(b, `},"after":`...)
	b = appendDoc(b, e.After)
	b = append(b, `,"at":`...)
	b = AppendString(b, e.At)
	b = append(b, `,"before":`...)
	b = appendDoc(b, e.Before)
	b = append(b, `,"changed":`...)
	b = AppendStrings(b, e.Changed)
	b = append(b, `,"op":`...)
	b = AppendString(b, e.Op)
	b = append(b, `,"prevHash":"`...)
	mid = len(b)
	b = append(b, `","reason":`...)
	b = appendOptString(b, e.Reason)
	b = append(b, `,"record":`...)
	b = appendID(b, e.Record)
	b = append(b, `,"requestId":`...)
	b = appendOptString(b, e.RequestID)
	b = append(b, `,"resource":`...)
	b = AppendString(b, e.Resource)
	b = append(b, `,"seq":`...)
	return b, mid
}

// Seal returns the hash of the entry with these pieces, seq and
// prevHash: the SHA-256 of prevHash followed by the canonical JSON.
func (p Pieces) Seal(prevHash string, seq int64) string {
	return seal(prevHash, []byte(p.Head), []byte(p.Mid), seq)
}

// Seal returns the hash the entry has when it follows prevHash at seq.
// Its Before and After must be canonical JSON (or empty).
func Seal(e Entry, prevHash string, seq int64) string {
	buf := sealBuffers.Get().(*[]byte)
	b, mid := appendPieces((*buf)[:0], e)
	h := seal(prevHash, b[:mid], b[mid:], seq)
	*buf = b
	sealBuffers.Put(buf)
	return h
}

var sealBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func seal(prevHash string, head, mid []byte, seq int64) string {
	sum := sha256.New()
	var num [20]byte
	sum.Write([]byte(prevHash))
	sum.Write(head)
	sum.Write([]byte(prevHash))
	sum.Write(mid)
	sum.Write(strconv.AppendInt(num[:0], seq, 10))
	sum.Write([]byte("}"))
	return hex.EncodeToString(sum.Sum(nil))
}

// sealed is the hash of an entry whose documents are canonical JSON
// already (as stored): no document is parsed.
func sealed(e Entry) string { return Seal(e, e.PrevHash, e.Seq) }

func appendID(b []byte, id *int64) []byte {
	if id == nil {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, *id, 10)
}

func appendDoc(b []byte, doc []byte) []byte {
	if len(doc) == 0 {
		return append(b, "null"...)
	}
	return append(b, doc...)
}

func appendOptString(b []byte, s *string) []byte {
	if s == nil {
		return append(b, "null"...)
	}
	return AppendString(b, *s)
}

// AppendStrings appends a canonical JSON array of strings.
func AppendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendString(b, s)
	}
	return append(b, ']')
}

// AppendString appends s as an RFC 8785 JSON string: quotes, backslashes
// and control characters escaped (the short forms where JSON has them,
// else \u00xx in lowercase), everything else as it is. Invalid UTF-8 is
// replaced by U+FFFD, as a JSON encoder would.
func AppendString(b []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, size := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, s[i:i+size]...)
			}
			i += size
			continue
		}
		switch c {
		case '"':
			b = append(b, '\\', '"')
		case '\\':
			b = append(b, '\\', '\\')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			if c < 0x20 {
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			} else {
				b = append(b, c)
			}
		}
		i++
	}
	return append(b, '"')
}

// AppendCanonical appends the RFC 8785 canonical JSON of a value decoded
// by encoding/json into an any (maps, slices, strings, float64 numbers,
// bools, nil): a document already decoded is written canonical without
// being parsed again.
func AppendCanonical(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, v), nil
	case string:
		return AppendString(b, v), nil
	case float64:
		n, err := jcs.NumberToJSON(v)
		if err != nil {
			return nil, err
		}
		return append(b, n...), nil
	case []any:
		b = append(b, '[')
		for i, e := range v {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = AppendCanonical(b, e); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, compareUTF16)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendString(b, k)
			b = append(b, ':')
			var err error
			if b, err = AppendCanonical(b, v[k]); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return nil, fmt.Errorf("canonical JSON: a value of type %T", v)
}

// compareUTF16 orders strings by their UTF-16 code units, as RFC 8785
// orders member names: byte order, except that characters beyond the
// Basic Multilingual Plane (surrogate pairs, 0xD800-0xDFFF) sort before
// U+E000-U+FFFF.
func compareUTF16(a, b string) int {
	for a != "" && b != "" {
		ra, na := utf8.DecodeRuneInString(a)
		rb, nb := utf8.DecodeRuneInString(b)
		if ra != rb {
			return cmp.Compare(utf16Key(ra), utf16Key(rb))
		}
		a, b = a[na:], b[nb:]
	}
	return cmp.Compare(len(a), len(b))
}

// utf16Key is a rune's first UTF-16 code unit.
func utf16Key(r rune) rune {
	if r >= 0x10000 {
		r1, _ := utf16.EncodeRune(r)
		return r1
	}
	return r
}
