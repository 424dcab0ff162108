package lifecycle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Header is the manifest's description of the archive: all of it but
// its members. "format" and "version" are its first two members, so
// that a reader tells a newer format before it reads anything else.
type Header struct {
	Format    string           `json:"format"`
	Version   int              `json:"version"`
	Engine    string           `json:"engine"`
	CreatedAt string           `json:"createdAt"`
	Secrets   bool             `json:"secrets"`
	Tenant    HeaderTenant     `json:"tenant"`
	Counts    map[string]int64 `json:"counts"`
	FileBytes int64            `json:"fileBytes"`
}

// HeaderTenant names the archive's tenant.
type HeaderTenant struct {
	Slug string `json:"slug"`
	Name string `json:"name"`
}

// Member is the manifest's entry of a member of the archive, in the
// order of the archive: its name, size, SHA-256 (lower-case hex) and, for
// a table, its rows.
type Member struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	Rows   *int64 `json:"rows,omitempty"`
}

// writeManifestHead writes the manifest up to its first member: the
// header, then "members", which is last, so that a reader can take the
// members one at a time however many files the archive holds.
func writeManifestHead(w io.Writer, h Header) error {
	b, err := json.Marshal(h)
	if err != nil {
		return err
	}
	b = append(bytes.TrimSuffix(b, []byte("}")), `,"members":[`...)
	_, err = w.Write(b)
	return err
}

// manifestWriter writes the manifest's members after its head.
type manifestWriter struct {
	w io.Writer
	n int
}

func (m *manifestWriter) add(e Member) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	sep := ",\n"
	if m.n == 0 {
		sep = "\n"
	}
	m.n++
	_, err = io.WriteString(m.w, sep+string(b))
	return err
}

func (m *manifestWriter) close() error {
	_, err := io.WriteString(m.w, "\n]}\n")
	return err
}

// manifestReader reads a manifest: its header at once, its members one
// at a time, each within a budget of bytes, so that memory stays bounded
// whatever the manifest holds (a JSON decoder keeps the whole of the
// value it decodes in memory).
type manifestReader struct {
	dec    *json.Decoder
	budget *budget
	Header Header
	done   bool
}

// Budgets of the manifest's reader: the header (the tenant's name, the
// counts) and each member's entry.
const (
	maxManifestHeader = 1 << 20
	maxManifestMember = 64 << 10
)

// budget reads from r at most left bytes, then fails: it is given more
// before each part of the manifest is read.
type budget struct {
	r    io.Reader
	left int64
	// part names what is being read, for the error.
	part string
}

func (b *budget) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%s is larger than this program reads", b.part)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *budget) give(n int64, part string) { b.left, b.part = n, part }

// errManifest marks a manifest that cannot be read.
func errManifest(format string, args ...any) error {
	return fmt.Errorf("%w: manifest.json: %s", ErrNotArchive, fmt.Sprintf(format, args...))
}

// readManifest reads the manifest's header from r and stops at its first
// member. A manifest whose version is newer than FormatVersion is
// ErrNewerVersion, told by its first two members alone.
func readManifest(r io.Reader) (*manifestReader, error) {
	b := &budget{r: r}
	b.give(maxManifestHeader, "the manifest's header")
	m := &manifestReader{dec: json.NewDecoder(b), budget: b}
	m.dec.UseNumber()
	if tok, err := m.dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, errManifest("not a JSON object")
	}
	if err := m.key("format", &m.Header.Format); err != nil {
		return nil, err
	}
	if m.Header.Format != FormatName {
		return nil, errManifest("format %q, want %q", m.Header.Format, FormatName)
	}
	if err := m.key("version", &m.Header.Version); err != nil {
		return nil, err
	}
	if m.Header.Version > FormatVersion {
		return nil, fmt.Errorf("%w: version %d, this program reads version %d and older", ErrNewerVersion, m.Header.Version, FormatVersion)
	}
	if m.Header.Version < 1 {
		return nil, errManifest("version %d", m.Header.Version)
	}
	fields := map[string]any{"engine": &m.Header.Engine, "createdAt": &m.Header.CreatedAt, "secrets": &m.Header.Secrets,
		"tenant": &m.Header.Tenant, "counts": &m.Header.Counts, "fileBytes": &m.Header.FileBytes}
	for {
		tok, err := m.dec.Token()
		if err != nil {
			return nil, errManifest("%v", err)
		}
		name, ok := tok.(string)
		if !ok {
			return nil, errManifest("no members")
		}
		if name == "members" {
			break
		}
		dst, known := fields[name]
		if !known {
			var skip json.RawMessage
			dst = &skip
		}
		if err := m.dec.Decode(dst); err != nil {
			return nil, errManifest("%s: %v", name, err)
		}
	}
	if tok, err := m.dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errManifest("members is not a list")
	}
	return m, nil
}

// key reads the member name of the header's object and its value into dst.
func (m *manifestReader) key(name string, dst any) error {
	tok, err := m.dec.Token()
	if err != nil || tok != name {
		return errManifest("%q is not its first member", name)
	}
	if err := m.dec.Decode(dst); err != nil {
		return errManifest("%s: %v", name, err)
	}
	return nil
}

// next returns the manifest's next member, or ok false after the last,
// when it has checked that the manifest ends there.
func (m *manifestReader) next() (e Member, ok bool, err error) {
	if m.done {
		return Member{}, false, nil
	}
	m.budget.give(maxManifestMember, "an entry of the manifest's members")
	if m.dec.More() {
		if err := m.dec.Decode(&e); err != nil {
			return Member{}, false, fmt.Errorf("%w: manifest.json: member: %v", ErrDamaged, err)
		}
		return e, true, nil
	}
	m.done = true
	for _, want := range []json.Delim{']', '}'} {
		if tok, err := m.dec.Token(); err != nil || tok != want {
			return Member{}, false, fmt.Errorf("%w: manifest.json does not end after its members", ErrDamaged)
		}
	}
	if _, err := m.dec.Token(); !errors.Is(err, io.EOF) {
		return Member{}, false, fmt.Errorf("%w: manifest.json goes on after its end", ErrDamaged)
	}
	return Member{}, false, nil
}
