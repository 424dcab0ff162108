package config

import (
	"flag"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// DefaultACMEDirectory is Let's Encrypt's production directory.
const DefaultACMEDirectory = "https://acme-v02.api.letsencrypt.org/directory"

// DefaultChallengeAddr is where the plain-HTTP listener of ACME listens
// unless --http-addr says otherwise: HTTP-01 validation comes to port 80.
const DefaultChallengeAddr = ":80"

// TLS is how the main listener speaks HTTPS: from certificate files, by
// ACME, or not at all (plain HTTP, behind a proxy that ends TLS).
type TLS struct {
	// CertFile and KeyFile are a PEM certificate (chain) and its private
	// key, read again when they change.
	CertFile string
	KeyFile  string
	// ACMEDomains are the host names to get certificates for by ACME.
	ACMEDomains []string
	// ACMEDirectory is the ACME server's directory URL.
	ACMEDirectory string
	// ACMEEmail is the contact of the ACME account (optional).
	ACMEEmail string
	// ACMECA is a PEM file of CA certificates to trust, besides the
	// system's, for the ACME directory's HTTPS (a private or test CA).
	ACMECA string
	// HTTPAddr is the plain-HTTP listener that answers ACME's HTTP-01
	// challenge and redirects everything else to HTTPS: DefaultChallengeAddr
	// with ACME when empty; off with certificate files unless set.
	HTTPAddr string
	// badDomains keeps what --acme-domains could not read, so that
	// Validate reports it together with the other problems.
	badDomains []string
}

// On reports whether the main listener serves HTTPS.
func (t TLS) On() bool { return t.CertFile != "" || t.KeyFile != "" || t.ACME() }

// ACME reports whether certificates come by ACME.
func (t TLS) ACME() bool { return len(t.ACMEDomains) > 0 || len(t.badDomains) > 0 }

// RedirectAddr is the address of the plain-HTTP listener that answers
// the ACME challenge and redirects to HTTPS, or "" for none.
func (t TLS) RedirectAddr() string {
	if t.HTTPAddr == "" && t.ACME() {
		return DefaultChallengeAddr
	}
	return t.HTTPAddr
}

// HTTPS is how the service speaks TLS.
func HTTPS(c *Config, fs *flag.FlagSet) {
	t := &c.TLS
	fs.StringVar(&t.CertFile, "tls-cert", t.CertFile, "serve HTTPS (HTTP/2 included) with this PEM certificate chain, read again within seconds when the file is replaced")
	fs.StringVar(&t.KeyFile, "tls-key", t.KeyFile, "the PEM private key of --tls-cert")
	fs.Func("acme-domains", "comma-separated host names (a.example.com,b.example.com) to get and renew certificates for by ACME, kept in the database for every instance", func(s string) error {
		t.ACMEDomains, t.badDomains = ParseDomains(s)
		return nil
	})
	fs.StringVar(&t.ACMEDirectory, "acme-directory", t.ACMEDirectory, "directory URL of the ACME server")
	fs.StringVar(&t.ACMEEmail, "acme-email", t.ACMEEmail, "contact e-mail address of the ACME account (optional)")
	fs.StringVar(&t.ACMECA, "acme-ca", t.ACMECA, "PEM file of CA certificates to trust for the ACME directory's HTTPS, besides the system's")
	fs.StringVar(&t.HTTPAddr, "http-addr", t.HTTPAddr, "plain-HTTP listener that answers ACME's HTTP-01 challenge and redirects the rest to HTTPS (default \""+DefaultChallengeAddr+"\" with --acme-domains)")
}

// ParseDomains reads comma-separated host names, lower-cased, each once,
// in their order; bad are those that are no host name for a certificate
// of ACME's HTTP-01 challenge (no wildcard, no IP address, no port).
func ParseDomains(s string) (names, bad []string) {
	for _, v := range strings.Split(s, ",") {
		v = strings.ToLower(strings.TrimSpace(v))
		switch {
		case v == "":
		case !hostName(v):
			bad = append(bad, v)
		case !slices.Contains(names, v):
			names = append(names, v)
		}
	}
	return names, bad
}

// hostName reports whether s is a lower-case DNS host name: labels of
// letters, digits and inner hyphens, 1 to 63 long, 253 in all, and a
// last label that is not all digits (which would be an IPv4 address).
func hostName(s string) bool {
	if len(s) > 253 {
		return false
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			if c := l[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
				return false
			}
		}
	}
	last := labels[len(labels)-1]
	return strings.Trim(last, "0123456789") != ""
}

// validate reports the problems of the TLS settings; addr and metrics
// are the main and the metrics listeners' addresses.
func (t TLS) validate(addr, metrics string) []string {
	var problems []string
	if (t.CertFile == "") != (t.KeyFile == "") {
		problems = append(problems, "--tls-cert and --tls-key go together: give both")
	}
	if t.CertFile != "" && t.ACME() {
		problems = append(problems, "--tls-cert and --acme-domains exclude each other: certificates come from files or by ACME")
	}
	for _, v := range t.badDomains {
		problems = append(problems, "--acme-domains: "+strconv.Quote(v)+" is not a host name such as a.example.com (no wildcard, IP address or port)")
	}
	if t.ACME() {
		if u, err := url.Parse(t.ACMEDirectory); err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil {
			problems = append(problems, "--acme-directory must be an https:// URL")
		}
	}
	if t.ACMEEmail != "" {
		if a, err := mail.ParseAddress(t.ACMEEmail); err != nil || a.Address != t.ACMEEmail {
			problems = append(problems, "--acme-email: "+strconv.Quote(t.ACMEEmail)+" is not an e-mail address such as ops@example.com")
		}
	}
	if !t.ACME() {
		for _, f := range []struct{ flag, v string }{{"--acme-email", t.ACMEEmail}, {"--acme-ca", t.ACMECA}} {
			if f.v != "" {
				problems = append(problems, f.flag+" needs --acme-domains")
			}
		}
		if t.HTTPAddr != "" && t.CertFile == "" {
			problems = append(problems, "--http-addr needs --tls-cert or --acme-domains: it redirects to HTTPS")
		}
	}
	if r := t.RedirectAddr(); r != "" && (r == addr || r == metrics) {
		problems = append(problems, "--http-addr ("+r+") must differ from --addr and --metrics-addr")
	}
	return problems
}
