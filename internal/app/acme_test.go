//go:build system

package app_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"planwerk/internal/testenv"
)

// pebbleVersion is the ACME test server the tests install (.ci/run).
const pebbleVersion = "v2.10.3"

// pebblePath finds Let's Encrypt's test server: on PATH, or where `go
// install` puts it.
func pebblePath(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("pebble"); err == nil {
		return p
	}
	var dirs []string
	for _, d := range []string{os.Getenv("GOBIN"), filepath.Join(os.Getenv("GOPATH"), "bin")} {
		if d != "" && d != "bin" {
			dirs = append(dirs, d)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		dirs = append(dirs, filepath.Join(home, "go", "bin"))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, "pebble"); fileExists(p) {
			return p
		}
	}
	testenv.SkipOrFail(t, "pebble not found (go install github.com/letsencrypt/pebble/v2/cmd/pebble@"+pebbleVersion+"): ACME test skipped")
	return ""
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// loopbackDNS answers every A question with 127.0.0.1 and every other
// question with no record, over TCP (as pebble asks) on loopback: the
// test's domains resolve to the test's listeners, and nothing leaves the
// machine.
func loopbackDNS(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go answerDNS(c)
		}
	}()
	return ln.Addr().String()
}

func answerDNS(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	for {
		var n uint16
		if err := binary.Read(c, binary.BigEndian, &n); err != nil {
			return
		}
		msg := make([]byte, n)
		if _, err := io.ReadFull(c, msg); err != nil {
			return
		}
		var p dnsmessage.Parser
		h, err := p.Start(msg)
		if err != nil {
			return
		}
		q, err := p.Question()
		if err != nil {
			return
		}
		b := dnsmessage.NewBuilder(make([]byte, 2, 514), dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
		_ = b.StartQuestions()
		_ = b.Question(q)
		_ = b.StartAnswers()
		if q.Type == dnsmessage.TypeA {
			_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
		}
		out, err := b.Finish()
		if err != nil {
			return
		}
		binary.BigEndian.PutUint16(out, uint16(len(out)-2))
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

// pebble is a running ACME test server.
type pebble struct {
	directory string
	ca        string // the file of the CA its HTTPS is signed by
	root      *x509.CertPool
	log       *testenv.SyncBuffer
}

// startPebble runs pebble on loopback, with a TLS certificate from a CA
// of the test's, resolving names with loopbackDNS, validating HTTP-01 on
// the port of httpAddr. Its TLS-ALPN-01 port is one nothing listens on,
// so that the HTTP-01 challenge is the one that succeeds.
func startPebble(t *testing.T, httpAddr string) *pebble {
	t.Helper()
	bin := pebblePath(t)
	dir := t.TempDir()
	ca := testenv.NewCA(t)
	cert, key := ca.Issue(t, "127.0.0.1", "localhost")
	caFile, certFile, keyFile := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	testenv.WriteFile(t, caFile, ca.PEM())
	testenv.WriteFile(t, certFile, cert)
	testenv.WriteFile(t, keyFile, key)
	_, httpPort, _ := net.SplitHostPort(httpAddr)
	_, tlsPort, _ := net.SplitHostPort(testenv.FreeAddr(t))
	listen, manage := testenv.FreeAddr(t), testenv.FreeAddr(t)
	conf, err := json.Marshal(map[string]any{"pebble": map[string]any{
		"listenAddress": listen, "managementListenAddress": manage,
		"certificate": certFile, "privateKey": keyFile,
		"httpPort": json.Number(httpPort), "tlsPort": json.Number(tlsPort),
		"ocspResponderURL": "", "externalAccountBindingRequired": false, "keyAlgorithm": "ecdsa",
	}})
	if err != nil {
		t.Fatal(err)
	}
	confFile := filepath.Join(dir, "pebble.json")
	testenv.WriteFile(t, confFile, conf)
	log := &testenv.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-config", confFile, "-dnsserver", loopbackDNS(t))
	// No random sleeps before validation, no nonces refused at random.
	cmd.Env = append(os.Environ(), "PEBBLE_VA_NOSLEEP=1", "PEBBLE_WFE_NONCEREJECT=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("pebble's log:\n%s", log.String())
		}
	})
	trust := x509.NewCertPool()
	trust.AddCert(leafOf(t, ca.PEM()))
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: trust}}, Timeout: 10 * time.Second}
	defer client.CloseIdleConnections()
	// Its issuing root, from the management interface, once it answers.
	var root []byte
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get("https://" + manage + "/roots/0")
		if err == nil {
			root, err = io.ReadAll(resp.Body)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pebble does not answer on %s: %v\n%s", manage, err, log.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(root) {
		t.Fatalf("pebble's root: %q", root)
	}
	return &pebble{directory: "https://" + listen + "/dir", ca: caFile, root: roots, log: log}
}

// orders counts the orders pebble has taken.
func (p *pebble) orders() int { return strings.Count(p.log.String(), "Added order") }

// TestACMESharedCertificate: an instance gets its certificate from an
// ACME server (pebble), answering the HTTP-01 challenge on --http-addr,
// and serves it; a second instance on the same database serves the same
// certificate without asking the ACME server again, and the first answers
// the challenge of a certificate the second orders. --http-addr
// redirects everything else for the ACME domains to HTTPS, and refuses
// other hosts.
func TestACMESharedCertificate(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		dsn := testenv.DSN(t, b)
		challenge := testenv.FreeAddr(t)
		p := startPebble(t, challenge)
		const domain = "app.planwerk.test"
		acme := func(httpAddr string) []string {
			return []string{"--database", dsn, "--acme-domains", domain + ",other.planwerk.test", "--acme-directory", p.directory,
				"--acme-ca", p.ca, "--acme-email", "ops@planwerk.test", "--http-addr", httpAddr}
		}

		first := serveInProcess(t, acme(challenge)...)
		var cert *x509.Certificate
		first.until(t, "a certificate from the ACME server", func() bool {
			c, err := testenv.PeerCertificate(t, first.addr, domain, p.root)
			cert = c
			return err == nil
		})
		if len(cert.DNSNames) != 1 || cert.DNSNames[0] != domain {
			t.Errorf("the certificate is for %v, want %s alone", cert.DNSNames, domain)
		}
		if !strings.Contains(p.log.String(), "Attempting to validate w/ HTTP: http://"+domain+":") {
			t.Errorf("pebble did not validate over HTTP-01")
		}
		issued := p.orders()
		if issued == 0 {
			t.Fatalf("pebble took no order")
		}

		// The API over HTTPS, HTTP/2 included.
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.root, ServerName: domain}, ForceAttemptHTTP2: true}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr, Timeout: 30 * time.Second}).Get("https://" + first.addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2 {
			t.Errorf("/healthz: %d %s, want 200 over HTTP/2", resp.StatusCode, resp.Proto)
		}

		// A second instance on the same database: the same certificate,
		// no new order.
		second := serveInProcess(t, acme(testenv.FreeAddr(t))...)
		var again *x509.Certificate
		second.until(t, "the second instance's certificate", func() bool {
			c, err := testenv.PeerCertificate(t, second.addr, domain, p.root)
			again = c
			return err == nil
		})
		if again.SerialNumber.Cmp(cert.SerialNumber) != 0 {
			t.Errorf("the second instance serves certificate %x, the first %x", again.SerialNumber, cert.SerialNumber)
		}
		if n := p.orders(); n != issued {
			t.Errorf("the second instance made %d orders, want none", n-issued)
		}
		db := openStore(t, dsn)
		var rows int
		if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM acme_cache WHERE name IN ($1, 'acme_account+key')`, domain).Scan(&rows); err != nil || rows != 2 {
			t.Errorf("acme_cache holds %d of the account key and the certificate, %v", rows, err)
		}

		// A handshake that names no server (a health check by IP address)
		// gets the first domain's certificate.
		conn, err := tls.Dial("tcp", second.addr, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Errorf("a handshake without a server name: %v", err)
		} else {
			if got := conn.ConnectionState().PeerCertificates[0]; got.SerialNumber.Cmp(cert.SerialNumber) != 0 {
				t.Errorf("a handshake without a server name got %v, want %s's certificate", got.DNSNames, domain)
			}
			conn.Close()
		}

		// Not a domain of --acme-domains: no certificate.
		if _, err := testenv.PeerCertificate(t, second.addr, "elsewhere.planwerk.test", p.root); err == nil {
			t.Error("a handshake for a host outside --acme-domains succeeded")
		}
		if n := p.orders(); n != issued {
			t.Errorf("a handshake for a host outside --acme-domains made %d orders", n-issued)
		}

		// The second instance orders the other domain's certificate; the
		// ACME server fetches the HTTP-01 token from the first instance's
		// --http-addr (behind a load balancer, any instance may get the
		// validation), which finds it in the database.
		const other = "other.planwerk.test"
		var otherCert *x509.Certificate
		second.until(t, "a certificate validated through the other instance", func() bool {
			c, err := testenv.PeerCertificate(t, second.addr, other, p.root)
			otherCert = c
			return err == nil
		})
		if len(otherCert.DNSNames) != 1 || otherCert.DNSNames[0] != other {
			t.Errorf("the other certificate is for %v, want %s", otherCert.DNSNames, other)
		}
		if !strings.Contains(p.log.String(), "Attempting to validate w/ HTTP: http://"+other+":") {
			t.Errorf("pebble did not validate %s over HTTP-01", other)
		}

		// Plain HTTP: a redirect to HTTPS.
		noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }, Timeout: 30 * time.Second}
		req, _ := http.NewRequest(http.MethodGet, "http://"+challenge+"/v1/projects?limit=5", nil)
		req.Host = domain
		resp, err = noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		_, port, _ := net.SplitHostPort(first.addr)
		if want := fmt.Sprintf("https://%s:%s/v1/projects?limit=5", domain, port); resp.StatusCode != http.StatusPermanentRedirect || resp.Header.Get("Location") != want {
			t.Errorf("plain HTTP: %d to %q, want 308 to %q", resp.StatusCode, resp.Header.Get("Location"), want)
		}
		// A host the service does not serve: refused, not redirected.
		req.Host = "evil.example"
		resp, err = noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || resp.Header.Get("Location") != "" {
			t.Errorf("plain HTTP to another host: %d to %q, want 400", resp.StatusCode, resp.Header.Get("Location"))
		}

		// Neither the log nor anything else the instances wrote holds a key.
		for _, s := range []*serving{first, second} {
			if log := s.stderr.String(); strings.Contains(log, "PRIVATE KEY") {
				t.Errorf("the log holds key material: %s", log)
			}
		}
	})
}
