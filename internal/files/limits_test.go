package files_test

// The limits of uploads (docs/api.md "Limits", "Files and uploads"): the size
// of one upload, the storage of a tenant, the rate of a user.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/config"
	"planwerk/internal/ratelimit"
	"planwerk/internal/testenv"
)

// chunked uploads parts with chunked transfer encoding: the body comes
// from a pipe, 8 KiB at a time, so its length is unknown.
func chunked(t *testing.T, c *testenv.Client, path string, parts ...testenv.Part) (int, []byte) {
	t.Helper()
	pr, pw := io.Pipe()
	defer pr.CloseWithError(io.ErrClosedPipe) // the server may stop reading early
	mw := multipart.NewWriter(pw)
	go func() { pw.CloseWithError(writeParts(mw, parts)) }()
	req := c.Request(t, http.MethodPost, path, pr)
	req.ContentLength = -1
	req.Header.Set("Content-Type", mw.FormDataContentType())
	status, _, raw := testenv.Do(t, req)
	return status, raw
}

// writeParts writes parts, 8 KiB at a time, and closes the writer.
func writeParts(mw *multipart.Writer, parts []testenv.Part) error {
	for _, p := range parts {
		w, err := mw.CreatePart(p.Header())
		if err != nil {
			return err
		}
		for rest := p.Data; len(rest) > 0; {
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
// chunked ones (docs/api.md "Uploading": chunked uploads are accepted, the cap
// holds mid-stream); a refused upload stores nothing.
func TestUploadSizeCap(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const maxUpload = 64 << 10
		e := start(t, b, fb, func(c *config.Config) { c.MaxUploadBytes = maxUpload })
		admin := e.admin
		_, doc := admin.Document(t)
		_, exact := admin.Document(t)

		refused := func(what string, status int, raw []byte) {
			t.Helper()
			testenv.WantError(t, what, status, raw, http.StatusForbidden, "file_too_large")
			wantUploads(t, admin, "document", doc)
			e.wantUsed(t, what, 0)
			if files := e.stored(t); len(files) != 0 {
				t.Errorf("%s: files stored: %v", what, files)
			}
		}
		status, raw := send(t, admin, "document", doc, true, file("a.bin", testenv.Data(40, maxUpload+1)))
		refused("one byte over the cap", status, raw)
		status, raw = send(t, admin, "document", doc, false, file("a.bin", testenv.Data(41, maxUpload+150<<10)))
		refused("far over the cap", status, raw)
		status, raw = chunked(t, admin, testenv.UploadPath("document", doc, true), file("c.bin", testenv.Data(42, 3*maxUpload)))
		refused("chunked over the cap", status, raw)

		// Exactly the cap is allowed.
		uploadOK(t, admin, "document", exact, false, file("exact.bin", testenv.Data(43, maxUpload)))

		// Chunked within the cap: accepted with its size counted.
		small := testenv.Data(44, 20<<10+3)
		status, raw = chunked(t, admin, testenv.UploadPath("document", doc, true), file("chunked file.bin", small))
		if status != http.StatusCreated {
			t.Fatalf("chunked upload: %d %s", status, raw)
		}
		up := checkUpload(t, raw, "document", doc, int64(len(small)))
		if up.Filename != "chunkedfile.bin" {
			t.Errorf("filename %q", up.Filename)
		}
		if got := admin.Download(t, up.ID); !bytes.Equal(got, small) {
			t.Error("chunked upload: wrong bytes")
		}
		e.wantUsed(t, "the cap and a chunked upload", int64(maxUpload+len(small)))
	})
}

// TestUploadStorageCap: a tenant at its storage cap gets 403 storage_full;
// two uploads that together pass the cap cannot both succeed.
func TestUploadStorageCap(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		const capacity = 1000
		e := start(t, b, fb, func(c *config.Config) { c.TenantStorageBytes = capacity })
		admin := e.admin
		_, d1 := admin.Document(t)
		_, d2 := admin.Document(t)
		_, d3 := admin.Document(t)
		full := func(what string, status int, raw []byte, used int64) {
			t.Helper()
			testenv.WantError(t, what, status, raw, http.StatusForbidden, "storage_full")
			e.wantUsed(t, what, used)
		}
		uploadOK(t, admin, "document", d1, false, file("a", testenv.Data(50, 600)))
		status, raw := send(t, admin, "document", d2, false, file("b", testenv.Data(51, 600)))
		full("600 on 600 of 1000", status, raw, 600)
		wantUploads(t, admin, "document", d2)
		up2 := uploadOK(t, admin, "document", d2, false, file("b", testenv.Data(52, 400)))
		if used := e.used(t, e.tn.ID); used != capacity {
			t.Fatalf("storage used %d, want %d", used, capacity)
		}
		status, raw = send(t, admin, "document", d3, false, file("c", testenv.Data(53, 1)))
		full("1 byte when full", status, raw, capacity)
		status, raw = send(t, admin, "document", d3, true, file("c", nil))
		full("empty file when full", status, raw, capacity)
		wantUploads(t, admin, "document", d3)

		// A replacement counts without the file it replaces.
		smaller := testenv.Data(54, 500)
		up1b := uploadOK(t, admin, "document", d1, true, file("a2", smaller))
		e.wantUsed(t, "after a smaller replacement", 900)
		status, raw = send(t, admin, "document", d1, true, file("a3", testenv.Data(55, 700)))
		full("replacement over the cap", status, raw, 900)
		wantUploads(t, admin, "document", d1, up1b.ID)
		if got := admin.Download(t, up1b.ID); !bytes.Equal(got, smaller) {
			t.Error("file after a refused replacement: wrong bytes")
		}

		// Another tenant has its own cap.
		betaTn, beta := e.tenant(t, "beta")
		_, bd := beta.Document(t)
		uploadOK(t, beta, "document", bd, false, file("b", testenv.Data(56, 900)))
		if e.used(t, betaTn.ID) != 900 || e.used(t, e.tn.ID) != 900 {
			t.Errorf("storage used %d / %d", e.used(t, e.tn.ID), e.used(t, betaTn.ID))
		}

		admin.Object(t, http.MethodDelete, filePath(up1b.ID), nil, http.StatusOK)
		admin.Object(t, http.MethodDelete, filePath(up2.ID), nil, http.StatusOK)
		if used := e.used(t, e.tn.ID); used != 0 {
			t.Fatalf("storage used %d after deletes", used)
		}

		// Parallel uploads that together pass the cap (two, then four at
		// once): exactly one wins.
		for round, n := range []int{2, 2, 4, 4} {
			var recs []int64
			for range n {
				_, d := admin.Document(t)
				recs = append(recs, d)
			}
			results := parallel(t, admin, recs, make([]bool, n), 600)
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
			if used := e.used(t, e.tn.ID); used != 600 {
				t.Fatalf("round %d: storage used %d, want 600", round, used)
			}
			for _, r := range results {
				if r.status == http.StatusCreated {
					admin.Object(t, http.MethodDelete, filePath(r.id), nil, http.StatusOK)
				}
			}
		}
		// Two parallel first uploads to one record: one wins, the other is
		// "too many uploads".
		for round := 0; round < 3; round++ {
			_, p := admin.Document(t)
			results := parallel(t, admin, []int64{p, p, p}, []bool{false, false, false}, 100)
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
			wantUploads(t, admin, "document", p, won[0])
			admin.Object(t, http.MethodDelete, filePath(won[0]), nil, http.StatusOK)
		}
	})
}

// result is the answer to one of parallel's uploads.
type result struct {
	status        int
	code, message string
	id            int64
	raw           []byte
}

// parallel uploads size bytes to each record at the same moment.
func parallel(t *testing.T, c *testenv.Client, records []int64, replace []bool, size int) []result {
	t.Helper()
	reqs := make([]*http.Request, len(records))
	for i, rec := range records {
		ct, body := testenv.Multipart(t, file("p.bin", testenv.Data(uint64(60+i), size)))
		reqs[i] = c.Request(t, http.MethodPost, testenv.UploadPath("document", rec, replace[i]), body)
		reqs[i].Header.Set("Content-Type", ct)
	}
	results := make([]result, len(records))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, req := range reqs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				results[i] = result{status: -1, raw: []byte(err.Error())}
				return
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var m testenv.M
			_ = json.Unmarshal(raw, &m)
			r := result{status: resp.StatusCode, raw: raw}
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

// TestUploadRateLimit: --file-rate counts uploads and download-URL
// requests per user; the one over it is 429 with Retry-After.
func TestUploadRateLimit(t *testing.T) {
	t.Parallel()
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		rate := func(c *config.Config) { c.FileRate = 3 }
		e := start(t, b, fb, rate)
		admin := e.admin
		member := admin.Member(t, "member@acme.test")
		_, doc := admin.Document(t)
		expense := testenv.ID(t, member.Create(t, "expenses", testenv.M{"amount": 1}))

		up := uploadOK(t, admin, "document", doc, false, file("a", testenv.Data(90, 10))) // 1
		admin.DownloadURL(t, up.ID)                                                       // 2
		up2 := uploadOK(t, admin, "document", doc, true, file("b", testenv.Data(91, 20))) // 3
		wantLimited(t, admin, "4th: download URL", http.MethodGet, downloadPath(up2.ID))
		status, hdr, raw := admin.Upload(t, testenv.UploadPath("document", doc, true), file("c", testenv.Data(92, 30)))
		limited(t, "5th: upload", status, hdr, raw)
		// Refused uploads store nothing; listing and deleting are not limited.
		wantUploads(t, admin, "document", doc, up2.ID)
		e.wantUsed(t, "after refused uploads", 20)
		// Another user is unaffected.
		mup := uploadOK(t, member, "expense", expense, false, file("m", testenv.Data(93, 5)))
		member.DownloadURL(t, mup.ID)
		member.DownloadURL(t, mup.ID)
		wantLimited(t, member, "member's 4th", http.MethodGet, downloadPath(mup.ID))
		admin.Object(t, http.MethodDelete, filePath(up2.ID), nil, http.StatusOK)

		// Without --redis each process counts on its own: a second server
		// with the same tenant and user ids still allows requests.
		other := startOn(t, b, fb, e.srv.Config.Files, rate)
		if other.tn.ID != e.tn.ID || other.admin.UserID != admin.UserID {
			t.Fatalf("second server's ids %d/%d differ from %d/%d", other.tn.ID, other.admin.UserID, e.tn.ID, admin.UserID)
		}
		_, odoc := other.admin.Document(t)
		uploadOK(t, other.admin, "document", odoc, false, file("o", testenv.Data(94, 5)))
	})
}

// wantLimited makes a request that must be refused by the rate limit.
func wantLimited(t *testing.T, c *testenv.Client, what, method, path string) {
	t.Helper()
	status, hdr, raw := c.Send(t, method, path, nil)
	limited(t, what, status, hdr, raw)
}

// limited checks an answer is 429 rate_limited with a Retry-After of at
// most a minute.
func limited(t *testing.T, what string, status int, hdr http.Header, raw []byte) {
	t.Helper()
	testenv.WantError(t, what, status, raw, http.StatusTooManyRequests, "rate_limited")
	secs, err := strconv.Atoi(hdr.Get("Retry-After"))
	if err != nil || secs < 1 || secs > 60 {
		t.Errorf("%s: Retry-After %q", what, hdr.Get("Retry-After"))
	}
}

const redisURL = "redis://127.0.0.1:6379/0"

// TestUploadRateLimitRedis: with --redis, instances share the counters,
// and the RateLimit fields show the shared count.
func TestUploadRateLimitRedis(t *testing.T) {
	t.Parallel()
	opts := requireRedis(t)
	var db atomic.Int32
	testenv.EachFileStore(t, func(t *testing.T, b testenv.Backend, fb testenv.FileBackend) {
		// The runs go side by side, with the same tenant and user ids:
		// each counts in a Redis database of its own.
		opts := *opts
		opts.DB = int(db.Add(1))
		rc := redis.NewClient(&opts)
		t.Cleanup(func() { rc.Close() })
		url := fmt.Sprintf("redis://%s/%d", opts.Addr, opts.DB)
		const fileRate = 3
		shared := func(c *config.Config) { c.FileRate = fileRate; c.Redis = url }
		files := testenv.Files(t, fb)
		one := startOn(t, b, fb, files, shared)
		two := startOn(t, b, fb, files, shared)
		if one.tn.ID != two.tn.ID || one.admin.UserID != two.admin.UserID {
			t.Fatalf("the two servers' ids differ: %d/%d and %d/%d", one.tn.ID, one.admin.UserID, two.tn.ID, two.admin.UserID)
		}
		// Both servers count under the same key (tenant id, user id); start
		// it afresh so that earlier runs do not count.
		lim := ratelimit.NewRedis(rc, "files", ratelimit.Rule{Burst: fileRate, Every: time.Minute / fileRate})
		key := fmt.Sprintf("files:%d:%d", one.tn.ID, one.admin.UserID)
		reset := func() {
			if _, err := lim.Reset(context.Background(), key); err != nil {
				t.Fatal(err)
			}
		}
		reset()
		t.Cleanup(reset)

		_, d1 := one.admin.Document(t)
		_, d2 := two.admin.Document(t)
		status, hdr, raw := one.admin.Upload(t, testenv.UploadPath("document", d1, false), file("a", testenv.Data(95, 10)))
		if status != http.StatusCreated {
			t.Fatalf("upload on one: %d %s", status, raw)
		}
		wantFiles(t, "1st, upload on one", hdr, 2)
		u1 := testenv.ID(t, testenv.Decode(t, raw))
		status, hdr, raw = one.admin.Send(t, http.MethodGet, downloadPath(u1), nil)
		if status != http.StatusOK {
			t.Fatalf("download URL on one: %d %s", status, raw)
		}
		wantFiles(t, "2nd, download URL on one", hdr, 1)
		status, hdr, raw = two.admin.Upload(t, testenv.UploadPath("document", d2, false), file("b", testenv.Data(96, 10)))
		if status != http.StatusCreated {
			t.Fatalf("upload on two: %d %s", status, raw)
		}
		wantFiles(t, "3rd, upload on two: the count is shared", hdr, 0)
		u2 := testenv.ID(t, testenv.Decode(t, raw))
		status, hdr, raw = two.admin.Send(t, http.MethodGet, downloadPath(u2), nil)
		wantFilesRefused(t, "4th, on two", status, hdr, raw)
		status, hdr, raw = one.admin.Send(t, http.MethodGet, downloadPath(u1), nil)
		wantFilesRefused(t, "5th, on one", status, hdr, raw)
	})
}
