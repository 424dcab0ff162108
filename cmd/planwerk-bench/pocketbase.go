package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// pocketBaseVersion is the PocketBase release the peers mode measures:
// the newest whose module the project's Go release builds (v0.40 asks
// for Go 1.27).
const pocketBaseVersion = "v0.39.11"

// pocketBaseBinary returns PocketBase's example server (examples/base)
// of pocketBaseVersion, building it on first use with go install into
// the user's cache ($XDG_CACHE_HOME/planwerk-bench/pocketbase-VERSION,
// by default ~/.cache/...), where later runs find it.
func pocketBaseBinary(ctx context.Context) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(cache, "planwerk-bench", "pocketbase-"+pocketBaseVersion)
	bin := filepath.Join(dir, "base")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// Built beside the place it goes to and renamed: an interrupted build
	// leaves no binary behind that a later run would take for whole.
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	pkg := "github.com/pocketbase/pocketbase/examples/base@" + pocketBaseVersion
	fmt.Fprintf(os.Stderr, "building PocketBase %s into %s (once): go install %s\n", pocketBaseVersion, dir, pkg)
	cmd := exec.CommandContext(ctx, "go", "install", pkg)
	cmd.Dir = tmp // outside any module
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOFLAGS=-mod=mod")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building PocketBase: %w", err)
	}
	if err := os.Rename(filepath.Join(tmp, "base"), bin); err != nil {
		return "", err
	}
	return bin, nil
}

// pocketBase is a PocketBase process serving a fresh data directory on
// loopback, with the bench's collections and records.
type pocketBase struct {
	url      string
	cmd      *exec.Cmd
	done     chan struct{}
	log      string
	admin    http.Header // a superuser's token: for setting up only
	header   http.Header // the member's token: what the load sends
	userID   string
	project  string
	task     string
	dayID    string
	client   *http.Client
	stopOnce sync.Once
}

// startPocketBase starts PocketBase in dir, without its request log (the
// bench's Planwerk services log nothing either), and signs in a
// superuser.
func startPocketBase(ctx context.Context, bin, dir string) (*pocketBase, error) {
	flags := []string{"--dir=" + filepath.Join(dir, "pb_data"), "--dev=false", "--automigrate=false", "--hooksWatch=false",
		"--hooksDir=" + filepath.Join(dir, "pb_hooks"), "--migrationsDir=" + filepath.Join(dir, "pb_migrations"),
		"--publicDir=" + filepath.Join(dir, "pb_public")}
	const email, password = "admin@bench.test", "bench-password"
	if out, err := exec.CommandContext(ctx, bin, append([]string{"superuser", "upsert", email, password}, flags...)...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("PocketBase superuser: %w: %s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	logPath := filepath.Join(dir, "pocketbase.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close()
	cmd := exec.Command(bin, append([]string{"serve", "--http=" + addr}, flags...)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &pocketBase{url: "http://" + addr, cmd: cmd, done: make(chan struct{}), log: logPath,
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}, Timeout: 30 * time.Second}}
	go func() {
		_ = cmd.Wait()
		close(p.done)
	}()
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := p.client.Get(p.url + "/api/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("PocketBase ended: %s", p.tail())
		case <-ctx.Done():
			p.stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, fmt.Errorf("PocketBase does not answer on %s: %s", addr, p.tail())
		}
	}
	var auth struct {
		Token string `json:"token"`
	}
	if err := p.call(http.MethodPost, "/api/collections/_superusers/auth-with-password", nil,
		map[string]any{"identity": email, "password": password}, &auth); err != nil {
		p.stop()
		return nil, err
	}
	p.admin = http.Header{"Authorization": {auth.Token}, "Content-Type": {"application/json"}}
	return p, nil
}

// tail returns the end of PocketBase's output.
func (p *pocketBase) tail() string {
	b, _ := os.ReadFile(p.log)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}

// stop ends the process: an interrupt, and after 10 s a kill.
func (p *pocketBase) stop() {
	p.stopOnce.Do(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// call sends body as JSON with header to PocketBase and decodes the
// answer into out (when not nil); an answer other than 2xx is an error.
func (p *pocketBase) call(method, path string, header http.Header, body, out any) error {
	return callJSON(p.client, method, p.url+path, header, body, out)
}

// callJSON sends body (when not nil) as JSON with header to u and decodes
// the answer into out (when not nil); an answer other than 2xx is an
// error that shows it.
func callJSON(client *http.Client, method, u string, header http.Header, body, out any) error {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, u, r)
	if err != nil {
		return err
	}
	if header != nil {
		req.Header = header.Clone()
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: %d %s", method, u, resp.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// setUp makes the collections of the bench's records, mirroring
// Planwerk's: projects and tasks (a name), project_days (day, project,
// validationStatus, one per project and day) and time_entries (user,
// project, task, day, duration, sorting, trackingType,
// validationStatus), each with created and updated times. A member of
// the users collection may list and read them and create time entries
// of their own; the load runs with the member's token.
func (p *pocketBase) setUp() error {
	if err := p.call(http.MethodPatch, "/api/settings", p.admin, map[string]any{"logs": map[string]any{"maxDays": 0}}, nil); err != nil {
		return err
	}
	const member = `@request.auth.id != ""`
	times := []map[string]any{
		{"name": "created", "type": "autodate", "onCreate": true},
		{"name": "updated", "type": "autodate", "onCreate": true, "onUpdate": true},
	}
	ids := map[string]string{}
	create := func(name string, fields []map[string]any, createRule string, indexes ...string) error {
		c := map[string]any{"name": name, "type": "base", "fields": append(fields, times...),
			"listRule": member, "viewRule": member, "createRule": createRule, "indexes": indexes}
		var out struct {
			ID string `json:"id"`
		}
		if err := p.call(http.MethodPost, "/api/collections", p.admin, c, &out); err != nil {
			return err
		}
		ids[name] = out.ID
		return nil
	}
	name := []map[string]any{{"name": "name", "type": "text", "required": true}}
	if err := create("projects", name, member); err != nil {
		return err
	}
	if err := create("tasks", name, member); err != nil {
		return err
	}
	status := map[string]any{"name": "validationStatus", "type": "select", "values": []string{"NOTAPPROVED", "APPROVED"}, "maxSelect": 1}
	relation := func(field, collection string) map[string]any {
		return map[string]any{"name": field, "type": "relation", "collectionId": ids[collection], "maxSelect": 1}
	}
	day := map[string]any{"name": "day", "type": "date", "required": true}
	if err := create("project_days", []map[string]any{day, relation("project", "projects"), status}, member,
		"CREATE UNIQUE INDEX idx_project_days_project_day ON project_days (project, day)"); err != nil {
		return err
	}
	users, err := p.collectionID("users")
	if err != nil {
		return err
	}
	ids["users"] = users
	tracking := map[string]any{"name": "trackingType", "type": "select", "values": []string{"WORK", "WORKTIME", "BREAK"}, "maxSelect": 1}
	number := func(field string) map[string]any {
		return map[string]any{"name": field, "type": "number", "onlyInt": true}
	}
	if err := create("time_entries", []map[string]any{relation("user", "users"), tracking, relation("project", "projects"),
		relation("task", "tasks"), day, number("duration"), number("sorting"), status},
		member+` && @request.body.user = @request.auth.id`); err != nil {
		return err
	}

	const email, password = "member@bench.test", "bench-password"
	var user struct {
		ID string `json:"id"`
	}
	if err := p.call(http.MethodPost, "/api/collections/users/records", p.admin,
		map[string]any{"email": email, "password": password, "passwordConfirm": password, "verified": true}, &user); err != nil {
		return err
	}
	var auth struct {
		Token string `json:"token"`
	}
	if err := p.call(http.MethodPost, "/api/collections/users/auth-with-password", nil,
		map[string]any{"identity": email, "password": password}, &auth); err != nil {
		return err
	}
	p.userID = user.ID
	p.header = http.Header{"Authorization": {auth.Token}, "Content-Type": {"application/json"}}
	var rec struct {
		ID string `json:"id"`
	}
	if err := p.call(http.MethodPost, "/api/collections/projects/records", p.admin, map[string]any{"name": "Load"}, &rec); err != nil {
		return err
	}
	p.project = rec.ID
	if err := p.call(http.MethodPost, "/api/collections/tasks/records", p.admin, map[string]any{"name": "Load"}, &rec); err != nil {
		return err
	}
	p.task = rec.ID
	return nil
}

// collectionID returns the id of the collection called name.
func (p *pocketBase) collectionID(name string) (string, error) {
	var c struct {
		ID string `json:"id"`
	}
	err := p.call(http.MethodGet, "/api/collections/"+name, p.admin, nil, &c)
	return c.ID, err
}

// seedDays creates one approved project day of the bench's project for
// each of days, four requests at a time, and returns their ids in the
// same order.
func (p *pocketBase) seedDays(days []string) ([]string, error) {
	ids := make([]string, len(days))
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	next := make(chan int)
	for range 4 {
		wg.Go(func() {
			for i := range next {
				var rec struct {
					ID string `json:"id"`
				}
				err := p.call(http.MethodPost, "/api/collections/project_days/records", p.admin,
					map[string]any{"day": days[i], "project": p.project, "validationStatus": "APPROVED"}, &rec)
				mu.Lock()
				if err != nil && first == nil {
					first = err
				}
				mu.Unlock()
				ids[i] = rec.ID
			}
		})
	}
	for i := range days {
		next <- i
	}
	close(next)
	wg.Wait()
	if first != nil {
		return nil, first
	}
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("PocketBase: a project day without an id")
		}
	}
	return ids, nil
}
