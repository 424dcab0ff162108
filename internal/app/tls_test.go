package app_test

import (
	"bytes"
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
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/flagfile"
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
// redirects plain HTTP for the service's hosts to HTTPS.
func TestServeHTTPSFromFiles(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	c, k := ca.Issue(t, "a.planwerk.test", "127.0.0.1")
	testenv.WriteFile(t, certFile, c)
	testenv.WriteFile(t, keyFile, k)
	plain := testenv.FreeAddr(t)
	s := serveInProcess(t, "--tls-cert", certFile, "--tls-key", keyFile, "--http-addr", plain, "--base-domain", "planwerk.test")

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

	// The plain-HTTP listener redirects the service's own hosts to HTTPS
	// on the main port, and no other.
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
	_, port, _ := net.SplitHostPort(s.addr)
	for _, c := range []struct{ host, location string }{
		{"acme.planwerk.test", "https://acme.planwerk.test:" + port + "/v1/projects?limit=5"},
		{"planwerk.test:80", "https://planwerk.test:" + port + "/v1/projects?limit=5"},
		{"evil.example", ""},
		{"evil.example/.planwerk.test", ""},
		{"planwerk.test.evil.example", ""},
	} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+plain+"/v1/projects?limit=5", nil)
		req.Host = c.host
		resp, err := noFollow.Do(req)
		if err != nil {
			t.Errorf("plain HTTP to %s: %v", c.host, err)
			continue
		}
		resp.Body.Close()
		want := http.StatusPermanentRedirect
		if c.location == "" {
			want = http.StatusBadRequest
		}
		if resp.StatusCode != want || resp.Header.Get("Location") != c.location {
			t.Errorf("plain HTTP to %s: %d to %q, want %d to %q", c.host, resp.StatusCode, resp.Header.Get("Location"), want, c.location)
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

// TestServeFileFlagsBounded: a file flag naming a file larger than 1 MiB,
// or one that never ends (/dev/zero, a pipe whose writer goes on), ends
// serve at once with an error naming the flag, before the database is
// opened. The binary runs, watched: a serve that reads on is killed, and
// fails the test, once its memory passes 256 MiB.
func TestServeFileFlagsBounded(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testenv.BuildBinary(t, dir)
	ca := testenv.NewCA(t)
	c, k := ca.Issue(t, "a.planwerk.test")
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		testenv.WriteFile(t, p, data)
		return p
	}
	// Good files, padded past the limit: only their size is wrong.
	pad := func(b []byte) []byte { return append(b, bytes.Repeat([]byte("\n"), flagfile.Max+1-len(b))...) }
	cert, key := write("cert.pem", c), write("key.pem", k)
	bigCert, bigKey, bigCA := write("big-cert.pem", pad(c)), write("big-key.pem", pad(k)), write("big-ca.pem", pad(ca.PEM()))
	acme := func(caFile string) []string {
		return []string{"--acme-domains", "a.planwerk.test", "--acme-directory", "https://" + testenv.FreeAddr(t) + "/directory",
			"--http-addr", testenv.FreeAddr(t), "--acme-ca", caFile}
	}
	cases := []struct {
		name string
		args []string
		flag string
	}{
		{"certificate endless", []string{"--tls-cert", "/dev/zero", "--tls-key", key}, "--tls-cert /dev/zero"},
		{"certificate over 1 MiB", []string{"--tls-cert", bigCert, "--tls-key", key}, "--tls-cert " + bigCert},
		{"certificate a pipe that goes on", []string{"--tls-cert", testenv.Pipe(t, -1), "--tls-key", key}, "--tls-cert "},
		{"key endless", []string{"--tls-cert", cert, "--tls-key", "/dev/zero"}, "--tls-key /dev/zero"},
		{"key over 1 MiB", []string{"--tls-cert", cert, "--tls-key", bigKey}, "--tls-key " + bigKey},
		{"ACME CA endless", acme("/dev/zero"), "--acme-ca /dev/zero"},
		{"ACME CA over 1 MiB", acme(bigCA), "--acme-ca " + bigCA},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			db := filepath.Join(t.TempDir(), "planwerk.db")
			cmd := exec.Command(bin, append([]string{"serve", "--addr", testenv.FreeAddr(t), "--database", "sqlite:" + db,
				"--files", filepath.Join(t.TempDir(), "files")}, c.args...)...)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			start := time.Now()
			err := runWatched(t, cmd, 256<<20)
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != 1 {
				t.Fatalf("serve: %v, want exit 1\nstderr: %s", err, stderr.String())
			}
			if !strings.Contains(stderr.String(), c.flag) || !strings.Contains(stderr.String(), "larger than 1 MiB") {
				t.Errorf("stderr %q does not say that %s is larger than 1 MiB", stderr.String(), c.flag)
			}
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the database was opened before the files were checked: %v", err)
			}
			t.Logf("refused in %v", time.Since(start).Round(time.Millisecond))
		})
	}
}

// runWatched runs cmd to its end, killing it and failing the test when
// its resident memory passes limit bytes (a file read without bound) or
// it has not ended within a minute.
func runWatched(t *testing.T, cmd *exec.Cmd, limit int64) error {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	deadline := time.After(time.Minute)
	for {
		select {
		case err := <-done:
			return err
		case <-deadline:
			cmd.Process.Kill()
			<-done
			t.Fatal("serve has not ended within a minute")
		case <-time.After(10 * time.Millisecond):
			if rss := residentBytes(cmd.Process.Pid); rss > limit {
				cmd.Process.Kill()
				<-done
				t.Fatalf("serve reads without bound: %d MiB resident", rss>>20)
			}
		}
	}
}

// residentBytes is process pid's resident memory, 0 once it has gone.
func residentBytes(pid int) int64 {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
