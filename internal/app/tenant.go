package app

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"strings"

	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

func runMigrate(ctx context.Context, args []string, stdio IO) error {
	cfg := config.Default()
	fs := newFlags("migrate", &cfg, stdio, config.Database)
	if err := parse(fs, args, stdio); err != nil {
		return err
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	db, err := store.Open(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer db.Close()
	n, err := db.Migrate(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "migrated %s database: %d migration(s) applied\n", db.Engine(), n)
	return nil
}

// CreateTenant creates a tenant with its first admin (see
// users.Service.CreateTenant).
func CreateTenant(ctx context.Context, svc *Service, spec users.TenantSpec) (store.Tenant, users.User, error) {
	return svc.Users.CreateTenant(ctx, spec)
}

func runTenantCreate(ctx context.Context, args []string, stdio IO) error {
	cfg := config.Default()
	fs := newFlags("tenant create", &cfg, stdio, config.Database)
	var spec users.TenantSpec
	fs.StringVar(&spec.Slug, "slug", "", "tenant slug: 2-63 characters of a-z, 0-9 and -")
	fs.StringVar(&spec.AdminEmail, "admin-email", "", "e-mail address of the first admin")
	fs.StringVar(&spec.AdminPassword, "admin-password", "", "password of the first admin (else PLANWERK_ADMIN_PASSWORD, else standard input)")
	fs.StringVar(&spec.Name, "name", "", "display name (default: the slug)")
	if err := parse(fs, args, stdio); err != nil {
		return err
	}
	if spec.AdminPassword == "" && stdio.Stdin != nil {
		line, err := bufio.NewReader(stdio.Stdin).ReadString('\n')
		if err != nil && line == "" {
			return fmt.Errorf("%w: no admin password given (flag, PLANWERK_ADMIN_PASSWORD or standard input)", ErrUsage)
		}
		spec.AdminPassword = strings.TrimRight(line, "\r\n")
	}
	if err := spec.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	log := slog.New(slog.NewJSONHandler(stdio.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	db, err := openDatabase(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer db.Close()
	// Not the whole service: a tenant needs no file store, Redis or
	// URL-signing secret, so their settings are not this command's.
	t, u, err := newUsers(db, newTables(db).users, auth.NewHasher(runtime.NumCPU()), nil, resource.New()).CreateTenant(ctx, spec)
	if errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("tenant %q not created: the slug or the admin e-mail address is already taken: %w", spec.Slug, err)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdio.Stdout, "created tenant %s (id %d) with admin %s (user id %d)\n", t.Slug, t.ID, u.Email, u.ID)
	return nil
}

// Demo tenant credentials, documented in README.md.
const (
	demoSlug     = "demo"
	demoEmail    = "admin@demo.test"
	demoPassword = "demo-password"
)

// seedDemo creates the demo tenant if missing.
func seedDemo(ctx context.Context, svc *Service) error {
	_, err := svc.DB.TenantBySlug(ctx, demoSlug)
	if errors.Is(err, store.ErrNotFound) {
		_, _, err = CreateTenant(ctx, svc, users.TenantSpec{Slug: demoSlug, Name: "Demo", AdminEmail: demoEmail, AdminPassword: demoPassword})
	}
	if err != nil {
		return fmt.Errorf("demo tenant: %w", err)
	}
	return nil
}

// demoAddr is where serve --demo listens: the demo's well-known password
// stays on this machine unless addr names a host ("0.0.0.0:8080"); a bare
// port (":9000", the default ":8080") is taken on 127.0.0.1.
func demoAddr(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host != "" {
		return addr // a bad address fails at listen, as without --demo
	}
	return net.JoinHostPort("127.0.0.1", port)
}

// printDemo prints a curl command that fetches a token from the listener
// at a: called once it listens, so the port is the real one. Over HTTPS
// the command names https, and, with ACME, the first domain, which its
// certificate is for.
func printDemo(stdio IO, a net.Addr, t config.TLS) {
	host := a.String()
	tcp, isTCP := a.(*net.TCPAddr)
	if isTCP && tcp.IP.IsUnspecified() {
		host = net.JoinHostPort("localhost", strconv.Itoa(tcp.Port))
	}
	scheme := "http"
	if t.On() {
		scheme = "https"
		if len(t.ACMEDomains) > 0 && isTCP {
			host = t.ACMEDomains[0]
			if tcp.Port != 443 {
				host = net.JoinHostPort(host, strconv.Itoa(tcp.Port))
			}
		}
	}
	fmt.Fprintf(stdio.Stdout, `demo tenant ready: %s / %s
get a token:
  curl -s %s://%s/oauth2/token -H 'companyurl: %s' -d grant_type=password -d username=%s -d password=%s -d client_id=cli -d client_secret=cli
`, demoEmail, demoPassword, scheme, host, demoSlug, demoEmail, demoPassword)
}
