//go:build system

package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/store"
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
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		const deadline = 2 * time.Second
		srv := testenv.Start(t, b, func(c *config.Config) { c.RequestTimeout = deadline })
		acme := srv.CreateTenant(t, "acme")
		admin := srv.SignIn(t, acme)
		seedRecords(t, srv, acme.ID, "projects", 1000, 10<<10)
		slow := func(r io.Reader, chunk int) *paced { return &paced{r: r, chunk: chunk, pause: 200 * time.Millisecond} }
		// upload stores data on a new project document and returns the
		// upload's id. The project and the document are written through the
		// store: only the upload is the test's, and a loaded machine may
		// take longer than the short deadline for a plain create.
		upload := func(data io.Reader, ct string) int64 {
			doc := storedDocument(t, srv, acme.ID)
			up := admin.With("Content-Type", ct).Object(t, http.MethodPost, fmt.Sprintf("/v1/files/upload/document/%d", doc), data, http.StatusCreated)
			return testenv.ID(t, up)
		}

		// A 10 MB list read at 1.25 MB/s.
		start := time.Now()
		resp, err := http.DefaultClient.Do(admin.Request(t, http.MethodGet, "/v1/projects?limit=50000", nil))
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
		ct, body := uploadBody(t, randomBytes(7, 4<<20))
		start = time.Now()
		upload(slow(body, 256<<10), ct)
		if took := time.Since(start); took < deadline {
			t.Errorf("the upload took %s, less than the deadline: it proves nothing", took)
		}

		// A 12 MiB download read at 2.5 MiB/s.
		data := randomBytes(8, 12<<20)
		ct, body = uploadBody(t, data)
		id := upload(body, ct)
		var link string
		status, _, raw := admin.Send(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", id), nil)
		if status != http.StatusOK || json.Unmarshal(raw, &link) != nil {
			t.Fatalf("download URL of %d: %d %s", id, status, raw)
		}
		resp, err = http.Get(link)
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

// storedDocument writes a project and a document of it through the store
// and returns the document's id.
func storedDocument(t *testing.T, srv *testenv.Server, tenantID int64) int64 {
	t.Helper()
	db, ctx := srv.Service.DB, context.Background()
	var doc int64
	err := db.Tx(ctx, func(q store.Querier) error {
		project, err := db.NewID(ctx, q, tenantID)
		if err != nil {
			return err
		}
		if _, err := db.InsertRecord(ctx, q, tenantID, store.Collection{Table: "records", Resource: "projects"}, project, map[string]any{"name": "P"}); err != nil {
			return err
		}
		if doc, err = db.NewID(ctx, q, tenantID); err != nil {
			return err
		}
		_, err = db.InsertRecord(ctx, q, tenantID, store.Collection{Table: "records", Resource: "documents"}, doc,
			map[string]any{"model": "project", "record": project, "category": 7})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// randomBytes is n deterministic bytes distinct per seed.
func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	_, _ = rand.NewChaCha8([32]byte{byte(seed)}).Read(b)
	return b
}
