package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// FuzzUploadBody sends arbitrary multipart bodies and Content-Type headers
// to the upload endpoint of a real server: the answer is never a 5xx, a
// 201 describes exactly the stored upload, and a stored filename keeps
// only the characters SPEC.md allows.
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
	tn := srv.CreateTenant(f, "fuzz")
	form := passwordForm(tn)
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", tn.Slug)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.Fatal(err)
	}
	var tok map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	token, _ := tok["access_token"].(string)
	post := func(path, contentType string, body io.Reader) (int, map[string]any, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, body)
		req.Header.Set("companyurl", tn.Slug)
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		var m map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&m)
		return resp.StatusCode, m, nil
	}
	_, project, _ := post("/v1/projects", "application/json", strings.NewReader(`{"name":"P"}`))
	_, doc, _ := post("/v1/documents", "application/json",
		strings.NewReader(`{"model":"project","record":`+strconv.Itoa(int(project["id"].(float64)))+`,"category":7}`))
	uploadPath := "/v1/files/upload/document/" + strconv.Itoa(int(doc["id"].(float64))) + "?delete_others=1"

	f.Fuzz(func(t *testing.T, contentType, body string) {
		status, answer, err := post(uploadPath, contentType, bytes.NewBufferString(body))
		if err != nil {
			t.Skip("not a request an HTTP client sends:", err)
		}
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
