// Package app wires Planwerk together and runs its commands: serve,
// tenant create, migrate and version.
package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/holidays"
	"planwerk/internal/httpapi"
	"planwerk/internal/metrics"
	"planwerk/internal/ratelimit"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/skills"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
	"planwerk/internal/timetrack"
	"planwerk/internal/users"
)

// Version is set at build time with -ldflags "-X planwerk/internal/app.Version=...".
var Version = ""

// IO is what a command reads and writes.
type IO struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
}

// ErrUsage marks a command line that could not be understood.
var ErrUsage = errors.New("usage")

const usage = `usage: planwerk <command> [flags]

commands:
  serve [--demo]        run the HTTP service (migrates the database first)
  tenant create         create a tenant and its first admin user
  tenant list           list tenants with users and storage
  tenant set-storage    set a tenant's storage cap (--slug S --bytes N)
  user reset-password   set a user's password and revoke their tokens
  backup --out FILE     write a consistent copy of a SQLite database
  migrate               apply database migrations and exit
  version               print the version

Run "planwerk <command> -h" for the flags of a command.
`

// Run runs the command named by args (without the program name).
func Run(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		fmt.Fprint(stdio.Stderr, usage)
		return ErrUsage
	}
	switch args[0] {
	case "serve":
		return runServe(ctx, args[1:], stdio)
	case "migrate":
		return runMigrate(ctx, args[1:], stdio)
	case "tenant":
		switch sub(args) {
		case "create":
			return runTenantCreate(ctx, args[2:], stdio)
		case "list":
			return runTenantList(ctx, args[2:], stdio)
		case "set-storage":
			return runTenantSetStorage(ctx, args[2:], stdio)
		}
		fmt.Fprint(stdio.Stderr, "usage: planwerk tenant create|list|set-storage [flags]\n")
		return ErrUsage
	case "user":
		if sub(args) == "reset-password" {
			return runUserResetPassword(ctx, args[2:], stdio)
		}
		fmt.Fprint(stdio.Stderr, "usage: planwerk user reset-password --tenant S --email E [--password P]\n")
		return ErrUsage
	case "backup":
		return runBackup(ctx, args[1:], stdio)
	case "version", "--version", "-version":
		fmt.Fprintln(stdio.Stdout, "planwerk", versionString())
		return nil
	case "help", "-h", "--help":
		fmt.Fprint(stdio.Stdout, usage)
		return nil
	default:
		fmt.Fprintf(stdio.Stderr, "unknown command %q\n\n%s", args[0], usage)
		return ErrUsage
	}
}

func sub(args []string) string {
	if len(args) < 2 {
		return ""
	}
	return args[1]
}

// flagSet lets commands add their own flags.
type flagSet struct{ *flag.FlagSet }

func versionString() string {
	if Version != "" {
		return Version
	}
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			v = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v += " (" + s.Value[:12] + ")"
			}
		}
	}
	return v + " " + runtime.Version()
}

// newFlags returns a flag set carrying the service settings.
func newFlags(name string, cfg *config.Config, stdio IO) *flag.FlagSet {
	fs := flag.NewFlagSet("planwerk "+name, flag.ContinueOnError)
	fs.SetOutput(stdio.Stderr)
	cfg.Register(fs)
	return fs
}

func parse(fs *flag.FlagSet, args []string, stdio IO) error {
	if err := config.Parse(fs, args, stdio.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}

// Service is a running configuration of Planwerk's parts, ready to serve.
type Service struct {
	Config   config.Config
	DB       *store.DB
	Files    filestore.Store
	Auth     *auth.Service
	Hasher   *auth.Hasher
	Registry *resource.Registry
	Records  *records.Service
	Users    *users.Service
	Handler  *httpapi.Server
	Metrics  *metrics.Metrics
	Uploads  *files.Service
	redis    *redis.Client
}

// Close releases what NewService opened besides the database.
func (s *Service) Close() error {
	if s.redis != nil {
		return s.redis.Close()
	}
	return nil
}

// NewService builds the service on an open, migrated database.
func NewService(ctx context.Context, cfg config.Config, db *store.DB, log *slog.Logger) (*Service, error) {
	fs, err := filestore.Open(ctx, cfg.Files)
	if err != nil {
		return nil, err
	}
	secret := []byte(cfg.URLSecret)
	if len(secret) == 0 {
		if secret, err = db.Secret(ctx, "download-url-signing", 32); err != nil {
			return nil, err
		}
	}
	svc := &Service{Config: cfg, DB: db, Files: fs}
	svc.Metrics = metrics.New(db.Pools())
	limiter, err := svc.newLimiters(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	svc.Hasher = auth.NewHasher(runtime.NumCPU())
	svc.Auth = auth.NewService(db, svc.Hasher, auth.Config{
		AccessTTL:    cfg.TokenTTL,
		RefreshTTL:   30 * 24 * time.Hour,
		CacheTTL:     2 * time.Second,
		AccountBrake: limiter("login-account", ratelimit.Rule{Burst: cfg.LoginFailuresPerAccount, Every: time.Minute}),
		AddressBrake: limiter("login-address", ratelimit.Rule{Burst: cfg.LoginFailuresPerAddress, Every: 10 * time.Second}),
		Metrics:      svc.Metrics,
	}, log)
	resolver := tenancy.NewResolver(db, cfg.BaseDomain, 10*time.Second)
	svc.Registry = resource.New()
	hol := holidays.New(db, svc.Registry)
	svc.Users = users.New(db, svc.Hasher, svc.Auth, hol.Ensure)
	d := domains{time: timetrack.New(db, svc.Registry), skills: skills.New(db, svc.Registry), holidays: hol, users: svc.Users}
	if svc.Records, err = records.New(db, svc.Registry, d.rules()); err != nil {
		return nil, err
	}
	fileSvc := files.New(db, fs, svc.Registry, svc.Records,
		limiter("files", ratelimit.Rule{Burst: cfg.FileRate, Every: time.Minute / time.Duration(cfg.FileRate)}),
		files.Config{MaxUploadBytes: cfg.MaxUploadBytes, TenantStorageBytes: cfg.TenantStorageBytes, Secret: secret, Metrics: svc.Metrics,
			StepTimeout: cfg.RequestTimeout, IdleTimeout: cfg.RequestTimeout}, log)
	svc.Uploads = fileSvc
	svc.Handler = httpapi.New(httpapi.Config{MaxBodyBytes: 1 << 20, MaxUploadBytes: cfg.MaxUploadBytes, PublicURL: cfg.PublicURL,
		BaseDomain: cfg.BaseDomain, RequestTimeout: cfg.RequestTimeout, WriteIdleTimeout: cfg.WriteIdleTimeout,
		MetricsElsewhere: cfg.MetricsAddr != "", CORSOrigins: cfg.CORSOrigins},
		httpapi.Deps{DB: db, Auth: svc.Auth, Tenants: resolver, Registry: svc.Registry, Records: svc.Records,
			Time: d.time, Skills: d.skills, Files: fileSvc, Store: fs, Metrics: svc.Metrics, Log: log})
	for _, g := range append(db.Shares(), svc.Hasher.Share(), svc.Records.Share(), svc.Handler.Share()) {
		svc.Metrics.Watch(g)
	}
	return svc, nil
}
