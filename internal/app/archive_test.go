package app_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/filestore"
	"planwerk/internal/lifecycle"
	"planwerk/internal/resource"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// archived is a tenant seeded with rows of every kind an archive holds.
type archived struct {
	tenant       testenv.Tenant
	admin        *testenv.Client
	memberEmail  string
	clientID     string
	clientSecret string
	files        map[int64][]byte // upload id to bytes
}

const memberPassword = "member-password" // testenv.Client.Member's

// loopbackHooks lets a test server's webhooks name loopback addresses, as
// seedArchive's does.
func loopbackHooks(cfg *config.Config) { cfg.WebhookAllowPrivate = true }

// seedArchive makes a tenant of slug on srv with records of several
// resources (approved project days, skills, a deleted record), a member,
// uploads of files sizes bytes each, an API client, a webhook, account
// settings, a storage cap, and the audit entries of all of it.
func seedArchive(t *testing.T, srv *testenv.Server, slug string, sizes ...int) archived {
	t.Helper()
	tn := srv.CreateTenant(t, slug)
	admin := srv.SignIn(t, tn)
	a := archived{tenant: tn, admin: admin, memberEmail: "member@" + slug + ".test", files: map[int64][]byte{}}
	member := admin.Member(t, a.memberEmail)
	p1 := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": "Alpha", "budget": 12.5}))
	p2 := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": "Beta <&> \"quoted\"\n\tüñí€𝄞"}))
	task := testenv.ID(t, admin.Create(t, "tasks", testenv.M{"name": "Build", "project": p1}))
	const day = "2026-04-06"
	admin.Create(t, "time-entries", testenv.M{"project": p1, "task": task, "day": day, "duration": 3600, "sorting": 1})
	member.Create(t, "time-entries", testenv.M{"project": p1, "task": task, "day": day, "duration": 1800, "sorting": 2})
	admin.Array(t, http.MethodPost, "/v1/approval/bulk-approve", testenv.M{"action": "approve", "items": []testenv.M{{"project": p1, "day": day}}}, http.StatusOK)
	category := testenv.ID(t, admin.Create(t, "tag-categories", testenv.M{"name": "Tech"}))
	tag := testenv.ID(t, admin.Create(t, "tags", testenv.M{"name": "Go", "type": 1, "category": category}))
	admin.Create(t, "skill-assignments", testenv.M{"user": member.UserID, "tag": tag, "proficiency": 4})
	admin.Header = http.Header{"Change-Reason": {"renamed"}}
	admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/projects/%d", p2), testenv.M{"name": "Beta 2"}, http.StatusOK)
	admin.Header = nil
	gone := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": "Gone"}))
	admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/projects/%d", gone), nil, http.StatusOK)
	for i, size := range sizes {
		_, doc := admin.Document(t)
		data := testenv.Data(uint64(i+1), size)
		a.files[admin.UploadFile(t, "document", doc, testenv.Part{Filename: fmt.Sprintf("scan-%d.pdf", i), ContentType: "application/pdf", Data: data})] = data
	}
	c := admin.APIClient(t, "sync", admin.UserID, "read write")
	a.clientID, _ = c["clientId"].(string)
	a.clientSecret, _ = c["clientSecret"].(string)
	// At a loopback address nothing listens on (the server runs with
	// loopbackHooks), and disabled before any change it would carry.
	hook := admin.Object(t, http.MethodPost, "/v1/webhooks", testenv.M{"url": "http://127.0.0.1:9/hook", "resources": []string{"projects"}}, http.StatusCreated)
	admin.Object(t, http.MethodPatch, fmt.Sprintf("/v1/webhooks/%d", testenv.ID(t, hook)), testenv.M{"enabled": false}, http.StatusOK)
	admin.Object(t, http.MethodPatch, "/v1/account/settings", testenv.M{"timerMode": "DURATION", "useWorktime": true}, http.StatusOK)
	if err := srv.Service.DB.SetTenantStorage(context.Background(), slug, 5<<30); err != nil {
		t.Fatal(err)
	}
	return a
}

// storedResources are the resources whose records are stored (not
// derived from others'), with users.
func storedResources() []string {
	var names []string
	for _, r := range resource.New().All() {
		if r.Source == "" {
			names = append(names, r.Name)
		}
	}
	return names
}

// envOf is the environment of a command on srv's database and files.
func envOf(srv *testenv.Server) map[string]string {
	return map[string]string{"PLANWERK_DATABASE": srv.Config.Database, "PLANWERK_FILES": srv.Config.Files}
}

// exportSummary is the line tenant export prints.
var exportSummary = regexp.MustCompile(`^exported tenant \S+ to \S+: tenant 1, tenant_settings \d+, users \d+, records \d+, uploads \d+, api_clients \d+, webhooks \d+, audit_purges \d+, audit_log \d+, files \d+ \(\d+ bytes\); \d+ bytes\n$`)

// exportTenant runs tenant export of slug on srv into a new file of dir.
func exportTenant(t *testing.T, srv *testenv.Server, slug, dir string) string {
	t.Helper()
	out := filepath.Join(dir, slug+".tar.zst")
	r := run(context.Background(), envOf(srv), "", "tenant", "export", "--slug", slug, "--out", out)
	if r.err != nil || !exportSummary.MatchString(r.stdout) {
		t.Fatalf("tenant export: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
	}
	return out
}

// TestTenantExportImport: a tenant exported from one engine while its
// admin goes on writing, and imported into the other under a new slug,
// is the snapshot it was: every record of every resource with its id,
// timestamps and ETag, the users' passwords, the API client's secret, the
// webhook's secret, the file's bytes, an audit log that verifies; its
// change feed starts afresh and its new ids exceed the imported ones.
// Files move from a folder to S3 and from S3 to a folder.
func TestTenantExportImport(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ from, to, fromFiles, toFiles string }{
		{"sqlite", "postgres", "folder", "s3"},
		{"postgres", "sqlite", "s3", "folder"},
	} {
		t.Run(c.from+" to "+c.to, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			files := func(name string) func(*config.Config) {
				return func(cfg *config.Config) { cfg.Files = testenv.Files(t, testenv.FileBackend{Name: name}) }
			}
			src := testenv.Start(t, testenv.Backend{Name: c.from}, files(c.fromFiles), loopbackHooks)
			dst := testenv.Start(t, testenv.Backend{Name: c.to}, files(c.toFiles))
			a := seedArchive(t, src, "acme", 300<<10)

			// The admin writes on while the export runs.
			stop, wrote := make(chan struct{}), make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					status, _, raw := a.admin.Send(t, http.MethodPost, "/v1/projects", testenv.M{"name": fmt.Sprint("w-", i)})
					if status != http.StatusCreated {
						t.Errorf("write beside the export: %d %s", status, raw)
						return
					}
					if i == 0 {
						close(wrote)
					}
				}
			}()
			<-wrote
			file := exportTenant(t, src, "acme", t.TempDir())
			close(stop)
			wg.Wait()

			r := run(ctx, envOf(dst), "", "tenant", "import", "--in", file, "--slug", "acme2")
			if r.err != nil || !strings.HasPrefix(r.stdout, "imported tenant acme2 (id ") {
				t.Fatalf("tenant import: %v\nstdout: %s\nstderr: %s", r.err, r.stdout, r.stderr)
			}
			moved := testenv.Tenant{Slug: "acme2", AdminEmail: a.tenant.AdminEmail, Password: a.tenant.Password}
			admin := dst.SignIn(t, moved)
			dst.Token(t, "acme2", a.memberEmail, memberPassword)
			maxID := compareRecords(t, a.admin, admin)
			checkSnapshot(t, admin)
			// The time totals, which no archive carries, are the imported
			// entries' sums.
			for _, groupBy := range []string{"user", "project", "day"} {
				path := "/v1/analytics/time-totals?from=2024-01-01&to=2028-12-31&groupBy=" + groupBy
				want := a.admin.Object(t, http.MethodGet, path, nil, http.StatusOK)
				if got := admin.Object(t, http.MethodGet, path, nil, http.StatusOK); !reflect.DeepEqual(got, want) || len(want["groups"].([]any)) == 0 {
					t.Errorf("time totals by %s after the import: %v, want %v", groupBy, got, want)
				}
			}
			if n := untagged(t, dst.Service.DB, "acme2"); n != 0 {
				t.Errorf("%d imported records and users without a stored entity tag", n)
			}

			if status, _, body := dst.Grant(t, "acme2", testenv.ClientForm(a.clientID, a.clientSecret)); status != http.StatusOK {
				t.Errorf("the API client's secret after the import: %d %v", status, body)
			}
			if got, want := webhookSecrets(t, dst.Service.DB, "acme2"), webhookSecrets(t, src.Service.DB, "acme"); len(want) != 1 || !reflect.DeepEqual(got, want) {
				t.Errorf("webhook secrets after the import: %v, want %v", got, want)
			}
			for id, data := range a.files {
				if got := admin.Download(t, id); string(got) != string(data) {
					t.Errorf("upload %d downloads %d bytes, not the %d uploaded", id, len(got), len(data))
				}
				maxID = max(maxID, id)
			}
			r = run(ctx, envOf(dst), "", "audit", "verify", "--tenant", "acme2")
			if r.err != nil || !strings.Contains(r.stdout, "entries verified") {
				t.Errorf("audit verify: %v %s %s", r.err, r.stdout, r.stderr)
			}
			tn, err := dst.Service.DB.TenantBySlug(ctx, "acme2")
			if err != nil || tn.StorageBytes == nil || *tn.StorageBytes != 5<<30 || tn.Name != "acme" {
				t.Errorf("imported tenant: %+v %v", tn, err)
			}
			if s := admin.Object(t, http.MethodGet, "/v1/account/settings", nil, http.StatusOK); s["useWorktime"] != true {
				t.Errorf("settings after the import: %v", s)
			}

			// The feed starts afresh: the one change is the next write,
			// whose id exceeds every imported one.
			fresh := testenv.ID(t, admin.Create(t, "projects", testenv.M{"name": "after"}))
			if fresh <= maxID {
				t.Errorf("a record created after the import has id %d, not above the imported %d", fresh, maxID)
			}
			page := admin.Object(t, http.MethodGet, "/v1/changes?limit=100", nil, http.StatusOK)
			if ch, _ := page["changes"].([]any); len(ch) != 1 || testenv.Num(ch[0].(map[string]any)["id"]) != fresh {
				t.Errorf("the imported tenant's change feed: %v, want the one new project", page["changes"])
			}
		})
	}
}

// compareRecords checks that every record of every stored resource the
// imported tenant (to) has is its source's (from), with the same ETag,
// and that the source's records it lacks are the writes made after the
// snapshot; it returns the largest id of the imported records.
func compareRecords(t *testing.T, from, to *testenv.Client) int64 {
	t.Helper()
	var maxID int64
	for _, name := range storedResources() {
		path := "/v1/" + name + "?limit=50000"
		have := map[int64]testenv.M{}
		for _, rec := range to.List(t, path) {
			have[testenv.ID(t, rec)] = rec
		}
		for _, rec := range from.List(t, path) {
			id := testenv.ID(t, rec)
			got, ok := have[id]
			if !ok {
				if n, _ := rec["name"].(string); name != "projects" || !strings.HasPrefix(n, "w-") {
					t.Errorf("%s %d is not in the imported tenant: %v", name, id, rec)
				}
				continue
			}
			delete(have, id)
			maxID = max(maxID, id)
			if !reflect.DeepEqual(got, rec) {
				t.Errorf("%s %d: imported %v, was %v", name, id, got, rec)
			}
			one := fmt.Sprintf("/v1/%s/%d", name, id)
			_, srcHdr, _ := from.Send(t, http.MethodGet, one, nil)
			_, dstHdr, _ := to.Send(t, http.MethodGet, one, nil)
			if srcHdr.Get("ETag") == "" || srcHdr.Get("ETag") != dstHdr.Get("ETag") {
				t.Errorf("%s %d: ETag %q after the import, %q before", name, id, dstHdr.Get("ETag"), srcHdr.Get("ETag"))
			}
		}
		for id, rec := range have {
			t.Errorf("%s %d is in the imported tenant alone: %v", name, id, rec)
		}
	}
	return maxID
}

// checkSnapshot checks that the imported tenant is one moment of its
// source's: each project it has was created by an entry of its audit log,
// and each project an entry created (and none deleted) is there.
func checkSnapshot(t *testing.T, c *testenv.Client) {
	t.Helper()
	projects := map[int64]bool{}
	for _, p := range c.List(t, "/v1/projects?limit=50000") {
		projects[testenv.ID(t, p)] = true
	}
	status, _, raw := c.Send(t, http.MethodGet, "/v1/audit-log?resource=projects&limit=10000", nil)
	if status != http.StatusOK {
		t.Fatalf("audit log: %d %s", status, raw)
	}
	var page struct {
		Entries []struct {
			Record int64
			Op     string
		}
	}
	testenv.DecodeInto(t, raw, &page)
	logged := map[int64]bool{}
	for _, e := range page.Entries {
		switch e.Op {
		case "create":
			logged[e.Record] = true
		case "delete":
			delete(logged, e.Record)
		}
	}
	if !reflect.DeepEqual(logged, projects) {
		t.Errorf("projects of the imported tenant %v, of its audit log %v: not one snapshot", projects, logged)
	}
}

// webhookSecrets are the secrets of the tenant's webhooks, as stored.
// untagged counts the tenant's records and users without a stored
// entity tag.
func untagged(t *testing.T, db *store.DB, slug string) int {
	t.Helper()
	tn, err := db.TenantBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	err = db.QueryRowContext(context.Background(), `SELECT (SELECT count(*) FROM records WHERE tenant_id = $1 AND etag IS NULL)
		+ (SELECT count(*) FROM users WHERE tenant_id = $1 AND etag IS NULL)`, tn.ID).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func webhookSecrets(t *testing.T, db *store.DB, slug string) []string {
	t.Helper()
	tn, err := db.TenantBySlug(context.Background(), slug)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryContext(context.Background(), `SELECT secret FROM webhooks WHERE tenant_id = $1 ORDER BY id`, tn.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

// storedFiles are the files of a folder store, but for those being
// written.
func storedFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil || d.IsDir() || filestore.IsTemporary(path) {
			return err
		}
		out = append(out, strings.TrimPrefix(path, root))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// orphans counts the rows of tenant tables whose tenant is gone, and the
// states of tenants that are gone.
func orphans(t *testing.T, db *store.DB) int {
	t.Helper()
	n := 0
	for _, table := range []string{"tenant_settings", "users", "records", "uploads", "api_clients", "webhooks", "audit_log", "changes", "change_positions", "tenant_states"} {
		var c int
		if err := db.QueryRowContext(context.Background(), `SELECT count(*) FROM `+table+` WHERE tenant_id NOT IN (SELECT id FROM tenants)`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// readFile reads a file that must be there.
func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rewriteArchive decompresses an archive, passes each member's bytes
// through fn and compresses the result again: an archive whose members
// were changed after it was written.
func rewriteArchive(t *testing.T, archive []byte, fn func(name string, data []byte) []byte) []byte {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var out bytes.Buffer
	zw, err := zstd.NewWriter(&out)
	if err != nil {
		t.Fatal(err)
	}
	tw := tar.NewWriter(zw)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		data = fn(hdr.Name, data)
		hdr.Size = int64(len(data))
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// TestTenantImportRefusals: an import of a slug that is taken, of a
// truncated archive, of one with a byte flipped (compressed, or in a
// file whose SHA-256 then differs), of a newer format, of a file that is
// no archive, or of a tenant's own export (no secrets) fails, and leaves
// no row and no file of the tenant behind, in any state; the sound
// archive imports after all of them.
func TestTenantImportRefusals(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		src := testenv.Start(t, b, loopbackHooks)
		seedArchive(t, src, "acme", 512<<10, 512<<10)
		dir := t.TempDir()
		good := readFile(t, exportTenant(t, src, "acme", dir))
		var own bytes.Buffer
		if _, err := lifecycle.Export(ctx, src.Service.DB, src.Service.Files, "acme", &own, lifecycle.ExportOptions{}); err != nil {
			t.Fatal(err)
		}
		flipped := bytes.Clone(good)
		flipped[len(flipped)/2] ^= 0x40
		lastFile := ""
		rewriteArchive(t, good, func(name string, data []byte) []byte {
			if strings.HasPrefix(name, "files/") {
				lastFile = name
			}
			return data
		})

		dst := testenv.Start(t, b)
		dst.CreateTenant(t, "taken")
		files, tenants := storedFiles(t, dst.Config.Files), len(listTenants(t, dst.Service.DB))
		for _, c := range []struct {
			name    string
			archive []byte
			slug    string
			want    string
		}{
			{"slug taken", good, "taken", `tenant "taken" exists`},
			{"truncated", good[:len(good)-(100<<10)], "fresh", "damaged"},
			{"flipped byte", flipped, "fresh", "damaged"},
			{"flipped byte in a file", rewriteArchive(t, good, func(name string, data []byte) []byte {
				if name == lastFile {
					data[1000] ^= 1
				}
				return data
			}), "fresh", "member " + lastFile + ": size or SHA-256 differs"},
			{"version 3", rewriteArchive(t, good, func(name string, data []byte) []byte {
				return bytes.Replace(data, []byte(`"version":2`), []byte(`"version":3`), 1)
			}), "fresh", "newer than this program reads: version 3"},
			{"not an archive", []byte("name,amount\nlunch,12\n"), "fresh", "not a tenant archive"},
			{"a tenant's own export", own.Bytes(), "fresh", "no password hashes and secrets"},
		} {
			t.Run(c.name, func(t *testing.T) {
				in := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
				if err := os.WriteFile(in, c.archive, 0o600); err != nil {
					t.Fatal(err)
				}
				r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", c.slug)
				if r.err == nil || !strings.Contains(r.err.Error(), c.want) {
					t.Fatalf("import: %v (stdout %q), want an error saying %q", r.err, r.stdout, c.want)
				}
				nothingLeft(t, dst, "fresh", tenants, files)
			})
		}
		in := filepath.Join(dir, "good")
		if err := os.WriteFile(in, good, 0o600); err != nil {
			t.Fatal(err)
		}
		if r := run(ctx, envOf(dst), "", "tenant", "import", "--in", in, "--slug", "fresh"); r.err != nil {
			t.Fatalf("the sound archive after the refusals: %v %s", r.err, r.stderr)
		}
		if got := len(storedFiles(t, dst.Config.Files)); got != len(files)+2 {
			t.Errorf("%d files after the import, want %d", got, len(files)+2)
		}
	})
}

// nothingLeft fails unless a failed import left nothing of tenant slug
// on srv: no tenant in any state, as many tenants as before, the files
// that were there, no row of no tenant.
func nothingLeft(t *testing.T, srv *testenv.Server, slug string, tenants int, files []string) {
	t.Helper()
	if _, err := srv.Service.DB.TenantBySlug(context.Background(), slug); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("after the failed import, tenant %s: %v", slug, err)
	}
	if n := len(listTenants(t, srv.Service.DB)); n != tenants {
		t.Errorf("%d tenants after the failed import, %d before", n, tenants)
	}
	if got := storedFiles(t, srv.Config.Files); !reflect.DeepEqual(got, files) {
		t.Errorf("files after the failed import: %v, before: %v", got, files)
	}
	if n := orphans(t, srv.Service.DB); n != 0 {
		t.Errorf("%d rows of no tenant after the failed import", n)
	}
}

// listTenants lists the tenants of db, in every state.
func listTenants(t *testing.T, db *store.DB) []store.TenantSummary {
	t.Helper()
	all, err := db.ListTenants(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return all
}

// TestTenantArchiveCommandLine: what tenant export and import refuse
// before they touch anything: missing flags and a bad slug (usage), an
// unknown tenant, an archive file that exists, one that does not.
func TestTenantArchiveCommandLine(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		ctx := context.Background()
		srv := testenv.Start(t, b)
		srv.CreateTenant(t, "acme")
		dir := t.TempDir()
		taken := filepath.Join(dir, "taken.tar.zst")
		if err := os.WriteFile(taken, []byte("kept"), 0o600); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			args  []string
			usage bool
			want  string
		}{
			{[]string{"tenant", "export", "--slug", "acme"}, true, "give --slug and --out FILE"},
			{[]string{"tenant", "export", "--out", filepath.Join(dir, "x")}, true, "give --slug and --out FILE"},
			{[]string{"tenant", "export", "--slug", "nobody", "--out", filepath.Join(dir, "nobody.tar.zst")}, false, `no tenant "nobody"`},
			{[]string{"tenant", "export", "--slug", "acme", "--out", taken}, false, "exists: nothing written"},
			{[]string{"tenant", "import"}, true, "give --in FILE"},
			{[]string{"tenant", "import", "--in", taken, "--slug", "Not A Slug"}, true, "--slug must be"},
			{[]string{"tenant", "import", "--in", filepath.Join(dir, "missing")}, false, "no such file"},
		} {
			r := run(ctx, envOf(srv), "", c.args...)
			if r.err == nil || errors.Is(r.err, app.ErrUsage) != c.usage || !strings.Contains(r.err.Error()+r.stderr, c.want) {
				t.Errorf("%q: %v (usage %v)\nstderr: %s\nwant an error saying %q", c.args, r.err, c.usage, r.stderr, c.want)
			}
		}
		if got := string(readFile(t, taken)); got != "kept" {
			t.Errorf("an export overwrote %s", taken)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 1 {
			t.Errorf("files left in the folder of the archives: %v", entries)
		}
	})
}
