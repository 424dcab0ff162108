package files_test

// Black-box tests of the file endpoints (docs/api.md "Files and uploads",
// "Errors", "Limits", "Roles") on both database engines and both file
// stores.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/files"
	"planwerk/internal/testenv"
)

// env is a running server with tenant "acme" and its signed-in admin.
type env struct {
	srv   *testenv.Server
	fb    testenv.FileBackend
	tn    testenv.Tenant
	admin *testenv.Client
}

// start runs a server on a fresh file store of fb.
func start(t *testing.T, b testenv.Backend, fb testenv.FileBackend, opts ...func(*config.Config)) *env {
	t.Helper()
	return startOn(t, b, fb, testenv.Files(t, fb), opts...)
}

// startOn runs a server on the file store spec files.
func startOn(t *testing.T, b testenv.Backend, fb testenv.FileBackend, files string, opts ...func(*config.Config)) *env {
	t.Helper()
	all := append([]func(*config.Config){func(c *config.Config) { c.Files = files }}, opts...)
	srv := testenv.Start(t, b, all...)
	e := &env{srv: srv, fb: fb, tn: srv.CreateTenant(t, "acme")}
	e.admin = srv.SignIn(t, e.tn)
	return e
}

// tenant creates another tenant and signs its admin in.
func (e *env) tenant(t *testing.T, slug string) (testenv.Tenant, *testenv.Client) {
	t.Helper()
	tn := e.srv.OtherTenant(t, slug)
	return tn, e.srv.SignIn(t, tn)
}

// used is the tenant's storage use as the service counts it.
func (e *env) used(t *testing.T, tenantID int64) int64 {
	t.Helper()
	n, err := files.NewTables(e.srv.Service.DB).StorageUsed(context.Background(), nil, tenantID, 0)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// wantUsed checks the storage use of acme.
func (e *env) wantUsed(t *testing.T, what string, want int64) {
	t.Helper()
	if got := e.used(t, e.tn.ID); got != want {
		t.Errorf("%s: storage used %d, want %d", what, got, want)
	}
}

// stored lists the files of the folder store (nil for S3).
func (e *env) stored(t *testing.T) []string {
	t.Helper()
	if e.fb.Name != "folder" {
		return nil
	}
	return walk(t, e.srv.Config.Files)
}

// walk lists the files below root, sorted.
func walk(t *testing.T, root string) []string {
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

// upload is the JSON of an upload.
type upload struct {
	ID          int64  `json:"id"`
	Filename    string `json:"filename"`
	Model       string `json:"model"`
	Record      int64  `json:"record"`
	Size        int64  `json:"size"`
	ContentType string `json:"contentType"`
	CreatedAt   string `json:"createdAt"`
}

var timestampRE = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$`)

// send uploads one part to a record.
func send(t *testing.T, c *testenv.Client, model string, record int64, replace bool, p testenv.Part) (int, []byte) {
	t.Helper()
	status, _, raw := c.Upload(t, testenv.UploadPath(model, record, replace), p)
	return status, raw
}

// uploadOK uploads a part that must be accepted, and checks the answer.
func uploadOK(t *testing.T, c *testenv.Client, model string, record int64, replace bool, p testenv.Part) upload {
	t.Helper()
	status, raw := send(t, c, model, record, replace, p)
	if status != http.StatusCreated {
		t.Fatalf("upload to %s %d: %d %s", model, record, status, raw)
	}
	return checkUpload(t, raw, model, record, int64(len(p.Data)))
}

// checkUpload checks an upload answer has exactly the upload's fields,
// describes a file of size bytes on the record, and returns it.
func checkUpload(t *testing.T, raw []byte, model string, record, size int64) upload {
	t.Helper()
	var m testenv.M
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
	var up upload
	if err := json.Unmarshal(raw, &up); err != nil {
		t.Fatalf("upload answer %s: %v", raw, err)
	}
	if up.ID <= 0 || up.Model != model || up.Record != record || up.Size != size || up.Filename == "" ||
		up.ContentType == "" || !timestampRE.MatchString(up.CreatedAt) {
		t.Errorf("upload %+v, want model %s record %d size %d", up, model, record, size)
	}
	if up.ID == record {
		t.Errorf("upload id %d equals the record id", up.ID)
	}
	return up
}

// uploads lists the uploads of a record: at most one.
func uploads(t *testing.T, c *testenv.Client, model string, record int64) []upload {
	t.Helper()
	path := fmt.Sprintf("/v1/files/%s/%d", model, record)
	status, _, raw := c.Send(t, http.MethodGet, path, nil)
	var ups []upload
	if status != http.StatusOK || json.Unmarshal(raw, &ups) != nil || ups == nil {
		t.Fatalf("GET %s: %d, not a JSON array: %q", path, status, raw)
	}
	if len(ups) > 1 {
		t.Fatalf("GET %s: %d uploads, a record holds at most one", path, len(ups))
	}
	return ups
}

// wantUploads checks that a record's uploads are exactly ids.
func wantUploads(t *testing.T, c *testenv.Client, model string, record int64, ids ...int64) {
	t.Helper()
	var got []int64
	for _, up := range uploads(t, c, model, record) {
		got = append(got, up.ID)
	}
	if !slices.Equal(got, ids) {
		t.Fatalf("uploads of %s %d: %v, want %v", model, record, got, ids)
	}
}

// file is a part named "file" of the filename and bytes.
func file(name string, data []byte) testenv.Part {
	return testenv.Part{Filename: name, Data: data}
}

func filePath(id int64) string { return fmt.Sprintf("/v1/files/%d", id) }

func downloadPath(id int64) string { return fmt.Sprintf("/v1/files/download/%d", id) }

// TestUploadLifecycle: upload, list, the one-file rule, replacement,
// deletes of the upload and of its Document.
func TestUploadLifecycle(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const maxUpload = 64 << 10
		e := start(t, b, fb, func(c *config.Config) { c.MaxUploadBytes = maxUpload })
		admin := e.admin
		_, doc := admin.Document(t)
		_, empty := admin.Document(t)

		first := testenv.Data(10, 1000)
		up1 := uploadOK(t, admin, "document", doc, false, testenv.Part{Filename: "Angebot Nr. 1-2.pdf", ContentType: "application/pdf", Data: first})
		if up1.Filename != "AngebotNr.12.pdf" || up1.ContentType != "application/pdf" {
			t.Errorf("upload %+v", up1)
		}
		if got := uploads(t, admin, "document", doc); len(got) != 1 || got[0] != up1 {
			t.Errorf("list %+v, want [%+v]", got, up1)
		}
		wantUploads(t, admin, "document", empty)
		if got := admin.Download(t, up1.ID); !bytes.Equal(got, first) {
			t.Error("download: wrong bytes")
		}
		e.wantUsed(t, "first upload", 1000)

		// One file per record.
		for _, path := range []string{testenv.UploadPath("document", doc, false), testenv.UploadPath("document", doc, false) + "?delete_others=0"} {
			status, _, raw := admin.Upload(t, path, file("second.pdf", testenv.Data(11, 10)))
			m := testenv.WantError(t, "second upload", status, raw, http.StatusForbidden, "")
			if m["message"] != "too many uploads" {
				t.Errorf("second upload message %q, want exactly \"too many uploads\"", m["message"])
			}
		}
		wantUploads(t, admin, "document", doc, up1.ID)

		// Replacement.
		oldLink := admin.DownloadURL(t, up1.ID)
		second := testenv.Data(12, 2000)
		up2 := uploadOK(t, admin, "document", doc, true, testenv.Part{Filename: "neu.pdf", ContentType: "application/pdf", Data: second})
		if up2.ID == up1.ID {
			t.Fatal("replacement kept the upload id")
		}
		wantUploads(t, admin, "document", doc, up2.ID)
		admin.Fail(t, http.MethodGet, downloadPath(up1.ID), nil, http.StatusNotFound, "not_found")
		admin.Fail(t, http.MethodDelete, filePath(up1.ID), nil, http.StatusNotFound, "not_found")
		if status, _, _ := testenv.Fetch(t, http.MethodGet, oldLink); status == http.StatusOK {
			t.Errorf("signed URL of the replaced upload still answers %d", status)
		}
		if got := admin.Download(t, up2.ID); !bytes.Equal(got, second) {
			t.Error("download of the replacement: wrong bytes")
		}
		e.wantUsed(t, "after replacement", 2000)

		// A failed replacement keeps the old file.
		before := e.stored(t)
		status, raw := send(t, admin, "document", doc, true, file("big.pdf", testenv.Data(13, maxUpload+1)))
		testenv.WantError(t, "over-cap replacement", status, raw, http.StatusForbidden, "file_too_large")
		wantUploads(t, admin, "document", doc, up2.ID)
		if got := admin.Download(t, up2.ID); !bytes.Equal(got, second) {
			t.Error("download after a failed replacement: wrong bytes")
		}
		if after := e.stored(t); !slices.Equal(before, after) {
			t.Errorf("stored files changed by a refused upload: %v -> %v", before, after)
		}
		e.wantUsed(t, "after a refused replacement", 2000)

		// delete_others=true is taken as well.
		third := testenv.Data(14, 30)
		status, _, raw = admin.Upload(t, fmt.Sprintf("/v1/files/upload/document/%d?delete_others=true", doc), testenv.Part{Filename: "drei.txt", ContentType: "text/plain", Data: third})
		if status != http.StatusCreated {
			t.Fatalf("delete_others=true: %d %s", status, raw)
		}
		up3 := checkUpload(t, raw, "document", doc, 30)
		wantUploads(t, admin, "document", doc, up3.ID)

		// Deleting the upload leaves the Document.
		got := admin.Object(t, http.MethodDelete, filePath(up3.ID), nil, http.StatusOK)
		if testenv.ID(t, got) != up3.ID || got["filename"] != "drei.txt" || got["record"] != float64(doc) {
			t.Errorf("deleted upload %v", got)
		}
		wantUploads(t, admin, "document", doc)
		admin.Get(t, "documents", doc)
		admin.Fail(t, http.MethodGet, downloadPath(up3.ID), nil, http.StatusNotFound, "not_found")
		admin.Fail(t, http.MethodDelete, filePath(up3.ID), nil, http.StatusNotFound, "not_found")
		e.wantUsed(t, "after delete", 0)
		if fb.Name == "folder" && len(e.stored(t)) != 0 {
			t.Errorf("files left in the folder: %v", e.stored(t))
		}
		// With the file gone, a plain upload is accepted again.
		fourth := testenv.Data(15, 400)
		up4 := uploadOK(t, admin, "document", doc, false, file("vier.txt", fourth))

		// Deleting the Document leaves its upload (docs/api.md "Upload
		// flow": the upload is not removed with its record).
		admin.Object(t, http.MethodDelete, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusOK)
		admin.Fail(t, http.MethodGet, fmt.Sprintf("/v1/documents/%d", doc), nil, http.StatusNotFound, "not_found")
		if got := admin.Download(t, up4.ID); !bytes.Equal(got, fourth) {
			t.Error("upload of a deleted Document: wrong bytes")
		}
		e.wantUsed(t, "upload of a deleted Document", 400)
		admin.Object(t, http.MethodDelete, filePath(up4.ID), nil, http.StatusOK)
		e.wantUsed(t, "after the last delete", 0)
	})
}

// TestUploadFilenames: docs/api.md "Stored filenames" through the API, and
// the filename of downloads.
func TestUploadFilenames(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		admin := start(t, b, fb).admin
		_, doc := admin.Document(t)
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
			data := testenv.Data(uint64(100+i), 10+i)
			up := uploadOK(t, admin, "document", doc, true, testenv.Part{Filename: c.name, Disposition: c.disposition, Data: data})
			if up.Filename != c.want {
				t.Errorf("filename %q (%s): stored %q, want %q", c.name, c.disposition, up.Filename, c.want)
			}
			if got := uploads(t, admin, "document", doc); len(got) != 1 || got[0].Filename != c.want {
				t.Errorf("listed %+v", got)
			}
		}
		// The download names the stored file: ASCII plainly, others with
		// RFC 6266 filename* as well.
		for _, c := range []struct{ name, stored string }{
			{"Prüfbericht März.txt", "PrüfberichtMärz.txt"},
			{"plain-name.bin", "plainname.bin"},
		} {
			data := testenv.Data(200, 77)
			up := uploadOK(t, admin, "document", doc, true, testenv.Part{Filename: c.name, ContentType: "text/plain; charset=utf-8", Data: data})
			status, hdr, raw := testenv.Fetch(t, http.MethodGet, admin.DownloadURL(t, up.ID))
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
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		e := start(t, b, fb)
		admin := e.admin
		member := admin.Member(t, "member@acme.test")
		own := testenv.ID(t, member.Create(t, "expenses", testenv.M{"amount": 12.5}))
		theirs := testenv.ID(t, admin.Create(t, "expenses", testenv.M{"amount": 99}))
		_, projDoc := admin.Document(t)
		userDoc := testenv.ID(t, admin.Create(t, "documents", testenv.M{"model": "user", "record": member.UserID, "category": 1, "visibleToUser": true}))

		d1 := testenv.Data(30, 500)
		up1 := uploadOK(t, member, "expense", own, false, testenv.Part{Filename: "Beleg 1.jpg", ContentType: "image/jpeg", Data: d1})
		if up1.Filename != "Beleg1.jpg" {
			t.Errorf("filename %q", up1.Filename)
		}
		status, raw := send(t, member, "expense", own, false, file("b.jpg", d1))
		if m := testenv.WantError(t, "second expense file", status, raw, http.StatusForbidden, ""); m["message"] != "too many uploads" {
			t.Errorf("message %q", m["message"])
		}
		d2 := testenv.Data(31, 600)
		up2 := uploadOK(t, member, "expense", own, true, file("b.jpg", d2))
		wantUploads(t, member, "expense", own, up2.ID)
		if got := member.Download(t, up2.ID); !bytes.Equal(got, d2) {
			t.Error("member's download: wrong bytes")
		}

		// Not another's expense, not Documents.
		for _, c := range []struct {
			model  string
			record int64
		}{{"expense", theirs}, {"document", projDoc}, {"document", userDoc}} {
			status, raw := send(t, member, c.model, c.record, true, file("x", d1))
			testenv.WantError(t, "member upload to "+c.model, status, raw, http.StatusForbidden, "forbidden")
			wantUploads(t, admin, c.model, c.record)
		}
		e.wantUsed(t, "after the member's uploads", 600)

		// The admin may attach to any expense; the member reads it but may
		// not delete it.
		d3 := testenv.Data(32, 700)
		up3 := uploadOK(t, admin, "expense", theirs, false, file("admin.pdf", d3))
		wantUploads(t, member, "expense", theirs, up3.ID)
		if got := member.Download(t, up3.ID); !bytes.Equal(got, d3) {
			t.Error("member's download of the admin's file: wrong bytes")
		}
		member.Fail(t, http.MethodDelete, filePath(up3.ID), nil, http.StatusForbidden, "forbidden")
		wantUploads(t, admin, "expense", theirs, up3.ID)
		// ...and replace the member's file.
		d4 := testenv.Data(33, 50)
		up4 := uploadOK(t, admin, "expense", own, true, file("by admin.txt", d4))
		wantUploads(t, member, "expense", own, up4.ID)

		// The member deletes the file of their expense; the expense stays.
		member.Object(t, http.MethodDelete, filePath(up4.ID), nil, http.StatusOK)
		wantUploads(t, member, "expense", own)
		member.Get(t, "expenses", own)
		e.wantUsed(t, "after the member's delete", 700)
	})
}

// TestUploadErrors: docs/api.md "Errors" for the file operations.
func TestUploadErrors(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		e := start(t, b, fb)
		admin := e.admin
		project, doc := admin.Document(t)
		data := testenv.Data(70, 256)
		up := uploadOK(t, admin, "document", doc, false, file("keep.txt", data))
		_, beta := e.tenant(t, "beta")
		_, betaDoc := beta.Document(t)
		betaUp := uploadOK(t, beta, "document", betaDoc, false, file("beta.txt", testenv.Data(71, 10)))
		_, empty := admin.Document(t)
		uploadPath := testenv.UploadPath("document", empty, true)

		t.Run("400", func(t *testing.T) {
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
				req := admin.Request(t, http.MethodPost, uploadPath, c.body)
				req.Header.Del("Content-Type")
				if c.ctype != "" {
					req.Header.Set("Content-Type", c.ctype)
				}
				status, _, raw := testenv.Do(t, req)
				testenv.WantError(t, c.name, status, raw, http.StatusBadRequest, "")
			}
			status, _, raw := admin.Upload(t, uploadPath, testenv.Part{Field: "attachment", Filename: "a.txt", Data: data})
			testenv.WantError(t, "no part named file", status, raw, http.StatusBadRequest, "")
			status, _, raw = admin.Upload(t, uploadPath, testenv.Part{Field: "note", Data: []byte("x")}, testenv.Part{Field: "files", Filename: "a.txt", Data: data})
			testenv.WantError(t, "parts named otherwise", status, raw, http.StatusBadRequest, "")
			wantUploads(t, admin, "document", empty)
			// A file part after another part is found.
			status, _, raw = admin.Upload(t, uploadPath, testenv.Part{Field: "note", Data: []byte("x")}, file("late.txt", data))
			if status != http.StatusCreated {
				t.Fatalf("file part after a note: %d %s", status, raw)
			}
		})

		t.Run("401", func(t *testing.T) {
			for _, token := range []string{"", "pwa_unknown"} {
				anon := &testenv.Client{Srv: e.srv, Slug: e.tn.Slug, Token: token}
				for _, c := range []struct{ method, path string }{
					{http.MethodPost, testenv.UploadPath("document", doc, true)},
					{http.MethodGet, fmt.Sprintf("/v1/files/document/%d", doc)},
					{http.MethodGet, downloadPath(up.ID)},
					{http.MethodDelete, filePath(up.ID)},
				} {
					var status int
					var hdr http.Header
					var raw []byte
					if c.method == http.MethodPost {
						status, hdr, raw = anon.Upload(t, c.path, file("x", data))
					} else {
						status, hdr, raw = testenv.Do(t, anon.Request(t, c.method, c.path, nil))
					}
					testenv.WantError(t, c.method+" "+c.path, status, raw, http.StatusUnauthorized, "unauthorized")
					if !strings.HasPrefix(hdr.Get("WWW-Authenticate"), "Bearer") {
						t.Errorf("%s %s: WWW-Authenticate %q", c.method, c.path, hdr.Get("WWW-Authenticate"))
					}
				}
			}
			wantUploads(t, admin, "document", doc, up.ID)
		})

		t.Run("404", func(t *testing.T) {
			for _, c := range []struct {
				name, model, record string
			}{
				{"unknown record", "document", "999999"},
				{"another tenant's document", "document", strconv.FormatInt(betaDoc, 10)},
				{"unknown expense", "expense", "999999"},
				{"a document id as an expense", "expense", strconv.FormatInt(doc, 10)},
				{"model project", "project", strconv.FormatInt(project, 10)},
				{"model user", "user", strconv.FormatInt(admin.UserID, 10)},
				{"model documents", "documents", strconv.FormatInt(doc, 10)},
				{"model Document", "Document", strconv.FormatInt(doc, 10)},
				{"record not a number", "document", "abc"},
				{"record zero", "document", "0"},
				{"record negative", "document", "-1"},
			} {
				status, _, raw := admin.Upload(t, "/v1/files/upload/"+c.model+"/"+c.record+"?delete_others=1", file("x", data))
				testenv.WantError(t, "upload: "+c.name, status, raw, http.StatusNotFound, "not_found")
				admin.Fail(t, http.MethodGet, "/v1/files/"+c.model+"/"+c.record, nil, http.StatusNotFound, "not_found")
			}
			for _, c := range []struct{ name, id string }{
				{"unknown upload", "999999"},
				{"another tenant's upload", strconv.FormatInt(betaUp.ID, 10)},
				{"a record id", strconv.FormatInt(doc, 10)},
				{"not a number", "abc"},
			} {
				admin.Fail(t, http.MethodGet, "/v1/files/download/"+c.id, nil, http.StatusNotFound, "not_found")
				admin.Fail(t, http.MethodDelete, "/v1/files/"+c.id, nil, http.StatusNotFound, "not_found")
			}
			// Nothing changed on either side.
			wantUploads(t, admin, "document", doc, up.ID)
			admin.Get(t, "documents", doc)
			wantUploads(t, beta, "document", betaDoc, betaUp.ID)
			if got := beta.Download(t, betaUp.ID); !bytes.Equal(got, testenv.Data(71, 10)) {
				t.Error("beta's file changed")
			}
			if got := admin.Download(t, up.ID); !bytes.Equal(got, data) {
				t.Error("acme's file changed")
			}
		})
	})
}
