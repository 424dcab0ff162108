package idempotency

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
)

// fingerprintOf fingerprints a request as Serve does: the handler reads
// what read reads (nil: nothing), the rest is drained. The part headers
// are not bounded: the bodies here have small ones.
func fingerprintOf(t *testing.T, target, contentType string, body []byte, limit int64, read func(io.Reader)) []byte {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	if limit > 0 {
		r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, limit)
	}
	f := newFingerprint(r, nil)
	defer f.close()
	if read != nil {
		read(f)
	}
	f.drain()
	return f.sum()
}

// multipartBody encodes parts (name, filename, content) with a fresh
// random boundary.
func multipartBody(t *testing.T, parts ...[3]string) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		w, err := mw.CreateFormFile(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.WriteString(w, p[2])
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// readers are handler-like readers of a body; boundary is the body's,
// if it is multipart.
func readers(boundary string) map[string]func(io.Reader) {
	m := map[string]func(io.Reader){
		"nothing":  nil,
		"all":      func(r io.Reader) { _, _ = io.ReadAll(r) },
		"one byte": func(r io.Reader) { _, _ = io.ReadAll(iotest.OneByteReader(r)) },
		"a little": func(r io.Reader) { _, _ = r.Read(make([]byte, 7)) },
	}
	if boundary != "" {
		// As the upload handler does: the first part, no further.
		m["first part"] = func(r io.Reader) {
			if p, err := multipart.NewReader(iotest.HalfReader(r), boundary).NextPart(); err == nil {
				_, _ = io.Copy(io.Discard, p)
			}
		}
	}
	return m
}

// TestFingerprint: a request's fingerprint does not depend on how much
// of the body the handler read, or in what pieces, nor on the boundary of
// a multipart body; it changes with the method, path, query, body and
// every part.
func TestFingerprint(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("0123456789abcdef", 4000)
	ct1, mp1 := multipartBody(t, [3]string{"file", "a.bin", big}, [3]string{"note", "n.txt", "x"})
	ct2, mp2 := multipartBody(t, [3]string{"file", "a.bin", big}, [3]string{"note", "n.txt", "x"})
	if ct1 == ct2 {
		t.Fatal("the two multipart bodies share a boundary")
	}
	sums := map[string][]byte{}
	same := func(kind, what string, got []byte) {
		t.Helper()
		if want, ok := sums[kind]; ok && !bytes.Equal(got, want) {
			t.Errorf("%s %s: another fingerprint", kind, what)
		}
		sums[kind] = got
	}
	for _, c := range []struct {
		ct   string
		body []byte
	}{{ct1, mp1}, {ct2, mp2}} {
		boundary, _ := multipartBoundary(c.ct)
		for name, read := range readers(boundary) {
			same("multipart", "read "+name+" with boundary "+boundary,
				fingerprintOf(t, "/v1/files/upload/document/1", c.ct, c.body, 0, read))
		}
	}
	for name, read := range readers("") {
		same("JSON", "read "+name, fingerprintOf(t, "/v1/projects", "application/json", []byte(`{"name": "`+big+`"}`), 0, read))
	}

	ctOther, mpOther := multipartBody(t, [3]string{"file", "a.bin", big + "!"}, [3]string{"note", "n.txt", "x"})
	ctName, mpName := multipartBody(t, [3]string{"file", "b.bin", big}, [3]string{"note", "n.txt", "x"})
	ctOne, mpOne := multipartBody(t, [3]string{"file", "a.bin", big})
	others := map[string][]byte{
		"another file":       fingerprintOf(t, "/v1/files/upload/document/1", ctOther, mpOther, 0, nil),
		"another file name":  fingerprintOf(t, "/v1/files/upload/document/1", ctName, mpName, 0, nil),
		"one part fewer":     fingerprintOf(t, "/v1/files/upload/document/1", ctOne, mpOne, 0, nil),
		"another record":     fingerprintOf(t, "/v1/files/upload/document/2", ct1, mp1, 0, nil),
		"a query":            fingerprintOf(t, "/v1/files/upload/document/1?delete_others=1", ct1, mp1, 0, nil),
		"truncated":          fingerprintOf(t, "/v1/files/upload/document/1", ct1, mp1[:len(mp1)/2], 0, nil),
		"another body":       fingerprintOf(t, "/v1/projects", "application/json", []byte(`{"name": "x"}`), 0, nil),
		"another media type": fingerprintOf(t, "/v1/projects", "text/plain", []byte(`{"name": "`+big+`"}`), 0, nil),
		"capped":             fingerprintOf(t, "/v1/projects", "application/json", []byte(`{"name": "`+big+`"}`), 1000, nil),
	}
	seen := map[string]string{}
	for what, sum := range others {
		for kind, s := range sums {
			if bytes.Equal(sum, s) {
				t.Errorf("%s: the fingerprint of the %s request", what, kind)
			}
		}
		if prev, ok := seen[string(sum)]; ok {
			t.Errorf("%s and %s: one fingerprint", what, prev)
		}
		seen[string(sum)] = what
	}
	// A body that fits the cap exactly is whole; one byte more is capped.
	body := []byte(`{"name": "n"}`)
	exact := fingerprintOf(t, "/v1/projects", "application/json", body, int64(len(body)), nil)
	if !bytes.Equal(exact, fingerprintOf(t, "/v1/projects", "application/json", body, 0, nil)) {
		t.Error("a body of exactly the cap: another fingerprint than without a cap")
	}
	if bytes.Equal(exact, fingerprintOf(t, "/v1/projects", "application/json", body, int64(len(body)-1), nil)) {
		t.Error("a body one byte over the cap: the fingerprint of the whole body")
	}
}

// TestRecorderBound: an answer larger than maxKeptAnswer is passed on
// whole but not kept.
func TestRecorderBound(t *testing.T) {
	t.Parallel()
	w := httptest.NewRecorder()
	rec := &recorder{ResponseWriter: w}
	rec.Header().Set("Location", "/v1/projects/1")
	chunk := bytes.Repeat([]byte("x"), 1<<20)
	for range 5 {
		_, _ = rec.Write(chunk)
	}
	if rec.status != http.StatusOK || rec.header["Location"] != "/v1/projects/1" {
		t.Errorf("status %d, headers %v", rec.status, rec.header)
	}
	if !rec.overflow || rec.body.Len() != 0 || w.Body.Len() != 5<<20 {
		t.Errorf("overflow %v, kept %d bytes, passed on %d", rec.overflow, rec.body.Len(), w.Body.Len())
	}
	if keepAnswer(rec, false) {
		t.Error("an answer too large to keep is kept")
	}
}
