package files_test

// The RateLimit fields of uploads and download-URL requests (docs/api.md
// "Rate-limit headers"): every answer of a counted request shows the
// "files" policy and what is left of it.

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// filesRate is --file-rate in these tests: 3 a minute, a bucket of 3
// refilled one per 20 s, so q=3 and w=60.
const filesRate = 3

// wantFiles checks that an answer shows exactly the files policy, with
// remaining left, and returns its t.
func wantFiles(t *testing.T, what string, hdr http.Header, remaining int64) int64 {
	t.Helper()
	got := testenv.RateLimits(t, what, hdr)
	p, ok := got["files"]
	if !ok || len(got) != 1 {
		t.Fatalf("%s: RateLimit fields %v (RateLimit-Policy %q, RateLimit %q), want the files policy alone",
			what, got, hdr.Values("RateLimit-Policy"), hdr.Values("RateLimit"))
	}
	if p.Quota != filesRate || p.Window != 60 {
		t.Errorf("%s: files q=%d w=%d, want q=%d w=60", what, p.Quota, p.Window, filesRate)
	}
	if p.Remaining != remaining {
		t.Errorf("%s: files r=%d, want %d", what, p.Remaining, remaining)
	}
	// One event refills every 20 s; one is missing at least.
	if p.Reset < 1 || p.Reset > 20 {
		t.Errorf("%s: files t=%d, want 1..20", what, p.Reset)
	}
	return p.Reset
}

// wantFilesRefused checks a 429 of the files limit: r=0, and t is
// Retry-After.
func wantFilesRefused(t *testing.T, what string, status int, hdr http.Header, raw []byte) {
	t.Helper()
	limited(t, what, status, hdr, raw)
	if reset := wantFiles(t, what, hdr, 0); strconv.FormatInt(reset, 10) != hdr.Get("Retry-After") {
		t.Errorf("%s: t=%d, Retry-After %q: they differ", what, reset, hdr.Get("Retry-After"))
	}
}

// noRateLimit checks that an answer carries no RateLimit fields.
func noRateLimit(t *testing.T, what string, hdr http.Header) {
	t.Helper()
	if hdr.Get("RateLimit") != "" || hdr.Get("RateLimit-Policy") != "" {
		t.Errorf("%s: RateLimit %q, RateLimit-Policy %q on an answer that counts nothing", what, hdr.Get("RateLimit"), hdr.Get("RateLimit-Policy"))
	}
}

// checkFileFields runs 3 counted requests and 2 refused ones as admin
// (whose count starts full) and checks the fields of each.
func checkFileFields(t *testing.T, admin *testenv.Client, doc int64) {
	t.Helper()
	status, hdr, raw := admin.Upload(t, testenv.UploadPath("document", doc, true), file("a", testenv.Data(80, 10)))
	if status != http.StatusCreated {
		t.Fatalf("upload: %d %s", status, raw)
	}
	wantFiles(t, "1st: upload", hdr, 2)
	id := testenv.ID(t, testenv.Decode(t, raw))
	status, hdr, raw = admin.Send(t, http.MethodGet, downloadPath(id), nil)
	if status != http.StatusOK {
		t.Fatalf("download URL: %d %s", status, raw)
	}
	wantFiles(t, "2nd: download URL", hdr, 1)
	// A refusal after the count is counted too, and shows it.
	status, hdr, raw = admin.Upload(t, testenv.UploadPath("document", doc, false), file("b", testenv.Data(81, 10)))
	testenv.WantError(t, "3rd: upload without delete_others", status, raw, http.StatusForbidden, "too_many_uploads")
	wantFiles(t, "3rd: upload without delete_others", hdr, 0)

	status, hdr, raw = admin.Send(t, http.MethodGet, downloadPath(id), nil)
	wantFilesRefused(t, "4th: download URL", status, hdr, raw)
	status, hdr, raw = admin.Upload(t, testenv.UploadPath("document", doc, true), file("c", testenv.Data(82, 10)))
	wantFilesRefused(t, "5th: upload", status, hdr, raw)

	// Listing, deleting and downloading count nothing and show nothing.
	status, hdr, _ = admin.Send(t, http.MethodGet, fmt.Sprintf("/v1/files/document/%d", doc), nil)
	if status != http.StatusOK {
		t.Fatalf("list uploads: %d", status)
	}
	noRateLimit(t, "list uploads", hdr)
	status, hdr, _ = admin.Send(t, http.MethodDelete, filePath(id), nil)
	if status != http.StatusOK {
		t.Fatalf("delete upload: %d", status)
	}
	noRateLimit(t, "delete upload", hdr)
}

// TestFileRateLimitFields: the remaining count falls with each upload and
// download-URL request; a refusal shows r=0 with t equal to Retry-After;
// another user's count is their own.
func TestFileRateLimitFields(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		e := start(t, b, testenv.FileBackend{Name: "folder"}, func(c *config.Config) { c.FileRate = filesRate })
		_, doc := e.admin.Document(t)
		checkFileFields(t, e.admin, doc)

		member := e.admin.Member(t, "member@acme.test")
		expense := testenv.ID(t, member.Create(t, "expenses", testenv.M{"amount": 1}))
		status, hdr, raw := member.Upload(t, testenv.UploadPath("expense", expense, true), file("m", testenv.Data(83, 5)))
		if status != http.StatusCreated {
			t.Fatalf("member's upload: %d %s", status, raw)
		}
		wantFiles(t, "member's 1st", hdr, 2)
	})
}

// TestFileRateLimitFieldsRedisDown: with Redis unreachable, the count in
// the process (the fallback) decides, and the fields show its state.
func TestFileRateLimitFieldsRedisDown(t *testing.T) {
	t.Parallel()
	opts := requireRedis(t)
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		p := testenv.NewProxy(t, opts.Addr)
		p.Down()
		e := start(t, b, testenv.FileBackend{Name: "folder"}, func(c *config.Config) {
			c.FileRate = filesRate
			c.Redis = fmt.Sprintf("redis://%s/%d", p.Addr, opts.DB)
		})
		_, doc := e.admin.Document(t)
		checkFileFields(t, e.admin, doc)
		// 5 counted in the process: the 3 above, and the 2 refused.
		rec := httptest.NewRecorder()
		e.srv.Service.Metrics.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		if want := `planwerk_ratelimit_fallback_total{limit="files"} 5`; !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %s: the fallback did not count", want)
		}
	})
}

// requireRedis returns the options of the tests' Redis, or skips (fails
// on CI) when it does not answer.
func requireRedis(t *testing.T) *redis.Options {
	t.Helper()
	opts, err := redis.ParseURL(redisURL)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := net.DialTimeout("tcp", opts.Addr, time.Second); err != nil {
		testenv.SkipOrFail(t, "redis at "+opts.Addr+" does not answer: "+err.Error())
	} else {
		c.Close()
	}
	return opts
}
