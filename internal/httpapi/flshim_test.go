package httpapi_test

// What TestStreamsOutlastDeadline takes from the file tests, which live
// in internal/files: a server with tenant "acme" and its signed-in admin,
// and an upload to a Document.

import (
	"encoding/json"
	"net/http"
	"testing"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// flEnv is a running server with tenant "acme" and its signed-in admin.
type flEnv struct {
	srv   *testenv.Server
	tn    testenv.Tenant
	admin *flUser
}

// flUser is the admin of flEnv, for the test that holds it.
type flUser struct {
	t     *testing.T
	c     *testenv.Client
	token string
}

// flFile is a file to upload.
type flFile struct {
	filename string
	data     []byte
}

var (
	flData       = testenv.Data
	flUploadPath = testenv.UploadPath
)

// flStart starts a server on a fresh file store of fb.
func flStart(t *testing.T, b testenv.Backend, fb testenv.FileBackend, opts ...func(*config.Config)) *flEnv {
	t.Helper()
	srv := testenv.Start(t, b, append([]func(*config.Config){func(c *config.Config) { c.Files = testenv.Files(t, fb) }}, opts...)...)
	tn := srv.CreateTenant(t, "acme")
	c := srv.SignIn(t, tn)
	return &flEnv{srv: srv, tn: tn, admin: &flUser{t: t, c: c, token: c.Token}}
}

// flDocument creates a project and a project Document on it.
func flDocument(u *flUser) (project, doc int64) {
	u.t.Helper()
	return u.c.Document(u.t)
}

// uploadOK uploads a file that must be accepted.
func (u *flUser) uploadOK(model string, record int64, replace bool, f flFile) (up struct{ ID int64 }) {
	u.t.Helper()
	status, _, raw := u.c.Upload(u.t, flUploadPath(model, record, replace), testenv.Part{Filename: f.filename, Data: f.data})
	if status != http.StatusCreated || json.Unmarshal(raw, &up) != nil {
		u.t.Fatalf("upload to %s %d: %d %s", model, record, status, raw)
	}
	return up
}

// downloadURL asks for the signed URL of an upload.
func (u *flUser) downloadURL(id int64) string {
	u.t.Helper()
	return u.c.DownloadURL(u.t, id)
}
