// Package filestore keeps uploaded files: in a folder on local disk, or
// in S3-compatible object storage. Both write a file so that it appears
// under its key only when complete.
package filestore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"
)

// ErrNotFound means no file is stored under the key.
var ErrNotFound = errors.New("file not found")

// Store keeps files under keys.
type Store interface {
	// Put stores everything r yields under key. On any error, including
	// one returned by r, nothing is stored.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open reads a stored file and returns its size. The file seeks, so
	// that a download of a byte range reads only that range's bytes.
	Open(ctx context.Context, key string) (io.ReadSeekCloser, int64, error)
	// Delete removes a file; a missing file is not an error.
	Delete(ctx context.Context, key string) error
	// Presign returns a URL from which a plain GET fetches the file for
	// ttl, or "" when the store has no URLs of its own (the service then
	// signs and serves downloads itself).
	Presign(ctx context.Context, key, filename, contentType string, ttl time.Duration) (string, error)
	// Ping checks that the store can be reached.
	Ping(ctx context.Context) error
	// Walk calls fn for every stored file whose key starts with prefix
	// ("": every one), temporary ones included, with its key and when it
	// was last written.
	Walk(ctx context.Context, prefix string, fn func(key string, modTime time.Time) error) error
	// WalkIncomplete calls fn for every multipart write to a key starting
	// with prefix that was started and neither completed nor aborted. Only
	// S3 has them; a folder's unfinished writes are temporary files, which
	// Walk reports.
	WalkIncomplete(ctx context.Context, prefix string, fn func(Incomplete) error) error
	// AbortIncomplete discards an unfinished multipart write and the parts
	// it holds; one that is already gone is not an error.
	AbortIncomplete(ctx context.Context, u Incomplete) error
}

// Incomplete is an unfinished multipart write, which holds storage until
// it is aborted.
type Incomplete struct {
	Key      string
	UploadID string
	// Started is when the write began, or, where the store tracks it, when
	// it last received a part.
	Started time.Time
}

// SpaceReporter is a Store that knows how much room it has left: the
// folder store does; an S3 bucket has no size to ask for. A readiness
// check uses it to say the store is full before uploads fail.
type SpaceReporter interface {
	// FreeBytes is the space left for new files.
	FreeBytes() (uint64, error)
}

// IsTemporary reports whether a key names an unfinished write.
func IsTemporary(key string) bool {
	base := key[strings.LastIndexByte(key, '/')+1:]
	return strings.HasPrefix(base, tempPrefix)
}

// tempPrefix starts the names of files being written.
const tempPrefix = ".upload-"

// Open returns the store named by spec: a folder path, or
// s3://BUCKET?endpoint=HOST:PORT&region=R&secure=false with credentials
// from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY.
func Open(ctx context.Context, spec string) (Store, error) {
	if strings.HasPrefix(spec, "s3://") {
		u, err := url.Parse(spec)
		if err != nil {
			return nil, fmt.Errorf("file store: %w", err)
		}
		s, err := openS3(ctx, u, os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"))
		if err != nil {
			return nil, err
		}
		return withTracing(s, u.Host), nil
	}
	s, err := openFolder(spec)
	if err != nil {
		return nil, err
	}
	return withTracing(s, ""), nil
}

// ContentDisposition is an attachment header carrying filename, with an
// ASCII fallback and the RFC 6266 / RFC 8187 encoding for other names.
func ContentDisposition(filename string) string {
	ascii := make([]byte, 0, len(filename))
	for _, r := range filename {
		switch {
		case r < 0x20 || r == 0x7f || r == '"' || r == '\\':
			ascii = append(ascii, '_')
		case r < 0x80:
			ascii = append(ascii, byte(r))
		default:
			ascii = append(ascii, '_')
		}
	}
	v := `attachment; filename="` + string(ascii) + `"`
	if string(ascii) != filename {
		v += "; filename*=UTF-8''" + encodeRFC8187(filename)
	}
	return v
}

func encodeRFC8187(s string) string {
	const attrChar = "!#$&+-.^_`|~"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(attrChar, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// Sweep removes the files under prefix last written before cutoff that
// keep does not claim, and returns how many it removed: what a crash left
// between writing a file and recording it. A younger file may belong to a
// write that is about to be recorded, so it stays.
func Sweep(ctx context.Context, s Store, prefix string, cutoff time.Time, keep func(key string) (bool, error)) (int, error) {
	removed := 0
	err := s.Walk(ctx, prefix, func(key string, modTime time.Time) error {
		if !modTime.Before(cutoff) {
			return nil
		}
		if kept, err := keep(key); err != nil || kept {
			return err
		}
		if err := s.Delete(ctx, key); err != nil {
			return err
		}
		removed++
		return nil
	})
	return removed, err
}
