package app_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/testenv"
)

// serving is a `planwerk serve` running in the test's process.
type serving struct {
	addr   string
	stderr *testenv.SyncBuffer
	done   chan error
}

// serveInProcess runs serve with args on a fresh SQLite database and file
// folder unless args name others, until the test ends.
func serveInProcess(t *testing.T, args ...string) *serving {
	t.Helper()
	dir := t.TempDir()
	s := &serving{addr: testenv.FreeAddr(t), stderr: &testenv.SyncBuffer{}, done: make(chan error, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	all := append([]string{"serve", "--addr", s.addr, "--database", "sqlite:" + filepath.Join(dir, "planwerk.db"),
		"--files", filepath.Join(dir, "files")}, args...)
	go func() {
		s.done <- app.Run(ctx, all, app.IO{Stdin: strings.NewReader(""), Stdout: io.Discard, Stderr: s.stderr, Getenv: func(string) string { return "" }})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			t.Error("serve did not stop within a minute")
		}
	})
	return s
}

// until polls cond until it holds, failing the test after a deadline
// or when serve has ended.
func (s *serving) until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		select {
		case err := <-s.done:
			t.Fatalf("%s: serve ended: %v\nstderr: %s", what, err, s.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60s\nstderr: %s", what, s.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestServeHTTPSFromFiles: --tls-cert and --tls-key serve HTTPS with
// HTTP/2; a replaced pair is served without a restart; --http-addr
// redirects plain HTTP to HTTPS.
func TestServeHTTPSFromFiles(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	c, k := ca.Issue(t, "a.planwerk.test", "127.0.0.1")
	testenv.WriteFile(t, certFile, c)
	testenv.WriteFile(t, keyFile, k)
	plain := testenv.FreeAddr(t)
	s := serveInProcess(t, "--tls-cert", certFile, "--tls-key", keyFile, "--http-addr", plain)

	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "a.planwerk.test"}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var resp *http.Response
	s.until(t, "/healthz over HTTPS", func() bool {
		var err error
		resp, err = client.Get("https://" + s.addr + "/healthz")
		return err == nil
	})
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 || resp.TLS == nil {
		t.Errorf("/healthz over HTTPS: %d %s, TLS %v; want 200 over HTTP/2", resp.StatusCode, resp.Proto, resp.TLS != nil)
	}
	// HTTP/1.1 clients are served too.
	h1 := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool(), ServerName: "a.planwerk.test"}}, Timeout: 30 * time.Second}
	if resp, err := h1.Get("https://" + s.addr + "/healthz"); err != nil || resp.ProtoMajor != 1 {
		t.Errorf("/healthz over HTTPS with HTTP/1.1: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// Plain HTTP on the main listener gets no answer from the API.
	if resp, err := http.Get("http://" + s.addr + "/healthz"); err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("plain HTTP on the HTTPS listener: %d %s", resp.StatusCode, body)
		}
	}

	// The plain-HTTP listener redirects to HTTPS on the main port.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	req, _ := http.NewRequest(http.MethodGet, "http://"+plain+"/v1/projects?limit=5", nil)
	req.Host = "a.planwerk.test"
	_, port, _ := net.SplitHostPort(s.addr)
	if resp, err := noFollow.Do(req); err != nil {
		t.Errorf("plain HTTP: %v", err)
	} else {
		resp.Body.Close()
		if want := "https://a.planwerk.test:" + port + "/v1/projects?limit=5"; resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
			t.Errorf("plain HTTP: %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
		}
	}

	// A replaced pair: the next handshakes show it, without a restart.
	peer := func() string {
		cert, err := testenv.PeerCertificate(t, s.addr, "a.planwerk.test", ca.Pool())
		if err != nil {
			t.Fatalf("handshake: %v", err)
		}
		return cert.SerialNumber.String()
	}
	before := peer()
	c2, k2 := ca.Issue(t, "a.planwerk.test", "127.0.0.1")
	testenv.WriteFile(t, keyFile, k2)
	testenv.WriteFile(t, certFile, c2)
	block := leafOf(t, c2)
	s.until(t, "the replaced certificate in a handshake", func() bool { return peer() == block.SerialNumber.String() })
	if before == block.SerialNumber.String() {
		t.Fatal("the two certificates have one serial number")
	}
	if !strings.Contains(s.stderr.String(), "TLS certificate reloaded") {
		t.Errorf("the reload is not logged: %s", s.stderr.String())
	}
}

// leafOf parses the first certificate of certPEM.
func leafOf(t *testing.T, certPEM []byte) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no PEM block")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func pemOf(der []byte) []byte { return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}) }

// TestServeTLSStartupErrors: settings that cannot work end serve at once,
// before the database is opened, with an error naming the flag to look
// at.
func TestServeTLSStartupErrors(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		testenv.WriteFile(t, p, data)
		return p
	}
	c, k := ca.Issue(t, "a.planwerk.test")
	_, otherKey := ca.Issue(t, "b.planwerk.test")
	cert, key, other := write("cert.pem", c), write("key.pem", k), write("other-key.pem", otherKey)
	junk := write("junk.pem", []byte("no PEM here"))
	missing := filepath.Join(dir, "missing.pem")
	// Something that answers over HTTPS but is no ACME directory, and
	// the CA file that lets the client trust it.
	notACME := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(notACME.Close)
	notACMECA := write("not-acme-ca.pem", pemOf(notACME.Certificate().Raw))
	// A loopback port nothing listens on.
	nobody := "https://" + testenv.FreeAddr(t) + "/directory"
	acme := func(directory string, more ...string) []string {
		return append([]string{"--acme-domains", "a.planwerk.test", "--acme-directory", directory, "--http-addr", testenv.FreeAddr(t)}, more...)
	}
	cases := []struct {
		name  string
		args  []string
		names []string // in the error
	}{
		{"certificate missing", []string{"--tls-cert", missing, "--tls-key", key}, []string{"--tls-cert", missing}},
		{"key missing", []string{"--tls-cert", cert, "--tls-key", missing}, []string{"--tls-key", missing}},
		{"certificate a folder", []string{"--tls-cert", dir, "--tls-key", key}, []string{"--tls-cert"}},
		{"certificate not PEM", []string{"--tls-cert", junk, "--tls-key", key}, []string{"--tls-cert", junk}},
		{"key not PEM", []string{"--tls-cert", cert, "--tls-key", junk}, []string{"--tls-key", junk}},
		{"certificate and key of two pairs", []string{"--tls-cert", cert, "--tls-key", other}, []string{"--tls-cert", "--tls-key", "do not belong together"}},
		{"ACME directory unreachable", acme(nobody), []string{"--acme-directory", nobody}},
		{"ACME directory untrusted", acme(notACME.URL + "/directory"), []string{"--acme-directory", "certificate"}},
		{"no ACME directory there", acme(notACME.URL+"/directory", "--acme-ca", notACMECA), []string{"--acme-directory", notACME.URL}},
		{"ACME CA file missing", acme(nobody, "--acme-ca", missing), []string{"--acme-ca", missing}},
		{"ACME CA file not PEM", acme(nobody, "--acme-ca", junk), []string{"--acme-ca", junk}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "planwerk.db")
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			r := run(ctx, nil, "", append([]string{"serve", "--addr", testenv.FreeAddr(t), "--database", "sqlite:" + db,
				"--files", filepath.Join(t.TempDir(), "files")}, c.args...)...)
			if r.err == nil || errors.Is(r.err, app.ErrUsage) {
				t.Fatalf("serve: %v, want a start-up error\nstderr: %s", r.err, r.stderr)
			}
			for _, n := range c.names {
				if !strings.Contains(r.err.Error(), n) {
					t.Errorf("error %q does not name %q", r.err, n)
				}
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database was opened before the settings were checked: %v", err)
			}
		})
	}

	// Settings that contradict each other are usage errors, with the flag.
	r := run(context.Background(), nil, "", "serve", "--tls-cert", cert)
	if !errors.Is(r.err, app.ErrUsage) || !strings.Contains(r.stderr, "--tls-key") {
		t.Errorf("--tls-cert without --tls-key: %v, stderr %q", r.err, r.stderr)
	}
}
