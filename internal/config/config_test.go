package config_test

import (
	"flag"
	"io"
	"net/netip"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
)

// parse registers a default Config on a fresh flag set and parses args
// with the given environment.
func parse(args []string, env map[string]string) (config.Config, error) {
	cfg := config.Default()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.Register(fs, config.All...)
	err := config.Parse(fs, args, func(k string) string { return env[k] })
	return cfg, err
}

func TestDefault(t *testing.T) {
	t.Parallel()
	c := config.Default()
	want := config.Config{
		Addr: ":8080", Database: "sqlite:data/planwerk.db", Files: "data/files", BaseDomain: "localhost",
		MaxUploadBytes: 26214400, TenantStorageBytes: 1073741824, FileRate: 60, TokenTTL: 3600 * time.Second,
		RequestTimeout: 30 * time.Second, WriteIdleTimeout: 30 * time.Second, ShutdownGrace: 30 * time.Second,
		ChangeRetention: 720 * time.Hour, WebhookDisableAfter: 72 * time.Hour,
		LoginFailuresPerAccount: c.LoginFailuresPerAccount, LoginFailuresPerAddress: c.LoginFailuresPerAddress,
		TLS: config.TLS{ACMEDirectory: "https://acme-v02.api.letsencrypt.org/directory"},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("Default() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("the defaults do not validate: %v", err)
	}
	got, err := parse(nil, nil)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("parse with no flags and no environment = %+v, %v; want the defaults", got, err)
	}
}

func TestParseReadsEnvironment(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PLANWERK_ADDR":                 "127.0.0.1:9999",
		"PLANWERK_DATABASE":             "postgres://db.example/planwerk",
		"PLANWERK_FILES":                "s3://bucket?endpoint=minio:9000&region=eu&secure=false",
		"PLANWERK_BASE_DOMAIN":          "planwerk.example",
		"PLANWERK_PUBLIC_URL":           "https://files.planwerk.example",
		"PLANWERK_REDIS":                "redis://cache:6379/0",
		"PLANWERK_MAX_UPLOAD_BYTES":     "1048576",
		"PLANWERK_TENANT_STORAGE_BYTES": "5000000",
		"PLANWERK_FILE_RATE":            "7",
		"PLANWERK_TOKEN_TTL":            "120",
		"PLANWERK_METRICS_ADDR":         "127.0.0.1:9090",
		"PLANWERK_REQUEST_TIMEOUT":      "45s",
		"PLANWERK_WRITE_IDLE_TIMEOUT":   "10",
		"PLANWERK_SHUTDOWN_GRACE":       "1m30s",
		"PLANWERK_AUDIT_RETENTION":      "87600h",
		"ADDR":                          "wrong",
		"planwerk_addr":                 "wrong",
	}
	c, err := parse(nil, env)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.Addr = "127.0.0.1:9999"
	want.Database = "postgres://db.example/planwerk"
	want.Files = "s3://bucket?endpoint=minio:9000&region=eu&secure=false"
	want.BaseDomain = "planwerk.example"
	want.PublicURL = "https://files.planwerk.example"
	want.Redis = "redis://cache:6379/0"
	want.MaxUploadBytes = 1048576
	want.TenantStorageBytes = 5000000
	want.FileRate = 7
	want.TokenTTL = 120 * time.Second
	want.MetricsAddr = "127.0.0.1:9090"
	want.RequestTimeout = 45 * time.Second
	want.WriteIdleTimeout = 10 * time.Second
	want.ShutdownGrace = 90 * time.Second
	want.AuditRetention = 87600 * time.Hour
	if !reflect.DeepEqual(c, want) {
		t.Errorf("parsed %+v\nwant   %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
}

func TestParseEmptyEnvironmentKeepsDefaults(t *testing.T) {
	t.Parallel()
	c, err := parse(nil, map[string]string{"PLANWERK_ADDR": "", "PLANWERK_FILE_RATE": ""})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(c, config.Default()) {
		t.Errorf("empty variables changed the settings: %+v", c)
	}
}

func TestParseFlagsWin(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"PLANWERK_ADDR":             ":9999",
		"PLANWERK_DATABASE":         "sqlite:env.db",
		"PLANWERK_MAX_UPLOAD_BYTES": "not a number", // never read: the flag is given
		"PLANWERK_TOKEN_TTL":        "60",
		"PLANWERK_FILE_RATE":        "5",
	}
	c, err := parse([]string{"--addr", ":7000", "-database=sqlite:flag.db", "--max-upload-bytes", "2048", "--token-ttl", "30"}, env)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != ":7000" || c.Database != "sqlite:flag.db" || c.MaxUploadBytes != 2048 || c.TokenTTL != 30*time.Second {
		t.Errorf("flags did not win: %+v", c)
	}
	if c.FileRate != 5 {
		t.Errorf("FileRate = %d, want 5 from PLANWERK_FILE_RATE (no flag given)", c.FileRate)
	}
}

func TestParseBadEnvironment(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"PLANWERK_MAX_UPLOAD_BYTES":     "lots",
		"PLANWERK_TENANT_STORAGE_BYTES": "1GiB",
		"PLANWERK_FILE_RATE":            "sixty",
		"PLANWERK_TOKEN_TTL":            "-5",
		"PLANWERK_AUDIT_RETENTION":      "ten years",
	}
	for name, value := range cases {
		_, err := parse(nil, map[string]string{name: value})
		if err == nil {
			t.Errorf("%s=%q: no error", name, value)
			continue
		}
		if !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %q does not name the variable", name, value, err)
		}
	}
}

func TestParseBadFlag(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"--file-rate", "many"},
		{"--max-upload-bytes", "1.5"},
		{"--token-ttl", "0"},
		{"--token-ttl", "-10"},
		{"--token-ttl", "soon"},
		{"--no-such-flag"},
	} {
		if _, err := parse(args, nil); err == nil {
			t.Errorf("parse(%q): no error", args)
		}
	}
}

func TestTokenTTLSeconds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		arg  string
		want time.Duration
	}{
		{"1", time.Second},
		{"90", 90 * time.Second},
		{"3600", time.Hour},
		{"86400", 24 * time.Hour},
	} {
		cfg, err := parse([]string{"--token-ttl", c.arg}, nil)
		if err != nil {
			t.Errorf("--token-ttl %s: %v", c.arg, err)
			continue
		}
		if cfg.TokenTTL != c.want {
			t.Errorf("--token-ttl %s = %v, want %v", c.arg, cfg.TokenTTL, c.want)
		}
		cfg, err = parse(nil, map[string]string{"PLANWERK_TOKEN_TTL": c.arg})
		if err != nil || cfg.TokenTTL != c.want {
			t.Errorf("PLANWERK_TOKEN_TTL=%s = %v, %v; want %v", c.arg, cfg.TokenTTL, err, c.want)
		}
	}
}

func TestDurationFlags(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		value string
		want  time.Duration // 0: refused
	}{
		{"30s", 30 * time.Second}, {"2m", 2 * time.Minute}, {"1500ms", 1500 * time.Millisecond},
		{"45", 45 * time.Second}, {" 5 ", 5 * time.Second},
		{"0", 0}, {"-3s", 0}, {"0s", 0}, {"soon", 0}, {"", 0}, {"1e3", 0},
	} {
		for _, name := range []string{"request-timeout", "write-idle-timeout", "shutdown-grace"} {
			cfg, err := parse([]string{"--" + name + "=" + c.value}, nil)
			got := map[string]time.Duration{"request-timeout": cfg.RequestTimeout,
				"write-idle-timeout": cfg.WriteIdleTimeout, "shutdown-grace": cfg.ShutdownGrace}[name]
			switch {
			case c.want == 0 && err == nil:
				t.Errorf("--%s=%q accepted as %s", name, c.value, got)
			case c.want != 0 && (err != nil || got != c.want):
				t.Errorf("--%s=%q = %s, %v; want %s", name, c.value, got, err, c.want)
			}
		}
	}
}

func TestTokenTTLRefusesJunk(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"0", "-5", "1.5", "1e3", "10abc", "90s", "", "99999999999999999999"} {
		if _, err := parse([]string{"--token-ttl", arg}, nil); err == nil {
			t.Errorf("--token-ttl %q accepted", arg)
		}
		if _, err := parse(nil, map[string]string{"PLANWERK_TOKEN_TTL": arg + "x"}); err == nil {
			t.Errorf("PLANWERK_TOKEN_TTL=%q accepted", arg+"x")
		}
	}
}

func TestEnvName(t *testing.T) {
	t.Parallel()
	for flagName, want := range map[string]string{
		"max-upload-bytes":     "PLANWERK_MAX_UPLOAD_BYTES",
		"addr":                 "PLANWERK_ADDR",
		"base-domain":          "PLANWERK_BASE_DOMAIN",
		"tenant-storage-bytes": "PLANWERK_TENANT_STORAGE_BYTES",
		"token-ttl":            "PLANWERK_TOKEN_TTL",
		"admin-password":       "PLANWERK_ADMIN_PASSWORD",
	} {
		if got := config.EnvName(flagName); got != want {
			t.Errorf("EnvName(%q) = %q, want %q", flagName, got, want)
		}
	}
}

func TestParseCoversEveryFlag(t *testing.T) {
	t.Parallel()
	// Every registered flag, including ones a command adds, reads its variable.
	cfg := config.Default()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.Register(fs, config.All...)
	slug := fs.String("slug", "", "")
	demo := fs.Bool("demo", false, "")
	env := map[string]string{"PLANWERK_SLUG": "acme", "PLANWERK_DEMO": "true"}
	if err := config.Parse(fs, nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	if *slug != "acme" || !*demo {
		t.Errorf("slug = %q, demo = %v; want acme, true from the environment", *slug, *demo)
	}
	names := 0
	fs.VisitAll(func(*flag.Flag) { names++ })
	if names < 16 {
		t.Errorf("only %d flags registered, want the 14 service flags plus 2", names)
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		change func(*config.Config)
		flag   string // named in the error; "" means valid
	}{
		{"defaults", func(*config.Config) {}, ""},
		{"postgres URL", func(c *config.Config) { c.Database = "postgres://u@h/db" }, ""},
		{"postgresql URL", func(c *config.Config) { c.Database = "postgresql://u@h/db" }, ""},
		{"public URL", func(c *config.Config) { c.PublicURL = "https://files.example" }, ""},
		{"rediss", func(c *config.Config) { c.Redis = "rediss://cache:6380" }, ""},
		{"mysql database", func(c *config.Config) { c.Database = "mysql://u@h/db" }, "--database"},
		{"bare path database", func(c *config.Config) { c.Database = "data/planwerk.db" }, "--database"},
		{"empty database", func(c *config.Config) { c.Database = "" }, "--database"},
		{"empty base domain", func(c *config.Config) { c.BaseDomain = "" }, "--base-domain"},
		{"relative public URL", func(c *config.Config) { c.PublicURL = "/files" }, "--public-url"},
		{"public URL without host", func(c *config.Config) { c.PublicURL = "https://" }, "--public-url"},
		{"redis not a URL", func(c *config.Config) { c.Redis = "cache:6379" }, "--redis"},
		{"zero upload cap", func(c *config.Config) { c.MaxUploadBytes = 0 }, "--max-upload-bytes"},
		{"negative upload cap", func(c *config.Config) { c.MaxUploadBytes = -1 }, "--max-upload-bytes"},
		{"zero storage cap", func(c *config.Config) { c.TenantStorageBytes = 0 }, "--tenant-storage-bytes"},
		{"zero file rate", func(c *config.Config) { c.FileRate = 0 }, "--file-rate"},
		{"negative file rate", func(c *config.Config) { c.FileRate = -3 }, "--file-rate"},
		{"zero request timeout", func(c *config.Config) { c.RequestTimeout = 0 }, "--request-timeout"},
		{"zero write idle timeout", func(c *config.Config) { c.WriteIdleTimeout = 0 }, "--write-idle-timeout"},
		{"negative shutdown grace", func(c *config.Config) { c.ShutdownGrace = -time.Second }, "--shutdown-grace"},
		{"metrics on the main listener's address", func(c *config.Config) { c.MetricsAddr = c.Addr }, "--metrics-addr"},
		{"metrics elsewhere", func(c *config.Config) { c.MetricsAddr = "127.0.0.1:9090" }, ""},
		{"zero webhook disable period", func(c *config.Config) { c.WebhookDisableAfter = 0 }, "--webhook-disable-after"},
		{"short webhook disable period", func(c *config.Config) { c.WebhookDisableAfter = time.Second }, ""},
		{"audit log kept for ever", func(c *config.Config) { c.AuditRetention = 0 }, ""},
		{"audit log kept a day", func(c *config.Config) { c.AuditRetention = 24 * time.Hour }, ""},
		{"audit log kept ten years", func(c *config.Config) { c.AuditRetention = 87600 * time.Hour }, ""},
		{"audit log kept a second less than a day", func(c *config.Config) { c.AuditRetention = 24*time.Hour - time.Second }, "--audit-retention"},
		{"audit log kept an hour", func(c *config.Config) { c.AuditRetention = time.Hour }, "--audit-retention"},
		{"negative audit retention", func(c *config.Config) { c.AuditRetention = -48 * time.Hour }, "--audit-retention"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			c.change(&cfg)
			err := cfg.Validate()
			switch {
			case c.flag == "" && err != nil:
				t.Errorf("Validate: %v, want nil", err)
			case c.flag != "" && err == nil:
				t.Errorf("Validate accepted %+v", cfg)
			case c.flag != "" && !strings.Contains(err.Error(), c.flag):
				t.Errorf("Validate error %q does not name %s", err, c.flag)
			}
		})
	}

	// Several problems are reported together.
	cfg := config.Default()
	cfg.Database, cfg.FileRate = "nope", 0
	err := cfg.Validate()
	if err == nil || !strings.Contains(err.Error(), "--database") || !strings.Contains(err.Error(), "--file-rate") {
		t.Errorf("Validate with two problems = %v, want both named", err)
	}
}

func TestGroups(t *testing.T) {
	t.Parallel()
	groups := []struct {
		name  string
		group config.Group
		flags []string
	}{
		{"Database", config.Database, []string{"database"}},
		{"HTTP", config.HTTP, []string{"addr", "base-domain", "metrics-addr", "request-timeout", "write-idle-timeout", "shutdown-grace", "cors-origins", "trusted-proxies"}},
		{"HTTPS", config.HTTPS, []string{"tls-cert", "tls-key", "acme-domains", "acme-directory", "acme-email", "acme-ca", "http-addr"}},
		{"Files", config.Files, []string{"files", "public-url", "url-secret", "max-upload-bytes"}},
		{"Quota", config.Quota, []string{"tenant-storage-bytes"}},
		{"Limits", config.Limits, []string{"redis", "file-rate"}},
		{"Tokens", config.Tokens, []string{"token-ttl"}},
		{"Events", config.Events, []string{"change-retention", "webhook-allow-private", "webhook-disable-after"}},
		{"Audit", config.Audit, []string{"audit-retention"}},
	}
	total := 0
	for _, g := range groups {
		cfg := config.Default()
		fs := flag.NewFlagSet(g.name, flag.ContinueOnError)
		cfg.Register(fs, g.group)
		var got []string
		fs.VisitAll(func(f *flag.Flag) { got = append(got, f.Name) })
		want := append([]string(nil), g.flags...)
		sort.Strings(want)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s registers %v, want %v", g.name, got, want)
		}
		total += len(got)
	}
	all := flag.NewFlagSet("all", flag.ContinueOnError)
	cfg := config.Default()
	cfg.Register(all, config.All...) // a flag in two groups would panic here
	n := 0
	all.VisitAll(func(*flag.Flag) { n++ })
	if n != total || len(config.All) != len(groups) {
		t.Errorf("All registers %d flags in %d groups, want the %d of the %d groups", n, len(config.All), total, len(groups))
	}

	// A command's settings come only from its groups, also in the environment.
	cfg = config.Default()
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	cfg.Register(fs, config.Database)
	env := map[string]string{"PLANWERK_DATABASE": "sqlite:env.db", "PLANWERK_REDIS": "redis://cache", "PLANWERK_ADDR": ":1"}
	if err := config.Parse(fs, nil, func(k string) string { return env[k] }); err != nil {
		t.Fatal(err)
	}
	want := config.Default()
	want.Database = "sqlite:env.db"
	if !reflect.DeepEqual(cfg, want) {
		t.Errorf("with the Database group only: %+v, want %+v", cfg, want)
	}
	if err := config.Parse(fs, []string{"--redis", "redis://cache"}, func(string) string { return "" }); err == nil {
		t.Error("--redis accepted by a flag set without the Limits group")
	}
}

func TestCORSOrigins(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		value string
		want  []string // nil with bad: refused by Validate
		bad   bool
	}{
		{value: "https://app.example.com", want: []string{"https://app.example.com"}},
		{value: " https://App.Example.com/ , http://localhost:3000,", want: []string{"https://app.example.com", "http://localhost:3000"}},
		{value: "https://app.example.com/path", bad: true},
		{value: "app.example.com", bad: true},
		{value: "ftp://app.example.com", bad: true},
		{value: "https://user@app.example.com", bad: true},
		{value: "https://app.example.com?x=1", bad: true},
		{value: "*", bad: true},
	} {
		for _, how := range []string{"flag", "env"} {
			var cfg config.Config
			var err error
			if how == "flag" {
				cfg, err = parse([]string{"--cors-origins", c.value}, nil)
			} else {
				cfg, err = parse(nil, map[string]string{"PLANWERK_CORS_ORIGINS": c.value})
			}
			if err != nil {
				t.Fatalf("%s %q: %v", how, c.value, err)
			}
			err = cfg.Validate()
			switch {
			case c.bad && (err == nil || !strings.Contains(err.Error(), "--cors-origins")):
				t.Errorf("%s %q: Validate = %v, want an error naming --cors-origins", how, c.value, err)
			case !c.bad && (err != nil || !reflect.DeepEqual(cfg.CORSOrigins, c.want)):
				t.Errorf("%s %q: %q, %v; want %q", how, c.value, cfg.CORSOrigins, err, c.want)
			}
		}
	}
}

func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	prefixes := func(ss ...string) []netip.Prefix {
		var ps []netip.Prefix
		for _, s := range ss {
			ps = append(ps, netip.MustParsePrefix(s))
		}
		return ps
	}
	for _, c := range []struct {
		value string
		want  []netip.Prefix // nil with bad: refused by Validate
		bad   bool
	}{
		{value: "10.0.0.0/8", want: prefixes("10.0.0.0/8")},
		{value: " 10.1.2.3/8 , 192.168.0.1,2001:db8::/32,", want: prefixes("10.0.0.0/8", "192.168.0.1/32", "2001:db8::/32")},
		{value: "2001:db8::1", want: prefixes("2001:db8::1/128")},
		{value: "fe80::1%eth0", want: prefixes("fe80::1/128")},
		{value: "::ffff:10.0.0.1", want: prefixes("10.0.0.1/32")},
		{value: "::ffff:10.0.0.0/104", want: prefixes("10.0.0.0/8")},
		{value: "", want: nil},
		{value: "10.0.0.0/33", bad: true},
		{value: "10.0.0.0/8,proxy.example.com", bad: true},
		{value: "10.0.0", bad: true},
		{value: "10.0.0.1:8080", bad: true},
		{value: "*", bad: true},
	} {
		for _, how := range []string{"flag", "env"} {
			var cfg config.Config
			var err error
			if how == "flag" {
				cfg, err = parse([]string{"--trusted-proxies", c.value}, nil)
			} else {
				cfg, err = parse(nil, map[string]string{"PLANWERK_TRUSTED_PROXIES": c.value})
			}
			if err != nil {
				t.Fatalf("%s %q: %v", how, c.value, err)
			}
			err = cfg.Validate()
			switch {
			case c.bad && (err == nil || !strings.Contains(err.Error(), "--trusted-proxies")):
				t.Errorf("%s %q: Validate = %v, want an error naming --trusted-proxies", how, c.value, err)
			case !c.bad && (err != nil || !reflect.DeepEqual(cfg.TrustedProxies, c.want)):
				t.Errorf("%s %q: %v, %v; want %v", how, c.value, cfg.TrustedProxies, err, c.want)
			}
		}
	}

	// A network set in code is checked too.
	cfg := config.Default()
	cfg.TrustedProxies = []netip.Prefix{{}}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "--trusted-proxies") {
		t.Errorf("Validate of an invalid network = %v, want an error naming --trusted-proxies", err)
	}
}

func TestWebhookFlags(t *testing.T) {
	t.Parallel()
	cfg, err := parse([]string{"--webhook-allow-private", "--webhook-disable-after", "12h"}, nil)
	if err != nil || !cfg.WebhookAllowPrivate || cfg.WebhookDisableAfter != 12*time.Hour {
		t.Errorf("flags: %v, %v, %v", cfg.WebhookAllowPrivate, cfg.WebhookDisableAfter, err)
	}
	cfg, err = parse(nil, map[string]string{"PLANWERK_WEBHOOK_ALLOW_PRIVATE": "true", "PLANWERK_WEBHOOK_DISABLE_AFTER": "30m"})
	if err != nil || !cfg.WebhookAllowPrivate || cfg.WebhookDisableAfter != 30*time.Minute {
		t.Errorf("environment: %v, %v, %v", cfg.WebhookAllowPrivate, cfg.WebhookDisableAfter, err)
	}
	if _, err := parse([]string{"--webhook-disable-after", "soon"}, nil); err == nil {
		t.Error("--webhook-disable-after soon: accepted")
	}
	if cfg := config.Default(); cfg.WebhookAllowPrivate || cfg.WebhookDisableAfter != 72*time.Hour {
		t.Errorf("defaults: %v, %v", cfg.WebhookAllowPrivate, cfg.WebhookDisableAfter)
	}
}

// TestAuditRetention: --audit-retention (and PLANWERK_AUDIT_RETENTION)
// takes 0, the default, for ever, or a Go duration of at least 24h;
// anything else is refused naming the setting.
func TestAuditRetention(t *testing.T) {
	t.Parallel()
	if d := config.Default().AuditRetention; d != 0 {
		t.Errorf("default %s, want 0 (kept for ever)", d)
	}
	for _, c := range []struct {
		value string
		want  time.Duration
		bad   bool // refused by parsing or by Validate
	}{
		{value: "0", want: 0},
		{value: "0s", want: 0},
		{value: "24h", want: 24 * time.Hour},
		{value: "87600h", want: 87600 * time.Hour},
		{value: "1440m", want: 24 * time.Hour},
		{value: "23h59m59s", bad: true},
		{value: "1h", bad: true},
		{value: "-24h", bad: true},
		{value: "ten years", bad: true},
		{value: "365d", bad: true},
	} {
		for _, how := range []string{"flag", "env"} {
			var cfg config.Config
			var err error
			if how == "flag" {
				cfg, err = parse([]string{"--audit-retention", c.value}, nil)
			} else {
				cfg, err = parse(nil, map[string]string{"PLANWERK_AUDIT_RETENTION": c.value})
			}
			named := "audit-retention"
			if how == "env" && err != nil {
				named = "PLANWERK_AUDIT_RETENTION"
			}
			if err == nil {
				err = cfg.Validate()
			}
			switch {
			case c.bad && err == nil:
				t.Errorf("%s %q accepted as %s", how, c.value, cfg.AuditRetention)
			case c.bad && !strings.Contains(err.Error(), named):
				t.Errorf("%s %q: error %q does not name %s", how, c.value, err, named)
			case !c.bad && (err != nil || cfg.AuditRetention != c.want):
				t.Errorf("%s %q = %s, %v; want %s", how, c.value, cfg.AuditRetention, err, c.want)
			}
		}
	}
}
