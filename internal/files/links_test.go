package files_test

// Downloads through signed links (docs/api.md "Downloads"): what a link is, who it opens for, and what its answer says.

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// sign computes a download signature as internal/files does.
func sign(secret string, tenantID, uploadID, expires int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "planwerk-download\n%d\n%d\n%d", tenantID, uploadID, expires)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// tamper changes the first character of the query parameter to a, or
// to b where it is a already.
func tamper(param string, a, b byte) func(q url.Values) {
	return func(q url.Values) {
		s := []byte(q.Get(param))
		if s[0] == a {
			s[0] = b
		} else {
			s[0] = a
		}
		q.Set(param, string(s))
	}
}

// withQuery is u with its query changed by mod.
func withQuery(u *url.URL, mod func(q url.Values)) string {
	v := *u
	q := v.Query()
	mod(q)
	v.RawQuery = q.Encode()
	return v.String()
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestUploadSignedURLs: the download URL is an absolute signed URL, valid
// without token or tenant header, refused when tampered with or expired.
func TestUploadSignedURLs(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const secret = "k"
		e := start(t, b, fb, func(c *config.Config) { c.URLSecret = secret })
		admin := e.admin
		_, doc := admin.Document(t)
		data := testenv.Data(80, 5000)
		up := uploadOK(t, admin, "document", doc, false, testenv.Part{Filename: "Prüfbericht.txt", ContentType: "text/plain; charset=utf-8", Data: data})
		link := admin.DownloadURL(t, up.ID)
		u := mustURL(t, link)

		status, hdr, raw := testenv.Fetch(t, http.MethodGet, link)
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Fatalf("signed URL: %d, %d bytes", status, len(raw))
		}
		if ct := hdr.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if cl := hdr.Get("Content-Length"); cl != strconv.Itoa(len(data)) {
			t.Errorf("Content-Length %q, want %d", cl, len(data))
		}
		disp, params, err := mime.ParseMediaType(hdr.Get("Content-Disposition"))
		if err != nil || disp != "attachment" || params["filename"] != "Prüfbericht.txt" ||
			!strings.Contains(hdr.Get("Content-Disposition"), "filename*=UTF-8''Pr%C3%BCfbericht.txt") {
			t.Errorf("Content-Disposition %q", hdr.Get("Content-Disposition"))
		}

		with := func(mod func(q url.Values)) string { return withQuery(u, mod) }
		refused := func(what, link string) {
			t.Helper()
			status, _, raw := testenv.Fetch(t, http.MethodGet, link)
			if status != http.StatusForbidden {
				t.Errorf("%s: %d %s, want 403", what, status, raw)
			}
		}

		// The service's own signed URL, on the base domain (the request
		// came to 127.0.0.1, which is not a host of the service's), on the
		// port the request reached.
		port := mustURL(t, e.srv.URL).Port()
		if u.Host != "localhost:"+port || u.Path != fmt.Sprintf("/v1/files/blob/%d", up.ID) {
			t.Errorf("signed URL %s, want it on localhost:%s", link, port)
		}
		q := u.Query()
		expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
		if err != nil {
			t.Fatalf("expires %q", q.Get("expires"))
		}
		if now := time.Now().Unix(); expires < now+20 || expires > now+31 {
			t.Errorf("expires in %d s, want about 30", expires-now)
		}
		if q.Get("tenant") != strconv.FormatInt(e.tn.ID, 10) || q.Get("signature") != sign(secret, e.tn.ID, up.ID, expires) {
			t.Fatalf("signature of %s is not HMAC-SHA256 as expected", link)
		}
		// A HEAD answers the headers.
		if status, hdr, raw := testenv.Fetch(t, http.MethodHead, link); status != http.StatusOK || len(raw) != 0 || hdr.Get("Content-Length") != strconv.Itoa(len(data)) {
			t.Errorf("HEAD: %d, %d bytes, Content-Length %q", status, len(raw), hdr.Get("Content-Length"))
		}

		betaTn, beta := e.tenant(t, "beta")
		_, betaDoc := beta.Document(t)
		betaUp := uploadOK(t, beta, "document", betaDoc, false, file("b", testenv.Data(81, 10)))

		refused("tampered signature", with(tamper("signature", 'A', 'B')))
		refused("no signature", with(func(q url.Values) { q.Del("signature") }))
		refused("signature of another key", with(func(q url.Values) { q.Set("signature", sign("other", e.tn.ID, up.ID, expires)) }))
		refused("later expiry", with(func(q url.Values) { q.Set("expires", strconv.FormatInt(expires+3600, 10)) }))
		refused("earlier expiry", with(func(q url.Values) { q.Set("expires", strconv.FormatInt(expires-1, 10)) }))
		refused("expiry not a number", with(func(q url.Values) { q.Set("expires", "soon") }))
		refused("other tenant", with(func(q url.Values) { q.Set("tenant", strconv.FormatInt(betaTn.ID, 10)) }))
		refused("no tenant", with(func(q url.Values) { q.Del("tenant") }))
		refused("another upload", strings.Replace(link, fmt.Sprintf("/blob/%d?", up.ID), fmt.Sprintf("/blob/%d?", betaUp.ID), 1))
		// Expired: a correct signature with an expiry in the past.
		past := time.Now().Unix() - 1
		refused("expired", with(func(q url.Values) {
			q.Set("expires", strconv.FormatInt(past, 10))
			q.Set("signature", sign(secret, e.tn.ID, up.ID, past))
		}))
		// The same construction with a future expiry works: the refusal
		// above was for the expiry alone.
		future := time.Now().Unix() + 20
		status, _, raw = testenv.Fetch(t, http.MethodGet, with(func(q url.Values) {
			q.Set("expires", strconv.FormatInt(future, 10))
			q.Set("signature", sign(secret, e.tn.ID, up.ID, future))
		}))
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Errorf("self-signed URL with a future expiry: %d", status)
		}
		// A signature for beta's upload opens beta's file, never acme's.
		betaLink := fmt.Sprintf("%s/v1/files/blob/%d?tenant=%d&expires=%d&signature=%s", e.srv.URL, betaUp.ID, betaTn.ID, future, sign(secret, betaTn.ID, betaUp.ID, future))
		if status, _, raw := testenv.Fetch(t, http.MethodGet, betaLink); status != http.StatusOK || !bytes.Equal(raw, testenv.Data(81, 10)) {
			t.Errorf("beta's signed URL: %d", status)
		}
		crossLink := fmt.Sprintf("%s/v1/files/blob/%d?tenant=%d&expires=%d&signature=%s", e.srv.URL, up.ID, betaTn.ID, future, sign(secret, betaTn.ID, up.ID, future))
		if status, _, raw := testenv.Fetch(t, http.MethodGet, crossLink); status == http.StatusOK || bytes.Equal(raw, data) {
			t.Errorf("acme's upload under beta's tenant: %d", status)
		}

		// --public-url is the base of the links.
		pub := start(t, b, fb, func(c *config.Config) { c.PublicURL = "https://files.example.test/base/" })
		_, pdoc := pub.admin.Document(t)
		pup := uploadOK(t, pub.admin, "document", pdoc, false, file("p.txt", data))
		plink := pub.admin.DownloadURL(t, pup.ID)
		prefix := fmt.Sprintf("https://files.example.test/base/v1/files/blob/%d?", pup.ID)
		if !strings.HasPrefix(plink, prefix) {
			t.Fatalf("with --public-url: %s, want prefix %s", plink, prefix)
		}
		status, _, raw = testenv.Fetch(t, http.MethodGet, pub.srv.URL+strings.TrimPrefix(plink, "https://files.example.test/base"))
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Errorf("public URL against the server: %d", status)
		}
	})
}

// presigned starts a server on S3 with downloads=presigned: download
// URLs are the bucket's own.
func presigned(t *testing.T, b testenv.Backend) *env {
	t.Helper()
	fb := testenv.FileBackend{Name: "s3"}
	return startOn(t, b, fb, testenv.Files(t, fb)+"&downloads=presigned")
}

// TestS3PresignedDownloads: with downloads=presigned the S3 store's
// uploads are fetched from the bucket itself, under its signature; such a
// URL answers GET only (HEAD → 403: the method is signed), the trade-off
// docs/decisions.md records.
func TestS3PresignedDownloads(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := presigned(t, b)
		_, doc := e.admin.Document(t)
		data := testenv.Data(82, 3000)
		up := uploadOK(t, e.admin, "document", doc, false, testenv.Part{Filename: "Prüfbericht.txt", ContentType: "text/plain; charset=utf-8", Data: data})
		link := e.admin.DownloadURL(t, up.ID)
		u := mustURL(t, link)
		spec := mustURL(t, e.srv.Config.Files)
		if u.Host != spec.Query().Get("endpoint") || u.Query().Get("X-Amz-Signature") == "" {
			t.Fatalf("%s is not a presigned URL of the store %s", link, spec.Query().Get("endpoint"))
		}
		status, hdr, raw := testenv.Fetch(t, http.MethodGet, link)
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Fatalf("GET presigned URL: %d, %d bytes", status, len(raw))
		}
		if !strings.Contains(hdr.Get("Content-Disposition"), "filename*=UTF-8''Pr%C3%BCfbericht.txt") {
			t.Errorf("Content-Disposition %q", hdr.Get("Content-Disposition"))
		}
		if status, _, _ := testenv.Fetch(t, http.MethodHead, link); status != http.StatusForbidden {
			t.Errorf("HEAD on a presigned GET URL: %d, want 403 (the store signs the method)", status)
		}
		with := func(mod func(q url.Values)) string { return withQuery(u, mod) }
		for what, l := range map[string]string{
			"tampered signature": with(tamper("X-Amz-Signature", '0', '1')),
			"changed expiry":     with(func(q url.Values) { q.Set("X-Amz-Expires", "3600") }),
		} {
			if status, _, raw := testenv.Fetch(t, http.MethodGet, l); status != http.StatusForbidden {
				t.Errorf("%s: %d %.200s, want 403", what, status, raw)
			}
		}
	})
}

// TestSignedLinkHost: without --public-url, signed links take the
// request's host only when it is the base domain or a tenant host of it;
// any other Host header gets a link to the base domain, never to the host
// the client named.
func TestSignedLinkHost(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, testenv.FileBackend{Name: "folder"})
		_, doc := e.admin.Document(t)
		up := uploadOK(t, e.admin, "document", doc, false, file("a.txt", []byte("hello")))
		port := mustURL(t, e.srv.URL).Port()
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
			// The signed link asked for with the request's Host header set
			// to c.host.
			req := e.admin.Request(t, http.MethodGet, downloadPath(up.ID), nil)
			req.Host = c.host
			status, _, raw := testenv.Do(t, req)
			var link string
			if status != http.StatusOK || json.Unmarshal(raw, &link) != nil {
				t.Fatalf("download URL with Host %q: %d %s", c.host, status, raw)
			}
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
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		admin := start(t, b, fb).admin
		_, doc := admin.Document(t)
		for _, ct := range []string{"text/html", "image/svg+xml", "application/pdf"} {
			up := uploadOK(t, admin, "document", doc, true, testenv.Part{Filename: "x", ContentType: ct, Data: []byte("<script>alert(1)</script>")})
			for _, method := range []string{http.MethodGet, http.MethodHead} {
				status, hdr, _ := testenv.Fetch(t, method, admin.DownloadURL(t, up.ID))
				if status != http.StatusOK || hdr.Get("Content-Security-Policy") != "sandbox" || hdr.Get("X-Content-Type-Options") != "nosniff" {
					t.Errorf("%s %s download: %d, CSP %q, nosniff %q", method, ct, status, hdr.Get("Content-Security-Policy"), hdr.Get("X-Content-Type-Options"))
				}
			}
		}
	})
}
