package files_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// TestSweep: temporary files and files no upload names go once they are
// old; young files and referenced ones stay.
func TestSweep(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "sweep")
		ctx := context.Background()
		root := srv.Config.Files
		write := func(rel string, age time.Duration) string {
			p := filepath.Join(root, filepath.FromSlash(rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o750); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-age)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
			return p
		}
		oldTemp := write("t1/.upload-123", 2*time.Hour)
		youngTemp := write("t1/.upload-456", time.Minute)
		orphan := write("t1/u99-abc", 2*time.Hour)
		foreign := write("notes/readme.txt", 2*time.Hour)

		// A real upload, made old, stays: a row names it.
		svc := srv.Service
		up := uploadFile(t, srv, tn)
		var kept string
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.Contains(p, "/u"+up+"-") {
				kept = p
			}
			return nil
		})
		if kept == "" {
			t.Fatal("uploaded file not found in the folder")
		}
		old := time.Now().Add(-3 * time.Hour)
		_ = os.Chtimes(kept, old, old)

		n, err := svc.Uploads.Sweep(ctx, time.Now().Add(-time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("swept %d files, want 2", n)
		}
		for _, p := range []string{oldTemp, orphan} {
			if _, err := os.Stat(p); !os.IsNotExist(err) {
				t.Errorf("%s still there", p)
			}
		}
		for _, p := range []string{youngTemp, foreign, kept} {
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s removed: %v", p, err)
			}
		}
	})
}

// TestSweepS3: on S3, files no upload names and unfinished multipart
// uploads go once they are old; young ones, referenced files and keys
// that are not Planwerk's stay. S3 times cannot be set back, so the test
// waits until a cutoff lies between its old and young ones.
func TestSweepS3(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		spec := testenv.S3(t)
		srv := testenv.Start(t, b, func(c *config.Config) { c.Files = spec })
		tn := srv.CreateTenant(t, "sweep")
		core, bucket := testenv.S3Client(t, spec)
		ctx := context.Background()
		object := func(key string) {
			if _, err := core.Client.PutObject(ctx, bucket, key, strings.NewReader("x"), 1, minio.PutObjectOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// An unfinished upload holding a part, as one cut off midway does.
		unfinished := func(key string) {
			id, err := core.NewMultipartUpload(ctx, bucket, key, minio.PutObjectOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := core.PutObjectPart(ctx, bucket, key, id, 1, strings.NewReader("part"), 4, minio.PutObjectPartOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		own := func(name string) string { return fmt.Sprintf("t%d/%s", tn.ID, name) }
		object(own("u900-orphan"))
		unfinished(own("u901-cut"))
		unfinished("backups/old.tar")
		uploadFile(t, srv, tn)
		// S3 times are whole seconds, and versitygw's may read a second
		// early: the cutoff is at least a second after the old ones were
		// written, and the young ones a second after it.
		cutoff := time.Now().Truncate(time.Second).Add(2 * time.Second)
		time.Sleep(time.Until(cutoff.Add(time.Second)))
		object(own("u902-young"))
		unfinished(own("u903-young"))

		n, err := srv.Service.Uploads.Sweep(ctx, cutoff)
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("swept %d, want 2: the orphan and the unfinished upload", n)
		}
		var objects, uploads []string
		for obj := range core.Client.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true}) {
			objects = append(objects, obj.Key)
		}
		for u := range core.Client.ListIncompleteUploads(ctx, bucket, "", true) {
			uploads = append(uploads, u.Key)
		}
		if slices.Contains(objects, own("u900-orphan")) || !slices.Contains(objects, own("u902-young")) || len(objects) != 2 {
			t.Errorf("objects left %v, want the uploaded file and %s", objects, own("u902-young"))
		}
		slices.Sort(uploads)
		if want := []string{"backups/old.tar", own("u903-young")}; !slices.Equal(uploads, want) {
			t.Errorf("unfinished uploads left %v, want %v", uploads, want)
		}
	})
}

// uploadFile uploads a small file to a new project document as the
// tenant's admin and returns the upload id.
func uploadFile(t *testing.T, srv *testenv.Server, tn testenv.Tenant) string {
	t.Helper()
	c := srv.SignIn(t, tn)
	_, doc := c.Document(t)
	path := testenv.UploadPath("document", doc, false)
	status, _, raw := c.Upload(t, path, testenv.Part{Filename: "kept.txt", Data: []byte("kept")})
	if status >= 300 {
		t.Fatalf("POST %s: %d %s", path, status, raw)
	}
	var up struct {
		ID int64 `json:"id"`
	}
	if err := json.Unmarshal(raw, &up); err != nil || up.ID <= 0 {
		t.Fatalf("POST %s: answer %s", path, raw)
	}
	return fmt.Sprint(up.ID)
}
