package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"planwerk/internal/app"
	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/users"
)

// runFiles measures uploads and downloads on the folder store: throughput
// for 1 MiB and 100 MiB files, and the process's peak heap growth while
// a 1 GiB file is uploaded.
func runFiles(ctx context.Context, big int64) error {
	dir, err := os.MkdirTemp("", "planwerk-bench-files-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	cfg := config.Default()
	cfg.Database = "sqlite:" + filepath.Join(dir, "bench.db")
	cfg.Files = filepath.Join(dir, "files")
	cfg.MaxUploadBytes = 4 << 30
	cfg.TenantStorageBytes = 1 << 40
	cfg.FileRate = 1 << 20
	db, err := store.Open(ctx, cfg.Database)
	if err != nil {
		return err
	}
	defer db.Close()
	if _, err := db.Migrate(ctx); err != nil {
		return err
	}
	svc, err := app.NewService(ctx, cfg, db, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer svc.Close()
	if _, _, err := app.CreateTenant(ctx, svc, users.TenantSpec{Slug: "bench", AdminEmail: "admin@bench.test", AdminPassword: "bench-password"}); err != nil {
		return err
	}
	srv := serve(svc)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 8}}
	token, err := login(client, srv.URL)
	if err != nil {
		return err
	}
	do := func(method, path, ct string, body io.Reader) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, method, srv.URL+path, body)
		req.Header.Set("companyurl", "bench")
		req.Header.Set("Authorization", "Bearer "+token)
		if ct != "" {
			req.Header.Set("Content-Type", ct)
		}
		return client.Do(req)
	}
	resp, err := do(http.MethodPost, "/v1/projects", "application/json", strings.NewReader(`{"name":"P"}`))
	if err != nil {
		return err
	}
	project := idOf(readAll(resp))
	newDoc := func() (string, error) {
		resp, err := do(http.MethodPost, "/v1/documents", "application/json",
			strings.NewReader(`{"model":"project","record":`+project+`,"category":7}`))
		if err != nil {
			return "", err
		}
		return idOf(readAll(resp)), nil
	}
	// upload streams size bytes of a fixed pattern through a pipe: the
	// client holds no more than one buffer either.
	upload := func(doc string, size int64) (time.Duration, string, error) {
		pr, pw := io.Pipe()
		mw := multipart.NewWriter(pw)
		go func() {
			part, err := mw.CreateFormFile("file", "bench.bin")
			if err == nil {
				_, err = io.CopyN(part, pattern{}, size)
			}
			if err == nil {
				err = mw.Close()
			}
			pw.CloseWithError(err)
		}()
		start := time.Now()
		resp, err := do(http.MethodPost, "/v1/files/upload/document/"+doc+"?delete_others=1", mw.FormDataContentType(), pr)
		if err != nil {
			return 0, "", err
		}
		body := readAll(resp)
		if resp.StatusCode != 201 {
			return 0, "", fmt.Errorf("upload: %d %s", resp.StatusCode, body)
		}
		return time.Since(start), idOf(body), nil
	}
	download := func(uploadID string) (time.Duration, int64, error) {
		resp, err := do(http.MethodGet, "/v1/files/download/"+uploadID, "", nil)
		if err != nil {
			return 0, 0, err
		}
		var u string
		if err := json.Unmarshal([]byte(readAll(resp)), &u); err != nil {
			return 0, 0, err
		}
		start := time.Now()
		r2, err := client.Get(u)
		if err != nil {
			return 0, 0, err
		}
		defer r2.Body.Close()
		h := sha256.New()
		n, err := io.Copy(h, r2.Body)
		return time.Since(start), n, err
	}
	fmt.Printf("\nPlanwerk file benchmark (folder store, SQLite), %s, %d cores\n\n", runtime.Version(), runtime.NumCPU())
	fmt.Println("| file | uploads | upload MB/s | download MB/s |")
	fmt.Println("|---|---|---|---|")
	for _, c := range []struct {
		name  string
		size  int64
		times int
	}{{"1 MiB", 1 << 20, 50}, {"100 MiB", 100 << 20, 3}} {
		var up, down time.Duration
		for i := 0; i < c.times; i++ {
			doc, err := newDoc()
			if err != nil {
				return err
			}
			d, id, err := upload(doc, c.size)
			if err != nil {
				return err
			}
			up += d
			dd, n, err := download(id)
			if err != nil || n != c.size {
				return fmt.Errorf("download: %d bytes, %v", n, err)
			}
			down += dd
		}
		mb := float64(c.size) * float64(c.times) / 1e6
		fmt.Printf("| %s | %d | %.0f | %.0f |\n", c.name, c.times, mb/up.Seconds(), mb/down.Seconds())
	}
	doc, err := newDoc()
	if err != nil {
		return err
	}
	stop := sampleHeap()
	d, _, err := upload(doc, big)
	peak := stop()
	if err != nil {
		return err
	}
	fmt.Printf("\n%.1f GiB upload: %.0f MB/s, peak heap growth %.1f MiB, process peak RSS %s\n",
		float64(big)/(1<<30), float64(big)/1e6/d.Seconds(), float64(peak)/(1<<20), peakRSS())
	return nil
}

// pattern yields an endless byte pattern.
type pattern struct{}

func (pattern) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(i * 31)
	}
	return len(p), nil
}

func readAll(resp *http.Response) string {
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// peakRSS reads the process's high-water resident set size from /proc.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:"))
		}
	}
	return "unknown"
}
