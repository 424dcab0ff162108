package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
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
	b := make([]byte, 0, 192+len(e.Before)+len(e.After))
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
	head := string(b)
	b = append(b[:0], `","reason":`...)
	b = appendOptString(b, e.Reason)
	b = append(b, `,"record":`...)
	b = appendID(b, e.Record)
	b = append(b, `,"requestId":`...)
	b = appendOptString(b, e.RequestID)
	b = append(b, `,"resource":`...)
	b = AppendString(b, e.Resource)
	b = append(b, `,"seq":`...)
	return Pieces{Head: head, Mid: string(b)}
}

// Seal returns the hash of the entry with these pieces, seq and
// prevHash: the SHA-256 of prevHash followed by the canonical JSON.
func (p Pieces) Seal(prevHash string, seq int64) string {
	sum := sha256.New()
	var num [20]byte
	sum.Write([]byte(prevHash))
	sum.Write([]byte(p.Head))
	sum.Write([]byte(prevHash))
	sum.Write([]byte(p.Mid))
	sum.Write(strconv.AppendInt(num[:0], seq, 10))
	sum.Write([]byte("}"))
	return hex.EncodeToString(sum.Sum(nil))
}

// sealed is the hash of an entry whose documents are canonical JSON
// already (as stored): no document is parsed.
func sealed(e Entry) string { return PiecesOf(e).Seal(e.PrevHash, e.Seq) }

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
