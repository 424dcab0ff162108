package app_test

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// commandFlags are the flags commands add to the service settings.
var commandFlags = []string{"demo", "slug", "admin-email", "admin-password", "name", "bytes", "tenant", "email", "password", "out", "in"}

// allFlags is every flag of every command.
func allFlags() []string {
	fs := flag.NewFlagSet("all", flag.ContinueOnError)
	cfg := config.Default()
	cfg.Register(fs, config.All...)
	names := slices.Clone(commandFlags)
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	return names
}

// serviceFlags are the flags of serve besides --demo.
func serviceFlags() []string { return allFlags()[len(commandFlags):] }

// listsFlag reports whether help lists --name as a flag of its own.
func listsFlag(help, name string) bool {
	return regexp.MustCompile(`(?m)^  --` + regexp.QuoteMeta(name) + ` `).MatchString(help)
}

func TestHelp(t *testing.T) {
	tenantCommands := []string{"tenant create", "tenant list", "tenant set-storage", "tenant suspend", "tenant resume", "tenant export", "tenant import", "tenant delete"}
	commands := []string{"serve", "tenant create", "tenant list", "tenant set-storage", "tenant suspend", "tenant resume",
		"tenant export", "tenant import", "tenant delete", "user reset-password", "backup", "migrate", "version"}
	cases := []struct {
		args  []string
		flags []string // the flags listed, and no others
		names []string // also in the text
	}{
		{[]string{"--help"}, nil, commands},
		{[]string{"-h"}, nil, commands},
		{[]string{"help"}, nil, commands},
		{[]string{"tenant", "--help"}, nil, tenantCommands},
		{[]string{"tenant", "-h"}, nil, tenantCommands},
		{[]string{"tenant", "help"}, nil, tenantCommands},
		{[]string{"help", "tenant"}, nil, tenantCommands},
		{[]string{"user", "--help"}, nil, []string{"user reset-password"}},
		{[]string{"serve", "-h"}, append(serviceFlags(), "demo"), []string{"PLANWERK_ADDR", "PLANWERK_DEMO", `":8080"`}},
		{[]string{"serve", "--help"}, append(serviceFlags(), "demo"), nil},
		{[]string{"tenant", "create", "--help"}, []string{"database", "slug", "admin-email", "admin-password", "name"}, []string{"PLANWERK_ADMIN_PASSWORD"}},
		{[]string{"help", "tenant", "create"}, []string{"database", "slug", "admin-email", "admin-password", "name"}, nil},
		{[]string{"tenant", "list", "-h"}, []string{"database", "tenant-storage-bytes"}, nil},
		{[]string{"tenant", "set-storage", "-h"}, []string{"database", "slug", "bytes"}, nil},
		{[]string{"tenant", "suspend", "-h"}, []string{"database", "slug"}, []string{"403 tenant_suspended"}},
		{[]string{"tenant", "resume", "--help"}, []string{"database", "slug"}, []string{"planwerk tenant resume --slug S"}},
		{[]string{"tenant", "export", "-h"}, []string{"database", "files", "slug", "out"}, []string{"PLANWERK_FILES"}},
		{[]string{"tenant", "import", "--help"}, []string{"database", "files", "in", "slug"}, []string{"--slug NEW"}},
		{[]string{"tenant", "delete", "-h"}, []string{"database", "slug", "confirm", "files"}, []string{"--confirm S", "PLANWERK_FILES", "cannot be brought back"}},
		{[]string{"user", "reset-password", "--help"}, []string{"database", "tenant", "email", "password"}, nil},
		{[]string{"backup", "-h"}, []string{"database", "out"}, nil},
		{[]string{"migrate", "--help"}, []string{"database"}, []string{`"sqlite:data/planwerk.db"`}},
		{[]string{"version", "--help"}, nil, []string{"planwerk version"}},
		{[]string{"help", "version"}, nil, []string{"planwerk version"}},
	}
	t.Chdir(t.TempDir()) // help must create no default database or file store here
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			r := run(context.Background(), nil, "", c.args...)
			if r.err != nil {
				t.Fatalf("err = %v, want nil\nstderr: %s", r.err, r.stderr)
			}
			if r.stderr != "" || !strings.HasPrefix(r.stdout, "usage: planwerk") {
				t.Errorf("help not on stdout alone:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
			}
			for _, name := range allFlags() {
				if want := slices.Contains(c.flags, name); listsFlag(r.stdout, name) != want {
					t.Errorf("lists --%s: %v, want %v\n%s", name, !want, want, r.stdout)
				}
			}
			for _, s := range c.names {
				if !strings.Contains(r.stdout, s) {
					t.Errorf("help does not mention %q:\n%s", s, r.stdout)
				}
			}
		})
	}
	if _, err := os.Stat("data"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("help created ./data: %v", err)
	}
}

// A command reads only the settings it lists: tenant create takes neither
// the file store nor Redis from the environment, nor as flags.
func TestCommandReadsOnlyItsSettings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	env := map[string]string{
		"PLANWERK_DATABASE": "sqlite:" + filepath.Join(dir, "only.db"),
		"PLANWERK_FILES":    filepath.Join(dir, "files"),
		"PLANWERK_REDIS":    "not a redis URL",
		"PLANWERK_ADDR":     "not an address",
	}
	r := run(context.Background(), env, "", "tenant", "create", "--slug", "only", "--admin-email", "a@only.test", "--admin-password", "only-password")
	if r.err != nil {
		t.Fatalf("tenant create: %v\n%s", r.err, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "files")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("tenant create opened the file store of PLANWERK_FILES: %v", err)
	}
	for _, args := range [][]string{
		{"tenant", "create", "--slug", "x", "--admin-email", "a@x.test", "--admin-password", "pw", "--redis", "redis://127.0.0.1:6379"},
		{"migrate", "--addr", ":8080"},
		{"tenant", "list", "--files", "data/files"},
		{"version", "--database", "sqlite:x.db"},
	} {
		if r := run(context.Background(), env, "", args...); !errors.Is(r.err, app.ErrUsage) || !strings.Contains(r.stderr, "not defined") {
			t.Errorf("%q: err = %v, stderr %q; want a usage error for the flag", args, r.err, r.stderr)
		}
	}
}

// TestExitCodes runs the binary: help exits 0 and writes stdout only; an
// unknown command or flag exits 2 with a short usage on stderr.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := testenv.BuildBinary(t, dir)
	cases := []struct {
		args  []string
		code  int
		usage string // the start of the usage line
	}{
		{[]string{"--help"}, 0, "usage: planwerk <command>"},
		{[]string{"help"}, 0, "usage: planwerk <command>"},
		{[]string{"tenant", "--help"}, 0, "usage: planwerk tenant <command>"},
		{[]string{"tenant", "create", "--help"}, 0, "usage: planwerk tenant create"},
		{[]string{"user", "--help"}, 0, "usage: planwerk user <command>"},
		{[]string{"serve", "-h"}, 0, "usage: planwerk serve"},
		{[]string{"migrate", "-h"}, 0, "usage: planwerk migrate"},
		{[]string{"version", "-h"}, 0, "usage: planwerk version"},
		{nil, 2, "usage: planwerk <command>"},
		{[]string{"frobnicate"}, 2, "usage: planwerk <command>"},
		{[]string{"help", "frobnicate"}, 2, "usage: planwerk <command>"},
		{[]string{"tenant"}, 2, "usage: planwerk tenant <command>"},
		{[]string{"tenant", "destroy"}, 2, "usage: planwerk tenant <command>"},
		{[]string{"tenant", "delete", "--slug", "acme"}, 2, "usage: planwerk tenant delete"},
		{[]string{"user", "delete"}, 2, "usage: planwerk user <command>"},
		{[]string{"migrate", "--no-such-flag"}, 2, "usage: planwerk migrate"},
		{[]string{"migrate", "--redis", "redis://x"}, 2, "usage: planwerk migrate"},
		{[]string{"tenant", "create", "--addr", ":1"}, 2, "usage: planwerk tenant create"},
		{[]string{"serve", "--no-such-flag"}, 2, "usage: planwerk serve"},
		{[]string{"version", "extra"}, 2, "usage: planwerk version"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Dir = dir
			var stdout, stderr strings.Builder
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			code := 0
			var exit *exec.ExitError
			if errors.As(err, &exit) {
				code = exit.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if code != c.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, c.code, stdout.String(), stderr.String())
			}
			out, quiet := stdout.String(), stderr.String()
			if c.code != 0 {
				out, quiet = quiet, out
				if n := strings.Count(out, "\n"); n > 4 {
					t.Errorf("usage on stderr is %d lines, want a short one:\n%s", n, out)
				}
			}
			if !strings.Contains(out, c.usage) || quiet != "" {
				t.Errorf("want %q on the one stream, nothing on the other\nstdout: %s\nstderr: %s", c.usage, stdout.String(), stderr.String())
			}
		})
	}
}

// demo runs serve --demo on a fresh database with the extra arguments and
// environment until the test ends; it returns serve's output streams and
// a channel with its result.
func demo(t *testing.T, env map[string]string, args ...string) (stdout, stderr *testenv.SyncBuffer, done chan error) {
	t.Helper()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	stdout, stderr, done = &testenv.SyncBuffer{}, &testenv.SyncBuffer{}, make(chan error, 1)
	args = append([]string{"serve", "--demo", "--database", "sqlite:" + filepath.Join(dir, "demo.db"), "--files", filepath.Join(dir, "files")}, args...)
	go func() {
		done <- app.Run(ctx, args, app.IO{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr,
			Getenv: func(k string) string { return env[k] }})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return stdout, stderr, done
}

var curlURL = regexp.MustCompile(`curl -s (https?://\S+/oauth2/token) `)

// waitCurl waits for serve --demo to print its curl and returns the URL in
// it.
func waitCurl(t *testing.T, stdout, stderr *testenv.SyncBuffer, done chan error) *url.URL {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := curlURL.FindStringSubmatch(stdout.String()); m != nil {
			u, err := url.Parse(m[1])
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		select {
		case err := <-done:
			done <- err
			t.Fatalf("serve returned %v before printing a curl\nstdout: %s\nstderr: %s", err, stdout, stderr)
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("no curl printed within 30s\nstdout: %s\nstderr: %s", stdout, stderr)
	return nil
}

// listening is the address of serve's "planwerk listening" log line.
func listening(t *testing.T, log string) string {
	t.Helper()
	m := regexp.MustCompile(`"msg":"planwerk listening","addr":"([^"]+)"`).FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no listening line in the log:\n%s", log)
	}
	return m[1]
}

// otherAddresses are this machine's addresses besides loopback.
func otherAddresses(t *testing.T) []net.IP {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	var ips []net.IP
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			ips = append(ips, n.IP)
		}
	}
	return ips
}

// TestDemoListensOnLoopback: serve --demo with a bare port (flag or
// PLANWERK_ADDR) listens on 127.0.0.1 only, and prints its curl once it
// listens, with the port it got.
func TestDemoListensOnLoopback(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"flag", nil, []string{"--addr", ":0"}},
		{"environment", map[string]string{"PLANWERK_ADDR": ":0"}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, done := demo(t, c.env, c.args...)
			u := waitCurl(t, stdout, stderr, done)
			if u.Port() == "0" || u.Port() == "" {
				t.Fatalf("curl URL %s, want the port listened on", u)
			}
			if u.Hostname() != "127.0.0.1" {
				t.Errorf("curl URL %s, want 127.0.0.1", u)
			}
			if got := listening(t, stderr.String()); got != u.Host {
				t.Errorf("listening on %s, the curl says %s", got, u.Host)
			}
			demoToken(t, http.DefaultClient, u)
			for _, ip := range otherAddresses(t) {
				if conn, err := net.Dial("tcp", net.JoinHostPort(ip.String(), u.Port())); err == nil {
					conn.Close()
					t.Errorf("the demo answers on %s, not only on loopback", ip)
				}
			}
		})
	}
}

// TestDemoOverHTTPS: with --tls-cert, serve --demo prints an https URL,
// and the token request it shows is answered over TLS.
func TestDemoOverHTTPS(t *testing.T) {
	t.Parallel()
	ca := testenv.NewCA(t)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	c, k := ca.Issue(t, "localhost", "127.0.0.1")
	testenv.WriteFile(t, certFile, c)
	testenv.WriteFile(t, keyFile, k)
	stdout, stderr, done := demo(t, nil, "--addr", ":0", "--tls-cert", certFile, "--tls-key", keyFile)
	u := waitCurl(t, stdout, stderr, done)
	if u.Scheme != "https" {
		t.Fatalf("curl URL %s, want https", u)
	}
	demoToken(t, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}, Timeout: 30 * time.Second}, u)
}

// demoToken sends the token request serve --demo prints to u, with the
// demo's password, and expects a token.
func demoToken(t *testing.T, client *http.Client, u *url.URL) {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {"admin@demo.test"}, "password": {"demo-password"},
		"client_id": {"cli"}, "client_secret": {"cli"}}
	req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", "demo")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("the curl's URL does not answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("the curl's token request: status %d, want 200", resp.StatusCode)
	}
}

// TestDemoAddrExplicitHost: a host named in --addr is where the demo
// listens.
func TestDemoAddrExplicitHost(t *testing.T) {
	t.Parallel()
	stdout, stderr, done := demo(t, nil, "--addr", "0.0.0.0:0")
	u := waitCurl(t, stdout, stderr, done)
	got := listening(t, stderr.String())
	host, port, err := net.SplitHostPort(got)
	if err != nil || !net.ParseIP(host).IsUnspecified() || u.Hostname() != "localhost" || port != u.Port() {
		t.Errorf("listening on %s with curl URL %s, want every address and localhost on its port", got, u)
	}
	if resp, err := http.Get("http://127.0.0.1:" + u.Port() + "/healthz"); err != nil {
		t.Errorf("not answering on 127.0.0.1: %v", err)
	} else {
		resp.Body.Close()
	}
}

// TestDemoPortTaken: with its port taken, serve --demo fails and prints no
// curl.
func TestDemoPortTaken(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	stdout, stderr, done := demo(t, nil, "--addr", ln.Addr().String())
	err = <-done
	done <- err
	if err == nil || !strings.Contains(err.Error(), "listen") {
		t.Errorf("serve on a taken port: %v, want a listen error", err)
	}
	if strings.Contains(stdout.String(), "curl") {
		t.Errorf("a curl was printed although nothing listens:\n%s\nstderr: %s", stdout, stderr)
	}
}
