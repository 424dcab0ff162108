package config_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"planwerk/internal/config"
)

// TestHTTPSFlags: the TLS settings come from flags and from their
// variables alike.
func TestHTTPSFlags(t *testing.T) {
	t.Parallel()
	want := config.Default()
	want.TLS = config.TLS{ACMEDomains: []string{"a.example.com", "b.example.com"}, ACMEDirectory: "https://acme.example/dir",
		ACMEEmail: "ops@example.com", ACMECA: "/etc/ca.pem", HTTPAddr: ":8081"}
	fromFlags, err := parse([]string{"--acme-domains", " A.example.com,b.example.com,a.example.com,", "--acme-directory", "https://acme.example/dir",
		"--acme-email", "ops@example.com", "--acme-ca", "/etc/ca.pem", "--http-addr", ":8081"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	fromEnv, err := parse(nil, map[string]string{"PLANWERK_ACME_DOMAINS": "a.example.com, B.example.com", "PLANWERK_ACME_DIRECTORY": "https://acme.example/dir",
		"PLANWERK_ACME_EMAIL": "ops@example.com", "PLANWERK_ACME_CA": "/etc/ca.pem", "PLANWERK_HTTP_ADDR": ":8081"})
	if err != nil {
		t.Fatal(err)
	}
	for how, got := range map[string]config.Config{"flags": fromFlags, "environment": fromEnv} {
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v\nwant %+v", how, got.TLS, want.TLS)
		}
		if err := got.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", how, err)
		}
	}
	files, err := parse(nil, map[string]string{"PLANWERK_TLS_CERT": "cert.pem", "PLANWERK_TLS_KEY": "key.pem"})
	if err != nil || files.TLS.CertFile != "cert.pem" || files.TLS.KeyFile != "key.pem" || !files.TLS.On() || files.TLS.ACME() {
		t.Errorf("certificate files from the environment: %+v, %v", files.TLS, err)
	}
	if files.TLS.RedirectAddr() != "" {
		t.Errorf("certificate files listen for plain HTTP on %q without --http-addr", files.TLS.RedirectAddr())
	}
	if acme, _ := parse([]string{"--acme-domains", "a.example.com"}, nil); acme.TLS.RedirectAddr() != ":80" {
		t.Errorf("ACME's plain-HTTP listener: %q, want :80", acme.TLS.RedirectAddr())
	}
	if d := config.Default(); d.TLS.On() || d.TLS.RedirectAddr() != "" {
		t.Errorf("the defaults serve HTTPS or plain HTTP on a second listener: %+v", d.TLS)
	}
}

func TestValidateTLS(t *testing.T) {
	t.Parallel()
	acme := func(c *config.Config) { c.TLS.ACMEDomains = []string{"a.example.com"} }
	cases := []struct {
		name   string
		args   []string
		change func(*config.Config)
		flag   string // named in the error; "" means valid
	}{
		{name: "certificate files", args: []string{"--tls-cert", "c.pem", "--tls-key", "k.pem"}},
		{name: "certificate files and a redirect", args: []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--http-addr", ":8081"}},
		{name: "certificate without key", args: []string{"--tls-cert", "c.pem"}, flag: "--tls-key"},
		{name: "key without certificate", args: []string{"--tls-key", "k.pem"}, flag: "--tls-cert"},
		{name: "files and ACME", args: []string{"--tls-cert", "c.pem", "--tls-key", "k.pem", "--acme-domains", "a.example.com"}, flag: "--acme-domains"},
		{name: "ACME", args: []string{"--acme-domains", "a.example.com"}},
		{name: "ACME with everything", args: []string{"--acme-domains", "a.example.com", "--acme-email", "ops@example.com", "--acme-ca", "ca.pem", "--acme-directory", "https://127.0.0.1:14000/dir", "--http-addr", "127.0.0.1:8081"}},
		{name: "wildcard domain", args: []string{"--acme-domains", "*.example.com"}, flag: "--acme-domains"},
		{name: "IP address", args: []string{"--acme-domains", "a.example.com,192.0.2.1"}, flag: "--acme-domains"},
		{name: "domain with a port", args: []string{"--acme-domains", "a.example.com:443"}, flag: "--acme-domains"},
		{name: "URL as domain", args: []string{"--acme-domains", "https://a.example.com"}, flag: "--acme-domains"},
		{name: "plain-HTTP directory", args: []string{"--acme-domains", "a.example.com", "--acme-directory", "http://acme.example/dir"}, flag: "--acme-directory"},
		{name: "directory not a URL", args: []string{"--acme-domains", "a.example.com", "--acme-directory", "acme.example"}, flag: "--acme-directory"},
		{name: "directory unused without ACME", args: []string{"--acme-directory", "nonsense"}},
		{name: "bad e-mail", args: []string{"--acme-domains", "a.example.com", "--acme-email", "ops"}, flag: "--acme-email"},
		{name: "e-mail with a name", args: []string{"--acme-domains", "a.example.com", "--acme-email", "Ops <ops@example.com>"}, flag: "--acme-email"},
		{name: "e-mail without ACME", args: []string{"--acme-email", "ops@example.com"}, flag: "--acme-email"},
		{name: "CA without ACME", args: []string{"--acme-ca", "ca.pem"}, flag: "--acme-ca"},
		{name: "redirect without HTTPS", args: []string{"--http-addr", ":8081"}, flag: "--http-addr"},
		{name: "redirect on the main listener", args: []string{"--acme-domains", "a.example.com", "--addr", ":80"}, flag: "--http-addr"},
		{name: "redirect on the metrics listener", args: []string{"--acme-domains", "a.example.com", "--http-addr", ":9090", "--metrics-addr", ":9090"}, flag: "--http-addr"},
		{name: "ACME set in code", change: acme},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, err := parse(c.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.change != nil {
				c.change(&cfg)
			}
			err = cfg.Validate()
			switch {
			case c.flag == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case c.flag != "" && err == nil:
				t.Errorf("Validate accepted %+v", cfg.TLS)
			case c.flag != "" && !strings.Contains(err.Error(), c.flag):
				t.Errorf("Validate error %q does not name %s", err, c.flag)
			}
		})
	}
}

// FuzzParseDomains: whatever --acme-domains holds, the names read are
// lower-case host names, each once, that read again as themselves; what
// is left out is reported, unless it was blank or a repetition.
func FuzzParseDomains(f *testing.F) {
	for _, s := range []string{"", "a.example.com", " A.Example.com , b.example.com,,a.example.com", "*.example.com", "192.0.2.1",
		"a.example.com:443", "xn--bcher-kva.example", "-a.example.com", "a-.example.com", "a..example.com", "example.com.", "localhost",
		"a.123", "123.a", strings.Repeat("a", 63) + ".com", strings.Repeat("a", 64) + ".com", "bücher.example", "a_b.example.com"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		names, bad := config.ParseDomains(s)
		seen := map[string]bool{}
		for _, n := range names {
			if n != strings.ToLower(n) || n == "" || strings.ContainsAny(n, ",:*/ \t") || len(n) > 253 || seen[n] {
				t.Errorf("ParseDomains(%q) read %q", s, n)
			}
			seen[n] = true
			if again, bad := config.ParseDomains(n); len(again) != 1 || again[0] != n || len(bad) != 0 {
				t.Errorf("%q reads again as %q, bad %q", n, again, bad)
			}
		}
		for _, b := range bad {
			if again, _ := config.ParseDomains(b); len(again) != 0 {
				t.Errorf("ParseDomains(%q) reports %q bad, which reads alone as %q", s, b, again)
			}
		}
		for _, part := range strings.Split(s, ",") {
			v := strings.ToLower(strings.TrimSpace(part))
			if v != "" && !seen[v] && !slices.Contains(bad, v) {
				t.Errorf("ParseDomains(%q) lost %q: names %q, bad %q", s, v, names, bad)
			}
		}
	})
}
