package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"planwerk/internal/fault"
)

// Folder keeps files on local disk. A file is written to a temporary
// name, synced, and renamed into place, and the folder is synced: after a
// crash a key holds either nothing or the complete file.
type Folder struct {
	root string
}

func openFolder(root string) (*Folder, error) {
	if root == "" {
		return nil, errors.New("file store: empty folder path")
	}
	if err := os.MkdirAll(root, 0o750); err != nil {
		return nil, diskError("create folder", err)
	}
	return &Folder{root: root}, nil
}

// diskError marks a failure of the disk: full, or otherwise failing.
func diskError(op string, err error) error {
	err = fmt.Errorf("file store: %s: %w", op, err)
	if fault.NoSpace(err) {
		return fault.Full(fault.FileStore, err)
	}
	return fault.Unavailable(fault.FileStore, err)
}

// path maps a key to a file; keys are Planwerk's own ("T/ID-RANDOM"),
// never client text, and are checked anyway.
func (f *Folder) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return "", fmt.Errorf("file store: bad key %q", key)
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// Put implements Store. Errors of r come back unchanged; the disk's own
// are marked (full, or failing); whatever the error, the temporary file
// is removed.
func (f *Folder) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	dst, err := f.path(key)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return 0, diskError("put", err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return 0, diskError("put", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := f.copy(ctx, tmp, r)
	if err != nil {
		return n, err
	}
	if err := tmp.Sync(); err != nil {
		return n, diskError("sync", err)
	}
	if err := tmp.Close(); err != nil {
		return n, diskError("put", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return n, diskError("put", err)
	}
	ok = true
	return n, syncDir(dir)
}

// copy writes what r yields to tmp and tells apart whose error ended it:
// the disk's (marked), the end of ctx (wrapped), or r's own (unchanged,
// so that callers recognise the errors of their readers).
func (f *Folder) copy(ctx context.Context, tmp *os.File, r io.Reader) (int64, error) {
	w := &errWriter{w: tmp}
	n, err := io.CopyBuffer(w, readerWithContext(ctx, r), make([]byte, 256<<10))
	switch {
	case err == nil:
		return n, nil
	case w.err != nil:
		return n, diskError("write", w.err)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return n, fmt.Errorf("file store: put: %w", err)
	}
	return n, err
}

// errWriter remembers the error of its writer. It also hides the
// file's ReadFrom, so that the copy goes through the buffer given.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	n, err := e.w.Write(p)
	if err != nil {
		e.err = err
	}
	return n, err
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return diskError("sync folder", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return diskError("sync folder", err)
	}
	return nil
}

// Open implements Store.
func (f *Folder) Open(_ context.Context, key string) (io.ReadSeekCloser, int64, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, 0, err
	}
	file, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, diskError("open", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, 0, diskError("open", err)
	}
	return file, st.Size(), nil
}

// Delete implements Store.
func (f *Folder) Delete(_ context.Context, key string) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return diskError("delete", err)
	}
	return nil
}

// Presign implements Store: a folder has no URLs of its own.
func (f *Folder) Presign(context.Context, string, string, string, time.Duration) (string, error) {
	return "", nil
}

// Ping implements Store.
func (f *Folder) Ping(context.Context) error {
	st, err := os.Stat(f.root)
	if err != nil {
		return diskError("ping", err)
	}
	if !st.IsDir() {
		return diskError("ping", fmt.Errorf("%s is not a folder", f.root))
	}
	return nil
}

// FreeBytes implements SpaceReporter: the space left on the folder's file
// system for ordinary users (the blocks reserved for root do not count).
func (f *Folder) FreeBytes() (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(f.root, &st); err != nil {
		return 0, diskError("free space", err)
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}

// Walk implements Store. It walks only the folder that holds the keys of
// prefix (a tenant's "tID/").
func (f *Folder) Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error {
	start := f.root
	if i := strings.LastIndexByte(prefix, '/'); i > 0 {
		dir, err := f.path(prefix[:i])
		if err != nil {
			return err
		}
		start = dir
	}
	return filepath.WalkDir(start, func(path string, d os.DirEntry, err error) error {
		if errors.Is(err, os.ErrNotExist) && path != f.root {
			return nil // removed meanwhile
		}
		if err != nil {
			return diskError("walk", err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil // removed meanwhile
		}
		rel, err := filepath.Rel(f.root, path)
		if err != nil {
			return err
		}
		if key := filepath.ToSlash(rel); strings.HasPrefix(key, prefix) {
			return fn(key, info.ModTime())
		}
		return nil
	})
}

// WalkIncomplete implements Store: a folder has no multipart writes.
func (f *Folder) WalkIncomplete(context.Context, string, func(Incomplete) error) error { return nil }

// AbortIncomplete implements Store: a folder has no multipart writes.
func (f *Folder) AbortIncomplete(context.Context, Incomplete) error { return nil }

// readerWithContext stops a copy when ctx ends.
func readerWithContext(ctx context.Context, r io.Reader) io.Reader {
	return ctxReader{ctx, r}
}

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
