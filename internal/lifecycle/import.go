package lifecycle

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/audit"
	"planwerk/internal/etag"
	"planwerk/internal/filestore"
	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/tally"
	"planwerk/internal/tenancy"
)

// ImportOptions name the imported tenant and where the manifest waits.
type ImportOptions struct {
	// Slug is the new tenant's ("": the archive's).
	Slug string
	// Resources are the resources whose records the records member may
	// hold (nil: every resource of the registry that keeps its records
	// in the records table).
	Resources []string
	// TempDir holds the manifest while the members are read ("": the
	// system's temporary folder).
	TempDir string
}

// Bounds of an import.
const (
	// maxLine is the longest row a table's member may hold: a row is
	// held in memory a few times over while it is read and checked, and
	// an import grows the heap by less than 64 MiB whatever the archive.
	// An export refuses a longer row, so that every archive imports.
	maxLine = 8 << 20
	// maxManifest bounds the manifest, which waits in a temporary file:
	// its entries are a few dozen bytes a file.
	maxManifest = 1 << 30
	// batchRows and batchBytes bound the rows of one transaction, so that
	// the other tenants' writes wait for none for long.
	batchRows  = 500
	batchBytes = 1 << 20
	// maxParams bounds the bound values of one statement, far below
	// either engine's limit.
	maxParams = 2000
	// maxWindow is the largest zstd window the reader accepts (zstd's
	// own levels up to 19 use 8 MiB).
	maxWindow = 32 << 20
	// eraseWithin bounds the erasure of a failed import that was stopped.
	eraseWithin = 10 * time.Minute
	// verifyPage is how many audit entries one read of the chain's
	// verification takes.
	verifyPage = 10000
	// analyzeAfter is how many rows an import adds to a table before the
	// table's statistics are renewed, before the tenant is served.
	analyzeAfter = 1000
)

// Import creates a tenant from the archive r reads, in db and files, all
// or nothing: the tenant is made in state importing (unknown to the
// service), its rows are added in short transactions of at most
// batchRows rows, its files are stored under keys of its own, every
// member is checked against its size and SHA-256 in the manifest as it
// is read, and only when all are there and sound does it become active.
// A failure erases what was written (eraseImport); a process that is
// killed leaves the tenant importing, which the next import of its slug
// erases first. A slug that is taken by a tenant in any other state is
// refused before anything is written (store.ErrConflict).
func Import(ctx context.Context, db Database, files filestore.Store, r io.Reader, opts ImportOptions) (sum Summary, err error) {
	cr := &countingReader{r: r}
	zr, err := zstd.NewReader(cr, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true), zstd.WithDecoderMaxWindow(maxWindow))
	if err != nil {
		return Summary{}, err
	}
	defer zr.Close()
	src := &archiveReader{r: zr}
	im := &importer{db: db, files: files, tr: tar.NewReader(src), sum: Summary{Rows: map[string]int64{}}, resources: storedResources(opts.Resources)}
	mr, closeManifest, err := im.manifest(opts.TempDir)
	if err != nil {
		return Summary{}, err
	}
	defer closeManifest()
	// From here on the input is an archive: what cannot be read of it is
	// damage.
	src.archive = true
	im.version = mr.Header.Version
	if !mr.Header.Secrets {
		return Summary{}, fmt.Errorf("%w (it is a tenant's own export): only an operator's export can be imported", ErrNoSecrets)
	}
	im.slug = cmp.Or(opts.Slug, mr.Header.Tenant.Slug)
	if !tenancy.ValidSlug(im.slug) {
		return Summary{}, fmt.Errorf("slug %q: 2-63 characters of a-z, 0-9 and -", im.slug)
	}
	release, err := db.LockTenant(ctx, im.slug)
	if err != nil {
		return Summary{}, err
	}
	defer release()
	if err := im.clearSlug(ctx); err != nil {
		return Summary{}, err
	}
	if im.ids.drawn, err = db.IDsDrawn(ctx, db.Reader()); err != nil {
		return Summary{}, err
	}
	defer func() {
		if err != nil && im.tenantID != 0 {
			// Erased also when ctx has ended (an interrupt): with a
			// context of its own, bounded.
			ectx, cancel := context.WithTimeout(context.WithoutCancel(ctx), eraseWithin)
			defer cancel()
			if eerr := eraseImport(ectx, db, files, im.tenantID); eerr != nil {
				err = fmt.Errorf("%w; erasing what was imported failed too (%v): the tenant stays importing, unknown to the service, until the next import of %q erases it", err, eerr, im.slug)
			}
		}
	}()
	if err := im.members(ctx, mr, src); err != nil {
		return Summary{}, err
	}
	if err := im.activate(ctx); err != nil {
		return Summary{}, err
	}
	im.sum.Slug, im.sum.TenantID, im.sum.Bytes = im.slug, im.tenantID, cr.n
	return im.sum, nil
}

// importer is one import's state.
type importer struct {
	db       Database
	files    filestore.Store
	tr       *tar.Reader
	slug     string
	tenantID int64
	// lastID is the archive's last_id; ids, the largest id of its rows
	// and their bound.
	lastID int64
	ids    idRange
	// lastSeq is the seq of the audit entry read last.
	lastSeq int64
	// keyNonce makes the storage keys of this import's files its own.
	keyNonce string
	lastFile int64
	sum      Summary
	// version is the archive's format; resources are the names the
	// records member may hold.
	version   int
	resources map[string]bool
}

// manifest reads the archive's first member, which must be the manifest,
// into a temporary file, and its header from there: the members are
// then read from it one at a time, beside the archive's.
func (im *importer) manifest(dir string) (*manifestReader, func(), error) {
	hdr, err := im.tr.Next()
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrNotArchive, err)
	}
	if hdr.Name != manifestName || hdr.Typeflag != tar.TypeReg {
		return nil, nil, fmt.Errorf("%w: its first member is %q, not %s", ErrNotArchive, hdr.Name, manifestName)
	}
	if hdr.Size > maxManifest {
		return nil, nil, fmt.Errorf("%w: manifest.json of %d bytes, more than this program reads (%d)", ErrNotArchive, hdr.Size, int64(maxManifest))
	}
	f, err := os.CreateTemp(dir, ".planwerk-import-*")
	if err != nil {
		return nil, nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, nil, err
	}
	if _, err := io.Copy(f, im.tr); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: manifest.json: %v", ErrDamaged, err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, err
	}
	mr, err := readManifest(bufio.NewReader(f))
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return mr, func() { f.Close() }, nil
}

// clearSlug makes sure the slug is free: a tenant of another import that
// did not complete (importing) is erased; any other refuses the import.
func (im *importer) clearSlug(ctx context.Context) error {
	t, err := im.db.TenantBySlug(ctx, im.slug)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if t.State != store.TenantImporting {
		return fmt.Errorf("tenant %q exists (%s): nothing imported: %w", im.slug, t.State, store.ErrConflict)
	}
	if err := eraseImport(ctx, im.db, im.files, t.ID); err != nil {
		return fmt.Errorf("erase the import of %q that did not complete: %w", im.slug, err)
	}
	return nil
}

// members reads the members after the manifest, each beside its entry in
// the manifest: the tables' in the catalog's order, then the files in the
// order of their uploads, then the end of both.
func (im *importer) members(ctx context.Context, mr *manifestReader, rest io.Reader) error {
	order := []string{tenantTable.name}
	for _, t := range tables {
		if t.since <= im.version {
			order = append(order, t.name)
		}
	}
	for i := 0; ; i++ {
		hdr, err := im.tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		}
		m, ok, err := mr.next()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: member %q is not in the manifest", ErrDamaged, hdr.Name)
		}
		if hdr.Name != m.Name || hdr.Size != m.Size || hdr.Typeflag != tar.TypeReg {
			return fmt.Errorf("%w: member %q of %d bytes where the manifest has %q of %d", ErrDamaged, hdr.Name, hdr.Size, m.Name, m.Size)
		}
		switch {
		case !knownMember(m.Name):
			err = im.unknown(m)
		case i < len(order) && m.Name != memberName(order[i]):
			return fmt.Errorf("%w: member %q where %q belongs", ErrDamaged, m.Name, memberName(order[i]))
		case i == 0:
			err = im.tenant(ctx, m)
		case i < len(order):
			t, _ := tableByName(order[i])
			err = im.table(ctx, t, m)
		default:
			err = im.file(ctx, m)
		}
		if err != nil {
			return err
		}
	}
	if m, ok, err := mr.next(); err != nil || ok {
		return cmp.Or(err, fmt.Errorf("%w: the archive ends before its member %q (truncated?)", ErrDamaged, m.Name))
	}
	if im.tenantID == 0 || im.sum.Files != im.sum.Rows["uploads"] {
		return fmt.Errorf("%w: %d files for %d uploads", ErrDamaged, im.sum.Files, im.sum.Rows["uploads"])
	}
	// The rest of the stream, read to its end, so that zstd checks the
	// whole of it.
	if _, err := io.Copy(io.Discard, rest); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return nil
}

// knownMember reports whether name is a member an archive may hold: a
// table's (of any version) or an upload's file.
func knownMember(name string) bool {
	if slices.ContainsFunc(Tables(), func(t string) bool { return memberName(t) == name }) {
		return true
	}
	id, err := strconv.ParseInt(strings.TrimPrefix(name, filesPrefix), 10, 64)
	return err == nil && id > 0 && strings.HasPrefix(name, filesPrefix)
}

// unknown refuses a member that no table or file of a tenant has, once
// it is what the manifest says it is.
func (im *importer) unknown(m Member) error {
	c, r := im.open(m)
	return c.refused(r, fmt.Errorf("%s: no table of a tenant's, nor an upload's file", m.Name))
}

// checked is a member's bytes as they are read, hashed.
type checked struct {
	m Member
	h hash.Hash
	n int64
}

func (im *importer) open(m Member) (*checked, io.Reader) {
	c := &checked{m: m, h: sha256.New()}
	return c, io.TeeReader(im.tr, writerFunc(func(p []byte) (int, error) {
		c.n += int64(len(p))
		return c.h.Write(p)
	}))
}

// sound reports whether what was read of the member is what the
// manifest says of it: its size and SHA-256.
func (c *checked) sound() bool {
	return c.n == c.m.Size && hex.EncodeToString(c.h.Sum(nil)) == c.m.SHA256
}

// verify checks what was read of the member against the manifest: its
// size, SHA-256 and rows.
func (c *checked) verify(rows int64) error {
	if !c.sound() {
		return fmt.Errorf("%w: member %q does not have the size and SHA-256 the manifest gives", ErrDamaged, c.m.Name)
	}
	if c.m.Rows != nil && *c.m.Rows != rows {
		return fmt.Errorf("%w: member %q has %d rows, the manifest says %d", ErrDamaged, c.m.Name, rows, *c.m.Rows)
	}
	return nil
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// tenant reads the tenant's member, one row, checks it, and only then
// creates the tenant, importing.
func (im *importer) tenant(ctx context.Context, m Member) error {
	c, r := im.open(m)
	raw, err := io.ReadAll(io.LimitReader(r, maxLine+1))
	if err != nil {
		return fmt.Errorf("%w: %s: %v", ErrDamaged, m.Name, err)
	}
	if len(raw) > maxLine {
		return c.refused(r, fmt.Errorf("%s: row 1: a row longer than %d MiB", m.Name, maxLine>>20))
	}
	if err := c.verify(int64(bytes.Count(raw, []byte("\n")))); err != nil {
		return err
	}
	vals, doc, err := parseRow(bytes.TrimSuffix(raw, []byte("\n")), tenantTable.columns, []string{tenantLastID}, &idRange{})
	if err != nil {
		return fmt.Errorf("%w: %s: row 1: %v", ErrRefused, m.Name, err)
	}
	if im.lastID, err = strconv.ParseInt(string(doc[tenantLastID]), 10, 64); err != nil || im.lastID < 0 || im.lastID > maxID {
		return fmt.Errorf("%w: %s: row 1: last_id: %s is no id of 0 … 2^53", ErrRefused, m.Name, doc[tenantLastID])
	}
	if err := im.ids.check(im.lastID); err != nil {
		return fmt.Errorf("%w: %s: row 1: last_id: %v", ErrRefused, m.Name, err)
	}
	vals[0] = im.slug
	nonce := make([]byte, 8)
	if _, err := rand.Read(nonce); err != nil {
		return err
	}
	im.keyNonce = hex.EncodeToString(nonce)
	err = im.db.Tx(ctx, func(q store.Querier) error {
		if err := q.QueryRowContext(ctx, `INSERT INTO tenants (slug, name, storage_bytes, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, vals...).Scan(&im.tenantID); err != nil {
			return err
		}
		if err := im.db.PutTenantState(ctx, q, im.tenantID, store.TenantImporting); err != nil {
			return err
		}
		// The change feed starts afresh, from a positions row of its own.
		_, err := q.ExecContext(ctx, `INSERT INTO change_positions (tenant_id, last) VALUES ($1, 0)`, im.tenantID)
		return err
	})
	if im.db.IsUniqueViolation(err) {
		im.tenantID = 0
		return fmt.Errorf("tenant %q exists: nothing imported: %w", im.slug, store.ErrConflict)
	}
	if err != nil {
		im.tenantID = 0
		return fmt.Errorf("create tenant %q: %w", im.slug, err)
	}
	im.sum.Rows[tenantTable.name] = 1
	return nil
}

// table reads a table's member a line at a time and inserts its rows in
// batches. A row the service could not have written refuses the archive
// (ErrRefused, naming the member and the row), unless the member is
// damaged: its rest is read through its checks first, and one that
// differs from its manifest entry is damage, whatever its rows say.
func (im *importer) table(ctx context.Context, t table, m Member) error {
	c, r := im.open(m)
	br := bufio.NewReaderSize(r, 64<<10)
	ins := newInserter(im, t)
	var rows int64
	for {
		line, err := readLine(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrDamaged) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %s: %v", ErrDamaged, m.Name, err)
		}
		if err != nil {
			return c.refused(br, fmt.Errorf("%s: row %d: %v", m.Name, rows+1, err))
		}
		rows++
		if t.most > 0 && rows > t.most {
			return c.refused(br, fmt.Errorf("%s: row %d: more than %d rows, and a tenant has at most %d", m.Name, rows, t.most, t.most))
		}
		vals, _, err := parseRow(line, t.columns, nil, &im.ids)
		if err == nil {
			err = im.checkRow(t, vals)
		}
		if err != nil {
			return c.refused(br, fmt.Errorf("%s: row %d: %v", m.Name, rows, err))
		}
		if err := ins.add(ctx, vals, len(line)); err != nil {
			return err
		}
	}
	if err := c.verify(rows); err != nil {
		return err
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	im.sum.Rows[t.name] = rows
	if t.name == "audit_log" {
		// The chain is read back page by page: planned without knowing
		// the rows just added (a million of a large tenant), PostgreSQL
		// read the whole log for each page, past the statement timeout.
		if rows >= analyzeAfter {
			if err := im.db.Analyze(ctx, t.name); err != nil {
				return err
			}
		}
		return im.verifyAudit(ctx)
	}
	return nil
}

// refused is err, a row's refusal, once the rest of the member, read
// through its checks, is what the manifest says; else the member is
// damaged.
func (c *checked) refused(rest io.Reader, err error) error {
	if _, cerr := io.Copy(io.Discard, rest); cerr != nil || !c.sound() {
		return fmt.Errorf("%w: member %q does not have the size and SHA-256 the manifest gives", ErrDamaged, c.m.Name)
	}
	return fmt.Errorf("%w: %v", ErrRefused, err)
}

// checkRow refuses a row whose columns each pass but which the service
// could not have written as a whole: a record of a resource this program
// does not have, or whose document names another id; an audit entry
// out of seq order (the export writes them in order, and a refusal of
// the chain names an entry's row by its place in it).
func (im *importer) checkRow(t table, vals []any) error {
	if t.name == "audit_log" {
		seq, _ := vals[0].(int64)
		if seq <= im.lastSeq {
			return fmt.Errorf("seq %d after seq %d: the entries are in seq order", seq, im.lastSeq)
		}
		im.lastSeq = seq
		return nil
	}
	if t.name != "records" {
		return nil
	}
	name, _ := vals[1].(string)
	if !im.resources[name] {
		return fmt.Errorf("resource %q is no resource whose records this program keeps", name)
	}
	doc, _ := vals[2].(string)
	var stamp struct {
		ID json.Number `json:"id"`
	}
	if err := json.Unmarshal([]byte(doc), &stamp); err != nil {
		return fmt.Errorf("doc: %v", err)
	}
	if id, _ := vals[0].(int64); stamp.ID.String() != strconv.FormatInt(id, 10) {
		return fmt.Errorf("doc: its id %q is not the row's %d", stamp.ID, id)
	}
	return nil
}

// storedResources are the resources whose records the records member may
// hold: names, or else every resource of the registry kept in the
// records table (derived ones show another's records).
func storedResources(names []string) map[string]bool {
	out := map[string]bool{}
	if names == nil {
		for _, r := range resource.New().All() {
			if r.Table == "records" && r.Source == "" {
				names = append(names, r.Name)
			}
		}
	}
	for _, n := range names {
		out[n] = true
	}
	return out
}

// verifyAudit refuses an imported audit log whose chain does not verify
// from where it starts (seq 1, or after the last entry a purge removed,
// as the audit_purges member says), or one of whose entries keeps its
// before as a pointer to an entry that is not the same record's earlier
// one: what audit verify and the audit log's reads would then find
// broken. Archives of version 1 carry no start: a chain purged before
// starts where its first entry says, as the service's own log did when
// it began to keep starts.
func (im *importer) verifyAudit(ctx context.Context) error {
	start, err := im.db.AuditStart(ctx, im.db.Reader(), im.tenantID)
	if err != nil {
		return err
	}
	if im.version < 2 {
		if start, err = im.inferAuditStart(ctx); err != nil {
			return err
		}
	}
	v := audit.NewVerifier(start)
	// read is the seq of the entry the verifier was given last: where
	// the chain breaks.
	var read int64
	pages := func(ctx context.Context, after int64, limit int, fn func(audit.Entry) error) error {
		return im.db.AuditPages(im.tenantID)(ctx, after, limit, func(e audit.Entry) error {
			read = e.Seq
			return fn(e)
		})
	}
	if _, err := audit.Walk(ctx, v, pages, verifyPage); err != nil {
		var b *audit.Broken
		if errors.As(err, &b) {
			return im.auditRefused(ctx, read, b)
		}
		return err
	}
	var seq int64
	err = im.db.Reader().QueryRowContext(ctx, `SELECT a.seq FROM audit_log a
		LEFT JOIN audit_log b ON b.tenant_id = a.tenant_id AND b.seq = a.before_seq
		WHERE a.tenant_id = $1 AND a.before_seq IS NOT NULL
		  AND (b.seq IS NULL OR b.seq >= a.seq OR a.before IS NOT NULL OR b.after IS NULL OR b.resource <> a.resource
		       OR a.record_id IS NULL OR b.record_id IS NULL OR b.record_id <> a.record_id)
		ORDER BY a.seq LIMIT 1`, im.tenantID).Scan(&seq)
	switch {
	case err == nil:
		return im.auditRefused(ctx, seq, fmt.Errorf("the entry of seq %d keeps its before as the after of an entry that is not its record's earlier one", seq))
	case !errors.Is(err, sql.ErrNoRows):
		return err
	}
	return nil
}

// auditRefused refuses the audit log for why, naming the row of the
// entry of seq: the entries are in seq order (checkRow), so its row is
// how many have a seq up to its own.
func (im *importer) auditRefused(ctx context.Context, seq int64, why error) error {
	var row int64
	if err := im.db.Reader().QueryRowContext(ctx, `SELECT count(*) FROM audit_log WHERE tenant_id = $1 AND seq <= $2`,
		im.tenantID, seq).Scan(&row); err != nil {
		return err
	}
	return fmt.Errorf("%w: audit_log.jsonl: row %d: %v", ErrRefused, row, why)
}

// inferAuditStart is the start of a version 1 archive's chain: where its
// first entry says it follows, stored as a purge's would be.
func (im *importer) inferAuditStart(ctx context.Context) (audit.Head, error) {
	start := audit.Origin
	err := im.db.AuditPages(im.tenantID)(ctx, 0, 1, func(e audit.Entry) error {
		if e.Seq > 1 {
			start = audit.Head{Seq: e.Seq - 1, Hash: e.PrevHash}
		}
		return nil
	})
	if err != nil || start == audit.Origin {
		return start, err
	}
	return start, im.db.Tx(ctx, func(q store.Querier) error {
		_, err := q.ExecContext(ctx, `INSERT INTO audit_purges (tenant_id, seq, hash) VALUES ($1, $2, $3)`, im.tenantID, start.Seq, start.Hash)
		return err
	})
}

// readLine reads a line of at most maxLine bytes without its newline;
// the last line must end with one.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if errors.Is(err, io.EOF) {
		if len(line) > 0 {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, io.EOF
	}
	if !errors.Is(err, bufio.ErrBufferFull) {
		return nil, err
	}
	long := append([]byte(nil), line...)
	for errors.Is(err, bufio.ErrBufferFull) {
		if len(long) > maxLine {
			return nil, fmt.Errorf("a row longer than %d MiB", maxLine>>20)
		}
		line, err = br.ReadSlice('\n')
		long = append(long, line...)
	}
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return long[:len(long)-1], nil
}

// inserter gathers a table's rows into batches, each inserted in a
// transaction of its own.
type inserter struct {
	im      *importer
	t       table
	columns []string
	rows    [][]any
	bytes   int
	// doc is the index of the document among a tagged table's values
	// (-1: the table keeps no tags).
	doc int
}

func newInserter(im *importer, t table) *inserter {
	cols := []string{"tenant_id"}
	for _, c := range t.columns {
		cols = append(cols, c.name)
	}
	for _, f := range t.fixed {
		cols = append(cols, f.name)
	}
	if t.name == "uploads" {
		cols = append(cols, "storage_key")
	}
	ins := &inserter{im: im, t: t, columns: cols, doc: -1}
	if t.tagged {
		ins.columns = append(ins.columns, "etag")
		ins.doc = slices.IndexFunc(t.columns, func(c column) bool { return c.kind == kindDoc })
	}
	return ins
}

// add adds a row's values (of t.columns), inserting the batch when it is
// full.
func (ins *inserter) add(ctx context.Context, vals []any, size int) error {
	row := make([]any, 0, len(ins.columns))
	row = append(row, ins.im.tenantID)
	row = append(row, vals...)
	for _, f := range ins.t.fixed {
		row = append(row, f.value)
	}
	if ins.t.name == "uploads" {
		id, ok := vals[0].(int64)
		if !ok {
			return fmt.Errorf("%w: uploads: a row without id", ErrDamaged)
		}
		row = append(row, ins.im.fileKey(id))
	}
	if ins.doc >= 0 {
		doc, _ := vals[ins.doc].(string)
		row = append(row, etag.Of([]byte(doc)))
	}
	ins.rows = append(ins.rows, row)
	ins.bytes += size
	if len(ins.rows) >= batchRows || ins.bytes >= batchBytes {
		return ins.flush(ctx)
	}
	return nil
}

// flush inserts the rows gathered, in one transaction.
func (ins *inserter) flush(ctx context.Context) error {
	if len(ins.rows) == 0 {
		return nil
	}
	per := max(1, maxParams/len(ins.columns))
	err := ins.im.db.Tx(ctx, func(q store.Querier) error {
		for start := 0; start < len(ins.rows); start += per {
			chunk := ins.rows[start:min(start+per, len(ins.rows))]
			query, args := insertStatement(ins.im.db.Placeholder, ins.t.name, ins.columns, chunk)
			if _, err := q.ExecContext(ctx, query, args...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("import %s: %w", ins.t.name, err)
	}
	ins.rows, ins.bytes = ins.rows[:0], 0
	return nil
}

// insertStatement is the INSERT of rows into the table's columns.
func insertStatement(placeholder func(n int) string, table string, columns []string, rows [][]any) (string, []any) {
	var sb strings.Builder
	sb.WriteString("INSERT INTO " + table + " (" + strings.Join(columns, ", ") + ") VALUES ")
	args := make([]any, 0, len(rows)*len(columns))
	for i, row := range rows {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteByte('(')
		for j, v := range row {
			if j > 0 {
				sb.WriteString(", ")
			}
			args = append(args, v)
			sb.WriteString(placeholder(len(args)))
		}
		sb.WriteByte(')')
	}
	return sb.String(), args
}

// fileKey is where the import stores the file of an upload: a key of the
// service's own form ("tTENANT/uID-…", which the sweep knows), unique to
// this import.
func (im *importer) fileKey(id int64) string {
	return fmt.Sprintf("t%d/u%d-%s", im.tenantID, id, im.keyNonce)
}

// file stores a file's member under its upload's key, checking its size
// and SHA-256 as it is copied: a file that differs is not stored.
func (im *importer) file(ctx context.Context, m Member) error {
	id, err := strconv.ParseInt(strings.TrimPrefix(m.Name, filesPrefix), 10, 64)
	if err != nil || !strings.HasPrefix(m.Name, filesPrefix) || id <= im.lastFile {
		return fmt.Errorf("%w: member %q out of place", ErrDamaged, m.Name)
	}
	im.lastFile = id
	var size int64
	err = im.db.Reader().QueryRowContext(ctx, `SELECT size FROM uploads WHERE tenant_id = $1 AND id = $2`, im.tenantID, id).Scan(&size)
	if err != nil {
		return fmt.Errorf("%w: member %q: no upload %d (%v)", ErrDamaged, m.Name, id, err)
	}
	if size != m.Size {
		return fmt.Errorf("%w: member %q has %d bytes, its upload %d", ErrDamaged, m.Name, m.Size, size)
	}
	v := &verifier{r: im.tr, h: sha256.New(), size: m.Size, sum: m.SHA256, what: "member " + m.Name}
	if _, err := im.files.Put(ctx, im.fileKey(id), v); err != nil {
		switch {
		case errors.Is(err, ErrDamaged):
			return err
		case errors.Is(err, errMismatch):
			return fmt.Errorf("%w: %v", ErrDamaged, err)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return fmt.Errorf("%w: %s: %v", ErrDamaged, m.Name, err)
		}
		return fmt.Errorf("store the file of upload %d: %w", id, err)
	}
	im.sum.Files++
	im.sum.FileBytes += size
	return nil
}

// activate makes the imported tenant's later ids exceed every id it
// holds (and, where the tenant has a counter of its own, every id it had
// drawn), then makes it active: from then on the service serves it.
func (im *importer) activate(ctx context.Context) error {
	// The time totals are the entries' sums, which no archive carries:
	// computed here, a batch of entries a transaction, while no one
	// writes to the tenant.
	run := func(fn func(q tally.Querier) error) error {
		return im.db.Tx(ctx, func(q store.Querier) error { return fn(q) })
	}
	if err := tally.Rebuild(ctx, run, im.tenantID, im.db.StoredDoc()); err != nil {
		return err
	}
	if err := im.db.Tx(ctx, func(q store.Querier) error {
		return im.db.ReserveIDs(ctx, q, im.tenantID, im.ids.high, im.lastID)
	}); err != nil {
		return err
	}
	// The planner's statistics should know the tenant's many rows before
	// its first request does: a tenant of a few hundred thousand time
	// entries arrives at once, and SQLite renews statistics only when a
	// table has grown tenfold, PostgreSQL's autovacuum within a minute or
	// so (docs/decisions.md "Statistics for the query planner").
	var grown []string
	for _, name := range tableNames() {
		if im.sum.Rows[name] >= analyzeAfter && name != "audit_log" { // analyzed before its chain was read
			grown = append(grown, name)
		}
	}
	if err := im.db.Analyze(ctx, grown...); err != nil {
		return err
	}
	_, err := im.db.SetTenantState(ctx, im.slug, store.TenantActive, store.TenantImporting)
	return err
}

// countingReader counts what it reads.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// archiveReader reads the archive's decompressed stream; once it is known
// to be an archive, an error reading it (a truncated or corrupted
// stream) is ErrDamaged.
type archiveReader struct {
	r       io.Reader
	archive bool
}

func (a *archiveReader) Read(p []byte) (int, error) {
	n, err := a.r.Read(p)
	if err != nil && a.archive && !errors.Is(err, io.EOF) && !errors.Is(err, ErrDamaged) {
		err = fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return n, err
}
