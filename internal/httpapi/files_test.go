package httpapi_test

// Black-box tests of the file endpoints (SPEC.md "Document", "Expense",
// "Upload", "Upload flow", "File upload rules", "Errors", "Limits";
// CONTRACT.md "Files", "Roles") on both database engines and both file
// stores. Helpers carry the prefix fl.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/config"
	"planwerk/internal/ratelimit"
	"planwerk/internal/testenv"
)

var flTimestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// flEach runs fn on both databases, each with both file stores.
func flEach(t *testing.T, fn func(t *testing.T, b testenv.Backend, fb testenv.FileBackend)) {
	t.Helper()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		testenv.EachFiles(t, func(t *testing.T, fb testenv.FileBackend) { fn(t, b, fb) })
	})
}

// flEnv is a running server with tenant "acme" and its signed-in admin.
type flEnv struct {
	t     *testing.T
	srv   *testenv.Server
	fb    testenv.FileBackend
	tn    testenv.Tenant
	admin *flUser
}

// flUser is a signed-in caller of one tenant.
type flUser struct {
	env   *flEnv
	slug  string
	token string
	id    int64
}

// flUpload is the JSON of an upload.
type flUpload struct {
	ID          int64  `json:"id"`
	Filename    string `json:"filename"`
	Model       string `json:"model"`
	Record      int64  `json:"record"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	CreatedAt   string `json:"createdAt"`
}

func flStart(t *testing.T, b testenv.Backend, fb testenv.FileBackend, opts ...func(*config.Config)) *flEnv {
	t.Helper()
	files := testenv.Files(t, fb)
	return flStartOn(t, b, fb, files, opts...)
}

// flStartOn starts a server on the file store spec files.
func flStartOn(t *testing.T, b testenv.Backend, fb testenv.FileBackend, files string, opts ...func(*config.Config)) *flEnv {
	t.Helper()
	all := append([]func(*config.Config){func(c *config.Config) { c.Files = files }}, opts...)
	srv := testenv.Start(t, b, all...)
	env := &flEnv{t: t, srv: srv, fb: fb}
	env.tn = srv.CreateTenant(t, "acme")
	env.admin = env.signIn(env.tn)
	return env
}

// use points the helpers' failures at t until the returned func runs.
func (e *flEnv) use(t *testing.T) func() {
	old := e.t
	e.t = t
	return func() { e.t = old }
}

func (e *flEnv) signIn(tn testenv.Tenant) *flUser {
	e.t.Helper()
	return &flUser{env: e, slug: tn.Slug, token: login(e.t, e.srv, tn).AccessToken, id: tn.AdminID}
}

// tenant creates another tenant and signs its admin in.
func (e *flEnv) tenant(slug string) (testenv.Tenant, *flUser) {
	e.t.Helper()
	tn := e.srv.CreateTenant(e.t, slug)
	// Ids count per tenant (on SQLite): move this tenant's past acme's, so
	// that "another tenant's id" never names one of acme's own records.
	for range 200 {
		if _, err := e.srv.Service.DB.NewID(context.Background(), e.srv.Service.DB, tn.ID); err != nil {
			e.t.Fatal(err)
		}
	}
	return tn, e.signIn(tn)
}

// member creates a non-admin user of acme and signs it in.
func (e *flEnv) member(email string) *flUser {
	e.t.Helper()
	const pw = "member-password"
	id := e.admin.create("users", map[string]any{"email": email, "password": pw, "isAdmin": false})
	u := e.signIn(testenv.Tenant{Slug: e.tn.Slug, AdminEmail: email, Password: pw})
	u.id = id
	return u
}

// used is the tenant's storage use as the service counts it.
func (e *flEnv) used(tenantID int64) int64 {
	e.t.Helper()
	n, err := e.srv.Service.DB.StorageUsed(context.Background(), nil, tenantID, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	return n
}

// stored lists the files of the folder store (nil for S3).
func (e *flEnv) stored() []string {
	e.t.Helper()
	if e.fb.Name != "folder" {
		return nil
	}
	return flWalk(e.t, e.srv.Config.Files)
}

func flWalk(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// do sends a request with the tenant header and the bearer token.
func (u *flUser) do(method, path string, hdr map[string]string, body io.Reader) (int, http.Header, []byte) {
	t := u.env.t
	t.Helper()
	req, err := http.NewRequest(method, u.env.srv.URL+path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("companyurl", u.slug)
	if u.token != "" {
		req.Header.Set("Authorization", "Bearer "+u.token)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, raw
}

// json sends body as JSON and wants status want; it returns the decoded answer.
func (u *flUser) json(method, path string, body any, want int) any {
	t := u.env.t
	t.Helper()
	var r io.Reader
	hdr := map[string]string{}
	if body != nil {
		js, _ := json.Marshal(body)
		r = bytes.NewReader(js)
		hdr["Content-Type"] = "application/json"
	}
	status, _, raw := u.do(method, path, hdr, r)
	if status != want {
		t.Fatalf("%s %s: status %d, want %d: %s", method, path, status, want, raw)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s %s: not JSON: %q", method, path, raw)
	}
	return v
}

// create POSTs a record and returns its id.
func (u *flUser) create(res string, body map[string]any) int64 {
	u.env.t.Helper()
	m, _ := u.json(http.MethodPost, "/v1/"+res, body, http.StatusCreated).(map[string]any)
	return flID(u.env.t, m)
}

// fail makes a request that must answer status with the JSON error code.
func (u *flUser) fail(method, path string, body any, status int, code string) map[string]any {
	t := u.env.t
	t.Helper()
	var r io.Reader
	if body != nil {
		js, _ := json.Marshal(body)
		r = bytes.NewReader(js)
	}
	got, _, raw := u.do(method, path, map[string]string{"Content-Type": "application/json"}, r)
	return flWantError(t, method+" "+path, got, raw, status, code)
}

func flWantError(t *testing.T, what string, status int, raw []byte, wantStatus int, wantCode string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("%s: status %d, body is not a JSON object: %q", what, status, raw)
	}
	if status != wantStatus || (wantCode != "" && m["code"] != wantCode) {
		t.Fatalf("%s: got %d %s, want %d %s", what, status, raw, wantStatus, wantCode)
	}
	if msg, _ := m["message"].(string); msg == "" {
		t.Errorf("%s: error without message: %s", what, raw)
	}
	return m
}

func flID(t *testing.T, m map[string]any) int64 {
	t.Helper()
	f, ok := m["id"].(float64)
	if !ok || f <= 0 || f != float64(int64(f)) {
		t.Fatalf("id %v is not a positive integer: %v", m["id"], m)
	}
	return int64(f)
}

// flFile is one part of a multipart body.
type flFile struct {
	field       string // default "file"
	filename    string
	disposition string // a whole Content-Disposition header, instead of field and filename
	contentType string // default application/octet-stream
	data        []byte
}

var flQuoteEscaper = strings.NewReplacer("\\", "\\\\", `"`, "\\\"")

// flMultipart writes parts as a multipart/form-data body.
func flMultipart(w io.Writer, parts ...flFile) (string, error) {
	mw := multipart.NewWriter(w)
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		disp := p.disposition
		if disp == "" {
			field := p.field
			if field == "" {
				field = "file"
			}
			disp = fmt.Sprintf(`form-data; name="%s"; filename="%s"`, field, flQuoteEscaper.Replace(p.filename))
		}
		h.Set("Content-Disposition", disp)
		ct := p.contentType
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.Set("Content-Type", ct)
		pw, err := mw.CreatePart(h)
		if err != nil {
			return "", err
		}
		if _, err := pw.Write(p.data); err != nil {
			return "", err
		}
	}
	return mw.FormDataContentType(), mw.Close()
}

func flUploadPath(model string, record int64, replace bool) string {
	p := fmt.Sprintf("/v1/files/upload/%s/%d", model, record)
	if replace {
		p += "?delete_others=1"
	}
	return p
}

// send uploads parts to a path.
func (u *flUser) send(path string, parts ...flFile) (int, http.Header, []byte) {
	u.env.t.Helper()
	var buf bytes.Buffer
	ct, err := flMultipart(&buf, parts...)
	if err != nil {
		u.env.t.Fatal(err)
	}
	return u.do(http.MethodPost, path, map[string]string{"Content-Type": ct}, &buf)
}

// upload sends one file part.
func (u *flUser) upload(model string, record int64, replace bool, f flFile) (int, []byte) {
	u.env.t.Helper()
	status, _, raw := u.send(flUploadPath(model, record, replace), f)
	return status, raw
}

// uploadOK uploads a file that must be accepted, and checks the answer.
func (u *flUser) uploadOK(model string, record int64, replace bool, f flFile) flUpload {
	t := u.env.t
	t.Helper()
	status, raw := u.upload(model, record, replace, f)
	if status != http.StatusCreated {
		t.Fatalf("upload to %s %d: %d %s", model, record, status, raw)
	}
	return flCheckUpload(t, raw, model, record, int64(len(f.data)))
}

func flCheckUpload(t *testing.T, raw []byte, model string, record, size int64) flUpload {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("upload answer is not a JSON object: %q", raw)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	if want := []string{"contentType", "createdAt", "filename", "id", "model", "record", "size"}; !slices.Equal(keys, want) {
		t.Errorf("upload fields %v, want %v", keys, want)
	}
	var up flUpload
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatalf("upload answer %s: %v", raw, err)
	}
	if up.ID <= 0 || up.Model != model || up.Record != record || up.Size != size || up.Filename == "" ||
		up.ContentType == "" || !flTimestampRE.MatchString(up.CreatedAt) {
		t.Errorf("upload %+v, want model %s record %d size %d", up, model, record, size)
	}
	if up.ID == record {
		t.Errorf("upload id %d equals the record id", up.ID)
	}
	return up
}

// uploads lists the uploads of a record (must answer 200).
func (u *flUser) uploads(model string, record int64) []flUpload {
	t := u.env.t
	t.Helper()
	path := fmt.Sprintf("/v1/files/%s/%d", model, record)
	status, _, raw := u.do(http.MethodGet, path, nil, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	var ups []flUpload
	if err := json.Unmarshal(raw, &ups); err != nil || ups == nil {
		t.Fatalf("GET %s: not a JSON array: %q", path, raw)
	}
	if len(ups) > 1 {
		t.Fatalf("GET %s: %d uploads, a record holds at most one", path, len(ups))
	}
	return ups
}

// wantUploads checks that a record's uploads are exactly ids.
func (u *flUser) wantUploads(model string, record int64, ids ...int64) {
	u.env.t.Helper()
	var got []int64
	for _, up := range u.uploads(model, record) {
		got = append(got, up.ID)
	}
	if !slices.Equal(got, ids) {
		u.env.t.Fatalf("uploads of %s %d: %v, want %v", model, record, got, ids)
	}
}

// downloadURL asks for the signed URL of an upload (must answer 200).
func (u *flUser) downloadURL(id int64) string {
	t := u.env.t
	t.Helper()
	status, hdr, raw := u.do(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", id), nil, nil)
	if status != http.StatusOK {
		t.Fatalf("download URL of %d: %d %s", id, status, raw)
	}
	if !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Errorf("download URL Content-Type %q", hdr.Get("Content-Type"))
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatalf("download URL answer is not a JSON string: %q", raw)
	}
	pu, err := url.Parse(s)
	if err != nil || !pu.IsAbs() || pu.Host == "" || (pu.Scheme != "http" && pu.Scheme != "https") {
		t.Fatalf("download URL %q is not an absolute http(s) URL", s)
	}
	return s
}

// flFetch GETs a URL as a plain client: no token, no tenant header.
func flFetch(t *testing.T, method, u string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

// download fetches an upload's bytes through its signed URL.
func (u *flUser) download(id int64) []byte {
	t := u.env.t
	t.Helper()
	link := u.downloadURL(id)
	status, _, raw := flFetch(t, http.MethodGet, link)
	if status != http.StatusOK {
		t.Fatalf("GET signed URL of %d: %d %s", id, status, raw)
	}
	return raw
}

// flData is n deterministic bytes distinct per seed.
func flData(seed uint64, n int) []byte {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	b := make([]byte, n)
	_, _ = rand.NewChaCha8(s).Read(b)
	return b
}

func flSum(b []byte) string {
	s := sha256.Sum256(b)
	return fmt.Sprintf("%x", s)
}

// flSign computes a download signature as internal/files does.
func flSign(secret string, tenantID, uploadID, expires int64) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "planwerk-download\n%d\n%d\n%d", tenantID, uploadID, expires)
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
}

// flProject creates a project and a project Document on it.
func flDocument(u *flUser) (project, doc int64) {
	project = u.create("projects", map[string]any{"name": "P"})
	doc = u.create("documents", map[string]any{"model": "project", "record": project, "category": 7})
	return project, doc
}

// TestFlDocuments: Document fields, the category table, parent
// references, listing a parent's Documents, and the member visibility
// rule, for records and for their files.
func TestFlDocuments(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		env := flStart(t, b, fb)
		admin := env.admin
		member := env.member("member@acme.test")
		_, beta := env.tenant("beta")
		project := admin.create("projects", map[string]any{"name": "P"})
		project2 := admin.create("projects", map[string]any{"name": "P2"})
		clientID := admin.create("clients", map[string]any{"name": "C"})
		parents := map[string]int64{"user": member.id, "project": project, "client": clientID}
		table := map[int]string{1: "user", 2: "user", 3: "user", 4: "user", 5: "user", 6: "user",
			7: "project", 8: "project", 9: "project", 10: "project", 11: "client", 12: "client", 13: "client", 14: "client"}

		t.Run("category table", func(t *testing.T) {
			defer env.use(t)()
			for cat := 1; cat <= 14; cat++ {
				for _, model := range []string{"user", "project", "client"} {
					body := map[string]any{"model": model, "record": parents[model], "category": cat, "name": "n", "date": "2026-01-05"}
					if table[cat] == model {
						m, _ := admin.json(http.MethodPost, "/v1/documents", body, http.StatusCreated).(map[string]any)
						if m["model"] != model || m["record"] != float64(parents[model]) || m["category"] != float64(cat) ||
							m["name"] != "n" || m["date"] != "2026-01-05" {
							t.Errorf("created document %v", m)
						}
						admin.json(http.MethodDelete, fmt.Sprintf("/v1/documents/%d", flID(t, m)), nil, http.StatusOK)
						continue
					}
					e := admin.fail(http.MethodPost, "/v1/documents", body, http.StatusBadRequest, "")
					if !slices.Contains(flProblemFields(e), "category") {
						t.Errorf("category %d on %s: problems %v", cat, model, e["problems"])
					}
				}
			}
			for _, bad := range []map[string]any{
				{"model": "project", "record": project, "category": 0},
				{"model": "project", "record": project, "category": 15},
				{"model": "project", "record": project, "category": "offer"},
			} {
				e := admin.fail(http.MethodPost, "/v1/documents", bad, http.StatusBadRequest, "")
				if !slices.Contains(flProblemFields(e), "category") {
					t.Errorf("%v: problems %v", bad, e["problems"])
				}
			}
		})

		t.Run("parent must exist in the tenant", func(t *testing.T) {
			defer env.use(t)()
			betaProject := beta.create("projects", map[string]any{"name": "beta's"})
			cases := []struct {
				body  map[string]any
				field string
			}{
				{map[string]any{"model": "project", "record": 999999, "category": 7}, "record"},
				{map[string]any{"model": "project", "record": betaProject, "category": 7}, "record"},
				{map[string]any{"model": "client", "record": project, "category": 11}, "record"}, // a project is no client
				{map[string]any{"model": "user", "record": 999999, "category": 1}, "record"},
				{map[string]any{"model": "expense", "record": project, "category": 7}, "model"},
				{map[string]any{"record": project, "category": 7}, "model"},
				{map[string]any{"model": "project", "category": 7}, "record"},
			}
			for _, c := range cases {
				e := admin.fail(http.MethodPost, "/v1/documents", c.body, http.StatusBadRequest, "")
				if !slices.Contains(flProblemFields(e), c.field) {
					t.Errorf("%v: problems %v, want %s", c.body, e["problems"], c.field)
				}
			}
		})

		t.Run("list a parent's documents", func(t *testing.T) {
			defer env.use(t)()
			d1 := admin.create("documents", map[string]any{"model": "project", "record": project, "category": 7})
			d2 := admin.create("documents", map[string]any{"model": "project", "record": project, "category": 10})
			admin.create("documents", map[string]any{"model": "project", "record": project2, "category": 8})
			c1 := admin.create("documents", map[string]any{"model": "client", "record": clientID, "category": 14})
			// A client whose id equals nothing of the project: the model matters.
			got := flIDs(t, admin, "/v1/documents?where="+url.QueryEscape(fmt.Sprintf(`{"model":"project","record":%d}`, project)))
			if !slices.Equal(got, []int64{d1, d2}) {
				t.Errorf("documents of project %d: %v, want %v", project, got, []int64{d1, d2})
			}
			got = flIDs(t, admin, "/v1/documents?where="+url.QueryEscape(fmt.Sprintf(`{"model":"client","record":%d}`, clientID)))
			if !slices.Equal(got, []int64{c1}) {
				t.Errorf("documents of client: %v", got)
			}
			got = flIDs(t, admin, "/v1/documents?where="+url.QueryEscape(fmt.Sprintf(`{"model":"client","record":%d}`, project)))
			if len(got) != 0 {
				t.Errorf("client documents under a project's id: %v", got)
			}
			// A Document without a file is listed like any other (SPEC.md "Upload flow" 3).
			admin.wantUploads("document", d1)
		})

		t.Run("member visibility", func(t *testing.T) {
			defer env.use(t)()
			mine := admin.create("documents", map[string]any{"model": "user", "record": member.id, "category": 1, "visibleToUser": true})
			hidden := admin.create("documents", map[string]any{"model": "user", "record": member.id, "category": 3, "visibleToUser": false})
			unset := admin.create("documents", map[string]any{"model": "user", "record": member.id, "category": 6})
			others := admin.create("documents", map[string]any{"model": "user", "record": admin.id, "category": 1, "visibleToUser": true})
			projDoc := admin.create("documents", map[string]any{"model": "project", "record": project, "category": 9, "visibleToUser": false})
			clientDoc := admin.create("documents", map[string]any{"model": "client", "record": clientID, "category": 12})

			// The member's list is the admin's list under the rule.
			all, _ := admin.json(http.MethodGet, "/v1/documents", nil, http.StatusOK).([]any)
			var want []int64
			for _, d := range all {
				m := d.(map[string]any)
				if m["model"] != "user" || (m["record"] == float64(member.id) && m["visibleToUser"] == true) {
					want = append(want, flID(t, m))
				}
			}
			if got := flIDs(t, member, "/v1/documents"); !slices.Equal(got, want) {
				t.Errorf("member's documents %v, want %v", got, want)
			}
			for _, id := range []int64{mine, projDoc, clientDoc} {
				if !slices.Contains(want, id) {
					t.Errorf("document %d should be visible to the member", id)
				}
				member.json(http.MethodGet, fmt.Sprintf("/v1/documents/%d", id), nil, http.StatusOK)
			}
			for _, id := range []int64{hidden, unset, others} {
				if slices.Contains(want, id) {
					t.Errorf("document %d should be hidden from the member", id)
				}
				member.fail(http.MethodGet, fmt.Sprintf("/v1/documents/%d", id), nil, http.StatusNotFound, "not_found")
			}
			// Criteria cannot reach around the rule.
			got := flIDs(t, member, "/v1/documents?where="+url.QueryEscape(fmt.Sprintf(`{"model":"user","record":%d}`, member.id)))
			if !slices.Equal(got, []int64{mine}) {
				t.Errorf("member's own user documents: %v, want [%d]", got, mine)
			}

			// Files follow their Document: hidden ones are 404 for the member.
			data := flData(1, 300)
			var ups = map[int64]flUpload{}
			for _, id := range []int64{mine, hidden, others, projDoc} {
				ups[id] = admin.uploadOK("document", id, false, flFile{filename: "x.txt", data: data})
			}
			for _, id := range []int64{mine, projDoc} {
				member.wantUploads("document", id, ups[id].ID)
				if got := member.download(ups[id].ID); !bytes.Equal(got, data) {
					t.Errorf("member's download of document %d: wrong bytes", id)
				}
			}
			for _, id := range []int64{hidden, others} {
				member.fail(http.MethodGet, fmt.Sprintf("/v1/files/document/%d", id), nil, http.StatusNotFound, "not_found")
				member.fail(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", ups[id].ID), nil, http.StatusNotFound, "not_found")
				member.fail(http.MethodDelete, fmt.Sprintf("/v1/files/%d", ups[id].ID), nil, http.StatusNotFound, "not_found")
				status, raw := member.upload("document", id, true, flFile{filename: "y.txt", data: data})
				flWantError(t, "member upload to a hidden document", status, raw, http.StatusNotFound, "not_found")
				admin.wantUploads("document", id, ups[id].ID)
			}
			// Visible is not writable: members do not write Documents.
			member.fail(http.MethodPost, "/v1/documents", map[string]any{"model": "user", "record": member.id, "category": 1}, http.StatusForbidden, "forbidden")
		})
	})
}

func flProblemFields(m map[string]any) []string {
	var out []string
	ps, _ := m["problems"].([]any)
	for _, p := range ps {
		pm, _ := p.(map[string]any)
		f, _ := pm["field"].(string)
		out = append(out, f)
	}
	return out
}

func flIDs(t *testing.T, u *flUser, path string) []int64 {
	t.Helper()
	arr, ok := u.json(http.MethodGet, path, nil, http.StatusOK).([]any)
	if !ok {
		t.Fatalf("GET %s: not an array", path)
	}
	out := []int64{}
	for _, v := range arr {
		out = append(out, flID(t, v.(map[string]any)))
	}
	return out
}

// TestUploadLifecycle: upload, list, the one-file rule, replacement,
// deletes of the upload and of its Document.
func TestUploadLifecycle(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const maxUpload = 64 << 10
		env := flStart(t, b, fb, func(c *config.Config) { c.MaxUploadBytes = maxUpload })
		admin := env.admin
		_, doc := flDocument(admin)
		_, empty := flDocument(admin)

		first := flData(10, 1000)
		up1 := admin.uploadOK("document", doc, false, flFile{filename: "Angebot Nr. 1-2.pdf", contentType: "application/pdf", data: first})
		if up1.Filename != "AngebotNr.12.pdf" || up1.ContentType != "application/pdf" {
			t.Errorf("upload %+v", up1)
		}
		if got := admin.uploads("document", doc); len(got) != 1 || got[0] != up1 {
			t.Errorf("list %+v, want [%+v]", got, up1)
		}
		admin.wantUploads("document", empty)
		if got := admin.download(up1.ID); !bytes.Equal(got, first) {
			t.Error("download: wrong bytes")
		}
		if env.used(env.tn.ID) != 1000 {
			t.Errorf("storage used %d, want 1000", env.used(env.tn.ID))
		}

		// One file per record.
		for _, path := range []string{flUploadPath("document", doc, false), flUploadPath("document", doc, false) + "?delete_others=0"} {
			status, _, raw := admin.send(path, flFile{filename: "second.pdf", data: flData(11, 10)})
			m := flWantError(t, "second upload", status, raw, http.StatusForbidden, "")
			if m["message"] != "too many uploads" {
				t.Errorf("second upload message %q, want exactly \"too many uploads\"", m["message"])
			}
		}
		admin.wantUploads("document", doc, up1.ID)

		// Replacement.
		oldLink := admin.downloadURL(up1.ID)
		second := flData(12, 2000)
		up2 := admin.uploadOK("document", doc, true, flFile{filename: "neu.pdf", contentType: "application/pdf", data: second})
		if up2.ID == up1.ID {
			t.Fatal("replacement kept the upload id")
		}
		admin.wantUploads("document", doc, up2.ID)
		admin.fail(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", up1.ID), nil, http.StatusNotFound, "not_found")
		admin.fail(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up1.ID), nil, http.StatusNotFound, "not_found")
		if status, _, _ := flFetch(t, http.MethodGet, oldLink); status == http.StatusOK {
			t.Errorf("signed URL of the replaced upload still answers %d", status)
		}
		if got := admin.download(up2.ID); !bytes.Equal(got, second) {
			t.Error("download of the replacement: wrong bytes")
		}
		if env.used(env.tn.ID) != 2000 {
			t.Errorf("storage used %d after replacement, want 2000", env.used(env.tn.ID))
		}

		// A failed replacement keeps the old file.
		before := env.stored()
		status, raw := admin.upload("document", doc, true, flFile{filename: "big.pdf", data: flData(13, maxUpload+1)})
		flWantError(t, "over-cap replacement", status, raw, http.StatusForbidden, "file_too_large")
		admin.wantUploads("document", doc, up2.ID)
		if got := admin.download(up2.ID); !bytes.Equal(got, second) {
			t.Error("download after a failed replacement: wrong bytes")
		}
		if after := env.stored(); !slices.Equal(before, after) {
			t.Errorf("stored files changed by a refused upload: %v -> %v", before, after)
		}
		if env.used(env.tn.ID) != 2000 {
			t.Errorf("storage used %d after a refused replacement", env.used(env.tn.ID))
		}

		// delete_others=true is taken as well.
		third := flData(14, 30)
		status, _, raw = admin.send(fmt.Sprintf("/v1/files/upload/document/%d?delete_others=true", doc), flFile{filename: "drei.txt", contentType: "text/plain", data: third})
		if status != http.StatusCreated {
			t.Fatalf("delete_others=true: %d %s", status, raw)
		}
		up3 := flCheckUpload(t, raw, "document", doc, 30)
		admin.wantUploads("document", doc, up3.ID)

		// Deleting the upload leaves the Document.
		got, _ := admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up3.ID), nil, http.StatusOK).(map[string]any)
		if flID(t, got) != up3.ID || got["filename"] != "drei.txt" || got["record"] != float64(doc) {
			t.Errorf("deleted upload %v", got)
		}
		admin.wantUploads("document", doc)
		admin.json(http.MethodGet, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusOK)
		admin.fail(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", up3.ID), nil, http.StatusNotFound, "not_found")
		admin.fail(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up3.ID), nil, http.StatusNotFound, "not_found")
		if env.used(env.tn.ID) != 0 {
			t.Errorf("storage used %d after delete, want 0", env.used(env.tn.ID))
		}
		if fb.Name == "folder" && len(env.stored()) != 0 {
			t.Errorf("files left in the folder: %v", env.stored())
		}
		// With the file gone, a plain upload is accepted again.
		fourth := flData(15, 400)
		up4 := admin.uploadOK("document", doc, false, flFile{filename: "vier.txt", data: fourth})

		// Deleting the Document leaves its upload (SPEC.md: "an attached
		// upload is not removed by this call").
		admin.json(http.MethodDelete, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusOK)
		admin.fail(http.MethodGet, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusNotFound, "not_found")
		if got := admin.download(up4.ID); !bytes.Equal(got, fourth) {
			t.Error("upload of a deleted Document: wrong bytes")
		}
		if env.used(env.tn.ID) != 400 {
			t.Errorf("storage used %d, want 400", env.used(env.tn.ID))
		}
		admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up4.ID), nil, http.StatusOK)
		if env.used(env.tn.ID) != 0 {
			t.Errorf("storage used %d, want 0", env.used(env.tn.ID))
		}
	})
}

// TestUploadFilenames: SPEC.md "File upload rules" 3 through the API, and
// the filename of downloads.
func TestUploadFilenames(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		env := flStart(t, b, fb)
		admin := env.admin
		_, doc := flDocument(admin)
		cases := []struct {
			name, disposition, want string
		}{
			{"Jahres bericht 2024-final!.pdf", "", "Jahresbericht2024final.pdf"},
			{"Grüße Öl Über straße.txt", "", "GrüßeÖlÜberstraße.txt"},
			{"äöüÄÖÜß", "", "äöüÄÖÜß"},
			{"a\u0308rger.txt", "", "ärger.txt"}, // NFD
			{"O\u0308l.txt", "", "Öl.txt"},
			{"say \"hi\" (v2).txt", "", "sayhiv2.txt"},
			{"---", "", "file"},
			{"(((;)))", "", "file"},
			{"", "", "file"},
			{"日本.txt", "", ".txt"},
			{"dir/sub-name.txt", "", "dirsubname.txt"},
			{"", `form-data; name="file"; filename*=UTF-8''%C3%9Cber%20Ma%C3%9F.txt`, "ÜberMaß.txt"},
			{"", `form-data; name="file"`, "file"},
		}
		for i, c := range cases {
			data := flData(uint64(100+i), 10+i)
			up := admin.uploadOK("document", doc, true, flFile{filename: c.name, disposition: c.disposition, data: data})
			if up.Filename != c.want {
				t.Errorf("filename %q (%s): stored %q, want %q", c.name, c.disposition, up.Filename, c.want)
			}
			if got := admin.uploads("document", doc); len(got) != 1 || got[0].Filename != c.want {
				t.Errorf("listed %+v", got)
			}
		}
		// The download names the stored file: ASCII plainly, others with
		// RFC 6266 filename* as well.
		for _, c := range []struct{ name, stored string }{
			{"Prüfbericht März.txt", "PrüfberichtMärz.txt"},
			{"plain-name.bin", "plainname.bin"},
		} {
			data := flData(200, 77)
			up := admin.uploadOK("document", doc, true, flFile{filename: c.name, contentType: "text/plain; charset=utf-8", data: data})
			status, hdr, raw := flFetch(t, http.MethodGet, admin.downloadURL(up.ID))
			if status != http.StatusOK || !bytes.Equal(raw, data) {
				t.Fatalf("download: %d", status)
			}
			cd := hdr.Get("Content-Disposition")
			disp, params, err := mime.ParseMediaType(cd)
			if err != nil || disp != "attachment" || params["filename"] != c.stored {
				t.Errorf("Content-Disposition %q: %s %v %v, want attachment with %q", cd, disp, params, err, c.stored)
			}
			nonASCII := strings.ContainsFunc(c.stored, func(r rune) bool { return r > 127 })
			if ext := strings.Contains(cd, "filename*=UTF-8''"); ext != nonASCII {
				t.Errorf("Content-Disposition %q: filename* present %v, want %v", cd, ext, nonASCII)
			}
			if !strings.Contains(cd, `filename="`) {
				t.Errorf("Content-Disposition %q has no plain filename", cd)
			}
		}
	})
}

// TestUploadExpenses: Expenses carry at most one file, attached directly;
// members write the files of their own expenses only.
func TestUploadExpenses(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		env := flStart(t, b, fb)
		admin := env.admin
		member := env.member("member@acme.test")
		own := member.create("expenses", map[string]any{"amount": 12.5})
		theirs := admin.create("expenses", map[string]any{"amount": 99})
		project, projDoc := flDocument(admin)
		userDoc := admin.create("documents", map[string]any{"model": "user", "record": member.id, "category": 1, "visibleToUser": true})
		_ = project

		d1 := flData(30, 500)
		up1 := member.uploadOK("expense", own, false, flFile{filename: "Beleg 1.jpg", contentType: "image/jpeg", data: d1})
		if up1.Filename != "Beleg1.jpg" {
			t.Errorf("filename %q", up1.Filename)
		}
		status, raw := member.upload("expense", own, false, flFile{filename: "b.jpg", data: d1})
		if m := flWantError(t, "second expense file", status, raw, http.StatusForbidden, ""); m["message"] != "too many uploads" {
			t.Errorf("message %q", m["message"])
		}
		d2 := flData(31, 600)
		up2 := member.uploadOK("expense", own, true, flFile{filename: "b.jpg", data: d2})
		member.wantUploads("expense", own, up2.ID)
		if got := member.download(up2.ID); !bytes.Equal(got, d2) {
			t.Error("member's download: wrong bytes")
		}

		// Not another's expense, not Documents.
		for _, c := range []struct {
			model  string
			record int64
		}{{"expense", theirs}, {"document", projDoc}, {"document", userDoc}} {
			status, raw := member.upload(c.model, c.record, true, flFile{filename: "x", data: d1})
			flWantError(t, "member upload to "+c.model, status, raw, http.StatusForbidden, "forbidden")
			admin.wantUploads(c.model, c.record)
		}
		if env.used(env.tn.ID) != 600 {
			t.Errorf("storage used %d, want 600", env.used(env.tn.ID))
		}

		// The admin may attach to any expense; the member reads it but may
		// not delete it.
		d3 := flData(32, 700)
		up3 := admin.uploadOK("expense", theirs, false, flFile{filename: "admin.pdf", data: d3})
		member.wantUploads("expense", theirs, up3.ID)
		if got := member.download(up3.ID); !bytes.Equal(got, d3) {
			t.Error("member's download of the admin's file: wrong bytes")
		}
		member.fail(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up3.ID), nil, http.StatusForbidden, "forbidden")
		admin.wantUploads("expense", theirs, up3.ID)
		// ...and replace the member's file.
		d4 := flData(33, 50)
		up4 := admin.uploadOK("expense", own, true, flFile{filename: "by admin.txt", data: d4})
		member.wantUploads("expense", own, up4.ID)

		// The member deletes the file of their expense; the expense stays.
		member.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up4.ID), nil, http.StatusOK)
		member.wantUploads("expense", own)
		member.json(http.MethodGet, fmt.Sprintf("/v1/expenses/%d", own), nil, http.StatusOK)
		if env.used(env.tn.ID) != 700 {
			t.Errorf("storage used %d, want 700", env.used(env.tn.ID))
		}
	})
}

// flChunked uploads parts with chunked transfer encoding: the body comes
// from a pipe, so its length is unknown.
func (u *flUser) flChunked(path string, parts ...flFile) (int, []byte) {
	t := u.env.t
	t.Helper()
	pr, pw := io.Pipe()
	ctype := make(chan string, 1)
	go func() {
		mw := multipart.NewWriter(pw)
		ctype <- mw.FormDataContentType()
		pw.CloseWithError(flWriteParts(mw, parts))
	}()
	req, err := http.NewRequest(http.MethodPost, u.env.srv.URL+path, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = -1
	req.Header.Set("companyurl", u.slug)
	req.Header.Set("Authorization", "Bearer "+u.token)
	req.Header.Set("Content-Type", <-ctype)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("chunked upload: %v", err)
	}
	defer resp.Body.Close()
	pr.CloseWithError(io.ErrClosedPipe) // the server may stop reading early
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, raw
}

// flWriteParts writes parts, 8 KiB at a time, and closes the writer.
func flWriteParts(mw *multipart.Writer, parts []flFile) error {
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s"`, flQuoteEscaper.Replace(p.filename)))
		h.Set("Content-Type", "application/octet-stream")
		w, err := mw.CreatePart(h)
		if err != nil {
			return err
		}
		for rest := p.data; len(rest) > 0; {
			n := min(len(rest), 8<<10)
			if _, err := w.Write(rest[:n]); err != nil {
				return err
			}
			rest = rest[n:]
		}
	}
	return mw.Close()
}

// TestUploadSizeCap: the per-upload cap, on Content-Length bodies and on
// chunked ones (CONTRACT.md "Files": chunked uploads are accepted, the cap
// holds mid-stream); a refused upload stores nothing.
func TestUploadSizeCap(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const maxUpload = 64 << 10
		env := flStart(t, b, fb, func(c *config.Config) { c.MaxUploadBytes = maxUpload })
		admin := env.admin
		_, doc := flDocument(admin)
		_, exact := flDocument(admin)

		refused := func(what string, status int, raw []byte) {
			t.Helper()
			flWantError(t, what, status, raw, http.StatusForbidden, "file_too_large")
			admin.wantUploads("document", doc)
			if used := env.used(env.tn.ID); used != 0 {
				t.Errorf("%s: storage used %d, want 0", what, used)
			}
			if files := env.stored(); len(files) != 0 {
				t.Errorf("%s: files stored: %v", what, files)
			}
		}
		status, raw := admin.upload("document", doc, true, flFile{filename: "a.bin", data: flData(40, maxUpload+1)})
		refused("one byte over the cap", status, raw)
		status, raw = admin.upload("document", doc, false, flFile{filename: "a.bin", data: flData(41, maxUpload+150<<10)})
		refused("far over the cap", status, raw)
		status, raw = admin.flChunked(flUploadPath("document", doc, true), flFile{filename: "c.bin", data: flData(42, 3*maxUpload)})
		refused("chunked over the cap", status, raw)

		// Exactly the cap is allowed.
		data := flData(43, maxUpload)
		admin.uploadOK("document", exact, false, flFile{filename: "exact.bin", data: data})

		// Chunked within the cap: accepted with its size counted.
		small := flData(44, 20<<10+3)
		status, raw = admin.flChunked(flUploadPath("document", doc, true), flFile{filename: "chunked file.bin", data: small})
		if status != http.StatusCreated {
			t.Fatalf("chunked upload: %d %s", status, raw)
		}
		up := flCheckUpload(t, raw, "document", doc, int64(len(small)))
		if up.Filename != "chunkedfile.bin" {
			t.Errorf("filename %q", up.Filename)
		}
		if got := admin.download(up.ID); !bytes.Equal(got, small) {
			t.Error("chunked upload: wrong bytes")
		}
		if used := env.used(env.tn.ID); used != int64(maxUpload+len(small)) {
			t.Errorf("storage used %d", used)
		}
	})
}

// TestUploadStorageCap: a tenant at its storage cap gets 403 storage_full;
// two uploads that together pass the cap cannot both succeed.
func TestUploadStorageCap(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const capacity = 1000
		env := flStart(t, b, fb, func(c *config.Config) { c.TenantStorageBytes = capacity })
		admin := env.admin
		_, d1 := flDocument(admin)
		_, d2 := flDocument(admin)
		_, d3 := flDocument(admin)
		full := func(what string, status int, raw []byte, record int64, used int64) {
			t.Helper()
			flWantError(t, what, status, raw, http.StatusForbidden, "storage_full")
			if got := env.used(env.tn.ID); got != used {
				t.Errorf("%s: storage used %d, want %d", what, got, used)
			}
		}
		up1 := admin.uploadOK("document", d1, false, flFile{filename: "a", data: flData(50, 600)})
		status, raw := admin.upload("document", d2, false, flFile{filename: "b", data: flData(51, 600)})
		full("600 on 600 of 1000", status, raw, d2, 600)
		admin.wantUploads("document", d2)
		up2 := admin.uploadOK("document", d2, false, flFile{filename: "b", data: flData(52, 400)})
		if env.used(env.tn.ID) != capacity {
			t.Fatalf("storage used %d, want %d", env.used(env.tn.ID), capacity)
		}
		status, raw = admin.upload("document", d3, false, flFile{filename: "c", data: flData(53, 1)})
		full("1 byte when full", status, raw, d3, capacity)
		status, raw = admin.upload("document", d3, true, flFile{filename: "c", data: nil})
		full("empty file when full", status, raw, d3, capacity)
		admin.wantUploads("document", d3)

		// A replacement counts without the file it replaces.
		smaller := flData(54, 500)
		up1b := admin.uploadOK("document", d1, true, flFile{filename: "a2", data: smaller})
		if env.used(env.tn.ID) != 900 {
			t.Errorf("storage used %d, want 900", env.used(env.tn.ID))
		}
		status, raw = admin.upload("document", d1, true, flFile{filename: "a3", data: flData(55, 700)})
		full("replacement over the cap", status, raw, d1, 900)
		admin.wantUploads("document", d1, up1b.ID)
		if got := admin.download(up1b.ID); !bytes.Equal(got, smaller) {
			t.Error("file after a refused replacement: wrong bytes")
		}
		_ = up1

		// Another tenant has its own cap.
		betaTn, beta := env.tenant("beta")
		_, bd := flDocument(beta)
		beta.uploadOK("document", bd, false, flFile{filename: "b", data: flData(56, 900)})
		if env.used(betaTn.ID) != 900 || env.used(env.tn.ID) != 900 {
			t.Errorf("storage used %d / %d", env.used(env.tn.ID), env.used(betaTn.ID))
		}

		admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up1b.ID), nil, http.StatusOK)
		admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up2.ID), nil, http.StatusOK)
		if env.used(env.tn.ID) != 0 {
			t.Fatalf("storage used %d after deletes", env.used(env.tn.ID))
		}

		// Parallel uploads that together pass the cap (two, then four at
		// once): exactly one wins.
		for round, n := range []int{2, 2, 4, 4} {
			var recs []int64
			for range n {
				_, d := flDocument(admin)
				recs = append(recs, d)
			}
			results := flParallel(t, admin, recs, make([]bool, n), 600)
			var won, lost int
			for _, r := range results {
				switch {
				case r.status == http.StatusCreated:
					won++
				case r.status == http.StatusForbidden && r.code == "storage_full":
					lost++
				default:
					t.Errorf("round %d: parallel upload answered %d %s", round, r.status, r.raw)
				}
			}
			if won != 1 || lost != n-1 {
				t.Fatalf("round %d: %d of %d accepted, %d refused; want exactly one accepted", round, won, n, lost)
			}
			if env.used(env.tn.ID) != 600 {
				t.Fatalf("round %d: storage used %d, want 600", round, env.used(env.tn.ID))
			}
			for _, r := range results {
				if r.status == http.StatusCreated {
					admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", r.id), nil, http.StatusOK)
				}
			}
		}
		// Two parallel first uploads to one record: one wins, the other is
		// "too many uploads".
		for round := 0; round < 3; round++ {
			_, p := flDocument(admin)
			results := flParallel(t, admin, []int64{p, p, p}, []bool{false, false, false}, 100)
			var won []int64
			for _, r := range results {
				switch {
				case r.status == http.StatusCreated:
					won = append(won, r.id)
				case r.status == http.StatusForbidden && r.message == "too many uploads":
				default:
					t.Errorf("round %d: parallel upload answered %d %s", round, r.status, r.raw)
				}
			}
			if len(won) != 1 {
				t.Fatalf("round %d: %d uploads accepted on one record", round, len(won))
			}
			admin.wantUploads("document", p, won[0])
			admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", won[0]), nil, http.StatusOK)
		}
	})
}

type flResult struct {
	status        int
	code, message string
	id            int64
	raw           []byte
}

// flParallel uploads size bytes to each record at the same moment.
func flParallel(t *testing.T, u *flUser, records []int64, replace []bool, size int) []flResult {
	t.Helper()
	reqs := make([]*http.Request, len(records))
	for i, rec := range records {
		var buf bytes.Buffer
		ct, err := flMultipart(&buf, flFile{filename: "p.bin", data: flData(uint64(60+i), size)})
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodPost, u.env.srv.URL+flUploadPath("document", rec, replace[i]), bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("companyurl", u.slug)
		req.Header.Set("Authorization", "Bearer "+u.token)
		req.Header.Set("Content-Type", ct)
		reqs[i] = req
	}
	results := make([]flResult, len(records))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i] = flResult{status: -1, raw: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var m map[string]any
			_ = json.Unmarshal(raw, &m)
			r := flResult{status: resp.StatusCode, raw: raw}
			r.code, _ = m["code"].(string)
			r.message, _ = m["message"].(string)
			if f, ok := m["id"].(float64); ok {
				r.id = int64(f)
			}
			results[i] = r
		}()
	}
	close(start)
	wg.Wait()
	return results
}

// TestUploadErrors: SPEC.md "Errors" for the file operations.
func TestUploadErrors(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		env := flStart(t, b, fb)
		admin := env.admin
		project, doc := flDocument(admin)
		data := flData(70, 256)
		up := admin.uploadOK("document", doc, false, flFile{filename: "keep.txt", data: data})
		_, beta := env.tenant("beta")
		_, betaDoc := flDocument(beta)
		betaUp := beta.uploadOK("document", betaDoc, false, flFile{filename: "beta.txt", data: flData(71, 10)})
		_, empty := flDocument(admin)
		uploadPath := flUploadPath("document", empty, true)

		t.Run("400", func(t *testing.T) {
			defer env.use(t)()
			for _, c := range []struct {
				name, ctype, body string
			}{
				{"json", "application/json", `{"file":"x"}`},
				{"text", "text/plain", "hello"},
				{"no content type", "", "hello"},
				{"form", "application/x-www-form-urlencoded", "file=x"},
				{"multipart without boundary", "multipart/form-data", "--x\r\n"},
				{"multipart garbage", "multipart/form-data; boundary=zzz", "this is not multipart"},
				{"multipart without parts", "multipart/form-data; boundary=zzz", "--zzz--\r\n"},
			} {
				hdr := map[string]string{}
				if c.ctype != "" {
					hdr["Content-Type"] = c.ctype
				}
				status, _, raw := admin.do(http.MethodPost, uploadPath, hdr, strings.NewReader(c.body))
				flWantError(t, c.name, status, raw, http.StatusBadRequest, "")
			}
			status, _, raw := admin.send(uploadPath, flFile{field: "attachment", filename: "a.txt", data: data})
			flWantError(t, "no part named file", status, raw, http.StatusBadRequest, "")
			status, _, raw = admin.send(uploadPath, flFile{field: "note", filename: "", data: []byte("x")}, flFile{field: "files", filename: "a.txt", data: data})
			flWantError(t, "parts named otherwise", status, raw, http.StatusBadRequest, "")
			admin.wantUploads("document", empty)
			// A file part after another part is found.
			status, _, raw = admin.send(uploadPath, flFile{field: "note", data: []byte("x")}, flFile{filename: "late.txt", data: data})
			if status != http.StatusCreated {
				t.Fatalf("file part after a note: %d %s", status, raw)
			}
		})

		t.Run("401", func(t *testing.T) {
			defer env.use(t)()
			for _, token := range []string{"", "pwa_unknown"} {
				anon := &flUser{env: env, slug: env.tn.Slug, token: token}
				for _, c := range []struct{ method, path string }{
					{http.MethodPost, flUploadPath("document", doc, true)},
					{http.MethodGet, fmt.Sprintf("/v1/files/document/%d", doc)},
					{http.MethodGet, fmt.Sprintf("/v1/files/download/%d", up.ID)},
					{http.MethodDelete, fmt.Sprintf("/v1/files/%d", up.ID)},
				} {
					var status int
					var hdr http.Header
					var raw []byte
					if c.method == http.MethodPost {
						var buf bytes.Buffer
						ct, _ := flMultipart(&buf, flFile{filename: "x", data: data})
						status, hdr, raw = anon.do(c.method, c.path, map[string]string{"Content-Type": ct}, &buf)
					} else {
						status, hdr, raw = anon.do(c.method, c.path, nil, nil)
					}
					flWantError(t, c.method+" "+c.path, status, raw, http.StatusUnauthorized, "unauthorized")
					if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("%s %s: WWW-Authenticate %q", c.method, c.path, hdr.Get("WWW-Authenticate"))
					}
				}
			}
			admin.wantUploads("document", doc, up.ID)
		})

		t.Run("404", func(t *testing.T) {
			defer env.use(t)()
			records := []struct {
				name, model, record string
			}{
				{"unknown record", "document", "999999"},
				{"another tenant's document", "document", strconv.FormatInt(betaDoc, 10)},
				{"unknown expense", "expense", "999999"},
				{"a document id as an expense", "expense", strconv.FormatInt(doc, 10)},
				{"model project", "project", strconv.FormatInt(project, 10)},
				{"model user", "user", strconv.FormatInt(admin.id, 10)},
				{"model documents", "documents", strconv.FormatInt(doc, 10)},
				{"model Document", "Document", strconv.FormatInt(doc, 10)},
				{"record not a number", "document", "abc"},
				{"record zero", "document", "0"},
				{"record negative", "document", "-1"},
			}
			for _, c := range records {
				var buf bytes.Buffer
				ct, _ := flMultipart(&buf, flFile{filename: "x", data: data})
				status, _, raw := admin.do(http.MethodPost, "/v1/files/upload/"+c.model+"/"+c.record+"?delete_others=1", map[string]string{"Content-Type": ct}, &buf)
				flWantError(t, "upload: "+c.name, status, raw, http.StatusNotFound, "not_found")
				status, _, raw = admin.do(http.MethodGet, "/v1/files/"+c.model+"/"+c.record, nil, nil)
				flWantError(t, "list: "+c.name, status, raw, http.StatusNotFound, "not_found")
			}
			for _, c := range []struct{ name, id string }{
				{"unknown upload", "999999"},
				{"another tenant's upload", strconv.FormatInt(betaUp.ID, 10)},
				{"a record id", strconv.FormatInt(doc, 10)},
				{"not a number", "abc"},
			} {
				status, _, raw := admin.do(http.MethodGet, "/v1/files/download/"+c.id, nil, nil)
				flWantError(t, "download URL: "+c.name, status, raw, http.StatusNotFound, "not_found")
				status, _, raw = admin.do(http.MethodDelete, "/v1/files/"+c.id, nil, nil)
				flWantError(t, "delete: "+c.name, status, raw, http.StatusNotFound, "not_found")
			}
			// Nothing changed on either side.
			admin.wantUploads("document", doc, up.ID)
			admin.json(http.MethodGet, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusOK)
			beta.wantUploads("document", betaDoc, betaUp.ID)
			if got := beta.download(betaUp.ID); !bytes.Equal(got, flData(71, 10)) {
				t.Error("beta's file changed")
			}
			if got := admin.download(up.ID); !bytes.Equal(got, data) {
				t.Error("acme's file changed")
			}
		})
	})
}

// TestUploadSignedURLs: the download URL is an absolute signed URL, valid
// without token or tenant header, refused when tampered with or expired.
func TestUploadSignedURLs(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const secret = "k"
		env := flStart(t, b, fb, func(c *config.Config) { c.URLSecret = secret })
		admin := env.admin
		_, doc := flDocument(admin)
		data := flData(80, 5000)
		up := admin.uploadOK("document", doc, false, flFile{filename: "Prüfbericht.txt", contentType: "text/plain; charset=utf-8", data: data})
		link := admin.downloadURL(up.ID)
		u, _ := url.Parse(link)

		status, hdr, raw := flFetch(t, http.MethodGet, link)
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Fatalf("signed URL: %d, %d bytes", status, len(raw))
		}
		if ct := hdr.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
			t.Errorf("Content-Type %q", ct)
		}
		if cl := hdr.Get("Content-Length"); cl != strconv.Itoa(len(data)) {
			t.Errorf("Content-Length %q, want %d", cl, len(data))
		}
		disp, params, err := mime.ParseMediaType(hdr.Get("Content-Disposition"))
		if err != nil || disp != "attachment" || params["filename"] != "Prüfbericht.txt" ||
			!strings.Contains(hdr.Get("Content-Disposition"), "filename*=UTF-8''Pr%C3%BCfbericht.txt") {
			t.Errorf("Content-Disposition %q", hdr.Get("Content-Disposition"))
		}

		with := func(mod func(q url.Values)) string {
			v := *u
			q := v.Query()
			mod(q)
			v.RawQuery = q.Encode()
			return v.String()
		}
		refused := func(what, link string) {
			t.Helper()
			status, _, raw := flFetch(t, http.MethodGet, link)
			if status != http.StatusForbidden {
				t.Errorf("%s: %d %s, want 403", what, status, raw)
			}
		}

		if fb.Name == "s3" {
			// The store's own presigned URL.
			spec, _ := url.Parse(env.srv.Config.Files)
			if u.Host != spec.Query().Get("endpoint") {
				t.Errorf("presigned URL host %s, want the store %s", u.Host, spec.Query().Get("endpoint"))
			}
			if u.Query().Get("X-Amz-Signature") == "" {
				t.Fatalf("not a presigned URL: %s", link)
			}
			refused("tampered signature", with(func(q url.Values) {
				s := []byte(q.Get("X-Amz-Signature"))
				if s[0] == '0' {
					s[0] = '1'
				} else {
					s[0] = '0'
				}
				q.Set("X-Amz-Signature", string(s))
			}))
			refused("changed expiry", with(func(q url.Values) { q.Set("X-Amz-Expires", "3600") }))
			return
		}

		// The service's own signed URL, on the base domain (the request
		// came to 127.0.0.1, which is not a host of the service's), on the
		// port the request reached.
		srvURL, _ := url.Parse(env.srv.URL)
		if u.Host != "localhost:"+srvURL.Port() || u.Path != fmt.Sprintf("/v1/files/blob/%d", up.ID) {
			t.Errorf("signed URL %s, want it on localhost:%s", link, srvURL.Port())
		}
		q := u.Query()
		expires, err := strconv.ParseInt(q.Get("expires"), 10, 64)
		if err != nil {
			t.Fatalf("expires %q", q.Get("expires"))
		}
		if now := time.Now().Unix(); expires < now+20 || expires > now+31 {
			t.Errorf("expires in %d s, want about 30", expires-now)
		}
		if q.Get("tenant") != strconv.FormatInt(env.tn.ID, 10) || q.Get("signature") != flSign(secret, env.tn.ID, up.ID, expires) {
			t.Fatalf("signature of %s is not HMAC-SHA256 as expected", link)
		}
		// A HEAD answers the headers.
		if status, hdr, raw := flFetch(t, http.MethodHead, link); status != http.StatusOK || len(raw) != 0 || hdr.Get("Content-Length") != strconv.Itoa(len(data)) {
			t.Errorf("HEAD: %d, %d bytes, Content-Length %q", status, len(raw), hdr.Get("Content-Length"))
		}

		betaTn, beta := env.tenant("beta")
		_, betaDoc := flDocument(beta)
		betaUp := beta.uploadOK("document", betaDoc, false, flFile{filename: "b", data: flData(81, 10)})

		refused("tampered signature", with(func(q url.Values) {
			s := []byte(q.Get("signature"))
			if s[0] == 'A' {
				s[0] = 'B'
			} else {
				s[0] = 'A'
			}
			q.Set("signature", string(s))
		}))
		refused("no signature", with(func(q url.Values) { q.Del("signature") }))
		refused("signature of another key", with(func(q url.Values) { q.Set("signature", flSign("other", env.tn.ID, up.ID, expires)) }))
		refused("later expiry", with(func(q url.Values) { q.Set("expires", strconv.FormatInt(expires+3600, 10)) }))
		refused("earlier expiry", with(func(q url.Values) { q.Set("expires", strconv.FormatInt(expires-1, 10)) }))
		refused("expiry not a number", with(func(q url.Values) { q.Set("expires", "soon") }))
		refused("other tenant", with(func(q url.Values) { q.Set("tenant", strconv.FormatInt(betaTn.ID, 10)) }))
		refused("no tenant", with(func(q url.Values) { q.Del("tenant") }))
		refused("another upload", strings.Replace(link, fmt.Sprintf("/blob/%d?", up.ID), fmt.Sprintf("/blob/%d?", betaUp.ID), 1))
		// Expired: a correct signature with an expiry in the past.
		past := time.Now().Unix() - 1
		refused("expired", with(func(q url.Values) {
			q.Set("expires", strconv.FormatInt(past, 10))
			q.Set("signature", flSign(secret, env.tn.ID, up.ID, past))
		}))
		// The same construction with a future expiry works: the refusal
		// above was for the expiry alone.
		future := time.Now().Unix() + 20
		status, _, raw = flFetch(t, http.MethodGet, with(func(q url.Values) {
			q.Set("expires", strconv.FormatInt(future, 10))
			q.Set("signature", flSign(secret, env.tn.ID, up.ID, future))
		}))
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Errorf("self-signed URL with a future expiry: %d", status)
		}
		// A signature for beta's upload opens beta's file, never acme's.
		betaLink := fmt.Sprintf("%s/v1/files/blob/%d?tenant=%d&expires=%d&signature=%s", env.srv.URL, betaUp.ID, betaTn.ID, future, flSign(secret, betaTn.ID, betaUp.ID, future))
		if status, _, raw := flFetch(t, http.MethodGet, betaLink); status != http.StatusOK || !bytes.Equal(raw, flData(81, 10)) {
			t.Errorf("beta's signed URL: %d", status)
		}
		crossLink := fmt.Sprintf("%s/v1/files/blob/%d?tenant=%d&expires=%d&signature=%s", env.srv.URL, up.ID, betaTn.ID, future, flSign(secret, betaTn.ID, up.ID, future))
		if status, _, raw := flFetch(t, http.MethodGet, crossLink); status == http.StatusOK || bytes.Equal(raw, data) {
			t.Errorf("acme's upload under beta's tenant: %d", status)
		}

		// --public-url is the base of the links.
		pub := flStartOn(t, b, fb, testenv.Files(t, fb), func(c *config.Config) { c.PublicURL = "https://files.example.test/base/" })
		_, pdoc := flDocument(pub.admin)
		pup := pub.admin.uploadOK("document", pdoc, false, flFile{filename: "p.txt", data: data})
		plink := pub.admin.downloadURL(pup.ID)
		prefix := fmt.Sprintf("https://files.example.test/base/v1/files/blob/%d?", pup.ID)
		if !strings.HasPrefix(plink, prefix) {
			t.Fatalf("with --public-url: %s, want prefix %s", plink, prefix)
		}
		status, _, raw = flFetch(t, http.MethodGet, pub.srv.URL+strings.TrimPrefix(plink, "https://files.example.test/base"))
		if status != http.StatusOK || !bytes.Equal(raw, data) {
			t.Errorf("public URL against the server: %d", status)
		}
	})
}

// TestUploadRateLimit: --file-rate counts uploads and download-URL
// requests per user; the one over it is 429 with Retry-After.
func TestUploadRateLimit(t *testing.T) {
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		rate := func(c *config.Config) { c.FileRate = 3 }
		env := flStart(t, b, fb, rate)
		admin := env.admin
		member := env.member("member@acme.test")
		_, doc := flDocument(admin)
		expense := member.create("expenses", map[string]any{"amount": 1})

		up := admin.uploadOK("document", doc, false, flFile{filename: "a", data: flData(90, 10)}) // 1
		admin.downloadURL(up.ID)                                                                  // 2
		up2 := admin.uploadOK("document", doc, true, flFile{filename: "b", data: flData(91, 20)}) // 3
		status, hdr, raw := admin.do(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", up2.ID), nil, nil)
		flWantLimited(t, "4th: download URL", status, hdr, raw)
		var buf bytes.Buffer
		ct, _ := flMultipart(&buf, flFile{filename: "c", data: flData(92, 30)})
		status, hdr, raw = admin.do(http.MethodPost, flUploadPath("document", doc, true), map[string]string{"Content-Type": ct}, &buf)
		flWantLimited(t, "5th: upload", status, hdr, raw)
		// Refused uploads store nothing; listing and deleting are not limited.
		admin.wantUploads("document", doc, up2.ID)
		if env.used(env.tn.ID) != 20 {
			t.Errorf("storage used %d, want 20", env.used(env.tn.ID))
		}
		// Another user is unaffected.
		mup := member.uploadOK("expense", expense, false, flFile{filename: "m", data: flData(93, 5)})
		member.downloadURL(mup.ID)
		member.downloadURL(mup.ID)
		status, hdr, raw = member.do(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", mup.ID), nil, nil)
		flWantLimited(t, "member's 4th", status, hdr, raw)
		admin.json(http.MethodDelete, fmt.Sprintf("/v1/files/%d", up2.ID), nil, http.StatusOK)

		// Without --redis each process counts on its own: a second server
		// with the same tenant and user ids still allows requests.
		other := flStartOn(t, b, fb, env.srv.Config.Files, rate)
		if other.tn.ID != env.tn.ID || other.admin.id != admin.id {
			t.Fatalf("second server's ids %d/%d differ from %d/%d", other.tn.ID, other.admin.id, env.tn.ID, admin.id)
		}
		_, odoc := flDocument(other.admin)
		other.admin.uploadOK("document", odoc, false, flFile{filename: "o", data: flData(94, 5)})
	})
}

func flWantLimited(t *testing.T, what string, status int, hdr http.Header, raw []byte) {
	t.Helper()
	flWantError(t, what, status, raw, http.StatusTooManyRequests, "rate_limited")
	secs, err := strconv.Atoi(hdr.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Errorf("%s: Retry-After %q", what, hdr.Get("Retry-After"))
	}
}

const flRedisURL = "redis://127.0.0.1:6379/0"

// TestUploadRateLimitRedis: with --redis, instances share the counters.
func TestUploadRateLimitRedis(t *testing.T) {
	opts, err := redis.ParseURL(flRedisURL)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", opts.Addr, time.Second); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis at %s: %v", opts.Addr, err)
		}
		t.Skipf("redis at %s does not answer (%v): skipped", opts.Addr, err)
	} else {
		c.Close()
	}
	rc := redis.NewClient(opts)
	defer rc.Close()
	flEach(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const fileRate = 3
		shared := func(c *config.Config) { c.FileRate = fileRate; c.Redis = flRedisURL }
		files := testenv.Files(t, fb)
		one := flStartOn(t, b, fb, files, shared)
		two := flStartOn(t, b, fb, files, shared)
		if one.tn.ID != two.tn.ID || one.admin.id != two.admin.id {
			t.Fatalf("the two servers' ids differ: %d/%d and %d/%d", one.tn.ID, one.admin.id, two.tn.ID, two.admin.id)
		}
		// Both servers count under the same key (tenant id, user id); start
		// it afresh so that earlier runs do not count.
		lim := ratelimit.NewRedis(rc, "files", ratelimit.Rule{Burst: fileRate, Every: time.Minute / fileRate})
		key := fmt.Sprintf("files:%d:%d", one.tn.ID, one.admin.id)
		reset := func() {
			if err := lim.Reset(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		}
		reset()
		t.Cleanup(reset)

		_, d1 := flDocument(one.admin)
		_, d2 := flDocument(two.admin)
		u1 := one.admin.uploadOK("document", d1, false, flFile{filename: "a", data: flData(95, 10)}) // 1 on one
		one.admin.downloadURL(u1.ID)                                                                 // 2 on one
		u2 := two.admin.uploadOK("document", d2, false, flFile{filename: "b", data: flData(96, 10)}) // 3 on two
		status, hdr, raw := two.admin.do(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", u2.ID), nil, nil)
		flWantLimited(t, "4th, on two", status, hdr, raw)
		status, hdr, raw = one.admin.do(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", u1.ID), nil, nil)
		flWantLimited(t, "5th, on one", status, hdr, raw)
	})
}

// --- crash test -------------------------------------------------------

// flProc is a planwerk process.
type flProc struct {
	cmd    *exec.Cmd
	url    string
	stderr *testenv.SyncBuffer
}

func flEnviron() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PLANWERK_") {
			env = append(env, kv)
		}
	}
	return env
}

// flServe starts planwerk serve and waits until it answers.
func flServe(t *testing.T, bin, dir string, args ...string) *flProc {
	t.Helper()
	addr := testenv.FreeAddr(t)
	p := &flProc{url: "http://" + addr, stderr: &testenv.SyncBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = flEnviron()
	p.cmd.Stderr = p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(p.url + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("planwerk serve does not answer on %s: %v\n%s", addr, err, p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// flAttempt is a file sent for a record.
type flAttempt struct {
	sum  string
	size int64
	id   int64 // from the 201 answer; 0 when none came
}

// TestUploadCrash: kill -9 a server in the middle of uploads and
// replacements; after a restart every acknowledged upload (the latest per
// record) is listed and complete, and nothing listed is missing or
// truncated.
func TestUploadCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a server: skipped with -short")
	}
	testenv.Each(t, uploadCrash)
}

func uploadCrash(t *testing.T, b testenv.Backend) {
	dir := t.TempDir()
	bin := testenv.BuildBinary(t, dir)
	db := testenv.DSN(t, b)
	files := filepath.Join(dir, "files")
	args := []string{"--database", db, "--files", files, "--file-rate", "100000", "--max-upload-bytes", strconv.Itoa(8 << 20)}

	create := exec.Command(bin, append([]string{"tenant", "create", "--slug", "crash", "--admin-email", "a@crash.test", "--admin-password", "crash-password"}, args[:4]...)...)
	create.Dir = dir
	create.Env = flEnviron()
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}

	proc := flServe(t, bin, dir, args...)
	token := flCrashToken(t, proc.url)
	hc := &http.Client{Timeout: time.Minute}
	api := func(method, path string, ctype string, body io.Reader) (int, []byte, error) {
		req, err := http.NewRequest(method, proc.url+path, body)
		if err != nil {
			return 0, nil, err
		}
		req.Header.Set("companyurl", "crash")
		req.Header.Set("Authorization", "Bearer "+token)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := hc.Do(req)
		if err != nil {
			return 0, nil, err
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		return resp.StatusCode, raw, err
	}
	mustJSON := func(method, path string, body string, want int) map[string]any {
		t.Helper()
		status, raw, err := api(method, path, "application/json", strings.NewReader(body))
		if err != nil || status != want {
			t.Fatalf("%s %s: %d %s %v", method, path, status, raw, err)
		}
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		return m
	}
	project := flID(t, mustJSON(http.MethodPost, "/v1/projects", `{"name":"crash"}`, http.StatusCreated))
	const workers, perWorker = 4, 2
	records := make([]int64, workers*perWorker)
	for i := range records {
		records[i] = flID(t, mustJSON(http.MethodPost, "/v1/documents", fmt.Sprintf(`{"model":"project","record":%d,"category":7}`, project), http.StatusCreated))
	}

	// acked: the latest acknowledged (or, after a check, listed) upload of
	// each record; pending: files sent whose answer never came.
	acked := map[int64]flAttempt{}
	var seq uint64
	for round := 0; round < 3; round++ {
		pending := map[int64][]flAttempt{}
		var mu sync.Mutex
		acks := 0
		killed := make(chan struct{})
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ; n++ {
					select {
					case <-killed:
						return
					default:
					}
					rec := records[w*perWorker+n%perWorker]
					mu.Lock()
					seq++
					s := seq
					_, had := acked[rec]
					mu.Unlock()
					size := 1<<20 + int(s*7919%4)<<20 + int(s%1000)
					data := flData(1000+s, size)
					att := flAttempt{sum: flSum(data), size: int64(size)}
					var buf bytes.Buffer
					ct, _ := flMultipart(&buf, flFile{filename: fmt.Sprintf("crash %d.bin", s), data: data})
					replace := had || n >= perWorker // the first upload of a fresh record goes without delete_others
					mu.Lock()
					pending[rec] = append(pending[rec], att)
					mu.Unlock()
					status, raw, err := api(http.MethodPost, flUploadPath("document", rec, replace), ct, &buf)
					if err != nil {
						select {
						case <-killed: // the answer was lost to the crash
							return
						default:
							t.Errorf("upload before the crash: %v", err)
							return
						}
					}
					if status != http.StatusCreated {
						t.Errorf("upload to %d: %d %s", rec, status, raw)
						return
					}
					var up flUpload
					if err := json.Unmarshal(raw, &up); err != nil || up.Size != att.size {
						t.Errorf("upload answer %s: %v", raw, err)
						return
					}
					att.id = up.ID
					mu.Lock()
					pending[rec] = nil // sent one at a time per record: everything before is settled
					acked[rec] = att
					acks++
					mu.Unlock()
				}
			}()
		}
		// Kill once some uploads have been acknowledged, while others are
		// in flight.
		target := 6 + 3*round
		deadline := time.Now().Add(60 * time.Second)
		for {
			mu.Lock()
			n := acks
			mu.Unlock()
			if n >= target || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(time.Duration(round*15) * time.Millisecond)
		close(killed)
		if err := proc.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = proc.cmd.Wait()
		wg.Wait()
		if t.Failed() {
			t.Fatalf("round %d: uploads failed before the crash\n%s", round, proc.stderr.String())
		}
		mu.Lock()
		t.Logf("round %d: %d uploads acknowledged before the kill", round, acks)
		mu.Unlock()

		proc = flServe(t, bin, dir, args...)
		listed := map[int64]int64{} // upload id: size
		for _, rec := range records {
			status, raw, err := api(http.MethodGet, fmt.Sprintf("/v1/files/document/%d", rec), "", nil)
			var ups []flUpload
			if err != nil || status != http.StatusOK || json.Unmarshal(raw, &ups) != nil || len(ups) > 1 {
				t.Fatalf("round %d: list %d: %d %s %v", round, rec, status, raw, err)
			}
			last, hasAck := acked[rec]
			if len(ups) == 0 {
				if hasAck {
					t.Errorf("round %d: record %d lost its acknowledged upload %d", round, rec, last.id)
				}
				continue
			}
			up := ups[0]
			listed[up.ID] = up.Size
			// Download and compare.
			status, raw, err = api(http.MethodGet, fmt.Sprintf("/v1/files/download/%d", up.ID), "", nil)
			var link string
			if err != nil || status != http.StatusOK || json.Unmarshal(raw, &link) != nil {
				t.Fatalf("round %d: download URL %d: %d %s %v", round, up.ID, status, raw, err)
			}
			resp, err := hc.Get(link)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != http.StatusOK {
				t.Errorf("round %d: download of listed upload %d: %d %v", round, up.ID, resp.StatusCode, err)
				continue
			}
			got := flAttempt{sum: flSum(body), size: int64(len(body)), id: up.ID}
			if got.size != up.Size {
				t.Errorf("round %d: upload %d listed with %d bytes, downloads %d", round, up.ID, up.Size, got.size)
			}
			switch {
			case hasAck && up.ID == last.id:
				if got.sum != last.sum {
					t.Errorf("round %d: acknowledged upload %d downloads other bytes (%d, want %d)", round, up.ID, got.size, last.size)
				}
			case hasAck && up.ID < last.id:
				t.Errorf("round %d: record %d lists upload %d, older than the acknowledged %d", round, rec, up.ID, last.id)
			default:
				// Newer than any acknowledgement: a file whose answer was lost.
				if !slices.ContainsFunc(pending[rec], func(a flAttempt) bool { return a.sum == got.sum && a.size == got.size }) {
					t.Errorf("round %d: record %d lists upload %d (%d bytes) that matches no file sent", round, rec, up.ID, got.size)
				}
			}
			acked[rec] = got
		}
		// Every listed upload is a complete file in the folder; temporary
		// files of interrupted uploads never are.
		names := flWalk(t, files)
		var temps int
		for _, n := range names {
			if strings.HasPrefix(filepath.Base(n), ".upload-") {
				temps++
			}
		}
		for id, size := range listed {
			var hits []string
			for _, n := range names {
				if strings.HasPrefix(filepath.Base(n), fmt.Sprintf("u%d-", id)) {
					hits = append(hits, n)
				}
			}
			if len(hits) != 1 {
				t.Errorf("round %d: upload %d has files %v", round, id, hits)
				continue
			}
			st, err := os.Stat(filepath.Join(files, hits[0]))
			if err != nil || st.Size() != size {
				t.Errorf("round %d: file of upload %d (%d bytes): %v %v", round, id, size, st, err)
			}
		}
		t.Logf("round %d: %d files in the folder, %d listed, %d temporary files left by the crash", round, len(names), len(listed), temps)
		if t.Failed() {
			t.Fatalf("server log:\n%s", proc.stderr.String())
		}
	}
}

func flCrashToken(t *testing.T, base string) string {
	t.Helper()
	form := url.Values{"grant_type": {"password"}, "username": {"a@crash.test"}, "password": {"crash-password"},
		"client_id": {"crash"}, "client_secret": {"crash"}}
	req, _ := http.NewRequest(http.MethodPost, base+"/oauth2/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("companyurl", "crash")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusOK || tok.AccessToken == "" {
		t.Fatalf("token: %d %v", resp.StatusCode, err)
	}
	return tok.AccessToken
}
