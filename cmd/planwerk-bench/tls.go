package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	vegeta "github.com/tsenart/vegeta/v12/lib"

	"planwerk/internal/app"
	"planwerk/internal/certs"
)

// serveTLS serves svc over HTTPS on loopback as serve does with
// --tls-cert and --tls-key: a certificate for bench.localhost of a CA
// made for the run, written into dir and read by the service's loader. It
// returns the base URL, a pool trusting the CA and the server's stop.
func serveTLS(svc *app.Service, dir string) (string, *x509.CertPool, func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", nil, nil, err
	}
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, nil, err
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "planwerk-bench CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", nil, nil, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", nil, nil, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", nil, nil, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "bench.localhost"}, DNSNames: []string{"bench.localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", nil, nil, err
	}
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		return "", nil, nil, err
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return "", nil, nil, err
	}
	files, err := certs.LoadFiles(certFile, keyFile, slog.New(slog.DiscardHandler))
	if err != nil {
		return "", nil, nil, err
	}
	srv := svc.Handler.HTTPServer(context.Background())
	srv.TLSConfig = certs.ServerConfig(files.GetCertificate)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, nil, err
	}
	go func() { _ = srv.ServeTLS(svc.Handler.Listener(ln), "", "") }()
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	return "https://" + ln.Addr().String(), roots, func() { _ = srv.Close() }, nil
}

// turns is how many turns inTurns gives each of its loads.
const turns = 4

// turn is one load of inTurns: its targets, and what its attacker
// changes (TLS, HTTP/2).
type turn struct {
	tr   vegeta.Targeter
	opts []func(*vegeta.Attacker)
}

// inTurns drives each load for d in all, in turns of d/turns one after
// the other, so that the machine's drift falls on them alike. Each
// one's requests per second count the time it was driven.
func inTurns(header http.Header, d time.Duration, clients int, loads []turn) []*vegeta.Metrics {
	ms := make([]*vegeta.Metrics, len(loads))
	driven := make([]time.Duration, len(loads))
	for i := range ms {
		ms[i] = &vegeta.Metrics{}
	}
	for range turns {
		for i, l := range loads {
			start := time.Now()
			attackInto(ms[i], nil, header, l.tr, d/turns, nil, clients, l.opts...)
			driven[i] += time.Since(start)
		}
	}
	for i, m := range ms {
		m.Close()
		m.Throughput = m.Success * float64(m.Requests) / driven[i].Seconds()
	}
	return ms
}
