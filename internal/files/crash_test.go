//go:build system

package files_test

// A server killed in the middle of uploads loses nothing it acknowledged
// and lists nothing it did not store whole (docs/api.md "Upload flow").

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/testenv"
)

// proc is a planwerk process.
type proc struct {
	cmd    *exec.Cmd
	url    string
	stderr *testenv.SyncBuffer
}

// environ is the test's environment without PLANWERK_ settings.
func environ() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PLANWERK_") {
			env = append(env, kv)
		}
	}
	return env
}

// serve starts planwerk serve and waits until it answers.
func serve(t *testing.T, bin, dir string, args ...string) *proc {
	t.Helper()
	addr := testenv.FreeAddr(t)
	p := &proc{url: "http://" + addr, stderr: &testenv.SyncBuffer{}}
	p.cmd = exec.Command(bin, append([]string{"serve", "--addr", addr}, args...)...)
	p.cmd.Dir = dir
	p.cmd.Env = environ()
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

// attempt is a file sent for a record.
type attempt struct {
	sum  string
	size int64
	id   int64 // from the 201 answer; 0 when none came
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return fmt.Sprintf("%x", s)
}

// TestUploadCrash: kill -9 a server in the middle of uploads and
// replacements; after a restart every acknowledged upload (the latest per
// record) is listed and complete, and nothing listed is missing or
// truncated.
func TestUploadCrash(t *testing.T) {
	t.Parallel()
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

	create := exec.Command(bin, append([]string{"tenant", "create", "--slug", "crash", "--admin-email", "a@crash.test", "--admin-password", "crash-password"}, args[:2]...)...)
	create.Dir = dir
	create.Env = environ()
	if out, err := create.CombinedOutput(); err != nil {
		t.Fatalf("tenant create: %v\n%s", err, out)
	}

	p := serve(t, bin, dir, args...)
	srv := &testenv.Server{URL: p.url} // follows the process across restarts
	c := &testenv.Client{Srv: srv, Slug: "crash", Token: srv.Token(t, "crash", "a@crash.test", "crash-password")}
	hc := &http.Client{Timeout: time.Minute}
	project := testenv.ID(t, c.Create(t, "projects", testenv.M{"name": "crash"}))
	const workers, perWorker = 4, 2
	records := make([]int64, workers*perWorker)
	for i := range records {
		records[i] = testenv.ID(t, c.Create(t, "documents", testenv.M{"model": "project", "record": project, "category": 7}))
	}

	// acked: the latest acknowledged (or, after a check, listed) upload of
	// each record; pending: files sent whose answer never came.
	acked := map[int64]attempt{}
	var seq uint64
	for round := 0; round < 3; round++ {
		pending := map[int64][]attempt{}
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
					data := testenv.Data(1000+s, size)
					att := attempt{sum: sum(data), size: int64(size)}
					replace := had || n >= perWorker // the first upload of a fresh record goes without delete_others
					ct, body := testenv.Multipart(t, file(fmt.Sprintf("crash %d.bin", s), data))
					req := c.Request(t, http.MethodPost, testenv.UploadPath("document", rec, replace), body)
					req.Header.Set("Content-Type", ct)
					mu.Lock()
					pending[rec] = append(pending[rec], att)
					mu.Unlock()
					resp, err := hc.Do(req)
					var raw []byte
					if err == nil {
						raw, err = readAll(resp)
					}
					if err != nil {
						select {
						case <-killed: // the answer was lost to the crash
							return
						default:
							t.Errorf("upload before the crash: %v", err)
							return
						}
					}
					if resp.StatusCode != http.StatusCreated {
						t.Errorf("upload to %d: %d %s", rec, resp.StatusCode, raw)
						return
					}
					var up upload
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
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = p.cmd.Wait()
		wg.Wait()
		if t.Failed() {
			t.Fatalf("round %d: uploads failed before the crash\n%s", round, p.stderr.String())
		}
		mu.Lock()
		t.Logf("round %d: %d uploads acknowledged before the kill", round, acks)
		mu.Unlock()

		p = serve(t, bin, dir, args...)
		srv.URL = p.url
		listed := map[int64]int64{} // upload id: size
		for _, rec := range records {
			path := fmt.Sprintf("/v1/files/document/%d", rec)
			status, _, raw := c.Send(t, http.MethodGet, path, nil)
			var ups []upload
			if status != http.StatusOK || json.Unmarshal(raw, &ups) != nil || len(ups) > 1 {
				t.Fatalf("round %d: GET %s: %d %s", round, path, status, raw)
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
			status, _, body := testenv.Fetch(t, http.MethodGet, c.DownloadURL(t, up.ID))
			if status != http.StatusOK {
				t.Errorf("round %d: download of listed upload %d: %d", round, up.ID, status)
				continue
			}
			got := attempt{sum: sum(body), size: int64(len(body)), id: up.ID}
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
				if !slices.ContainsFunc(pending[rec], func(a attempt) bool { return a.sum == got.sum && a.size == got.size }) {
					t.Errorf("round %d: record %d lists upload %d (%d bytes) that matches no file sent", round, rec, up.ID, got.size)
				}
			}
			acked[rec] = got
		}
		// Every listed upload is a complete file in the folder; temporary
		// files of interrupted uploads never are.
		names := walk(t, files)
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
			t.Fatalf("server log:\n%s", p.stderr.String())
		}
	}
}

// readAll reads and closes an answer's body.
func readAll(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}
