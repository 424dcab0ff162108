package files_test

// Downloads answer HEAD and byte ranges (docs/api.md "Downloads": 206,
// RFC 9110 §14): one range → 206 with Content-Range;
// a range past the end → 416 with `Content-Range: bytes */SIZE`; a Range
// header that is malformed, of another unit, asks for several ranges or
// comes with HEAD is ignored: the whole file.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// rangeCase is a Range header and the answer it gets from a file of
// 100 bytes: the status, the bytes [from, to) of the file and the
// Content-Range.
type rangeCase struct {
	name, rng string
	status    int
	from, to  int
	cr        string
	// service: only the service answers so; S3's own links differ.
	service bool
}

var rangeCases = []rangeCase{
	{name: "none", status: 200, to: 100},
	{name: "first ten", rng: "bytes=0-9", status: 206, to: 10, cr: "bytes 0-9/100"},
	{name: "suffix", rng: "bytes=-5", status: 206, from: 95, to: 100, cr: "bytes 95-99/100"},
	{name: "open end", rng: "bytes=5-", status: 206, from: 5, to: 100, cr: "bytes 5-99/100"},
	{name: "last byte", rng: "bytes=99-99", status: 206, from: 99, to: 100, cr: "bytes 99-99/100"},
	{name: "end past the end", rng: "bytes=90-200", status: 206, from: 90, to: 100, cr: "bytes 90-99/100"},
	{name: "suffix longer than the file", rng: "bytes=-500", status: 206, to: 100, cr: "bytes 0-99/100"},
	{name: "spaces in the list", rng: "bytes= 10-19 ", status: 206, from: 10, to: 20, cr: "bytes 10-19/100", service: true},
	{name: "unit in capitals", rng: "Bytes=0-9", status: 206, to: 10, cr: "bytes 0-9/100", service: true},
	{name: "start at the end", rng: "bytes=100-", status: 416, cr: "bytes */100"},
	{name: "beyond the end", rng: "bytes=200-300", status: 416, cr: "bytes */100"},
	{name: "empty suffix", rng: "bytes=-0", status: 416, cr: "bytes */100"},
	{name: "start too big for 64 bits", rng: "bytes=99999999999999999999-", status: 416, cr: "bytes */100", service: true},
	{name: "malformed", rng: "bytes=abc", status: 200, to: 100},
	{name: "reversed", rng: "bytes=9-0", status: 200, to: 100},
	{name: "signed", rng: "bytes=+1-9", status: 200, to: 100, service: true},
	{name: "no range", rng: "bytes=", status: 200, to: 100, service: true},
	{name: "other unit", rng: "items=0-9", status: 200, to: 100},
	{name: "two ranges", rng: "bytes=0-1,4-5", status: 200, to: 100},
	{name: "one of two satisfiable", rng: "bytes=0-1,200-300", status: 200, to: 100},
}

// rangeSecret is the --url-secret of the servers of these tests.
const rangeSecret = "k"

// served starts a server and uploads a file of size bytes, r.pdf, to a
// new Document.
func served(t *testing.T, b testenv.Backend, fb testenv.FileBackend, seed uint64, size int) (*env, []byte, upload) {
	t.Helper()
	e := start(t, b, fb, func(c *config.Config) { c.URLSecret = rangeSecret })
	_, doc := e.admin.Document(t)
	data := testenv.Data(seed, size)
	up := uploadOK(t, e.admin, "document", doc, false, testenv.Part{Filename: "r.pdf", ContentType: "application/pdf", Data: data})
	return e, data, up
}

// servedLink serves a file of 100 bytes and returns its service link
// and the headers of a GET of it.
func servedLink(t *testing.T, b testenv.Backend, fb testenv.FileBackend, seed uint64) (*env, []byte, string, http.Header) {
	t.Helper()
	e, data, up := served(t, b, fb, seed, 100)
	link := blobLink(e, up.ID)
	status, get, raw := fetchRange(t, http.MethodGet, link, "")
	if status != http.StatusOK || !bytes.Equal(raw, data) {
		t.Fatalf("GET %s: %d, %d bytes", link, status, len(raw))
	}
	return e, data, link, get
}

// blobLink is the service's own signed link to an upload.
func blobLink(e *env, id int64) string {
	expires := time.Now().Add(30 * time.Second).Unix()
	return fmt.Sprintf("%s/v1/files/blob/%d?tenant=%d&expires=%d&signature=%s",
		e.srv.URL, id, e.tn.ID, expires, sign(rangeSecret, e.tn.ID, id, expires))
}

func fetchRange(t *testing.T, method, link, rng string, more ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rng != "" {
		req.Header.Set("Range", rng)
	}
	for i := 0; i+1 < len(more); i += 2 {
		req.Header.Set(more[i], more[i+1])
	}
	return testenv.Do(t, req)
}

// wantDownloadHeaders checks the headers every answer of the service's
// download links carries, whatever its status.
func wantDownloadHeaders(t *testing.T, what string, hdr http.Header) {
	t.Helper()
	for k, v := range map[string]string{"Content-Security-Policy": "sandbox", "X-Content-Type-Options": "nosniff",
		"Cache-Control": "private, no-store", "Content-Disposition": `attachment; filename="r.pdf"`} {
		if got := hdr.Get(k); got != v {
			t.Errorf("%s: %s %q, want %q", what, k, got, v)
		}
	}
}

// TestDownloadRanges: every form of Range, on the service's links (both
// stores) and on the S3 store's own presigned links (downloads=presigned),
// answers the bytes asked for, exactly.
func TestDownloadRanges(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		e, data, up := served(t, b, fb, 90, 100)
		links := map[string]string{"service": blobLink(e, up.ID)}
		if got := e.admin.DownloadURL(t, up.ID); mustURL(t, got).Path != mustURL(t, links["service"]).Path {
			t.Errorf("download URL %s, want the service's link", got)
		}
		if fb.Name == "s3" {
			pe := presigned(t, b)
			_, doc := pe.admin.Document(t)
			pup := uploadOK(t, pe.admin, "document", doc, false, testenv.Part{Filename: "r.pdf", ContentType: "application/pdf", Data: data})
			links["store"] = pe.admin.DownloadURL(t, pup.ID)
		}
		for via, link := range links {
			for _, c := range rangeCases {
				if c.service && via != "service" {
					continue
				}
				what := fmt.Sprintf("%s link, %s (%q)", via, c.name, c.rng)
				status, hdr, raw := fetchRange(t, http.MethodGet, link, c.rng)
				if status != c.status {
					t.Errorf("%s: %d, want %d: %.200s", what, status, c.status, raw)
					continue
				}
				if status == http.StatusRequestedRangeNotSatisfiable {
					if via == "store" {
						continue // S3 answers in XML, without Content-Range
					}
					var body struct{ Code string }
					if err := json.Unmarshal(raw, &body); err != nil || body.Code != "range_not_satisfiable" {
						t.Errorf("%s: body %q, want the JSON error range_not_satisfiable", what, raw)
					}
				} else if want := data[c.from:c.to]; !bytes.Equal(raw, want) {
					t.Errorf("%s: %d bytes %x, want %d bytes %x", what, len(raw), raw, len(want), want)
				}
				if got := hdr.Get("Content-Range"); got != c.cr {
					t.Errorf("%s: Content-Range %q, want %q", what, got, c.cr)
				}
				if cl := hdr.Get("Content-Length"); cl != strconv.Itoa(len(raw)) {
					t.Errorf("%s: Content-Length %q for %d bytes", what, cl, len(raw))
				}
				if via != "service" {
					continue
				}
				wantDownloadHeaders(t, what, hdr)
				if status != http.StatusRequestedRangeNotSatisfiable && hdr.Get("Accept-Ranges") != "bytes" {
					t.Errorf("%s: Accept-Ranges %q", what, hdr.Get("Accept-Ranges"))
				}
			}
		}
	})
}

// TestDownloadHead: HEAD answers the headers of a GET without the body;
// a Range header does not make it partial (RFC 9110 defines ranges for
// GET only).
func TestDownloadHead(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		_, _, link, get := servedLink(t, b, fb, 91)
		for _, rng := range []string{"", "bytes=0-9", "bytes=200-", "bytes=0-1,4-5"} {
			what := fmt.Sprintf("HEAD (%q)", rng)
			status, hdr, raw := fetchRange(t, http.MethodHead, link, rng)
			if status != http.StatusOK || len(raw) != 0 {
				t.Errorf("%s: %d with %d bytes, want 200 without a body", what, status, len(raw))
			}
			for _, k := range []string{"Content-Type", "Content-Length", "Content-Disposition", "ETag", "Last-Modified",
				"Accept-Ranges", "Cache-Control", "Content-Security-Policy", "X-Content-Type-Options"} {
				if hdr.Get(k) != get.Get(k) || hdr.Get(k) == "" {
					t.Errorf("%s: %s %q, GET has %q", what, k, hdr.Get(k), get.Get(k))
				}
			}
			if hdr.Get("Content-Range") != "" {
				t.Errorf("%s: Content-Range %q", what, hdr.Get("Content-Range"))
			}
		}
	})
}

// TestDownloadIfRange: a range comes only while the file is the one the
// client names in If-Range, by its strong ETag or its Last-Modified;
// otherwise the whole file.
func TestDownloadIfRange(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		e, data, link, get := servedLink(t, b, fb, 92)
		etag, modified := get.Get("ETag"), get.Get("Last-Modified")
		lm, err := http.ParseTime(modified)
		if len(etag) < 3 || etag[0] != '"' || err != nil {
			t.Fatalf("ETag %q, Last-Modified %q: want a strong ETag and a date", etag, modified)
		}
		for _, c := range []struct {
			name, ifRange string
			partial       bool
		}{
			{"same ETag", etag, true},
			{"same date", modified, true},
			{"other ETag", `"other"`, false},
			{"weak ETag", "W/" + etag, false},
			{"earlier date", lm.Add(-time.Hour).Format(http.TimeFormat), false},
		} {
			status, hdr, raw := fetchRange(t, http.MethodGet, link, "bytes=10-19", "If-Range", c.ifRange)
			want, wantStatus := data, http.StatusOK
			if c.partial {
				want, wantStatus = data[10:20], http.StatusPartialContent
			}
			if status != wantStatus || !bytes.Equal(raw, want) {
				t.Errorf("If-Range %s: %d with %d bytes, want %d with %d", c.name, status, len(raw), wantStatus, len(want))
			}
			if c.partial && hdr.Get("Content-Range") != "bytes 10-19/100" {
				t.Errorf("If-Range %s: Content-Range %q", c.name, hdr.Get("Content-Range"))
			}
		}
		// Another upload's bytes have another ETag.
		_, doc2 := e.admin.Document(t)
		up2 := uploadOK(t, e.admin, "document", doc2, false, testenv.Part{Filename: "r.pdf", Data: data})
		if _, hdr, _ := fetchRange(t, http.MethodGet, blobLink(e, up2.ID), ""); hdr.Get("ETag") == etag {
			t.Errorf("two uploads share the ETag %s", etag)
		}
	})
}

// TestDownloadEmptyRange: an empty file has no byte to range over; a
// Range header gets the (empty) whole file, as net/http answers it.
func TestDownloadEmptyRange(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		e, _, up := served(t, b, fb, 93, 0)
		for _, rng := range []string{"bytes=0-9", "bytes=-5", "bytes=-0"} {
			status, hdr, raw := fetchRange(t, http.MethodGet, blobLink(e, up.ID), rng)
			if status != http.StatusOK || len(raw) != 0 || hdr.Get("Content-Length") != "0" {
				t.Errorf("%q on an empty file: %d, %d bytes, Content-Length %q", rng, status, len(raw), hdr.Get("Content-Length"))
			}
		}
	})
}
