package httpapi_test

// Account exports (docs/api.md "Account exports"): an admin asks for an
// export of the tenant's data, which is made in the background, one at
// a time per tenant; once done, a signed link valid 30 seconds fetches an
// archive whose SHA-256 and size GET tells, holding the tenant's data and
// no password hash or secret; members may not; the archive goes after a
// day.

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

func TestAccountExport(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) {
			c.WebhookAllowPrivate = true
			c.TenantCacheTTL = time.Microsecond // a suspension shows at once
		})
		tn := srv.CreateTenant(t, "exporting")
		admin := srv.SignIn(t, tn)
		member := admin.Member(t, "member@exporting.test")
		other := srv.SignIn(t, srv.OtherTenant(t, "not-exported"))
		other.Create(t, "projects", testenv.M{"name": "Other tenant's project"})

		project := admin.Create(t, "projects", testenv.M{"name": "Exported project"})
		_, doc := admin.Document(t)
		bytesOfFile := testenv.Data(7, 100_000)
		admin.UploadFile(t, "document", doc, testenv.Part{Filename: "plan.pdf", Data: bytesOfFile})
		client := admin.APIClient(t, "sync", tn.AdminID, "read")
		hook := admin.Object(t, http.MethodPost, "/v1/webhooks", testenv.M{"url": "http://127.0.0.1:9/hook"}, http.StatusCreated)
		// The secrets as the database holds them, and as text in the
		// encodings an archive might use.
		var secrets []string
		for _, q := range []string{`SELECT password_hash FROM users WHERE tenant_id = $1`, `SELECT secret_hash FROM api_clients WHERE tenant_id = $1`,
			`SELECT secret FROM webhooks WHERE tenant_id = $1`} {
			rows, err := srv.Service.DB.QueryContext(context.Background(), q, tn.ID)
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var v []byte
				if err := rows.Scan(&v); err != nil {
					t.Fatal(err)
				}
				secrets = append(secrets, string(v), hex.EncodeToString(v), base64.StdEncoding.EncodeToString(v), base64.RawURLEncoding.EncodeToString(v))
			}
			rows.Close()
		}
		if len(secrets) < 12 {
			t.Fatalf("found %d secrets' encodings, want those of 2 users, an API client and a webhook", len(secrets))
		}
		secrets = append(secrets, client["clientSecret"].(string), hook["secret"].(string), tn.Password)

		member.Fail(t, http.MethodPost, "/v1/account/exports", nil, http.StatusForbidden, "forbidden")
		started := admin.Object(t, http.MethodPost, "/v1/account/exports", nil, http.StatusAccepted)
		if started["status"] != "pending" {
			t.Fatalf("a new export is %v, want pending", started["status"])
		}
		id := testenv.ID(t, started)
		path := "/v1/account/exports/" + strconv.FormatInt(id, 10)
		member.Fail(t, http.MethodGet, path, nil, http.StatusForbidden, "forbidden")
		other.Fail(t, http.MethodGet, path, nil, http.StatusNotFound, "not_found")

		// A second export while the first is pending or running: refused.
		// The first may be done already on a fast machine, then the second
		// is allowed; only a refusal of the right kind is checked.
		made, secondPath := 1, ""
		switch status, _, raw := admin.Send(t, http.MethodPost, "/v1/account/exports", nil); status {
		case http.StatusConflict:
			testenv.WantError(t, "second export", status, raw, http.StatusConflict, "export_in_progress")
		case http.StatusAccepted:
			var second testenv.M
			testenv.DecodeInto(t, raw, &second)
			secondPath = "/v1/account/exports/" + strconv.FormatInt(testenv.ID(t, second), 10)
			made = 2
		default:
			t.Fatalf("second export: %d %s", status, raw)
		}

		e := waitExport(t, admin, path)
		if e["status"] != "done" {
			t.Fatalf("export ended %v", e)
		}
		status, hdr, archive := testenv.Fetch(t, http.MethodGet, e["url"].(string))
		if status != http.StatusOK {
			t.Fatalf("download: %d %s", status, archive)
		}
		if hdr.Get("Cache-Control") != "private, no-store" {
			t.Errorf("download Cache-Control %q", hdr.Get("Cache-Control"))
		}
		sum := sha256.Sum256(archive)
		if hex.EncodeToString(sum[:]) != e["sha256"] || int64(len(archive)) != testenv.Num(e["size"]) {
			t.Errorf("archive of %d bytes, SHA-256 %x; GET said %v bytes, %v", len(archive), sum, e["size"], e["sha256"])
		}
		members := untar(t, archive)
		all := bytes.Join(mapValues(members), nil)
		for _, s := range secrets {
			if bytes.Contains(all, []byte(s)) {
				t.Errorf("the archive holds a secret or password hash (%.12s…)", s)
			}
		}
		for _, want := range [][]byte{[]byte("Exported project"), bytesOfFile} {
			if !bytes.Contains(all, want) {
				t.Errorf("the archive lacks %.20q", want)
			}
		}
		if bytes.Contains(all, []byte("Other tenant's project")) {
			t.Error("the archive holds another tenant's record")
		}
		_ = project

		// A tampered or expired link is refused.
		tampered := strings.Replace(e["url"].(string), "signature=", "signature=x", 1)
		if status, _, _ := testenv.Fetch(t, http.MethodGet, tampered); status != http.StatusForbidden {
			t.Errorf("tampered link: %d, want 403", status)
		}

		// An archive no export names (its instance stopped before recording
		// it) is swept once it is old; the export's own stays, and so does a
		// file of another form.
		ctx := context.Background()
		if secondPath != "" {
			// Done first: the sweep would take the archive of an export
			// still running for an orphan.
			if e := waitExport(t, admin, secondPath); e["status"] != "done" {
				t.Fatalf("the second export ended %v", e)
			}
		}
		orphan := fmt.Sprintf("exports/t%d/999999-0000.tar.zst", tn.ID)
		for _, key := range []string{orphan, "exports/notes.txt"} {
			if _, err := srv.Service.Files.Put(ctx, key, strings.NewReader("left")); err != nil {
				t.Fatal(err)
			}
		}
		if n, err := srv.Service.Exports.Sweep(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
			t.Errorf("sweep: %d removed, %v; want the orphan alone", n, err)
		}
		if status, _, _ := testenv.Fetch(t, http.MethodGet, e["url"].(string)); status != http.StatusOK {
			t.Errorf("the export's archive after the sweep: %d", status)
		}
		if rc, _, err := srv.Service.Files.Open(ctx, "exports/notes.txt"); err != nil {
			t.Errorf("the sweep touched a file of another form: %v", err)
		} else {
			rc.Close()
		}

		// A suspended tenant's link is refused as its requests are.
		if _, err := srv.Service.DB.SetTenantState(ctx, tn.Slug, "suspended", "active"); err != nil {
			t.Fatal(err)
		}
		status, _, raw := testenv.Fetch(t, http.MethodGet, e["url"].(string))
		testenv.WantError(t, "link of a suspended tenant", status, raw, http.StatusForbidden, "tenant_suspended")
		if _, err := srv.Service.DB.SetTenantState(ctx, tn.Slug, "active", "suspended"); err != nil {
			t.Fatal(err)
		}

		// After a day the export and its archive are gone.
		n, err := srv.Service.Exports.Purge(context.Background(), time.Now().Add(25*time.Hour))
		if err != nil || n != made {
			t.Fatalf("purge: %d removed, %v; want %d", n, err, made)
		}
		admin.Fail(t, http.MethodGet, path, nil, http.StatusNotFound, "not_found")
		if status, _, _ := testenv.Fetch(t, http.MethodGet, e["url"].(string)); status != http.StatusNotFound {
			t.Errorf("link of a purged export: %d, want 404", status)
		}
	})
}

// waitExport reads the export until it is done or failed.
func waitExport(t *testing.T, c *testenv.Client, path string) testenv.M {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		e := c.Object(t, http.MethodGet, path, nil, http.StatusOK)
		if s := e["status"]; s == "done" || s == "failed" {
			return e
		}
		if time.Now().After(deadline) {
			t.Fatalf("export still %v after 2 minutes", e["status"])
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// untar returns the members of a zstd-compressed tar archive.
func untar(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(archive))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	out := map[string][]byte{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("archive: %v", err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		out[h.Name] = b
	}
}

func mapValues(m map[string][]byte) [][]byte {
	out := make([][]byte, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	return out
}
