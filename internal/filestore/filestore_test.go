package filestore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"planwerk/internal/fault"
	"planwerk/internal/filestore"
	"planwerk/internal/testenv"
)

// bigFile is more than one part: it goes as a multipart upload.
const bigFile = 20 << 20

func open(t *testing.T, spec string) filestore.Store {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	fs, err := filestore.Open(ctx, spec)
	if err != nil {
		t.Fatalf("open %s: %v", spec, err)
	}
	return fs
}

// s3Behind opens an S3 store reached through a fault proxy; it returns
// the spec of the server itself, for looking behind the store's back.
func s3Behind(t *testing.T) (filestore.Store, *testenv.Proxy, string) {
	t.Helper()
	spec, addr := testenv.S3Endpoint(t)
	p := testenv.NewProxy(t, addr)
	return open(t, testenv.S3Via(t, spec, p.Addr)), p, spec
}

// stream yields size zero bytes, then fails with err (io.EOF when nil);
// eager: err comes with the last bytes, as the size cap's reader does.
// When it has yielded mark bytes (mark > 0), it calls at, once.
type stream struct {
	size, mark, n int64
	err           error
	eager         bool
	at            func()
}

func (s *stream) Read(p []byte) (int, error) {
	if s.n >= s.size {
		if s.err != nil {
			return 0, s.err
		}
		return 0, io.EOF
	}
	p = p[:min(int64(len(p)), s.size-s.n)]
	if s.at != nil && s.mark > s.n {
		p = p[:min(int64(len(p)), s.mark-s.n)]
	}
	clear(p)
	s.n += int64(len(p))
	if s.at != nil && s.n >= s.mark {
		at := s.at
		s.at = nil
		at()
	}
	if s.eager && s.n >= s.size && s.err != nil {
		return len(p), s.err
	}
	return len(p), nil
}

// timed runs fn and fails the test when it takes longer than limit.
func timed(t *testing.T, what string, limit time.Duration, fn func()) time.Duration {
	t.Helper()
	start := time.Now()
	fn()
	took := time.Since(start)
	t.Logf("%s: %s", what, took.Round(time.Millisecond))
	if took > limit {
		t.Errorf("%s took %s, more than %s", what, took, limit)
	}
	return took
}

// wantFault fails unless err marks the file store as full (full) or as
// unavailable.
func wantFault(t *testing.T, what string, err error, full bool) {
	t.Helper()
	f, ok := fault.As(err)
	switch {
	case !ok:
		t.Errorf("%s: %v, want a file store fault", what, err)
	case f.Part != fault.FileStore || f.Full != full:
		t.Errorf("%s: %v (part %q, full %v), want full=%v of the file store", what, err, f.Part, f.Full, full)
	}
}

// wantOwn fails unless err is want itself, unmarked: an error of the
// caller's reader.
func wantOwn(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
	if _, marked := fault.As(err); marked {
		t.Errorf("%s: %v is marked as a fault of the store", what, err)
	}
}

// withTimeout is a context that ends after d; 0: one that never ends.
func withTimeout(t *testing.T, d time.Duration) context.Context {
	if d == 0 {
		return context.Background()
	}
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

func put(t *testing.T, fs filestore.Store, key string, r io.Reader) {
	t.Helper()
	if _, err := fs.Put(withTimeout(t, 30*time.Second), key, r); err != nil {
		t.Fatalf("put %s: %v", key, err)
	}
}

// wantNothingLeft fails when the bucket holds key, or an unfinished
// upload of it once a failed upload's abort has had its time.
func wantNothingLeft(t *testing.T, spec, key string) {
	t.Helper()
	core, bucket := testenv.S3Client(t, spec)
	ctx := withTimeout(t, 30*time.Second)
	deadline := time.Now().Add(15 * time.Second)
	for {
		res, err := core.ListMultipartUploads(ctx, bucket, key, "", "", "", 100)
		if err != nil {
			t.Fatalf("list multipart uploads: %v", err)
		}
		if len(res.Uploads) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("unfinished upload %s of %s left behind", res.Uploads[0].UploadID, key)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err := core.StatObject(ctx, bucket, key, minio.StatObjectOptions{})
	if code := minio.ToErrorResponse(err).Code; code != "NoSuchKey" {
		t.Errorf("stat %s: %v (%s), want NoSuchKey", key, err, code)
	}
}

// TestS3PutReaderFails: a reader failing halfway, before the first part
// or after some were sent, ends Put with the reader's own error and
// leaves neither object nor unfinished upload.
func TestS3PutReaderFails(t *testing.T) {
	t.Parallel()
	spec := testenv.S3(t)
	fs := open(t, spec)
	boom := errors.New("the client went away")
	for i, r := range []*stream{
		{size: 1 << 20, err: boom},
		{size: bigFile, err: boom},
		// The error comes with the bytes that fill the first part, then
		// with those that fill the second.
		{size: 8 << 20, err: boom, eager: true},
		{size: 16 << 20, err: boom, eager: true},
	} {
		key := fmt.Sprintf("t1/u%d-fails", i)
		_, err := fs.Put(withTimeout(t, 30*time.Second), key, r)
		wantOwn(t, fmt.Sprintf("Put failing after %d bytes (eager %v)", r.size, r.eager), err, boom)
		wantNothingLeft(t, spec, key)
	}
}

// TestS3PutCancelled: a context cancelled while the file is read, or
// while a part is on its way, leaves neither object nor unfinished
// upload; the second is a wait on the store, hence unavailable.
func TestS3PutCancelled(t *testing.T) {
	t.Parallel()
	fs, p, spec := s3Behind(t)
	t.Run("reading", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		_, err := fs.Put(ctx, "t1/u1-reading", &stream{size: bigFile, mark: 12 << 20, at: cancel})
		wantOwn(t, "Put cancelled while reading", err, context.Canceled)
		wantNothingLeft(t, spec, "t1/u1-reading")
	})
	t.Run("sending", func(t *testing.T) {
		p.Slow(t, 100*time.Millisecond)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// The second part is read in full: it goes out, and cancel follows.
		at := func() { time.AfterFunc(50*time.Millisecond, cancel) }
		_, err := fs.Put(ctx, "t1/u2-sending", &stream{size: bigFile, mark: 16 << 20, at: at})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Put cancelled while sending: %v, want context.Canceled", err)
		}
		wantFault(t, "Put cancelled while sending", err, false)
		wantNothingLeft(t, spec, "t1/u2-sending")
	})
}

// TestS3Full: a server whose disk is full answers uploads, small and
// multipart, with "full", and leaves nothing behind.
func TestS3Full(t *testing.T) {
	t.Parallel()
	spec, _ := testenv.S3At(t, testenv.SmallDisk(t, "4m"))
	fs := open(t, spec)
	for _, size := range []int64{6 << 20, bigFile} {
		key := fmt.Sprintf("t1/u%d-full", size)
		_, err := fs.Put(withTimeout(t, 30*time.Second), key, &stream{size: size})
		wantFault(t, fmt.Sprintf("Put of %d bytes", size), err, true)
		wantNothingLeft(t, spec, key)
	}
	put(t, fs, "t1/u1-small", strings.NewReader("fits"))
}

// temporaryFiles lists the unfinished writes in a folder store.
func temporaryFiles(t *testing.T, root string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".upload-") {
			found = append(found, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestFolderPutFails: a reader failing halfway and a context cancelled
// halfway end Put with their own error and leave no temporary file.
func TestFolderPutFails(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	fs := open(t, root)
	boom := errors.New("the client went away")
	_, err := fs.Put(context.Background(), "t1/u1-fails", &stream{size: 3 << 20, err: boom})
	wantOwn(t, "Put failing halfway", err, boom)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = fs.Put(ctx, "t1/u2-cancelled", &stream{size: 3 << 20, mark: 1 << 20, at: cancel})
	wantOwn(t, "Put cancelled halfway", err, context.Canceled)
	if left := temporaryFiles(t, root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	for _, key := range []string{"t1/u1-fails", "t1/u2-cancelled"} {
		if _, _, err := fs.Open(context.Background(), key); err != filestore.ErrNotFound {
			t.Errorf("open %s: %v, want ErrNotFound", key, err)
		}
	}
}

// TestFolderFull: a file bigger than the disk's free space fails as
// "full" and leaves no temporary file; FreeBytes sees the space.
func TestFolderFull(t *testing.T) {
	t.Parallel()
	root := testenv.SmallDisk(t, "2m")
	fs := open(t, root)
	sr, ok := fs.(filestore.SpaceReporter)
	if !ok {
		t.Fatal("the folder store does not report its free space")
	}
	free, err := sr.FreeBytes()
	if err != nil || free == 0 || free > 2<<20 {
		t.Fatalf("FreeBytes = %d, %v; want up to 2 MiB", free, err)
	}
	_, err = fs.Put(context.Background(), "t1/u1-big", &stream{size: 3 << 20})
	wantFault(t, "Put of 3 MiB on a 2 MiB disk", err, true)
	if left := temporaryFiles(t, root); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
	if after, err := sr.FreeBytes(); err != nil || after < free {
		t.Errorf("FreeBytes after the failed Put = %d, %v; want %d again", after, err, free)
	}
	put(t, fs, "t1/u2-small", strings.NewReader("fits"))
}

// TestFolderUnavailable: a folder that is gone fails calls as
// unavailable, a missing file is still ErrNotFound.
func TestFolderUnavailable(t *testing.T) {
	t.Parallel()
	root := filepath.Join(t.TempDir(), "files")
	fs := open(t, root)
	if _, _, err := fs.Open(context.Background(), "t1/u1-missing"); err != filestore.ErrNotFound {
		t.Errorf("Open of a missing file: %v, want ErrNotFound", err)
	}
	if err := os.RemoveAll(root); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(root, []byte("not a folder"), 0o600); err != nil {
		t.Fatal(err)
	}
	wantFault(t, "Ping", fs.Ping(context.Background()), false)
	_, err := fs.Put(context.Background(), "t1/u2-new", strings.NewReader("x"))
	wantFault(t, "Put", err, false)
}

// TestS3PresignActiveContent: files a browser would render or run are
// served as application/octet-stream, others with their own type, all as
// attachments.
func TestS3PresignActiveContent(t *testing.T) {
	t.Parallel()
	fs := open(t, testenv.S3(t)+"&downloads=presigned")
	put(t, fs, "t1/u1-page", strings.NewReader("<script>alert(1)</script>"))
	for ct, want := range map[string]string{
		"text/html; charset=utf-8": "application/octet-stream",
		"image/svg+xml":            "application/octet-stream",
		"application/javascript":   "application/octet-stream",
		"text/xml":                 "application/octet-stream",
		"":                         "application/octet-stream",
		"image/png":                "image/png",
		"application/pdf":          "application/pdf",
	} {
		u, err := fs.Presign(context.Background(), "t1/u1-page", "page.html", ct, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET presigned URL for %q: %s", ct, resp.Status)
		}
		if got := resp.Header.Get("Content-Type"); got != want {
			t.Errorf("uploaded as %q: served as %q, want %q", ct, got, want)
		}
		if got := resp.Header.Get("Content-Disposition"); !strings.HasPrefix(got, "attachment;") {
			t.Errorf("uploaded as %q: Content-Disposition %q, want an attachment", ct, got)
		}
	}
}

// TestS3PresignOffline: without a configured region the store learns the
// bucket's at start-up, so that signing needs no network.
func TestS3PresignOffline(t *testing.T) {
	t.Parallel()
	spec, addr := testenv.S3Endpoint(t)
	p := testenv.NewProxy(t, addr)
	u, err := url.Parse(testenv.S3Via(t, spec, p.Addr))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Del("region")
	q.Set("downloads", "presigned")
	u.RawQuery = q.Encode()
	fs := open(t, u.String())
	p.Freeze(t)
	var link string
	timed(t, "Presign on a frozen server", time.Second, func() {
		link, err = fs.Presign(withTimeout(t, 3*time.Second), "t1/u1-file", "file.txt", "text/plain", time.Minute)
	})
	if err != nil || link == "" {
		t.Errorf("Presign: %q, %v", link, err)
	}
}

// TestS3Downloads: the S3 store hands out its own URLs only with
// downloads=presigned; by default (and with downloads=service) the
// service serves the files; any other value is refused at start.
func TestS3Downloads(t *testing.T) {
	t.Parallel()
	spec := testenv.S3(t)
	for _, c := range []struct {
		param string
		own   bool
	}{{"", false}, {"&downloads=service", false}, {"&downloads=presigned", true}} {
		link, err := open(t, spec+c.param).Presign(context.Background(), "t1/u1-file", "file.txt", "text/plain", time.Minute)
		if err != nil || (link != "") != c.own {
			t.Errorf("%q: Presign %q, %v; want a URL of its own: %v", c.param, link, err, c.own)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := filestore.Open(ctx, spec+"&downloads=direct"); err == nil || !strings.Contains(err.Error(), "want service or presigned") {
		t.Errorf("downloads=direct: %v, want a refusal", err)
	}
}

// TestActiveContent: the types a browser renders or runs, and some it
// only shows or saves.
func TestActiveContent(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]bool{
		"text/html":                     true,
		"TEXT/HTML; charset=utf-8":      true,
		"application/xhtml+xml":         true,
		"image/svg+xml":                 true,
		"text/xml":                      true,
		"application/xml":               true,
		"application/rss+xml":           true,
		"text/javascript":               true,
		"application/javascript":        true,
		"application/x-javascript":      true,
		"application/ecmascript":        true,
		"text/xsl":                      true,
		"multipart/x-mixed-replace":     true,
		"application/x-shockwave-flash": true,
		"text/html;;;":                  true, // unparsable: a browser may guess
		"":                              false,
		"text/plain":                    false,
		"image/png":                     false,
		"application/pdf":               false,
		"application/json":              false,
		"application/octet-stream":      false,
	} {
		if got := filestore.ActiveContent(ct); got != want {
			t.Errorf("ActiveContent(%q) = %v, want %v", ct, got, want)
		}
	}
}
