package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"golang.org/x/crypto/acme"
	"golang.org/x/crypto/acme/autocert"

	"planwerk/internal/certs"
	"planwerk/internal/config"
	"planwerk/internal/store"
)

// edge is how serve meets its clients: plain HTTP on --addr, or HTTPS
// with certificates from files or by ACME, and then perhaps a plain-HTTP
// listener beside it (--http-addr) that answers ACME's HTTP-01 challenge
// and redirects the rest to HTTPS.
type edge struct {
	settings config.TLS
	// baseDomain is the service's: the redirect answers it and its
	// tenant hosts besides the ACME domains.
	baseDomain string
	log        *slog.Logger
	// tls is the main listener's configuration; nil serves plain HTTP.
	tls *tls.Config
	// client and manager are ACME's, when certificates come by ACME; the
	// manager exists once the database does (useDatabase).
	client  *acme.Client
	manager *autocert.Manager
}

// prepareEdge checks the HTTPS settings before the service opens
// anything: the certificate and key files can be read and belong
// together; the ACME directory answers. Each error names the flag to
// look at.
func prepareEdge(ctx context.Context, cfg config.Config, log *slog.Logger) (*edge, error) {
	t := cfg.TLS
	e := &edge{settings: t, baseDomain: cfg.BaseDomain, log: log}
	switch {
	case t.CertFile != "":
		files, err := certs.LoadFiles(t.CertFile, t.KeyFile, log)
		if err != nil {
			return nil, flagError(err, t)
		}
		e.tls = certs.ServerConfig(files.GetCertificate)
	case t.ACME():
		client, err := certs.ACMEClient(t.ACMEDirectory, t.ACMECA)
		if err != nil {
			return nil, flagError(err, t)
		}
		if err := certs.CheckDirectory(ctx, client); err != nil {
			return nil, fmt.Errorf("--acme-directory %s: the ACME directory cannot be read: %w", t.ACMEDirectory, err)
		}
		e.client = client
	}
	return e, nil
}

// flagError says which flag names the file that cannot be used.
func flagError(err error, t config.TLS) error {
	var fe *certs.FileError
	switch {
	case errors.As(err, &fe):
		flag := map[certs.Part]string{certs.PartCert: "--tls-cert", certs.PartKey: "--tls-key", certs.PartCA: "--acme-ca"}[fe.Part]
		return fmt.Errorf("%s %s: %w", flag, fe.Path, fe.Err)
	case errors.Is(err, certs.ErrMismatch):
		return fmt.Errorf("--tls-cert %s and --tls-key %s do not belong together: %w", t.CertFile, t.KeyFile, certs.ErrMismatch)
	}
	return err
}

// useDatabase completes ACME, whose account and certificates the
// database keeps for every instance.
func (e *edge) useDatabase(db *store.DB) {
	if e.client == nil {
		return
	}
	m := certs.NewManager(e.client, e.settings.ACMEDomains, e.settings.ACMEEmail, certs.NewCache(db))
	e.manager = m
	// A handshake without a server name (a health check by IP address)
	// gets the first domain's certificate.
	e.tls = certs.ServerConfig(certs.WithDefaultName(m.GetCertificate, e.settings.ACMEDomains[0]), acme.ALPNProto)
	e.log.Info("certificates by ACME", "directory", e.settings.ACMEDirectory, "domains", e.settings.ACMEDomains)
}

// serve serves srv on ln, over TLS when the edge says so.
func (e *edge) serve(srv *http.Server, ln net.Listener) error {
	if e == nil || e.tls == nil {
		return srv.Serve(ln)
	}
	srv.TLSConfig = e.tls
	return srv.ServeTLS(ln, "", "")
}

// plain opens the plain-HTTP listener beside the main one, if there is
// to be one: it answers ACME's challenge and redirects everything else to
// HTTPS on main's port.
func (e *edge) plain(main net.Addr) (*http.Server, net.Listener, error) {
	if e == nil || e.tls == nil || e.settings.RedirectAddr() == "" {
		return nil, nil, nil
	}
	_, port, err := net.SplitHostPort(main.String())
	if err != nil {
		return nil, nil, err
	}
	h := certs.Redirect(port, e.baseDomain, e.settings.ACMEDomains)
	if e.manager != nil {
		h = certs.Challenge(e.manager, h)
	}
	ln, err := net.Listen("tcp", e.settings.RedirectAddr())
	if err != nil {
		return nil, nil, fmt.Errorf("--http-addr: listen: %w", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(e.log.Handler(), slog.LevelWarn)}
	return srv, ln, nil
}
