package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// FuzzUploadBody sends arbitrary multipart bodies and Content-Type headers
// to the upload endpoint of a real server: the answer is never a 5xx, a
// 201 describes exactly the stored upload, and a stored filename keeps
// only the characters docs/api.md "Stored filenames" allows.
func FuzzUploadBody(f *testing.F) {
	const boundary = "XyZ"
	part := func(headers, body string) string {
		return "--" + boundary + "\r\n" + headers + "\r\n\r\n" + body + "\r\n--" + boundary + "--\r\n"
	}
	ct := "multipart/form-data; boundary=" + boundary
	f.Add(ct, part(`Content-Disposition: form-data; name="file"; filename="Grüße-2026 (final).pdf"`+"\r\nContent-Type: application/pdf", "%PDF-1.7"))
	f.Add(ct, part(`Content-Disposition: form-data; name="file"; filename="../../etc/passwd"`, "root"))
	f.Add(ct, part(`Content-Disposition: form-data; name="file"; filename*=UTF-8''%C3%A4%C3%B6.txt`, "x"))
	f.Add(ct, part(`Content-Disposition: form-data; name="file"`, ""))
	f.Add(ct, part(`Content-Disposition: form-data; name="other"`, "no file part"))
	f.Add(ct, "--"+boundary+"\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\"\r\n\r\nunterminated")
	f.Add(ct, "")
	f.Add("multipart/form-data", part(`Content-Disposition: form-data; name="file"; filename="a"`, "x"))
	f.Add("multipart/form-data; boundary=", "--\r\n")
	f.Add("text/plain", "just text")
	f.Add(ct, part(`Content-Disposition: form-data; name="file"; filename="`+strings.Repeat("ä", 300)+`"`, "long name"))
	f.Add(ct, part("Content-Disposition: form-data; name=\"file\"; filename=\"\x00\x01\"", "control"))

	srv := testenv.Start(f, testenv.Backend{Name: "sqlite"}, func(c *config.Config) {
		c.MaxUploadBytes = 64 << 10
		c.FileRate = 1 << 30
	})
	c := srv.SignIn(f, srv.CreateTenant(f, "fuzz"))
	project := c.Create(f, "projects", testenv.M{"name": "P"})
	doc := c.Create(f, "documents", testenv.M{"model": "project", "record": testenv.ID(f, project), "category": 7})
	uploadPath := fmt.Sprintf("/v1/files/upload/document/%d?delete_others=1", testenv.ID(f, doc))

	f.Fuzz(func(t *testing.T, contentType, body string) {
		// The raw client, not Send: a Content-Type that no request may
		// carry makes the client refuse to send, which is skipped here,
		// where Send would fail the run.
		resp, err := http.DefaultClient.Do(c.With("Content-Type", contentType).Request(t, http.MethodPost, uploadPath, body))
		if err != nil {
			t.Skip("not a request an HTTP client sends:", err)
		}
		var answer testenv.M
		_ = json.NewDecoder(resp.Body).Decode(&answer)
		resp.Body.Close()
		status := resp.StatusCode
		if status >= 500 {
			t.Fatalf("status %d for Content-Type %q body %q: %v", status, contentType, body, answer)
		}
		if status != 201 {
			return
		}
		name, _ := answer["filename"].(string)
		if name == "" {
			t.Fatalf("201 without a filename: %v", answer)
		}
		for _, r := range name {
			ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '.' ||
				strings.ContainsRune("äöüÄÖÜß", r)
			if !ok {
				t.Fatalf("stored filename %q keeps %q", name, r)
			}
		}
	})
}
