package app_test

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/audit"
	"planwerk/internal/testenv"
)

// An archive as a test takes it apart and puts it together again: its
// manifest's header and its members, in order. sealArchive writes the
// manifest afresh, each member with its size, SHA-256 and rows, as the
// maker of an archive would: what such an archive holds is sound by
// every checksum, and only its contents can be wrong.
type archiveParts struct {
	header  map[string]json.RawMessage
	members []archiveMember
}

type archiveMember struct {
	name string
	data []byte
}

// openArchive takes an archive apart.
func openArchive(t *testing.T, archive []byte) archiveParts {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var p archiveParts
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if hdr.Name == "manifest.json" {
			if err := json.Unmarshal(data, &p.header); err != nil {
				t.Fatal(err)
			}
			delete(p.header, "members")
			continue
		}
		p.members = append(p.members, archiveMember{hdr.Name, data})
	}
	return p
}

// seal puts the parts together as an archive: format and version first
// in the manifest, members last.
func (p archiveParts) seal(t *testing.T) []byte {
	t.Helper()
	var m bytes.Buffer
	m.WriteString(`{"format":` + string(p.header["format"]) + `,"version":` + string(p.header["version"]))
	keys := make([]string, 0, len(p.header))
	for k := range p.header {
		if k != "format" && k != "version" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&m, ",%q:%s", k, p.header[k])
	}
	m.WriteString(`,"members":[`)
	for i, mem := range p.members {
		sum := sha256.Sum256(mem.data)
		entry := map[string]any{"name": mem.name, "size": len(mem.data), "sha256": hex.EncodeToString(sum[:])}
		if strings.HasSuffix(mem.name, ".jsonl") {
			entry["rows"] = bytes.Count(mem.data, []byte("\n"))
		}
		b, _ := json.Marshal(entry)
		if i > 0 {
			m.WriteByte(',')
		}
		m.Write(b)
	}
	m.WriteString("]}\n")
	var out bytes.Buffer
	zw, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	put := func(name string, data []byte) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(data)), Mode: 0o600}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	put("manifest.json", m.Bytes())
	for _, mem := range p.members {
		put(mem.name, mem.data)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// member returns the data of the member name.
func (p archiveParts) member(t *testing.T, name string) []byte {
	t.Helper()
	for _, m := range p.members {
		if m.name == name {
			return m.data
		}
	}
	t.Fatalf("no member %s", name)
	return nil
}

// with returns the parts with member name's data replaced by fn's.
func (p archiveParts) with(name string, fn func(data []byte) []byte) archiveParts {
	out := archiveParts{header: p.header, members: slices.Clone(p.members)}
	for i, m := range out.members {
		if m.name == name {
			out.members[i].data = fn(bytes.Clone(m.data))
		}
	}
	return out
}

// archiveRow is a row of a table's member, its values as they are.
type archiveRow map[string]json.RawMessage

// rows reads a table's member.
func rows(t *testing.T, data []byte) []archiveRow {
	t.Helper()
	var out []archiveRow
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var r archiveRow
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// joinRows writes a table's member, < > & as themselves.
func joinRows(t *testing.T, rs []archiveRow) []byte {
	t.Helper()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range rs {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// editRows returns fn, as a member's edit, applied to its rows: fn
// returns the rows the member then holds.
func editRows(t *testing.T, fn func(rs []archiveRow) []archiveRow) func([]byte) []byte {
	return func(data []byte) []byte { return joinRows(t, fn(rows(t, data))) }
}

// rowWhere is the index of the first row whose column is value.
func rowWhere(t *testing.T, rs []archiveRow, column, value string) int {
	t.Helper()
	for i, r := range rs {
		if string(r[column]) == value {
			return i
		}
	}
	t.Fatalf("no row with %s %s", column, value)
	return -1
}

// TestTenantImportIntegrity: an archive sound by every checksum that
// holds what the service could not have written is refused, naming its
// member and row, and leaves nothing behind: a member of no table, ids
// beyond 2^53 (the
// tenant's last_id, a record's, an upload's record), a record that is a
// JSON list or of a resource the service does not have or whose document
// names another id, text that is not UTF-8 or holds NUL, a value of a
// column that the service never writes (a scope, a timestamp), an audit
// log whose chain does not verify or starts anywhere but seq 1 or where
// its purge says, an entry whose `changed` is no JSON list or whose
// before points nowhere, entries out of seq order, more webhooks or API
// clients than a tenant may
// have. After every refusal the other tenants create records as before,
// with ids as low as before (no shared sequence moved); an archive of
// version 1 still imports; the sound archive imports last.
func TestTenantImportIntegrity(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		src := testenv.Start(t, b, loopbackHooks)
		seeded := seedArchive(t, src, "acme", 4096)
		dir := t.TempDir()
		good := readFile(t, exportTenant(t, src, "acme", dir))
		parts := openArchive(t, good)
		records := rows(t, parts.member(t, "records.jsonl"))
		project := rowWhere(t, records, "resource", `"projects"`)
		alpha := slices.IndexFunc(records, func(r archiveRow) bool { return bytes.Contains(r["doc"], []byte(`"Alpha"`)) })
		// projectRow and alphaRow begin the refusals of those rows.
		projectRow := fmt.Sprintf("records.jsonl: row %d: ", project+1)
		alphaRow := fmt.Sprintf("records.jsonl: row %d: ", alpha+1)
		entries := rows(t, parts.member(t, "audit_log.jsonl"))
		pointer := slices.IndexFunc(entries, func(r archiveRow) bool { return string(r["before_seq"]) != "null" })
		if pointer < 0 {
			t.Fatal("no audit entry keeps its before as a pointer")
		}
		pointed := entries[rowWhere(t, entries, "seq", string(entries[pointer]["before_seq"]))]
		setRow := func(member string, i int, column, value string) archiveParts {
			return parts.with(member, editRows(t, func(rs []archiveRow) []archiveRow {
				rs[i][column] = json.RawMessage(value)
				return rs
			}))
		}
		// withID is the archive with the project's id, in its row and its
		// document, set to id.
		withID := func(id int64) archiveParts {
			return parts.with("records.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				rs[project]["id"] = json.RawMessage(fmt.Sprint(id))
				rs[project]["doc"] = json.RawMessage(setDocID(t, rs[project]["doc"], id))
				return rs
			}))
		}
		copies := func(member string, n int) archiveParts {
			return parts.with(member, editRows(t, func(rs []archiveRow) []archiveRow {
				for len(rs) < n {
					c := copyRow(rs[0])
					c["id"] = json.RawMessage(fmt.Sprint(900000 + len(rs)))
					if _, ok := c["client_id"]; ok {
						c["client_id"] = json.RawMessage(fmt.Sprintf(`"pwc_copy%d"`, len(rs)))
					}
					rs = append(rs, c)
				}
				return rs
			}))
		}

		dst := testenv.Start(t, b)
		other := dst.CreateTenant(t, "other")
		otherAdmin := dst.SignIn(t, other)
		firstID := testenv.ID(t, otherAdmin.Create(t, "projects", testenv.M{"name": "before"}))
		files, tenants := storedFiles(t, dst.Config.Files), len(listTenants(t, dst.Service.DB))
		cases := []struct {
			name    string
			archive []byte
			want    string
		}{
			{"last_id 2^63-1", parts.with("tenant.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				rs[0]["last_id"] = json.RawMessage("9223372036854775807")
				return rs
			})).seal(t), "tenant.jsonl: row 1: last_id: 9223372036854775807 is no id"},
			{"a record id of 2^63-1", setRow("records.jsonl", project, "id", "9223372036854775807").seal(t), projectRow + "id: id 9223372036854775807 outside 1 … 2^53"},
			{"a record id of 2^53+1", setRow("records.jsonl", project, "id", "9007199254740993").seal(t), projectRow + "id: id 9007199254740993 outside 1 … 2^53"},
			{"a record id of 0", setRow("records.jsonl", project, "id", "0").seal(t), projectRow + "id: id 0 outside 1 … 2^53"},
			{"a record id of 2^52", withID(1 << 52).seal(t), projectRow + "id: id 4503599627370496 lies beyond 10995116"},
			{"last_id 2^41", parts.with("tenant.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				rs[0]["last_id"] = json.RawMessage("2199023255552")
				return rs
			})).seal(t), "tenant.jsonl: row 1: last_id: id 2199023255552 lies beyond 10995116"},
			{"an upload's record beyond 2^53", setRow("uploads.jsonl", 0, "record", "9223372036854775807").seal(t), "uploads.jsonl: row 1: record: id 9223372036854775807 outside"},
			{"a record that is a JSON list", setRow("records.jsonl", project, "doc", `[1,2,3]`).seal(t), projectRow + "doc: a document must be a JSON object"},
			{"a record of an unknown resource", setRow("records.jsonl", project, "resource", `"rockets"`).seal(t), projectRow + `resource "rockets"`},
			{"a record whose document names another id", setRow("records.jsonl", project, "doc", `{"id":1,"name":"x"}`).seal(t), projectRow + "doc: its id"},
			{"a document holding NUL", setRow("records.jsonl", project, "doc", withNUL(t, records[project]["doc"])).seal(t), projectRow + "doc: text holding NUL"},
			{"a text holding NUL", setRow("audit_log.jsonl", 0, "request_id", `"r\u0000"`).seal(t), "audit_log.jsonl: row 1: request_id: text holding NUL"},
			{"text that is not UTF-8", parts.with("records.jsonl", func(data []byte) []byte {
				return bytes.Replace(data, []byte(`"Alpha"`), []byte("\"Alph\xff\""), 1)
			}).seal(t), alphaRow + "text that is not UTF-8"},
			{"a scope the service never gives", setRow("api_clients.jsonl", 0, "scope", `"admin"`).seal(t), `api_clients.jsonl: row 1: scope: "admin" is none of`},
			{"a timestamp of another form", setRow("records.jsonl", project, "created_at", `"yesterday"`).seal(t), projectRow + `created_at: "yesterday" is not a timestamp`},
			{"an entry's changed that is no JSON list", setRow("audit_log.jsonl", 2, "changed", `"not json"`).seal(t), "audit_log.jsonl: row 3: changed: not a JSON list"},
			{"an entry's before pointing nowhere", setRow("audit_log.jsonl", pointer, "before_seq", "99999").seal(t),
				fmt.Sprintf("audit_log.jsonl: row %d: audit chain broken at seq %s", pointer+1, entries[pointer]["seq"])},
			// The same before, so that the chain verifies, but kept twice.
			{"an entry's before both kept and pointed to", setRow("audit_log.jsonl", pointer, "before", string(pointed["after"])).seal(t),
				fmt.Sprintf("audit_log.jsonl: row %d: the entry of seq %s keeps its before", pointer+1, entries[pointer]["seq"])},
			{"an entry changed", setRow("audit_log.jsonl", 3, "reason", `"covered up"`).seal(t), "audit_log.jsonl: row 4: audit chain broken at seq 4"},
			{"the oldest entry removed", parts.with("audit_log.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				return rs[1:]
			})).seal(t), "audit_log.jsonl: row 1: audit chain broken at seq 1"},
			{"the oldest entries removed, a start claimed elsewhere", parts.with("audit_log.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				return rs[3:]
			})).with("audit_purges.jsonl", func([]byte) []byte {
				return []byte(`{"seq":2,"hash":"` + audit.ZeroHash + `"}` + "\n")
			}).seal(t), "audit_log.jsonl: row 1: audit chain broken at seq 3"},
			{"two entries swapped", parts.with("audit_log.jsonl", editRows(t, func(rs []archiveRow) []archiveRow {
				rs[1], rs[2] = rs[2], rs[1]
				return rs
			})).seal(t), "audit_log.jsonl: row 3: seq 2 after seq 3"},
			{"21 webhooks", copies("webhooks.jsonl", 21).seal(t), "webhooks.jsonl: row 21: more than 20 rows"},
			{"101 API clients", copies("api_clients.jsonl", 101).seal(t), "api_clients.jsonl: row 101: more than 100 rows"},
			{"a member of no table", archiveParts{header: parts.header, members: slices.Insert(slices.Clone(parts.members), 1,
				archiveMember{"rockets.jsonl", []byte(`{"id":1}` + "\n")})}.seal(t), "rockets.jsonl: no table"},
		}
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				in := filepath.Join(dir, strings.NewReplacer(" ", "-", "'", "").Replace(c.name))
				if err := os.WriteFile(in, c.archive, 0o600); err != nil {
					t.Fatal(err)
				}
				r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", "fresh")
				if r.err == nil || !strings.Contains(r.err.Error(), c.want) || !strings.Contains(r.err.Error(), "could not have written") {
					t.Fatalf("import: %v (stdout %q), want a refusal saying %q", r.err, r.stdout, c.want)
				}
				nothingLeft(t, dst, "fresh", tenants, files)
				if id := testenv.ID(t, otherAdmin.Create(t, "projects", testenv.M{"name": "after"})); id > firstID+1<<20 {
					t.Errorf("another tenant's next id is %d after the refused import (its first was %d)", id, firstID)
				}
			})
		}

		// Version 1: no audit_purges member; a chain whose oldest
		// entries were purged starts where its first entry says.
		v1 := parts.with("audit_log.jsonl", editRows(t, func(rs []archiveRow) []archiveRow { return rs[2:] }))
		v1.header = copyRow(v1.header)
		v1.header["version"] = json.RawMessage("1")
		v1.members = slices.DeleteFunc(slices.Clone(v1.members), func(m archiveMember) bool { return m.name == "audit_purges.jsonl" })
		in := filepath.Join(dir, "v1")
		if err := os.WriteFile(in, v1.seal(t), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", "old"); r.err != nil {
			t.Fatalf("an archive of version 1: %v %s", r.err, r.stderr)
		}
		if r := run(ctx, envOf(dst), "", "audit", "verify", "--tenant", "old"); r.err != nil {
			t.Errorf("the imported chain of version 1 does not verify: %v", r.err)
		}

		in = filepath.Join(dir, "good")
		if err := os.WriteFile(in, good, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", "fresh"); r.err != nil {
			t.Fatalf("the sound archive after the refusals: %v %s", r.err, r.stderr)
		}
		if r := run(ctx, envOf(dst), "", "audit", "verify", "--tenant", "fresh"); r.err != nil {
			t.Errorf("the imported chain does not verify: %v", r.err)
		}

		// Ids far above those drawn, but within 2^40 of them, import; the
		// tenant's next ids exceed them, and the other tenant goes on.
		const far = 1_000_000_007
		in = filepath.Join(dir, "far")
		if err := os.WriteFile(in, withID(far).seal(t), 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", "far"); r.err != nil {
			t.Fatalf("an archive with an id of %d: %v %s", far, r.err, r.stderr)
		}
		farTenant := seeded.tenant
		farTenant.Slug = "far"
		farAdmin := dst.SignIn(t, farTenant)
		if got := farAdmin.Get(t, "projects", far); testenv.ID(t, got) != far {
			t.Errorf("the project of id %d: %v", far, got)
		}
		if id := testenv.ID(t, farAdmin.Create(t, "projects", testenv.M{"name": "next"})); id <= far {
			t.Errorf("the imported tenant's next id is %d, not beyond %d", id, far)
		}
		if id := testenv.ID(t, otherAdmin.Create(t, "projects", testenv.M{"name": "after far"})); id > maxExact {
			t.Errorf("another tenant's next id is %d after the import", id)
		}
	})
}

// maxExact is 2^53, the largest id every JSON reader keeps exact.
const maxExact = 1 << 53

// setDocID is a document with its id set to id.
func setDocID(t *testing.T, doc json.RawMessage, id int64) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = id
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withNUL is a document with a NUL in its name (JSON's \u0000).
func withNUL(t *testing.T, doc json.RawMessage) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	m["name"] = "a\x00b"
	b, err := json.Marshal(m)
	if err != nil || !bytes.Contains(b, []byte(`\u0000`)) {
		t.Fatalf("%s %v", b, err)
	}
	return string(b)
}

// copyRow copies a row or a header.
func copyRow[M ~map[string]json.RawMessage](m M) M {
	out := make(M, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
