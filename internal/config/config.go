// Package config reads Planwerk's settings from command-line flags, each
// of which also reads the environment variable PLANWERK_<FLAG>.
package config

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Config holds the service settings of docs/api.md "The program".
type Config struct {
	Addr               string
	Database           string
	Files              string
	BaseDomain         string
	PublicURL          string
	Redis              string
	URLSecret          string
	MaxUploadBytes     int64
	TenantStorageBytes int64
	FileRate           int
	TokenTTL           time.Duration
	// ChangeRetention is how long the change feed keeps its changes.
	ChangeRetention time.Duration
	// AuditRetention is how long the audit log keeps its entries; zero
	// keeps them for ever (docs/decisions.md "Audit log retention").
	AuditRetention time.Duration
	// WebhookAllowPrivate lets webhooks reach loopback, private and
	// link-local addresses (development and tests).
	WebhookAllowPrivate bool
	// WebhookDisableAfter disables a webhook whose deliveries have failed
	// this long.
	WebhookDisableAfter time.Duration
	// MetricsAddr, when set, serves /metrics on a listener of its own
	// instead of the main one.
	MetricsAddr string
	// RequestTimeout ends a request that makes no progress for this long;
	// streams (lists, uploads, downloads) run on while they move data.
	RequestTimeout time.Duration
	// WriteIdleTimeout cuts off a client that takes no data (or sends no
	// body data) for this long.
	WriteIdleTimeout time.Duration
	// ShutdownGrace is how long requests in flight may finish after
	// SIGTERM before they are cut.
	ShutdownGrace time.Duration
	// CORSOrigins are origins (scheme://host[:port]) besides the tenants'
	// own that browsers may call the API from.
	CORSOrigins []string
	// TrustedProxies are the networks of the reverse proxies whose
	// X-Forwarded-For or Forwarded header names the client.
	TrustedProxies []netip.Prefix
	// badProxies keeps what --trusted-proxies could not read, so that
	// Validate reports it together with the other problems.
	badProxies []string
	// TLS is how the main listener speaks HTTPS (tls.go).
	TLS TLS

	// Not flags: the login brake. Each allows this many failed logins at
	// once, then one more per refill period.
	LoginFailuresPerAccount int
	LoginFailuresPerAddress int

	// Not flags: webhook delivery timing, which tests shorten. Zero takes
	// the defaults (a first retry after 5s, retries for 24h, a look for
	// work every second, a worker's turn of a second while others wait).
	WebhookRetryBase time.Duration
	WebhookRetryFor  time.Duration
	WebhookPoll      time.Duration
	WebhookBudget    time.Duration
	// FeedLook is how often a waiting read of the change feed looks for
	// changes itself while commits wake it (zero: 5s); tests lengthen it.
	FeedLook time.Duration
	// WebhookLookup, when set, resolves webhook hosts at create and
	// change instead of the system resolver (tests of DNS rebinding).
	WebhookLookup func(ctx context.Context, host string) ([]netip.Addr, error)
	// TenantCacheTTL is how long an instance keeps a tenant it looked up
	// (zero: 10s, tenancy.CacheTTL): a tenant suspended, resumed or
	// deleted shows within it. Not a flag: the operator's commands count
	// on every instance taking at most the default; tests shorten it.
	TenantCacheTTL time.Duration
}

// Default returns the documented defaults.
func Default() Config {
	return Config{
		Addr:               ":8080",
		Database:           "sqlite:data/planwerk.db",
		Files:              "data/files",
		BaseDomain:         "localhost",
		MaxUploadBytes:     25 << 20,
		TenantStorageBytes: 1 << 30,
		FileRate:           60,
		TokenTTL:           time.Hour,
		ChangeRetention:    720 * time.Hour,

		WebhookDisableAfter: 72 * time.Hour,
		RequestTimeout:      30 * time.Second,
		WriteIdleTimeout:    30 * time.Second,
		ShutdownGrace:       30 * time.Second,

		LoginFailuresPerAccount: 10,
		LoginFailuresPerAddress: 50,

		TLS: TLS{ACMEDirectory: DefaultACMEDirectory},
	}
}

// A Group registers the flags of one concern on fs, writing into c. A
// command registers the groups it reads and no others, so its help lists
// only flags that change what it does. Adding a flag to a group is one
// line in that group.
type Group func(c *Config, fs *flag.FlagSet)

// All is every group: the settings of serve.
var All = []Group{Database, HTTP, HTTPS, Files, Quota, Limits, Tokens, Events, Audit}

// Register defines the flags of groups on fs, writing into c.
func (c *Config) Register(fs *flag.FlagSet, groups ...Group) {
	for _, g := range groups {
		g(c, fs)
	}
}

// Database is where the data lives.
func Database(c *Config, fs *flag.FlagSet) {
	fs.StringVar(&c.Database, "database", c.Database, "sqlite:PATH or a postgres:// URL")
}

// HTTP is how the service listens and answers.
func HTTP(c *Config, fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "listen address")
	fs.StringVar(&c.BaseDomain, "base-domain", c.BaseDomain, "tenant hosts are SLUG.BASE-DOMAIN")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", c.MetricsAddr, "serve /metrics on this address instead of the main listener")
	durationFlag(fs, &c.RequestTimeout, "request-timeout", "end a request that makes no progress for this long (e.g. 30s)")
	durationFlag(fs, &c.WriteIdleTimeout, "write-idle-timeout", "cut off a client that takes or sends no data for this long")
	durationFlag(fs, &c.ShutdownGrace, "shutdown-grace", "how long requests in flight may finish after SIGTERM")
	corsOriginsFlag(fs, c)
	trustedProxiesFlag(fs, c)
}

// corsOriginsFlag reads comma-separated origins, lower-cased, without a
// trailing slash.
func corsOriginsFlag(fs *flag.FlagSet, c *Config) {
	fs.Func("cors-origins", "comma-separated origins (https://app.example.com) allowed to call the API from a browser, besides the tenants' own", func(s string) error {
		c.CORSOrigins = nil
		for _, o := range strings.Split(s, ",") {
			if o = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/"); o != "" {
				c.CORSOrigins = append(c.CORSOrigins, o)
			}
		}
		return nil
	})
}

// trustedProxiesFlag reads comma-separated CIDRs; a bare IP address is a
// network of that address alone.
func trustedProxiesFlag(fs *flag.FlagSet, c *Config) {
	fs.Func("trusted-proxies", "comma-separated networks (10.0.0.0/8, or one IP) of reverse proxies whose X-Forwarded-For or Forwarded header gives the client address", func(s string) error {
		c.TrustedProxies, c.badProxies = nil, nil
		for _, v := range strings.Split(s, ",") {
			if v = strings.TrimSpace(v); v == "" {
				continue
			}
			if p, ok := parseProxy(v); ok {
				c.TrustedProxies = append(c.TrustedProxies, p)
			} else {
				c.badProxies = append(c.badProxies, v)
			}
		}
		return nil
	})
}

// parseProxy reads a CIDR or an IP address as a network, masked. An
// IPv4-mapped IPv6 network becomes the IPv4 network: client addresses are
// compared unmapped.
func parseProxy(s string) (netip.Prefix, bool) {
	p, err := netip.ParsePrefix(s)
	if err != nil {
		a, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, false
		}
		a = a.WithZone("")
		p = netip.PrefixFrom(a, a.BitLen())
	}
	if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
		p = netip.PrefixFrom(a.Unmap(), p.Bits()-96)
	}
	return p.Masked(), true
}

// Files is the file store and its uploads and downloads.
func Files(c *Config, fs *flag.FlagSet) {
	FileStore(c, fs)
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL, "base URL of signed download links (default: from the request)")
	fs.StringVar(&c.URLSecret, "url-secret", c.URLSecret, "key signing download URLs (default: generated once and kept in the database)")
	fs.Int64Var(&c.MaxUploadBytes, "max-upload-bytes", c.MaxUploadBytes, "per-upload size cap in bytes")
}

// FileStore is where files are kept, alone: for the commands that move
// a tenant's files (tenant export and import) and serve none.
func FileStore(c *Config, fs *flag.FlagSet) {
	fs.StringVar(&c.Files, "files", c.Files, "file store: a folder, or s3://BUCKET?endpoint=HOST:PORT&region=R&secure=false&downloads=service|presigned")
}

// Quota is what a tenant may keep.
func Quota(c *Config, fs *flag.FlagSet) {
	fs.Int64Var(&c.TenantStorageBytes, "tenant-storage-bytes", c.TenantStorageBytes, "default storage cap per tenant in bytes")
}

// Limits are the rate limits and where their counters live.
func Limits(c *Config, fs *flag.FlagSet) {
	fs.StringVar(&c.Redis, "redis", c.Redis, "redis:// URL for rate-limit counters shared by all instances")
	fs.IntVar(&c.FileRate, "file-rate", c.FileRate, "upload and download-URL requests per user per minute")
}

// Events are the change feed's settings.
func Events(c *Config, fs *flag.FlagSet) {
	fs.DurationVar(&c.ChangeRetention, "change-retention", c.ChangeRetention, "how long the change feed keeps changes (older cursors get 410)")
	fs.BoolVar(&c.WebhookAllowPrivate, "webhook-allow-private", c.WebhookAllowPrivate, "let webhooks reach loopback, private and link-local addresses (development only)")
	fs.DurationVar(&c.WebhookDisableAfter, "webhook-disable-after", c.WebhookDisableAfter, "disable a webhook whose deliveries have failed this long")
}

// MinAuditRetention is the shortest retention of the audit log: an
// auditor's records cover days at least, and a purge of entries younger
// than a day would be a mistyped setting, not a policy.
const MinAuditRetention = 24 * time.Hour

// Audit is the audit log's settings.
func Audit(c *Config, fs *flag.FlagSet) {
	fs.DurationVar(&c.AuditRetention, "audit-retention", c.AuditRetention, "how long the audit log keeps its entries: 0 for ever, else at least 24h (e.g. 87600h)")
}

// Tokens are the settings of issued tokens.
func Tokens(c *Config, fs *flag.FlagSet) {
	fs.Func("token-ttl", "access token lifetime in seconds (default 3600)", func(s string) error {
		secs, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil || secs <= 0 || secs > math.MaxInt64/int64(time.Second) {
			return errors.New("must be a positive whole number of seconds")
		}
		c.TokenTTL = time.Duration(secs) * time.Second
		return nil
	})
}

// durationFlag defines a flag taking a Go duration ("30s", "1m30s") or a
// whole number of seconds.
func durationFlag(fs *flag.FlagSet, d *time.Duration, name, usage string) {
	fs.Func(name, fmt.Sprintf("%s (default %s)", usage, *d), func(s string) error {
		s = strings.TrimSpace(s)
		if secs, err := strconv.ParseInt(s, 10, 64); err == nil {
			if secs <= 0 || secs > math.MaxInt64/int64(time.Second) {
				return errors.New("must be positive")
			}
			*d = time.Duration(secs) * time.Second
			return nil
		}
		v, err := time.ParseDuration(s)
		if err != nil || v <= 0 {
			return errors.New("must be a positive duration such as 30s or 2m")
		}
		*d = v
		return nil
	})
}

// Validate checks the settings that can be checked without connecting.
// Settings of groups a command did not register keep their defaults,
// which are valid.
func (c *Config) Validate() error {
	var problems []string
	if !strings.HasPrefix(c.Database, "sqlite:") && !strings.HasPrefix(c.Database, "postgres://") &&
		!strings.HasPrefix(c.Database, "postgresql://") {
		problems = append(problems, "--database must be sqlite:PATH or a postgres:// URL")
	}
	if c.ChangeRetention < time.Hour {
		problems = append(problems, "--change-retention must be at least 1h")
	}
	if c.AuditRetention != 0 && c.AuditRetention < MinAuditRetention {
		problems = append(problems, "--audit-retention must be 0 (kept for ever) or at least 24h")
	}
	if c.WebhookDisableAfter <= 0 {
		problems = append(problems, "--webhook-disable-after must be positive")
	}
	if c.BaseDomain == "" {
		problems = append(problems, "--base-domain must not be empty")
	}
	if c.PublicURL != "" {
		if u, err := url.Parse(c.PublicURL); err != nil || u.Scheme == "" || u.Host == "" {
			problems = append(problems, "--public-url must be an absolute URL")
		}
	}
	if c.Redis != "" && !strings.HasPrefix(c.Redis, "redis://") && !strings.HasPrefix(c.Redis, "rediss://") {
		problems = append(problems, "--redis must be a redis:// URL")
	}
	if c.MaxUploadBytes <= 0 {
		problems = append(problems, "--max-upload-bytes must be positive")
	}
	if c.TenantStorageBytes <= 0 {
		problems = append(problems, "--tenant-storage-bytes must be positive")
	}
	if c.FileRate <= 0 {
		problems = append(problems, "--file-rate must be positive")
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--request-timeout", c.RequestTimeout}, {"--write-idle-timeout", c.WriteIdleTimeout}, {"--shutdown-grace", c.ShutdownGrace}} {
		if d.v <= 0 {
			problems = append(problems, d.flag+" must be positive")
		}
	}
	for _, o := range c.CORSOrigins {
		if u, err := url.Parse(o); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" ||
			u.User != nil || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
			problems = append(problems, "--cors-origins: "+strconv.Quote(o)+" is not an origin such as https://app.example.com")
		}
	}
	for _, v := range c.badProxies {
		problems = append(problems, "--trusted-proxies: "+strconv.Quote(v)+" is neither a CIDR such as 10.0.0.0/8 nor an IP address")
	}
	for _, p := range c.TrustedProxies {
		if !p.IsValid() {
			problems = append(problems, "--trusted-proxies: an empty network")
		}
	}
	if c.MetricsAddr != "" && c.MetricsAddr == c.Addr {
		problems = append(problems, "--metrics-addr must differ from --addr")
	}
	problems = append(problems, c.TLS.validate(c.Addr, c.MetricsAddr)...)
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Parse parses args into fs; every flag not given on the command line is
// then taken from PLANWERK_<FLAG> when that variable is set. Flags win.
func Parse(fs *flag.FlagSet, args []string, getenv func(string) string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		name := EnvName(f.Name)
		if v := getenv(name); v != "" {
			if setErr := fs.Set(f.Name, v); setErr != nil {
				err = fmt.Errorf("%s: %w", name, setErr)
			}
		}
	})
	return err
}

// EnvName is the environment variable of a flag: PLANWERK_ + upper case,
// with '-' as '_'.
func EnvName(flagName string) string {
	return "PLANWERK_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}
