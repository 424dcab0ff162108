package httpapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/testenv"
)

// paced reads a stream with a pause after every chunk of bytes: a
// client on a slow link that never stops for long.
type paced struct {
	r     io.Reader
	chunk int
	pause time.Duration
	since int // bytes since the last pause
}

func (p *paced) Read(b []byte) (int, error) {
	if p.since >= p.chunk {
		time.Sleep(p.pause)
		p.since = 0
	}
	n, err := p.r.Read(b[:min(len(b), p.chunk-p.since)])
	p.since += n
	return n, err
}

// TestStreamsOutlastDeadline: a list, an upload and a download that take
// longer than the request deadline complete while they keep moving data.
// Each is big enough that the server is still writing (or reading) well
// after the deadline, whatever the socket buffers hold.
func TestStreamsOutlastDeadline(t *testing.T) {
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		const deadline = 2 * time.Second
		env := flStart(t, b, testenv.FileBackend{Name: "folder"}, func(c *config.Config) { c.RequestTimeout = deadline })
		seedRecords(t, env.srv, env.tn.ID, "projects", 1000, 10<<10)
		auth := map[string]string{"companyurl": "acme", "Authorization": "Bearer " + env.admin.token}
		slow := func(r io.Reader, chunk int) *paced { return &paced{r: r, chunk: chunk, pause: 200 * time.Millisecond} }

		// A 10 MB list read at 1.25 MB/s.
		req, _ := http.NewRequest(http.MethodGet, env.srv.URL+"/v1/projects?limit=50000", nil)
		for k, v := range auth {
			req.Header.Set(k, v)
		}
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct{ ID int64 }
		err = json.NewDecoder(slow(resp.Body, 256<<10)).Decode(&list)
		resp.Body.Close()
		if err != nil || len(list) < 1000 {
			t.Errorf("a list read for %s: %d records, %v", time.Since(start), len(list), err)
		}

		// A 4 MiB upload sent at 1.25 MiB/s.
		_, doc := flDocument(env.admin)
		data := flData(7, 4<<20)
		ct, body := uploadBody(t, data)
		req, _ = http.NewRequest(http.MethodPost, env.srv.URL+flUploadPath("document", doc, false), slow(body, 256<<10))
		for k, v := range auth {
			req.Header.Set(k, v)
		}
		req.Header.Set("Content-Type", ct)
		start = time.Now()
		resp, err = http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var up struct{ ID int64 }
		if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &up) != nil {
			t.Fatalf("an upload sent for %s: %d %s", time.Since(start), resp.StatusCode, raw)
		}

		// A 12 MiB download read at 2.5 MiB/s.
		_, doc = flDocument(env.admin)
		data = flData(8, 12<<20)
		up2 := env.admin.uploadOK("document", doc, false, flFile{filename: "big.bin", data: data})
		resp, err = http.Get(env.admin.downloadURL(up2.ID))
		if err != nil {
			t.Fatal(err)
		}
		start = time.Now()
		got, err := io.ReadAll(&paced{r: resp.Body, chunk: 256 << 10, pause: 100 * time.Millisecond})
		resp.Body.Close()
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("a download read for %s: %d of %d bytes, %v", time.Since(start), len(got), len(data), err)
		}
		if took := time.Since(start); took < 2*deadline {
			t.Fatalf("the download took %s, not twice the deadline: the test proves nothing", took)
		}
	})
}
