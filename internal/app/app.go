// Package app wires Planwerk together and runs its commands (serve,
// tenant, user, audit, backup, migrate and version) and their help.
package app

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"planwerk/internal/audit"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/auth"
	"planwerk/internal/config"
	"planwerk/internal/exports"
	"planwerk/internal/feed"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/holidays"
	"planwerk/internal/httpapi"
	"planwerk/internal/jobs"
	"planwerk/internal/metrics"
	"planwerk/internal/ratelimit"
	"planwerk/internal/records"
	"planwerk/internal/resource"
	"planwerk/internal/skills"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
	"planwerk/internal/timetrack"
	"planwerk/internal/users"
	"planwerk/internal/webhooks"
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

// ErrUsage marks a command line that could not be understood. Run has
// told the user so on standard error by the time it returns it.
var ErrUsage = errors.New("usage")

// command is one thing planwerk does.
type command struct {
	name     string // as typed: "tenant create"
	synopsis string // what follows the name in its usage line
	summary  string // one line for the list of commands
	run      func(ctx context.Context, args []string, stdio IO) error
}

func (c command) usage() string {
	return strings.TrimSpace("planwerk " + c.name + " " + c.synopsis)
}

// commandList is every command, in the order help lists them. (A function,
// not a variable: the commands' help reads it.)
func commandList() []command {
	return []command{
		{"serve", "[--demo] [flags]", "run the HTTP service (migrates the database first)", runServe},
		{"tenant create", "--slug S --admin-email E [--admin-password P] [--name N] [flags]", "create a tenant and its first admin user", runTenantCreate},
		{"tenant list", "[flags]", "list tenants with users and storage", runTenantList},
		{"tenant set-storage", "--slug S --bytes N [flags]", "set a tenant's storage cap", runTenantSetStorage},
		{"tenant suspend", "--slug S [flags]", "refuse every request of a tenant (403 tenant_suspended), keeping its data", runTenantSuspend},
		{"tenant resume", "--slug S [flags]", "serve a suspended tenant again", runTenantResume},
		{"tenant export", "--slug S --out FILE [flags]", "write a tenant's data and files to an archive while the service runs", runTenantExport},
		{"tenant import", "--in FILE [--slug NEW] [flags]", "create a tenant from an archive of tenant export, all or nothing", runTenantImport},
		{"tenant delete", "--slug S --confirm S [flags]", "erase a tenant: every row, file and token; the slug is free again", runTenantDelete},
		{"user reset-password", "--tenant S --email E [--password P] [flags]", "set a user's password and revoke their tokens", runUserResetPassword},
		{"audit verify", "[--tenant S] [--expect FILE] [flags]", "check each tenant's audit log chain (and that it reaches the heads FILE kept); exit 1 naming the first entry that fails", runAuditVerify},
		{"audit head", "[--tenant S] [flags]", "print each tenant's audit chain head (slug, seq, hash), for an auditor to keep", runAuditHead},
		{"backup", "--out FILE [flags]", "write a consistent copy of a SQLite database", runBackup},
		{"migrate", "[flags]", "apply database migrations and exit", runMigrate},
		{"version", "", "print the version", runVersion},
	}
}

// Run runs the command named by args (without the program name). Help,
// asked for anywhere ("planwerk --help", "planwerk tenant -h", "planwerk
// help user reset-password"), goes to stdout and is no error; a command
// line that cannot be understood is reported on stderr with a short usage
// and returns ErrUsage.
func Run(ctx context.Context, args []string, stdio IO) error {
	err := dispatch(ctx, args, stdio)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	return err
}

func dispatch(ctx context.Context, args []string, stdio IO) error {
	if len(args) == 0 {
		return usageError(stdio, "", errors.New("no command given"))
	}
	switch args[0] {
	case "help":
		if len(args) > 1 {
			return dispatch(ctx, slices.Concat(args[1:], []string{"--help"}), stdio)
		}
		printOverview(stdio.Stdout, "")
		return nil
	case "-h", "-help", "--help":
		printOverview(stdio.Stdout, "")
		return nil
	case "-version", "--version":
		args = slices.Concat([]string{"version"}, args[1:])
	}
	for _, c := range commandList() {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && slices.Equal(args[:len(words)], words) {
			// What a command changes, its audit entries say an operator
			// did; requests of a server it runs carry their own source.
			err := c.run(audit.WithSource(ctx, audit.Source{Actor: audit.Actor{Via: audit.ViaCLI}}), args[len(words):], stdio)
			if errors.Is(err, ErrUsage) {
				fmt.Fprintf(stdio.Stderr, "planwerk %s: %s\n", c.name, strings.TrimPrefix(err.Error(), ErrUsage.Error()+": "))
				fmt.Fprintf(stdio.Stderr, "usage: %s\nRun \"planwerk %s --help\" for its flags.\n", c.usage(), c.name)
			}
			return err
		}
	}
	return groupOrUnknown(args, stdio)
}

// groupOrUnknown answers a command line naming no command: the first word
// of commands such as "tenant create" alone, with help, or with an unknown
// second word; or an unknown command.
func groupOrUnknown(args []string, stdio IO) error {
	group := args[0]
	if !isGroup(group) {
		return usageError(stdio, "", fmt.Errorf("unknown command %q", group))
	}
	switch sub(args) {
	case "":
		return usageError(stdio, group, errors.New("give a command"))
	case "help", "-h", "-help", "--help":
		printOverview(stdio.Stdout, group)
		return nil
	}
	return usageError(stdio, group, fmt.Errorf("unknown command %q", group+" "+sub(args)))
}

func isGroup(word string) bool {
	for _, c := range commandList() {
		if strings.HasPrefix(c.name, word+" ") {
			return true
		}
	}
	return false
}

// usageError tells stderr what was wrong and the commands of group ("" is
// all), one line, and returns ErrUsage.
func usageError(stdio IO, group string, err error) error {
	var names []string
	for _, c := range commandList() {
		name, rest, _ := strings.Cut(c.name, " ")
		if group != "" {
			name = rest
		}
		if (group == "" || strings.HasPrefix(c.name, group+" ")) && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	prefix := strings.TrimSpace("planwerk " + group)
	fmt.Fprintf(stdio.Stderr, "%s: %v\nusage: %s <command> [flags]; commands: %s\nRun \"%s --help\" for more.\n",
		prefix, err, prefix, strings.Join(names, ", "), prefix)
	return fmt.Errorf("%w: %v", ErrUsage, err)
}

// printOverview lists the commands of group ("" is all) with their
// summaries.
func printOverview(w io.Writer, group string) {
	prefix := strings.TrimSpace("planwerk " + group)
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", prefix)
	for _, c := range commandList() {
		if group == "" || strings.HasPrefix(c.name, group+" ") {
			fmt.Fprintf(w, "  %-21s %s\n", c.name, c.summary)
		}
	}
	fmt.Fprintf(w, "\nRun \"%s <command> --help\" for the flags of a command.\n", prefix)
}

// printHelp writes the help of the command whose flags fs holds: its usage,
// what it does, and each of its flags with default and variable.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	for _, c := range commandList() {
		if c.name == fs.Name() {
			fmt.Fprintf(w, "usage: %s\n\n%s\n", c.usage(), c.summary)
		}
	}
	n := 0
	fs.VisitAll(func(f *flag.Flag) {
		if n++; n == 1 {
			fmt.Fprint(w, "\nflags (each also read from the variable named; a flag given wins):\n")
		}
		kind, usage := flag.UnquoteUsage(f)
		fmt.Fprintf(w, "  %s  (%s)\n        %s", strings.TrimSpace("--"+f.Name+" "+kind), config.EnvName(f.Name), usage)
		switch {
		case f.DefValue == "" || f.DefValue == "0" || f.DefValue == "false":
		case kind == "string":
			fmt.Fprintf(w, " (default %q)", f.DefValue)
		default:
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

func runVersion(_ context.Context, args []string, stdio IO) error {
	if err := parse(newFlags("version", nil, stdio), args, stdio); err != nil {
		return err
	}
	fmt.Fprintln(stdio.Stdout, "planwerk", versionString())
	return nil
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

// newFlags returns the flag set of command name carrying the service
// settings of groups, written into cfg. It prints nothing itself: parse
// does.
func newFlags(name string, cfg *config.Config, stdio IO, groups ...config.Group) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if cfg != nil {
		cfg.Register(fs, groups...)
	}
	return fs
}

// parse parses args and the environment into fs. Asked for help, it
// prints the command's help to stdout and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string, stdio IO) error {
	if err := config.Parse(fs, args, stdio.Getenv); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printHelp(stdio.Stdout, fs)
			return err
		}
		return fmt.Errorf("%w: %v", ErrUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	}
	return nil
}

// newUsers is the users service on the users' table, which creates
// tenants with what every new tenant gets. sessions may be nil where only
// tenants are created.
func newUsers(db *store.DB, table *users.Tables, hasher *auth.Hasher, sessions users.Sessions, reg *resource.Registry) *users.Service {
	return users.New(table, hasher, sessions, holidays.New(db, reg).Ensure)
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
	Feed     *feed.Service
	Webhooks *webhooks.Service
	// Exports makes the exports tenant admins ask for.
	Exports *exports.Service
	// Jobs is the service's background work (the table in jobs.go).
	Jobs  *jobs.Registry
	redis *redis.Client
	log   *slog.Logger
}

// Start starts the service's background jobs.
func (s *Service) Start() { s.Jobs.Start() }

// Close stops the background jobs, waiting up to stopJobsWithin for them,
// and releases what NewService opened besides the database.
func (s *Service) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopJobsWithin)
	defer cancel()
	err := s.Jobs.Close(ctx)
	if s.redis != nil {
		err = errors.Join(err, s.redis.Close())
	}
	return err
}

// feedResources are the names the change feed records changes under:
// the registry's stored resources and uploads.
func feedResources(reg *resource.Registry) []string {
	var names []string
	for _, r := range reg.All() {
		if r.Source == "" {
			names = append(names, r.Name)
		}
	}
	return append(names, "uploads")
}

// visibleChange says whether the caller may read a changed record: as a
// GET would decide, and for an upload as for the record it belongs to.
func (s *Service) visibleChange(ctx context.Context, caller auth.Principal, name string, doc []byte) (bool, error) {
	if name != "uploads" {
		return s.Records.Visible(ctx, caller, name, doc)
	}
	if caller.IsAdmin {
		return true, nil
	}
	var up struct {
		Model  string
		Record int64
	}
	if err := json.Unmarshal(doc, &up); err != nil {
		return false, err
	}
	r, ok := s.Registry.Get(map[string]string{"document": "documents", "expense": "expenses"}[up.Model])
	if !ok {
		return false, nil
	}
	_, err := s.Records.Get(ctx, caller, r, up.Record, nil)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil // hidden, or gone: a member sees uploads of records it can read
	}
	return err == nil, err
}

// linksServed says whether a download link's tenant is served, in the
// terms of files.Config.Serving: a tenant the service does not know is
// not found.
func linksServed(resolver *tenancy.Resolver) func(ctx context.Context, id int64) error {
	return func(ctx context.Context, id int64) error {
		err := resolver.Serving(ctx, id)
		if errors.Is(err, tenancy.ErrUnknown) {
			return store.ErrNotFound
		}
		return err
	}
}

// NewService builds the service on an open, migrated database.
func NewService(ctx context.Context, cfg config.Config, db *store.DB, log *slog.Logger, opts ...Option) (*Service, error) {
	o := newOptions(opts)
	fs, err := filestore.Open(ctx, cfg.Files)
	if err != nil {
		return nil, err
	}
	t := newTables(db)
	secret := []byte(cfg.URLSecret)
	if len(secret) == 0 {
		if secret, err = t.uploads.Secret(ctx, "download-url-signing", 32); err != nil {
			return nil, err
		}
	}
	svc := &Service{Config: cfg, DB: db, Files: fs, log: log}
	svc.Metrics = metrics.New(db.Pools())
	db.ObserveChanges(svc.Metrics.ChangesRecorded)
	db.ObserveBatches(svc.Metrics.CommitBatch)
	limiter, err := svc.newLimiters(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	svc.Hasher = auth.NewHasherCost(runtime.NumCPU(), o.hashCost)
	svc.Auth = auth.NewService(t.auth, accounts{t.users}, svc.Hasher, auth.Config{
		AccessTTL:    cfg.TokenTTL,
		RefreshTTL:   30 * 24 * time.Hour,
		CacheTTL:     2 * time.Second,
		PairBrake:    limiter("login-pair", ratelimit.Rule{Burst: cfg.LoginFailuresPerAccount, Every: time.Minute}),
		AddressBrake: limiter("login-address", ratelimit.Rule{Burst: cfg.LoginFailuresPerAddress, Every: 10 * time.Second}),
		AccountBrake: limiter("login-account", ratelimit.Rule{Burst: cfg.LoginFailuresPerAccount, Every: time.Minute}),
		Metrics:      svc.Metrics,
	}, log)
	resolver := tenancy.NewResolver(db, cfg.BaseDomain, cmp.Or(cfg.TenantCacheTTL, tenancy.CacheTTL))
	svc.Registry = resource.New()
	svc.Users = newUsers(db, t.users, svc.Hasher, svc.Auth, svc.Registry)
	d := domains{time: timetrack.New(db, t.settings, svc.Registry), skills: skills.New(db, svc.Registry), holidays: holidays.New(db, svc.Registry), users: svc.Users}
	if svc.Records, err = records.New(db, svc.Registry, d.rules()); err != nil {
		return nil, err
	}
	fileSvc := files.New(t.uploads, fs, svc.Registry, svc.Records,
		limiter("files", ratelimit.Rule{Burst: cfg.FileRate, Every: time.Minute / time.Duration(cfg.FileRate)}),
		files.Config{MaxUploadBytes: cfg.MaxUploadBytes, TenantStorageBytes: cfg.TenantStorageBytes, Secret: secret, Metrics: svc.Metrics,
			StepTimeout: cfg.RequestTimeout, IdleTimeout: cfg.RequestTimeout, Serving: linksServed(resolver)}, log)
	svc.Uploads = fileSvc
	svc.Feed = feed.New(db, svc.visibleChange, feed.Config{Resources: feedResources(svc.Registry), Metrics: svc.Metrics, Look: cfg.FeedLook,
		Serving: resolver.Serving})
	svc.Webhooks = webhooks.New(t.webhooks, webhooks.Config{AllowPrivate: cfg.WebhookAllowPrivate, DisableAfter: cfg.WebhookDisableAfter,
		RetryBase: cfg.WebhookRetryBase, RetryFor: cfg.WebhookRetryFor, Poll: cfg.WebhookPoll, Budget: cfg.WebhookBudget, Lookup: cfg.WebhookLookup,
		Metrics: svc.Metrics}, feedResources(svc.Registry), log)
	svc.Exports = exports.New(db, fs, svc.exportArchive, exports.Config{Secret: secret, Serving: linksServed(resolver)}, log)
	svc.Handler = httpapi.New(httpapi.Config{MaxBodyBytes: 1 << 20, MaxUploadBytes: cfg.MaxUploadBytes, PublicURL: cfg.PublicURL,
		BaseDomain: cfg.BaseDomain, RequestTimeout: cfg.RequestTimeout, WriteIdleTimeout: cfg.WriteIdleTimeout,
		MetricsElsewhere: cfg.MetricsAddr != "", CORSOrigins: cfg.CORSOrigins, TrustedProxies: cfg.TrustedProxies},
		httpapi.Deps{DB: db, Auth: svc.Auth, Users: t.users, Tenants: resolver, Registry: svc.Registry, Records: svc.Records,
			Time: d.time, Skills: d.skills, Files: fileSvc, Store: fs, Feed: svc.Feed, Webhooks: svc.Webhooks, Exports: svc.Exports,
			Idempotency: t.idempotency, Metrics: svc.Metrics, Log: log})
	for _, g := range append(db.Shares(), svc.Hasher.Share(), svc.Records.Share(), svc.Handler.Share()) {
		svc.Metrics.Watch(g)
	}
	if svc.Jobs, err = svc.newJobs(); err != nil {
		return nil, err
	}
	return svc, nil
}
