package httpapi_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"testing"

	"planwerk/internal/testenv"
)

// downloadURLVia asks for an upload's signed link with the request's Host
// header set to host.
func downloadURLVia(t *testing.T, u *flUser, id int64, host string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/v1/files/download/%d", u.env.srv.URL, id), nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = host
	req.Header.Set("companyurl", u.slug)
	req.Header.Set("Authorization", "Bearer "+u.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var link string
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &link) != nil {
		t.Fatalf("download URL with Host %q: %d %s", host, resp.StatusCode, raw)
	}
	return link
}

// TestSignedLinkHost: without --public-url, signed links take the
// request's host only when it is the base domain or a tenant host of it;
// any other Host header gets a link to the base domain, never to the host
// the client named.
func TestSignedLinkHost(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		env := flStart(t, b, testenv.FileBackend{Name: "folder"})
		_, doc := flDocument(env.admin)
		up := env.admin.uploadOK("document", doc, false, flFile{filename: "a.txt", data: []byte("hello")})
		port := mustURL(t, env.srv.URL).Port()
		for _, c := range []struct{ host, want string }{
			{"localhost:" + port, "localhost:" + port},
			{"LOCALHOST:" + port, "localhost:" + port},
			{"acme.localhost:" + port, "acme.localhost:" + port},
			{"acme.localhost:8443", "acme.localhost:8443"},
			{"localhost", "localhost"},
			{"evil.example", "localhost:" + port},
			{"evil.example:" + port, "localhost:" + port},
			{"localhost.evil.example", "localhost:" + port},
			{"acme.localhost.evil.example", "localhost:" + port},
			{"127.0.0.1:" + port, "localhost:" + port},
			{"a.b.localhost", "localhost:" + port}, // not a tenant host: "a.b" is no slug
		} {
			link := downloadURLVia(t, env.admin, up.ID, c.host)
			if got := mustURL(t, link).Host; got != c.want {
				t.Errorf("Host %q: link on %q, want %q", c.host, got, c.want)
			}
		}
	})
}

// TestDownloadHeaders: a download through a signed link cannot run as
// a page of the service: it is sandboxed and its type is not sniffed,
// whatever the type of the upload.
func TestDownloadHeaders(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		env := flStart(t, b, testenv.FileBackend{Name: "folder"})
		_, doc := flDocument(env.admin)
		for _, ct := range []string{"text/html", "image/svg+xml", "application/pdf"} {
			up := env.admin.uploadOK("document", doc, true, flFile{filename: "x", contentType: ct, data: []byte("<script>alert(1)</script>")})
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				status, hdr, _ := flFetch(t, method, env.admin.downloadURL(up.ID))
				if status != http.StatusOK || hdr.Get("Content-Security-Policy") != "sandbox" || hdr.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s %s download: %d, CSP %q, nosniff %q", method, ct, status, hdr.Get("Content-Security-Policy"), hdr.Get("X-Content-Type-Options"))
				}
			}
		}
	})
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
