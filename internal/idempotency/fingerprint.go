package idempotency

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"
	"sync"
)

// fingerprint is the request body as the handler reads it, hashed on the
// way with the method, path, query and media type (the Content-Type
// without parameters): SHA-256 over what identifies the request, without
// keeping the body. A multipart body is hashed by its
// parts (headers and content, in order), not its bytes: clients choose a
// new boundary for every request, retries included.
type fingerprint struct {
	hash  hash.Hash
	body  io.ReadCloser
	parts *partHasher // nil: the body's bytes are hashed as they are
	// capped: the body ended at the edge's size cap; err: it broke off
	// (the client went away or stalled); either ends the reading.
	capped bool
	err    error
	eof    bool
	sealed []byte
}

// newFingerprint starts the fingerprint of r; limit, if set, wraps a
// multipart body before its parts are parsed.
func newFingerprint(r *http.Request, limit func(io.Reader, string) io.Reader) *fingerprint {
	f := &fingerprint{hash: sha256.New(), body: r.Body}
	contentType := r.Header.Get("Content-Type")
	mediaType, _, _ := mime.ParseMediaType(contentType)
	for _, s := range []string{r.Method, r.URL.Path, r.URL.RawQuery, mediaType} {
		writeField(f.hash, []byte(s))
	}
	if boundary, ok := multipartBoundary(contentType); ok {
		f.parts = newPartHasher(f.hash, boundary, limit)
	}
	return f
}

// writeField writes b with its length, so that fields cannot run into
// each other.
func writeField(h hash.Hash, b []byte) {
	_ = binary.Write(h, binary.BigEndian, uint64(len(b)))
	h.Write(b)
}

func multipartBoundary(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

func (f *fingerprint) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	n, err := f.body.Read(p)
	if n > 0 {
		if f.parts != nil {
			f.parts.write(p[:n])
		} else {
			f.hash.Write(p[:n])
		}
	}
	var mbe *http.MaxBytesError
	switch {
	case err == nil:
	case errors.Is(err, io.EOF):
		f.eof = true
	case errors.As(err, &mbe):
		f.capped = true
	default:
		f.err = err
	}
	return n, err
}

func (f *fingerprint) Close() error { return f.body.Close() }

// drain reads the rest of the body, so that the fingerprint covers all of
// it however much the handler read. The edge caps the body's size.
func (f *fingerprint) drain() {
	if !f.eof && !f.capped && f.err == nil {
		_, _ = io.Copy(io.Discard, f)
	}
}

// sum seals the fingerprint: what was read, and how the body ended.
func (f *fingerprint) sum() []byte {
	if f.sealed == nil {
		f.close()
		end := []byte{'.'}
		switch {
		case f.capped:
			end = []byte("capped")
		case f.err != nil || !f.eof:
			end = []byte("broken")
		}
		writeField(f.hash, end)
		f.sealed = f.hash.Sum(nil)
	}
	return f.sealed
}

// close ends the part hasher, if any; no more body is hashed.
func (f *fingerprint) close() {
	if f.parts != nil {
		f.parts.close()
	}
}

// partHasher hashes a multipart body by its parts while it streams: the
// request's reads hand their bytes through a pipe to a parser of its own,
// and each returns when the parser has taken them, so that nothing is
// buffered beyond the parser's window.
type partHasher struct {
	pw   *io.PipeWriter
	done chan struct{}
	once sync.Once
}

func newPartHasher(h hash.Hash, boundary string, limit func(io.Reader, string) io.Reader) *partHasher {
	pr, pw := io.Pipe()
	p := &partHasher{pw: pw, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		// Part headers are limited as in the upload handler: the hasher
		// buffers no more of them than the handler does.
		var body io.Reader = pr
		if limit != nil {
			body = limit(pr, boundary)
		}
		hashParts(h, multipart.NewReader(body, boundary))
		// What follows the parts (the epilogue, or the rest after framing
		// that does not parse) is read, not hashed: its split between the
		// parser's buffer and this read depends on how the body arrived.
		_, _ = io.Copy(io.Discard, pr)
	}()
	return p
}

func (p *partHasher) write(b []byte) { _, _ = p.pw.Write(b) }

// close ends the body and waits until the parser has hashed it all.
func (p *partHasher) close() {
	p.once.Do(func() {
		p.pw.Close()
		<-p.done
	})
}

// hashParts hashes each part's header fields (sorted) and content, and
// how the parts ended: at the closing boundary, or where the framing
// broke.
func hashParts(h hash.Hash, mr *multipart.Reader) {
	for {
		part, err := mr.NextRawPart()
		if errors.Is(err, io.EOF) {
			writeField(h, []byte("end"))
			return
		}
		if err != nil {
			writeField(h, []byte("malformed"))
			return
		}
		names := make([]string, 0, len(part.Header))
		for name := range part.Header {
			names = append(names, name)
		}
		slices.Sort(names)
		writeField(h, []byte("part"))
		for _, name := range names {
			writeField(h, []byte(name))
			_ = binary.Write(h, binary.BigEndian, uint64(len(part.Header[name])))
			for _, v := range part.Header[name] {
				writeField(h, []byte(v))
			}
		}
		n, err := io.Copy(h, part)
		_ = binary.Write(h, binary.BigEndian, uint64(n))
		if err != nil {
			writeField(h, []byte("malformed"))
			return
		}
	}
}
