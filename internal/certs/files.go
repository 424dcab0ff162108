// Package certs provides the certificates of the service's HTTPS: a
// certificate and key read from files, and read again when the files are
// replaced, or certificates got and renewed by ACME and kept in the
// database, where every instance finds them.
package certs

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"planwerk/internal/flagfile"
)

// Recheck is how often the files are looked at again: the first
// handshake after it has passed reads them when they changed.
const Recheck = 2 * time.Second

// Part names a file the service reads: errors say which one failed.
type Part string

// The files.
const (
	PartCert Part = "certificate"
	PartKey  Part = "private key"
	PartCA   Part = "CA certificates"
)

// FileError says which file cannot be used and why.
type FileError struct {
	Part Part
	Path string
	Err  error
}

func (e *FileError) Error() string { return fmt.Sprintf("%s file %s: %v", e.Part, e.Path, e.Err) }

func (e *FileError) Unwrap() error { return e.Err }

// ErrMismatch means that a certificate is not for the private key beside
// it.
var ErrMismatch = errors.New("the certificate's public key is not the private key's")

// Files serves the certificate of a pair of PEM files: the certificate
// (with its chain) and its private key. A handshake at least Recheck
// after the last look looks at the files again and reads them when they
// changed; a pair that does not load is logged, and the previous one is
// served on.
type Files struct {
	certFile, keyFile string
	log               *slog.Logger

	cur atomic.Pointer[tls.Certificate]
	// next is when the files are due to be looked at (Unix nanoseconds).
	next atomic.Int64
	// mu is held by the one handshake that looks at the files; the
	// others serve the current pair meanwhile.
	mu sync.Mutex
	// seen is what the files were at the last look that read them.
	seen [2]os.FileInfo
	// missing: the last look found a file missing, which was logged.
	missing bool
}

// LoadFiles reads and checks the pair: a *FileError names a file that
// cannot be read or holds no certificate or key, ErrMismatch a pair that
// does not belong together.
func LoadFiles(certFile, keyFile string, log *slog.Logger) (*Files, error) {
	f := &Files{certFile: certFile, keyFile: keyFile, log: log}
	seen, err := f.stat()
	if err != nil {
		return nil, err
	}
	cert, err := LoadPair(certFile, keyFile)
	if err != nil {
		return nil, err
	}
	f.cur.Store(cert)
	f.seen = seen
	f.next.Store(time.Now().Add(Recheck).UnixNano())
	f.logLoaded("serving the TLS certificate", cert)
	return f, nil
}

// GetCertificate is tls.Config's: the current pair, read again first if
// the files changed since they were last read.
func (f *Files) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if now := time.Now(); now.UnixNano() >= f.next.Load() && f.mu.TryLock() {
		f.look(now)
		f.mu.Unlock()
	}
	return f.cur.Load(), nil
}

// look reads the pair again when either file changed: another file in
// its place (a rename, a swapped symbolic link), another size or another
// modification time. Called with mu held.
func (f *Files) look(now time.Time) {
	f.next.Store(now.Add(Recheck).UnixNano())
	seen, err := f.stat()
	if err != nil {
		if !f.missing {
			f.log.Warn("TLS certificate files cannot be read: serving the previous certificate", "err", err)
		}
		f.missing = true
		return
	}
	f.missing = false
	if same(seen[0], f.seen[0]) && same(seen[1], f.seen[1]) {
		return
	}
	// Whatever comes of it, this state of the files has been tried: a
	// broken pair is reported once, and read again when it changes.
	f.seen = seen
	cert, err := LoadPair(f.certFile, f.keyFile)
	if err != nil {
		f.log.Warn("TLS certificate files changed but do not load: serving the previous certificate", "err", err)
		return
	}
	f.cur.Store(cert)
	f.logLoaded("TLS certificate reloaded", cert)
}

func (f *Files) stat() ([2]os.FileInfo, error) {
	var seen [2]os.FileInfo
	for i, p := range []struct {
		part Part
		path string
	}{{PartCert, f.certFile}, {PartKey, f.keyFile}} {
		fi, err := os.Stat(p.path)
		if err != nil {
			return seen, &FileError{Part: p.part, Path: p.path, Err: err}
		}
		seen[i] = fi
	}
	return seen, nil
}

// same reports whether a file looks unchanged.
func same(a, b os.FileInfo) bool {
	return a != nil && b != nil && os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

func (f *Files) logLoaded(msg string, cert *tls.Certificate) {
	leaf := cert.Leaf
	attrs := []any{"names", leaf.DNSNames, "subject", leaf.Subject.String(), "serial", leaf.SerialNumber.Text(16),
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339)}
	if now := time.Now(); now.After(leaf.NotAfter) || now.Before(leaf.NotBefore) {
		f.log.Warn(msg+": the certificate is not valid now", attrs...)
		return
	}
	f.log.Info(msg, attrs...)
}

// LoadPair reads a PEM certificate chain and its PEM private key and
// checks that they belong together.
func LoadPair(certFile, keyFile string) (*tls.Certificate, error) {
	certPEM, err := flagfile.Read(certFile, flagfile.Max)
	if err != nil {
		return nil, &FileError{Part: PartCert, Path: certFile, Err: err}
	}
	keyPEM, err := flagfile.Read(keyFile, flagfile.Max)
	if err != nil {
		return nil, &FileError{Part: PartKey, Path: keyFile, Err: err}
	}
	cert, err := ParsePair(certPEM, keyPEM)
	var fe *FileError
	switch {
	case errors.As(err, &fe):
		fe.Path = map[Part]string{PartCert: certFile, PartKey: keyFile}[fe.Part]
		return nil, fe
	case err != nil:
		return nil, fmt.Errorf("%s and %s: %w", certFile, keyFile, err)
	}
	return cert, nil
}

// ParsePair parses a PEM certificate chain and its PEM private key: a
// *FileError (without a path) names the part that cannot be read,
// ErrMismatch says that they do not belong together.
func ParsePair(certPEM, keyPEM []byte) (*tls.Certificate, error) {
	leaf, err := firstCertificate(certPEM)
	if err != nil {
		return nil, &FileError{Part: PartCert, Err: err}
	}
	key, err := privateKey(keyPEM)
	if err != nil {
		return nil, &FileError{Part: PartKey, Err: err}
	}
	pub, ok := leaf.PublicKey.(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(key.Public()) {
		return nil, ErrMismatch
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &cert, nil
}

// firstCertificate parses the first CERTIFICATE block: the server's own.
func firstCertificate(raw []byte) (*x509.Certificate, error) {
	for {
		var b *pem.Block
		b, raw = pem.Decode(raw)
		if b == nil {
			return nil, errors.New("no PEM CERTIFICATE block")
		}
		if b.Type == "CERTIFICATE" {
			return x509.ParseCertificate(b.Bytes)
		}
	}
}

// privateKey parses the first PEM block of a private key (PKCS #8,
// PKCS #1 or SEC 1), as crypto/tls does.
func privateKey(raw []byte) (crypto.Signer, error) {
	for {
		var b *pem.Block
		b, raw = pem.Decode(raw)
		if b == nil {
			return nil, errors.New("no PEM PRIVATE KEY block")
		}
		if b.Type != "PRIVATE KEY" && !strings.HasSuffix(b.Type, " PRIVATE KEY") {
			continue
		}
		if k, err := x509.ParsePKCS8PrivateKey(b.Bytes); err == nil {
			switch k := k.(type) {
			case *rsa.PrivateKey, *ecdsa.PrivateKey, ed25519.PrivateKey:
				return k.(crypto.Signer), nil
			}
			return nil, errors.New("a private key of an unknown kind")
		}
		if k, err := x509.ParsePKCS1PrivateKey(b.Bytes); err == nil {
			return k, nil
		}
		if k, err := x509.ParseECPrivateKey(b.Bytes); err == nil {
			return k, nil
		}
		return nil, errors.New("the PEM " + b.Type + " block is no private key Go can read")
	}
}
