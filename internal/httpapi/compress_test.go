package httpapi_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/testenv"
)

// decoded returns the body as sent before its Content-Encoding.
func decoded(t *testing.T, encoding string, raw []byte) []byte {
	t.Helper()
	var r io.Reader
	switch encoding {
	case "":
		return raw
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		r = zr
	case "zstd":
		zr, err := zstd.NewReader(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	default:
		t.Fatalf("Content-Encoding %q", encoding)
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("decode %s: %v", encoding, err)
	}
	return out
}

// TestCompression: JSON answers of 1 KiB or more are compressed as
// Accept-Encoding asks (gzip, zstd), smaller ones and those of clients
// that ask for nothing are not; every compressible answer varies by
// Accept-Encoding. Downloads keep their bytes and their Content-Length;
// /metrics is encoded once.
func TestCompression(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		big := admin.Create(t, "projects", testenv.M{"name": "big", "notes": strings.Repeat("compressible ", 200)})
		for i := range 20 {
			admin.Create(t, "projects", testenv.M{"name": fmt.Sprint("p", i)})
		}
		bigPath := fmt.Sprintf("/v1/projects/%d", testenv.ID(t, big))
		for _, c := range []struct {
			name, path, accept string
			want               string // Content-Encoding
		}{
			{"list, gzip", "/v1/projects", "gzip", "gzip"},
			{"list, zstd", "/v1/projects", "zstd", "zstd"},
			{"list, both", "/v1/projects", "gzip, zstd", "zstd"},
			{"list, gzip preferred", "/v1/projects", "gzip;q=1, zstd;q=0.5", "gzip"},
			{"list, identity", "/v1/projects", "identity", ""},
			{"list, nothing asked", "/v1/projects", "", ""},
			{"record, gzip", bigPath, "gzip", "gzip"},
			{"record, zstd", bigPath, "zstd", "zstd"},
			{"record, nothing asked", bigPath, "", ""},
			{"small record", "/v1/users/me", "gzip, zstd", ""},
			{"small error", "/v1/projects/999999", "gzip, zstd", ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				req := admin.Request(t, http.MethodGet, c.path, nil)
				req.Header.Set("Accept-Encoding", c.accept) // set, even empty: the client then decodes nothing itself
				_, hdr, raw := testenv.Do(t, req)
				if got := hdr.Get("Content-Encoding"); got != c.want {
					t.Fatalf("Content-Encoding %q, want %q", got, c.want)
				}
				body := decoded(t, c.want, raw)
				if !json.Valid(body) {
					t.Fatalf("not JSON once decoded: %.200q", body)
				}
				if c.want != "" {
					wantList(t, c.name, hdr, "Vary", "Accept-Encoding")
					if len(raw) >= len(body) || hdr.Get("Content-Length") != "" && hdr.Get("Content-Length") != strconv.Itoa(len(raw)) {
						t.Errorf("%d bytes encoded for %d, Content-Length %q", len(raw), len(body), hdr.Get("Content-Length"))
					}
				} else if c.accept != "" && c.accept != "identity" && len(body) >= 1024 {
					t.Errorf("%d bytes, not compressed: only answers under 1 KiB may be sent as they are", len(body))
				}
			})
		}

		// A download is sent as stored, whatever the client takes.
		_, doc := admin.Document(t)
		data := []byte(strings.Repeat("plain text compresses well\n", 400))
		status, _, raw := admin.Upload(t, testenv.UploadPath("document", doc, false), testenv.Part{Filename: "a.txt", ContentType: "text/plain", Data: data})
		var up struct{ ID int64 }
		if status != http.StatusCreated || json.Unmarshal(raw, &up) != nil {
			t.Fatalf("upload: %d %s", status, raw)
		}
		req, err := http.NewRequest(http.MethodGet, admin.DownloadURL(t, up.ID), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept-Encoding", "gzip, zstd")
		status, hdr, raw := testenv.Do(t, req)
		if status != http.StatusOK || hdr.Get("Content-Encoding") != "" || hdr.Get("Content-Length") != strconv.Itoa(len(data)) || !bytes.Equal(raw, data) {
			t.Errorf("download: %d, Content-Encoding %q, Content-Length %q, %d bytes; want the %d bytes as stored",
				status, hdr.Get("Content-Encoding"), hdr.Get("Content-Length"), len(raw), len(data))
		}

		// /metrics compresses itself, once.
		req = srv.Public().Request(t, http.MethodGet, "/metrics", nil)
		req.Header.Set("Accept-Encoding", "gzip")
		_, hdr, raw = testenv.Do(t, req)
		if text := decoded(t, hdr.Get("Content-Encoding"), raw); !bytes.Contains(text, []byte("# HELP")) {
			t.Errorf("/metrics with Content-Encoding %q does not decode to the text format: %.100q", hdr.Get("Content-Encoding"), text)
		}
	})
}
