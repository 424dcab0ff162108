package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
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
		return nil, fmt.Errorf("file store: %w", err)
	}
	return &Folder{root: root}, nil
}

// path maps a key to a file; keys are Planwerk's own ("T/ID-RANDOM"),
// never client text, and are checked anyway.
func (f *Folder) path(key string) (string, error) {
	if key == "" || strings.Contains(key, "..") || strings.HasPrefix(key, "/") {
		return "", fmt.Errorf("file store: bad key %q", key)
	}
	return filepath.Join(f.root, filepath.FromSlash(key)), nil
}

// Put implements Store.
func (f *Folder) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	dst, err := f.path(key)
	if err != nil {
		return 0, err
	}
	dir := filepath.Dir(dst)
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return 0, fmt.Errorf("file store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, tempPrefix+"*")
	if err != nil {
		return 0, fmt.Errorf("file store: %w", err)
	}
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	n, err := io.CopyBuffer(tmp, readerWithContext(ctx, r), make([]byte, 256<<10))
	if err != nil {
		return n, err
	}
	if err := tmp.Sync(); err != nil {
		return n, fmt.Errorf("file store: sync: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return n, fmt.Errorf("file store: %w", err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return n, fmt.Errorf("file store: %w", err)
	}
	ok = true
	if err := syncDir(dir); err != nil {
		return n, err
	}
	return n, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("file store: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("file store: sync folder: %w", err)
	}
	return nil
}

// Open implements Store.
func (f *Folder) Open(_ context.Context, key string) (io.ReadCloser, int64, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, 0, err
	}
	file, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("file store: %w", err)
	}
	st, err := file.Stat()
	if err != nil {
		file.Close()
		return nil, 0, fmt.Errorf("file store: %w", err)
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
		return fmt.Errorf("file store: %w", err)
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
		return fmt.Errorf("file store: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("file store: %s is not a folder", f.root)
	}
	return nil
}

// Walk implements Store.
func (f *Folder) Walk(ctx context.Context, fn func(key string, modTime time.Time) error) error {
	return filepath.WalkDir(f.root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
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
		return fn(filepath.ToSlash(rel), info.ModTime())
	})
}

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
