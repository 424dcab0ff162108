// Package audit keeps the audit log (docs/api.md "Audit log"): who
// changed which record, when, from what to what, and why. Entries form
// one chain per tenant: each names the hash of the one before it, and its
// own hash covers that and the entry's canonical JSON (RFC 8785), so that
// an entry changed, removed or inserted in the database breaks the chain
// where it happened, and an auditor can check that with standard tools,
// without trusting the operator.
package audit

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gowebpki/jcs"
)

// ZeroHash is the prevHash of a tenant's first entry.
var ZeroHash = strings.Repeat("0", 64)

// IsHash reports whether s has the form of an entry's hash: 64 lowercase
// hex digits.
func IsHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Ways a change reaches the service: an API request or an operator's
// command.
const (
	ViaAPI = "api"
	ViaCLI = "cli"
)

// Operations of an entry.
const (
	OpCreate = "create"
	OpUpdate = "update"
	OpDelete = "delete"
)

// Actor is who made a change: a user (signed in, or through one of their
// API clients), or an operator's command.
type Actor struct {
	User      *int64 `json:"user"`
	APIClient *int64 `json:"apiClient"`
	Via       string `json:"via"`
}

// Entry is one change of one record (or of something that is not a
// record: Record is then nil), as the audit log shows it. Before and
// After are the record as GET showed it (JSON null on create and delete).
type Entry struct {
	Seq       int64           `json:"seq"`
	At        string          `json:"at"`
	Actor     Actor           `json:"actor"`
	RequestID *string         `json:"requestId"`
	Reason    *string         `json:"reason"`
	Resource  string          `json:"resource"`
	Record    *int64          `json:"record"`
	Op        string          `json:"op"`
	Changed   []string        `json:"changed"`
	Before    json.RawMessage `json:"before"`
	After     json.RawMessage `json:"after"`
	PrevHash  string          `json:"prevHash"`
	// Hash is left out of the JSON while it is empty: so the entry's
	// canonical JSON, which the hash covers, has no hash member.
	Hash string `json:"hash,omitempty"`
}

// Canonical returns the RFC 8785 canonical JSON of the entry without its
// hash member: the bytes its hash covers after prevHash.
func Canonical(e Entry) ([]byte, error) {
	e.Hash = ""
	e.Before, e.After = nullIfEmpty(e.Before), nullIfEmpty(e.After)
	if e.Changed == nil {
		e.Changed = []string{}
	}
	raw, err := json.Marshal(e)
	if err != nil {
		return nil, fmt.Errorf("audit entry %d: %w", e.Seq, err)
	}
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, fmt.Errorf("audit entry %d: canonical JSON: %w", e.Seq, err)
	}
	return out, nil
}

func nullIfEmpty(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage("null")
	}
	return m
}

// HashOf is the hash of the entry: the lowercase hex SHA-256 of its
// prevHash's bytes followed by its canonical JSON.
func HashOf(e Entry) (string, error) {
	c, err := Canonical(e)
	if err != nil {
		return "", err
	}
	sum := sha256.New()
	sum.Write([]byte(e.PrevHash))
	sum.Write(c)
	return hex.EncodeToString(sum.Sum(nil)), nil
}

// Link makes e the entry after the one whose hash is prev: it sets e's
// PrevHash and Hash.
func Link(prev string, e *Entry) error {
	e.PrevHash = prev
	h, err := HashOf(*e)
	if err != nil {
		return err
	}
	e.Hash = h
	return nil
}
