package certs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"planwerk/internal/flagfile"
	"planwerk/internal/tenancy"
)

// directoryTimeout bounds the look at the ACME directory at start-up.
const directoryTimeout = 10 * time.Second

// ACMEClient returns a client of the ACME server whose directory is at
// directory. caFile, when set, is a PEM file of CA certificates trusted
// for the server's HTTPS besides the system's (a private ACME server, or
// a test one); a *FileError says when it cannot be used.
func ACMEClient(directory, caFile string) (*acme.Client, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if caFile != "" {
		pool, err := x509.SystemCertPool()
		if err != nil {
			pool = x509.NewCertPool()
		}
		raw, err := flagfile.Read(caFile, flagfile.Max)
		if err != nil {
			return nil, &FileError{Part: PartCA, Path: caFile, Err: err}
		}
		if !pool.AppendCertsFromPEM(raw) {
			return nil, &FileError{Part: PartCA, Path: caFile, Err: errors.New("no PEM CERTIFICATE block")}
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	return &acme.Client{
		DirectoryURL: directory,
		HTTPClient:   &http.Client{Transport: tr, Timeout: time.Minute},
		UserAgent:    "planwerk",
	}, nil
}

// CheckDirectory reads the ACME server's directory: an error says that
// it cannot be reached, or that what answers is no ACME directory.
func CheckDirectory(ctx context.Context, client *acme.Client) error {
	ctx, cancel := context.WithTimeout(ctx, directoryTimeout)
	defer cancel()
	_, err := client.Discover(ctx)
	return err
}

// NewManager returns the ACME manager that gets and renews certificates
// for domains from client's server, accepting its terms of service, and
// keeps its account and certificates in cache. email, when set, is the
// account's contact.
func NewManager(client *acme.Client, domains []string, email string, cache autocert.Cache) *autocert.Manager {
	return &autocert.Manager{
		Prompt:     autocert.AcceptTOS,
		Cache:      cache,
		HostPolicy: autocert.HostWhitelist(domains...),
		Client:     client,
		Email:      email,
	}
}

// Challenge answers ACME's HTTP-01 challenge for m's domains and hands
// every other request to fallback. A port in the Host header is left out
// when the domain is matched: validation that reaches the listener on a
// port other than 80 (a test server, a port mapping) names the domain
// with it.
func Challenge(m *autocert.Manager, fallback http.Handler) http.Handler {
	h := m.HTTPHandler(fallback)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if host, _, err := net.SplitHostPort(r.Host); err == nil {
			r2 := *r
			r2.Host = host
			r = &r2
		}
		h.ServeHTTP(w, r)
	})
}

// WithDefaultName makes get answer a handshake that names no server
// (no SNI: a client or health check that connects by IP address) as one
// for name, instead of failing it.
func WithDefaultName(get func(*tls.ClientHelloInfo) (*tls.Certificate, error), name string) func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		if hello.ServerName == "" {
			h := *hello
			h.ServerName = name
			hello = &h
		}
		return get(hello)
	}
}

// ServerConfig is the TLS configuration of the main listener with
// certificates from getCertificate: TLS 1.2 at least, HTTP/2 and
// HTTP/1.1 offered by ALPN (and ACME's TLS-ALPN-01 challenge where extra
// protocols name it).
func ServerConfig(getCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error), extra ...string) *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: getCertificate,
		NextProtos:     append([]string{"h2", "http/1.1"}, extra...),
	}
}

// Redirect answers a request for a host the service serves (baseDomain,
// a tenant host SLUG.baseDomain, or one of names) with a permanent
// redirect (308: the method and body are kept) to the same host, path and
// query over HTTPS, on httpsPort unless that is HTTPS's own 443. Any
// other Host, or none, is answered 400: the redirect never sends a client
// to a host the client chose.
func Redirect(httpsPort, baseDomain string, names []string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, ok := hostName(r.Host)
		if !ok || !served(host, baseDomain, names) {
			http.Error(w, "this host is not served here", http.StatusBadRequest)
			return
		}
		if httpsPort != "" && httpsPort != "443" {
			host = net.JoinHostPort(host, httpsPort)
		}
		http.Redirect(w, r, "https://"+host+r.URL.RequestURI(), http.StatusPermanentRedirect)
	})
}

// hostName returns the DNS name of a Host header: lower-cased, without
// its port and a trailing dot. ok is false for anything but labels of
// letters, digits and hyphens, so that an IP literal, user info, a path
// or percent-encoding never passes for a name.
func hostName(host string) (string, bool) {
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		if strings.Trim(host[i+1:], "0123456789") != "" {
			return "", false
		}
		host = host[:i]
	}
	host = strings.TrimSuffix(host, ".")
	if len(host) > 253 {
		return "", false
	}
	b := []byte(host)
	label := 0
	for i, c := range b {
		switch {
		case c == '.' && label > 0:
			label = 0
			continue
		case c >= 'A' && c <= 'Z':
			b[i] = c + 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-':
		default:
			return "", false
		}
		if label++; label > 63 {
			return "", false
		}
	}
	return string(b), label > 0
}

// served reports whether the lower-case name host is baseDomain, one of
// its tenant hosts or one of names.
func served(host, baseDomain string, names []string) bool {
	if host == strings.ToLower(baseDomain) || slices.Contains(names, host) {
		return true
	}
	_, ok := tenancy.SlugFromHost(host, baseDomain)
	return ok
}
