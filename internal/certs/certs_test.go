package certs_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/acme/autocert"

	"planwerk/internal/certs"
	"planwerk/internal/flagfile"
	"planwerk/internal/testenv"
)

// pair writes a certificate for names and its key into dir.
func pair(t *testing.T, ca *testenv.CA, dir, prefix string, names ...string) (certFile, keyFile string) {
	t.Helper()
	c, k := ca.Issue(t, names...)
	certFile, keyFile = filepath.Join(dir, prefix+"cert.pem"), filepath.Join(dir, prefix+"key.pem")
	testenv.WriteFile(t, certFile, c)
	testenv.WriteFile(t, keyFile, k)
	return certFile, keyFile
}

func leafOf(t *testing.T, c *tls.Certificate) *x509.Certificate {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf
}

// TestLoadPair: a pair that cannot be used is refused with the file to
// blame, or as a pair that does not belong together.
func TestLoadPair(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	cert, key := pair(t, ca, dir, "a-", "a.planwerk.test")
	otherCert, otherKey := pair(t, ca, dir, "b-", "b.planwerk.test")
	garbage := filepath.Join(dir, "garbage.pem")
	testenv.WriteFile(t, garbage, []byte("not PEM at all"))
	badBlock := filepath.Join(dir, "bad-block.pem")
	testenv.WriteFile(t, badBlock, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")}))
	badCert := filepath.Join(dir, "bad-cert.pem")
	testenv.WriteFile(t, badCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: []byte("junk")}))
	missing := filepath.Join(dir, "missing.pem")
	// A file holding both, the key first, serves as either.
	keyFirst, _ := os.ReadFile(key)
	certPEM, _ := os.ReadFile(cert)
	both := filepath.Join(dir, "both.pem")
	testenv.WriteFile(t, both, append(keyFirst, certPEM...))

	cases := []struct {
		name      string
		cert, key string
		part      certs.Part // the file blamed; "" with mismatch or none
		mismatch  bool
	}{
		{name: "good", cert: cert, key: key},
		{name: "one file for both", cert: both, key: both},
		{name: "certificate missing", cert: missing, key: key, part: certs.PartCert},
		{name: "key missing", cert: cert, key: missing, part: certs.PartKey},
		{name: "certificate a folder", cert: dir, key: key, part: certs.PartCert},
		{name: "certificate not PEM", cert: garbage, key: key, part: certs.PartCert},
		{name: "certificate block of junk", cert: badCert, key: key, part: certs.PartCert},
		{name: "key not PEM", cert: cert, key: garbage, part: certs.PartKey},
		{name: "key block of junk", cert: cert, key: badBlock, part: certs.PartKey},
		{name: "key where the certificate goes", cert: key, key: key, part: certs.PartCert},
		{name: "certificate where the key goes", cert: cert, key: cert, part: certs.PartKey},
		{name: "another certificate's key", cert: cert, key: otherKey, mismatch: true},
		{name: "another key's certificate", cert: otherCert, key: key, mismatch: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := certs.LoadPair(c.cert, c.key)
			var fe *certs.FileError
			switch {
			case c.part == "" && !c.mismatch:
				if err != nil {
					t.Fatalf("LoadPair: %v", err)
				}
				if leaf := leafOf(t, got); leaf.DNSNames[0] != "a.planwerk.test" {
					t.Errorf("loaded %v", leaf.DNSNames)
				}
			case c.mismatch:
				if !errors.Is(err, certs.ErrMismatch) {
					t.Errorf("LoadPair: %v, want the mismatch", err)
				}
			case !errors.As(err, &fe) || fe.Part != c.part:
				t.Errorf("LoadPair: %v, want an error of the %s file", err, c.part)
			case !strings.Contains(err.Error(), string(c.part)) || !strings.Contains(err.Error(), fe.Path):
				t.Errorf("LoadPair: %q names neither the part nor the file", err)
			}
		})
	}
}

// FuzzParsePair: whatever the files hold, ParsePair does not panic, an
// error names the part to blame or the mismatch, and a pair it accepts
// is one crypto/tls serves.
func FuzzParsePair(f *testing.F) {
	ca := testenv.NewCA(f)
	c, k := ca.Issue(f, "a.planwerk.test")
	c2, k2 := ca.Issue(f, "b.planwerk.test")
	f.Add(c, k)
	f.Add(c, k2)
	f.Add(c2, k)
	f.Add(k, c)
	f.Add(append(k, c...), append(c, k...))
	f.Add([]byte("-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"), []byte("-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n"))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, certPEM, keyPEM []byte) {
		got, err := certs.ParsePair(certPEM, keyPEM)
		if err != nil {
			var fe *certs.FileError
			if (!errors.As(err, &fe) || fe.Part != certs.PartCert && fe.Part != certs.PartKey) && !errors.Is(err, certs.ErrMismatch) {
				t.Errorf("ParsePair: %v blames no part", err)
			}
			return
		}
		if _, err := tls.X509KeyPair(certPEM, keyPEM); err != nil || got.Leaf == nil {
			t.Errorf("ParsePair accepted a pair crypto/tls refuses: %v", err)
		}
	})
}

// TestFilesReload: a replaced pair is served from a handshake after the
// recheck on; a broken replacement is logged and the pair before it is
// served on; a missing file, one larger than the limit and one that
// never ends likewise.
func TestFilesReload(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := pair(t, ca, dir, "", "a.planwerk.test")
	var log testenv.SyncBuffer
	f, err := certs.LoadFiles(certFile, keyFile, slog.New(slog.NewJSONHandler(&log, nil)))
	if err != nil {
		t.Fatal(err)
	}
	served := func() string {
		c, err := f.GetCertificate(&tls.ClientHelloInfo{ServerName: "a.planwerk.test"})
		if err != nil {
			t.Fatal(err)
		}
		return leafOf(t, c).DNSNames[0]
	}
	if got := served(); got != "a.planwerk.test" {
		t.Fatalf("serves %s", got)
	}
	// until polls the handshakes until cond holds.
	until := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within 30s\nlog: %s", what, log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// Replaced: the new pair comes.
	b, bk := ca.Issue(t, "b.planwerk.test")
	testenv.WriteFile(t, keyFile, bk)
	testenv.WriteFile(t, certFile, b)
	until("the replaced pair is not served", func() bool { return served() == "b.planwerk.test" })
	if !strings.Contains(log.String(), "TLS certificate reloaded") {
		t.Errorf("the reload was not logged: %s", log.String())
	}

	// A key that is not the certificate's: b is served on, and the log
	// says why.
	_, ck := ca.Issue(t, "c.planwerk.test")
	testenv.WriteFile(t, keyFile, ck)
	until("the broken pair is not logged", func() bool {
		served()
		return strings.Contains(log.String(), "do not load")
	})
	if got := served(); got != "b.planwerk.test" {
		t.Errorf("after a broken replacement: serves %s, want b.planwerk.test", got)
	}
	if !strings.Contains(log.String(), certs.ErrMismatch.Error()) {
		t.Errorf("the log does not say the pair does not belong together: %s", log.String())
	}

	// A missing file: b still.
	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	until("the missing file is not logged", func() bool {
		served()
		return strings.Contains(log.String(), "cannot be read")
	})
	if got := served(); got != "b.planwerk.test" {
		t.Errorf("with the certificate file missing: serves %s, want b.planwerk.test", got)
	}

	// Both back, as a new pair: served again.
	d, dk := ca.Issue(t, "d.planwerk.test")
	testenv.WriteFile(t, keyFile, dk)
	testenv.WriteFile(t, certFile, d)
	until("the pair after the broken ones is not served", func() bool { return served() == "d.planwerk.test" })

	// A replacement larger than the limit (a good pair, padded): not read,
	// d is served on, and the log says why.
	e, ek := ca.Issue(t, "e.planwerk.test")
	testenv.WriteFile(t, keyFile, ek)
	testenv.WriteFile(t, certFile, append(e, bytes.Repeat([]byte{' '}, flagfile.Max+1-len(e))...))
	until("the large file is not logged", func() bool {
		served()
		return strings.Contains(log.String(), "larger than 1 MiB")
	})
	if got := served(); got != "d.planwerk.test" {
		t.Errorf("with the certificate file larger than 1 MiB: serves %s, want d.planwerk.test", got)
	}
	// A file that never ends in its place: d still.
	link := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", link); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link, certFile); err != nil {
		t.Fatal(err)
	}
	before := strings.Count(log.String(), "larger than 1 MiB")
	until("the endless file is not logged", func() bool {
		served()
		return strings.Count(log.String(), "larger than 1 MiB") > before
	})
	if got := served(); got != "d.planwerk.test" {
		t.Errorf("with the certificate file /dev/zero: serves %s, want d.planwerk.test", got)
	}
	if strings.Contains(log.String(), "PRIVATE KEY") {
		t.Errorf("the log holds key material: %s", log.String())
	}
}

// TestCache: autocert's cache in the database, on both engines, and
// shared by two handles on one database (two instances).
func TestCache(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		dsn := testenv.MigratedDSN(t, b)
		one, two := certs.NewCache(testenv.Open(t, dsn)), certs.NewCache(testenv.Open(t, dsn))
		if _, err := one.Get(ctx, "a.planwerk.test"); !errors.Is(err, autocert.ErrCacheMiss) {
			t.Fatalf("Get of nothing: %v, want ErrCacheMiss", err)
		}
		if err := one.Put(ctx, "a.planwerk.test", []byte("first")); err != nil {
			t.Fatal(err)
		}
		if err := one.Put(ctx, "acme_account+key", []byte{0, 1, 2, 255}); err != nil {
			t.Fatal(err)
		}
		if got, err := two.Get(ctx, "a.planwerk.test"); err != nil || string(got) != "first" {
			t.Errorf("the other instance reads %q, %v", got, err)
		}
		if got, err := two.Get(ctx, "acme_account+key"); err != nil || !bytes.Equal(got, []byte{0, 1, 2, 255}) {
			t.Errorf("binary data reads back as %v, %v", got, err)
		}
		if err := two.Put(ctx, "a.planwerk.test", []byte("renewed")); err != nil {
			t.Fatal(err)
		}
		if got, err := one.Get(ctx, "a.planwerk.test"); err != nil || string(got) != "renewed" {
			t.Errorf("after the other's renewal: %q, %v", got, err)
		}
		if err := one.Delete(ctx, "a.planwerk.test"); err != nil {
			t.Fatal(err)
		}
		if _, err := two.Get(ctx, "a.planwerk.test"); !errors.Is(err, autocert.ErrCacheMiss) {
			t.Errorf("Get after Delete: %v, want ErrCacheMiss", err)
		}
		if err := one.Delete(ctx, "a.planwerk.test"); err != nil {
			t.Errorf("Delete of nothing: %v", err)
		}
		if got, err := one.Get(ctx, "acme_account+key"); err != nil || len(got) != 4 {
			t.Errorf("Delete took another entry: %v, %v", got, err)
		}
	})
}

// TestRedirect: plain HTTP to a host the service serves (the base
// domain, a tenant host, an ACME domain) is redirected to HTTPS on the
// main port; any other Host, however it is dressed up, is answered 400
// and sent nowhere.
func TestRedirect(t *testing.T) {
	t.Parallel()
	const base = "planwerk.test"
	names := []string{"app.example.com"}
	cases := []struct {
		port, method, host, target string
		status                     int
		location                   string
	}{
		{"443", "GET", "acme.planwerk.test", "/v1/projects?limit=5", 308, "https://acme.planwerk.test/v1/projects?limit=5"},
		{"443", "GET", "acme.planwerk.test:80", "/", 308, "https://acme.planwerk.test/"},
		{"8443", "GET", "acme.planwerk.test:8080", "/readyz", 308, "https://acme.planwerk.test:8443/readyz"},
		{"8443", "POST", "acme.planwerk.test", "/oauth2/token", 308, "https://acme.planwerk.test:8443/oauth2/token"},
		{"443", "GET", "planwerk.test", "/app/", 308, "https://planwerk.test/app/"},
		{"443", "GET", "app.example.com", "/x", 308, "https://app.example.com/x"},
		{"8443", "GET", "APP.Example.COM:80", "/x", 308, "https://app.example.com:8443/x"},
		{"443", "GET", "Acme.PlanWerk.Test", "/x", 308, "https://acme.planwerk.test/x"},
		{"443", "GET", "acme.planwerk.test.", "/x", 308, "https://acme.planwerk.test/x"},
		{"443", "GET", "acme.planwerk.test.:80", "/x", 308, "https://acme.planwerk.test/x"},
		{"443", "GET", "acme.planwerk.test", "//evil.example/x", 308, "https://acme.planwerk.test//evil.example/x"},
		// Not served: the host the client chose is never redirected to.
		{"443", "GET", "", "/x", 400, ""},
		{"443", "GET", "evil.example", "/x", 400, ""},
		{"443", "GET", "evil.example:80", "/x", 400, ""},
		{"443", "GET", "evil.example/.planwerk.test", "/x", 400, ""},
		{"443", "GET", "evil.example/acme.planwerk.test", "/x", 400, ""},
		{"443", "GET", "evil.example?.planwerk.test", "/x", 400, ""},
		{"443", "GET", "evil.example#.planwerk.test", "/x", 400, ""},
		{"443", "GET", "evil.example\\.planwerk.test", "/x", 400, ""},
		{"443", "GET", "planwerk.test.evil.example", "/x", 400, ""},
		{"443", "GET", "acme.planwerk.test.evil.example", "/x", 400, ""},
		{"443", "GET", "app.example.com.evil.example", "/x", 400, ""},
		{"443", "GET", "evilplanwerk.test", "/x", 400, ""},
		{"443", "GET", "x.acme.planwerk.test", "/x", 400, ""},
		{"443", "GET", "a.planwerk.test", "/x", 400, ""}, // a slug has 2 characters at least
		{"443", "GET", "acme.planwerk.test@evil.example", "/x", 400, ""},
		{"443", "GET", "x.planwerk.test@evil", "/x", 400, ""},
		{"443", "GET", "evil.example@acme.planwerk.test", "/x", 400, ""},
		{"443", "GET", "acme.planwerk.test..", "/x", 400, ""},
		{"443", "GET", ".planwerk.test", "/x", 400, ""},
		{"443", "GET", "acme..planwerk.test", "/x", 400, ""},
		{"443", "GET", ".", "/x", 400, ""},
		{"443", "GET", "acme%2eplanwerk.test", "/x", 400, ""},
		{"443", "GET", "evil.example%2f.planwerk.test", "/x", 400, ""},
		{"443", "GET", "acme.planwerk.test%00", "/x", 400, ""},
		{"443", "GET", "acme.planwerk.test:https", "/x", 400, ""},
		{"443", "GET", "acme.planwerk.test:80:80", "/x", 400, ""},
		{"443", "GET", "[::1]:80", "/x", 400, ""},
		{"8443", "GET", "[::1]", "/x", 400, ""},
		{"443", "GET", "[acme.planwerk.test]", "/x", 400, ""},
		{"443", "GET", "127.0.0.1", "/x", 400, ""},
		{"443", "GET", "acıme.planwerk.test", "/x", 400, ""}, // a dotless i, not ASCII
		{"443", "GET", "acme.planwerk.test evil.example", "/x", 400, ""},
		{"443", "GET", strings.Repeat("a", 64) + ".planwerk.test", "/x", 400, ""},
	}
	for _, c := range cases {
		req := httptest.NewRequest(c.method, "http://placeholder"+c.target, nil)
		req.Host = c.host
		w := httptest.NewRecorder()
		certs.Redirect(c.port, base, names).ServeHTTP(w, req)
		if w.Code != c.status || w.Header().Get("Location") != c.location {
			t.Errorf("%s %q%s to port %s: %d %q, want %d %q", c.method, c.host, c.target, c.port, w.Code, w.Header().Get("Location"), c.status, c.location)
		}
		if body := w.Body.String(); c.status == 400 && (!strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") || len(body) > 100 || strings.Contains(body, "evil")) {
			t.Errorf("%q: the refusal is %q %q, want a short plain message", c.host, w.Header().Get("Content-Type"), body)
		}
	}
	var _ http.Handler = certs.Redirect("443", base, nil)
}
