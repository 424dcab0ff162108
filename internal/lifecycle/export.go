package lifecycle

import (
	"archive/tar"
	"bufio"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/filestore"
	"planwerk/internal/store"
)

// ExportOptions say what an export holds and where it keeps its rows
// meanwhile.
type ExportOptions struct {
	// Secrets includes the users' password hashes, the API clients'
	// hashed secrets and the webhooks' secrets: an operator's export, from
	// which Import makes the tenant again. Without them (a tenant's own
	// export of its data) those values are null.
	Secrets bool
	// TempDir is where the tables' rows wait until the archive is
	// written, uncompressed, in a file that is removed at once ("": the
	// system's temporary folder).
	TempDir string
}

// copyBuffer is the size of the buffer bytes are copied through.
const copyBuffer = 256 << 10

// Export writes the archive of the tenant of slug to w: its rows of every
// table in the catalog, read in one snapshot while the service goes on,
// then its files, read from files by the uploads of that snapshot.
// Memory stays bounded whatever the tenant's size: rows are read with a
// cursor into a spool (a temporary file in opts.TempDir), files are
// copied through a buffer. Every file is read twice, to learn its
// SHA-256 for the manifest and to copy it, and must be the same both
// times.
func Export(ctx context.Context, db Database, files filestore.Store, slug string, w io.Writer, opts ExportOptions) (Summary, error) {
	t, err := db.TenantBySlug(ctx, slug)
	if err != nil {
		return Summary{}, err
	}
	if t.State == store.TenantImporting || t.State == store.TenantDeleting {
		return Summary{}, fmt.Errorf("tenant %q is %s: %w", slug, t.State, store.ErrNotFound)
	}
	sp, err := newSpool(opts.TempDir)
	if err != nil {
		return Summary{}, err
	}
	defer sp.Close()
	x := &exporter{db: db, files: files, sp: sp, tenantID: t.ID, secrets: opts.Secrets, regions: map[string]region{},
		sum: Summary{Slug: slug, TenantID: t.ID, Rows: map[string]int64{}}, created: time.Now().UTC()}
	if err := db.Snapshot(ctx, func(q store.Querier) error { return x.readTables(ctx, q) }); err != nil {
		return Summary{}, fmt.Errorf("export %s: %w", slug, err)
	}
	if err := x.hashFiles(ctx); err != nil {
		return Summary{}, fmt.Errorf("export %s: %w", slug, err)
	}
	cw := &countingWriter{w: w}
	if err := x.write(ctx, cw); err != nil {
		return Summary{}, fmt.Errorf("export %s: %w", slug, err)
	}
	x.sum.Bytes = cw.n
	return x.sum, nil
}

// exporter is one export's state.
type exporter struct {
	db       Database
	files    filestore.Store
	sp       *spool
	tenantID int64
	secrets  bool
	created  time.Time
	name     string // the tenant's
	// regions hold the tables' members (and the tenant's), keys the
	// uploads' (id, size, storage key) for the files, manifest the
	// manifest.
	regions  map[string]region
	keys     region
	manifest region
	maxID    int64
	sum      Summary
}

// readTables writes every table's member to the spool, in q, the
// snapshot: the tenant's row last, since its last_id counts the ids the
// other tables hold.
func (x *exporter) readTables(ctx context.Context, q store.Querier) error {
	for _, t := range tables {
		r, err := x.table(ctx, q, t)
		if err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		x.regions[t.name] = r
		x.sum.Rows[t.name] = r.lines
	}
	if err := x.uploadKeys(ctx, q); err != nil {
		return err
	}
	r, err := x.tenantRow(ctx, q)
	if err != nil {
		return fmt.Errorf("tenant: %w", err)
	}
	x.regions[tenantTable.name] = r
	x.sum.Rows[tenantTable.name] = r.lines
	return nil
}

// selectList is the SELECT list of cols: a document as the text stored,
// a secret as null when the export leaves secrets out.
func (x *exporter) selectList(cols []column) string {
	names := make([]string, len(cols))
	for i, c := range cols {
		switch {
		case c.secret && !x.secrets:
			names[i] = "NULL"
		case c.kind == kindDoc:
			names[i] = x.db.StoredDoc()
		default:
			names[i] = c.name
		}
	}
	return strings.Join(names, ", ")
}

// table writes the tenant's rows of t to a region of the spool, a line
// each, in the order of t's key.
func (x *exporter) table(ctx context.Context, q store.Querier, t table) (region, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+x.selectList(t.columns)+` FROM `+t.name+` WHERE tenant_id = $1 ORDER BY `+t.key, x.tenantID)
	if err != nil {
		return region{}, err
	}
	defer rows.Close()
	rw := x.sp.begin()
	vals := scanTargets(t.columns)
	var line []byte
	for rows.Next() {
		if err := rows.Scan(vals...); err != nil {
			return region{}, err
		}
		if line, err = appendRow(line[:0], t.columns, vals, &x.maxID); err != nil {
			return region{}, fmt.Errorf("row %d: %w", rw.lines+1, err)
		}
		if len(line) > maxLine+1 {
			return region{}, fmt.Errorf("row %d: %d bytes, more than an import reads (%d MiB)", rw.lines+1, len(line)-1, maxLine>>20)
		}
		if _, err := rw.Write(line); err != nil {
			return region{}, fmt.Errorf("spool: %w", err)
		}
		rw.line()
	}
	if err := rows.Err(); err != nil {
		return region{}, err
	}
	return rw.end()
}

// uploadKeys writes the uploads' ids, sizes and storage keys to a region,
// a line each in the order of their member, for the files.
func (x *exporter) uploadKeys(ctx context.Context, q store.Querier) error {
	rows, err := q.QueryContext(ctx, `SELECT id, size, storage_key FROM uploads WHERE tenant_id = $1 ORDER BY id`, x.tenantID)
	if err != nil {
		return fmt.Errorf("uploads: %w", err)
	}
	defer rows.Close()
	rw := x.sp.begin()
	for rows.Next() {
		var id, size int64
		var key string
		if err := rows.Scan(&id, &size, &key); err != nil {
			return fmt.Errorf("uploads: %w", err)
		}
		if _, err := fmt.Fprintf(rw, "%d\t%d\t%s\n", id, size, key); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		rw.line()
		x.sum.Files++
		x.sum.FileBytes += size
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("uploads: %w", err)
	}
	x.keys, err = rw.end()
	return err
}

// tenantRow writes the tenants row's member: one line, with last_id.
func (x *exporter) tenantRow(ctx context.Context, q store.Querier) (region, error) {
	cols := tenantTable.columns
	vals := scanTargets(cols)
	if err := q.QueryRowContext(ctx, `SELECT `+x.selectList(cols)+` FROM tenants WHERE id = $1`, x.tenantID).Scan(vals...); err != nil {
		return region{}, err
	}
	x.name = vals[1].(*sql.NullString).String
	handed, err := x.db.IDsHandedOut(ctx, q, x.tenantID)
	if err != nil {
		return region{}, err
	}
	line, err := appendRow(nil, cols, vals, new(int64), tenantLastID, strconv.FormatInt(max(handed, x.maxID), 10))
	if err != nil {
		return region{}, err
	}
	rw := x.sp.begin()
	if _, err := rw.Write(line); err != nil {
		return region{}, fmt.Errorf("spool: %w", err)
	}
	rw.line()
	return rw.end()
}

// memberName is the member of a table's rows.
func memberName(table string) string { return table + tableSuffix }

// fileMember is the member of an upload's file.
func fileMember(id int64) string { return filesPrefix + strconv.FormatInt(id, 10) }

// hashFiles writes the manifest to a region: the header, the tables'
// members, and each file's, whose SHA-256 it reads the file for.
func (x *exporter) hashFiles(ctx context.Context) error {
	counts := map[string]int64{"files": x.sum.Files}
	for name, n := range x.sum.Rows {
		counts[name] = n
	}
	rw := x.sp.begin()
	if err := writeManifestHead(rw, Header{Format: FormatName, Version: FormatVersion, Engine: x.db.Engine(),
		CreatedAt: store.Timestamp(x.created), Secrets: x.secrets, Tenant: HeaderTenant{Slug: x.sum.Slug, Name: x.name},
		Counts: counts, FileBytes: x.sum.FileBytes}); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	mw := &manifestWriter{w: rw}
	for _, name := range append([]string{tenantTable.name}, tableNames()...) {
		r := x.regions[name]
		if err := mw.add(Member{Name: memberName(name), Size: r.size, SHA256: r.sum, Rows: &r.lines}); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
	}
	buf := make([]byte, copyBuffer)
	err := x.eachUpload(func(id, size int64, key string) error {
		rc, _, err := x.files.Open(ctx, key)
		if err != nil {
			return fileError(id, err)
		}
		defer rc.Close()
		h := sha256.New()
		n, err := io.CopyBuffer(h, rc, buf)
		if err != nil {
			return fmt.Errorf("file of upload %d: %w", id, err)
		}
		if n != size {
			return fmt.Errorf("file of upload %d: %d bytes, its upload says %d", id, n, size)
		}
		return mw.add(Member{Name: fileMember(id), Size: size, SHA256: hex.EncodeToString(h.Sum(nil))})
	})
	if err != nil {
		return err
	}
	if err := mw.close(); err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	x.manifest, err = rw.end()
	return err
}

// fileError says what a file that cannot be read means.
func fileError(id int64, err error) error {
	if errors.Is(err, filestore.ErrNotFound) {
		return fmt.Errorf("the file of upload %d was removed after the snapshot was taken (the upload was deleted or replaced meanwhile): export again", id)
	}
	return fmt.Errorf("file of upload %d: %w", id, err)
}

// eachUpload calls fn with each upload's id, size and storage key, in
// the order of their members.
func (x *exporter) eachUpload(fn func(id, size int64, key string) error) error {
	sc := bufio.NewScanner(x.sp.reader(x.keys))
	for sc.Scan() {
		f := strings.SplitN(sc.Text(), "\t", 3)
		if len(f) != 3 {
			return fmt.Errorf("spool: upload line %q", sc.Text())
		}
		id, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		size, err := strconv.ParseInt(f[1], 10, 64)
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		key := f[2]
		if err := fn(id, size, key); err != nil {
			return err
		}
	}
	return sc.Err()
}

func tableNames() []string {
	names := make([]string, len(tables))
	for i, t := range tables {
		names[i] = t.name
	}
	return names
}

// write writes the archive to w: the manifest, the tables' members from
// the spool, then the files, each checked against its SHA-256 in the
// manifest as it is copied.
func (x *exporter) write(ctx context.Context, w io.Writer) error {
	enc, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return err
	}
	tw := tar.NewWriter(enc)
	buf := make([]byte, copyBuffer)
	put := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Size: size, Mode: 0o600, ModTime: x.created}); err != nil {
			return err
		}
		if _, err := io.CopyBuffer(tw, r, buf); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	if err := put(manifestName, x.manifest.size, x.sp.reader(x.manifest)); err != nil {
		enc.Close()
		return err
	}
	mr, err := readManifest(x.sp.reader(x.manifest))
	if err != nil {
		enc.Close()
		return err
	}
	for range len(tables) + 1 {
		m, _, err := mr.next()
		if err != nil {
			enc.Close()
			return err
		}
		if err := put(m.Name, m.Size, x.sp.reader(x.regions[strings.TrimSuffix(m.Name, tableSuffix)])); err != nil {
			enc.Close()
			return err
		}
	}
	err = x.eachUpload(func(id, _ int64, key string) error {
		m, ok, err := mr.next()
		if err != nil || !ok || m.Name != fileMember(id) {
			return fmt.Errorf("spool: member %q where the file of upload %d was expected (%v)", m.Name, id, err)
		}
		rc, _, err := x.files.Open(ctx, key)
		if err != nil {
			return fileError(id, err)
		}
		defer rc.Close()
		return put(m.Name, m.Size, &verifier{r: rc, h: sha256.New(), size: m.Size, sum: m.SHA256,
			what: fmt.Sprintf("the file of upload %d changed while it was exported", id)})
	})
	if err == nil {
		err = tw.Close()
	}
	if cerr := enc.Close(); err == nil {
		err = cerr
	}
	return err
}

// verifier passes on what r reads and, at its end, checks that it was
// size bytes with the SHA-256 sum: otherwise the end is an error, so
// that a reader that stores what it reads until the end keeps nothing.
type verifier struct {
	r    io.Reader
	h    hash.Hash
	n    int64
	size int64
	sum  string
	what string
}

// errMismatch marks what a verifier refused.
var errMismatch = errors.New("size or SHA-256 differs")

func (v *verifier) Read(p []byte) (int, error) {
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if v.n > v.size {
		return n, fmt.Errorf("%s: %w: more than %d bytes", v.what, errMismatch, v.size)
	}
	if errors.Is(err, io.EOF) && (v.n != v.size || hex.EncodeToString(v.h.Sum(nil)) != v.sum) {
		return n, fmt.Errorf("%s: %w", v.what, errMismatch)
	}
	return n, err
}

// countingWriter counts what it writes.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
