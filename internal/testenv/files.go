package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"strings"
	"testing"
)

// EachFileStore runs fn on both databases, each with both file stores.
func EachFileStore(t *testing.T, fn func(t *testing.T, b Backend, fb FileBackend)) {
	t.Helper()
	Each(t, func(t *testing.T, b Backend) {
		EachFiles(t, func(t *testing.T, fb FileBackend) { fn(t, b, fb) })
	})
}

// OtherTenant creates a tenant whose record ids lie past those of the
// tenants made before it (on SQLite ids count per tenant), so that an id
// of its records never names one of theirs.
func (s *Server) OtherTenant(t testing.TB, slug string) Tenant {
	t.Helper()
	tn := s.CreateTenant(t, slug)
	for range 200 {
		if _, err := s.Service.DB.NewID(context.Background(), s.Service.DB, tn.ID); err != nil {
			t.Fatal(err)
		}
	}
	return tn
}

// Part is one part of a multipart/form-data body.
type Part struct {
	Field       string // default "file"
	Filename    string
	Disposition string // a whole Content-Disposition header, instead of Field and Filename
	ContentType string // default application/octet-stream
	Data        []byte
}

var quoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// Header is the part's MIME header.
func (p Part) Header() textproto.MIMEHeader {
	h := textproto.MIMEHeader{}
	disp := p.Disposition
	if disp == "" {
		field := p.Field
		if field == "" {
			field = "file"
		}
		disp = fmt.Sprintf(`form-data; name="%s"; filename="%s"`, field, quoteEscaper.Replace(p.Filename))
	}
	h.Set("Content-Disposition", disp)
	ct := p.ContentType
	if ct == "" {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	return h
}

// Multipart returns the content type and the body of a
// multipart/form-data request of the parts.
func Multipart(t testing.TB, parts ...Part) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for _, p := range parts {
		w, err := mw.CreatePart(p.Header())
		if err == nil {
			_, err = w.Write(p.Data)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), buf.Bytes()
}

// UploadPath is the path that uploads a file to a record; replace adds
// delete_others=1.
func UploadPath(model string, record int64, replace bool) string {
	p := fmt.Sprintf("/v1/files/upload/%s/%d", model, record)
	if replace {
		p += "?delete_others=1"
	}
	return p
}

// Upload posts the parts to path as multipart/form-data.
func (c *Client) Upload(t testing.TB, path string, parts ...Part) (int, http.Header, []byte) {
	t.Helper()
	ct, body := Multipart(t, parts...)
	req := c.Request(t, http.MethodPost, path, body)
	req.Header.Set("Content-Type", ct)
	return Do(t, req)
}

// Document creates a project and a project Document on it: a record to
// attach files to.
func (c *Client) Document(t testing.TB) (project, doc int64) {
	t.Helper()
	project = ID(t, c.Create(t, "projects", M{"name": "P"}))
	doc = ID(t, c.Create(t, "documents", M{"model": "project", "record": project, "category": 7}))
	return project, doc
}

// DownloadURL asks for the signed URL of an upload, which must answer 200
// with an absolute http(s) URL.
func (c *Client) DownloadURL(t testing.TB, id int64) string {
	t.Helper()
	path := fmt.Sprintf("/v1/files/download/%d", id)
	status, hdr, raw := c.Send(t, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Errorf("GET %s: Content-Type %q", path, hdr.Get("Content-Type"))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("GET %s: answer is not a JSON string: %q", path, raw)
	}
	u, err := url.Parse(s)
	if err != nil || !u.IsAbs() || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		t.Fatalf("download URL %q is not an absolute http(s) URL", s)
	}
	return s
}

// Fetch requests a URL as a plain client: no token, no tenant header.
func Fetch(t testing.TB, method, u string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	return Do(t, req)
}

// Download fetches an upload's bytes through its signed URL.
func (c *Client) Download(t testing.TB, id int64) []byte {
	t.Helper()
	status, _, raw := Fetch(t, http.MethodGet, c.DownloadURL(t, id))
	if status != http.StatusOK {
		t.Fatalf("GET signed URL of %d: %d %s", id, status, raw)
	}
	return raw
}

// Data is n deterministic bytes, distinct per seed.
func Data(seed uint64, n int) []byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b)
	return b
}

// UploadFile attaches one file to a record (replacing its file) and
// returns the upload's id.
func (c *Client) UploadFile(t testing.TB, model string, record int64, p Part) int64 {
	t.Helper()
	status, _, raw := c.Upload(t, fmt.Sprintf("/v1/files/upload/%s/%d?delete_others=1", model, record), p)
	if status != http.StatusCreated {
		t.Fatalf("upload to %s %d: %d %s", model, record, status, raw)
	}
	return ID(t, Decode(t, raw))
}
