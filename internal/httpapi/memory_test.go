//go:build system

package httpapi_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// memoryCase is an endpoint that answers data of unbounded size: data
// writes records of 1 MiB or more in a tenant of its own, the case reads
// path (or the path data returns) with the client data returns, asking
// for accept, and the page has atLeast bytes (proof that the records were
// read). most is the heap growth one request may cause (0: 64 MiB).
type memoryCase struct {
	name    string
	data    *memoryData
	accept  string
	path    string
	atLeast int64
	most    uint64
}

// memoryData is what memory cases read: cases of the same data read one
// tenant's, written once, by the first of them.
type memoryData struct {
	write func(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (c *testenv.Client, path string)
}

var (
	populatedData     = &memoryData{seedPopulated}
	memberEntriesData = &memoryData{seedMemberEntries}
	auditData         = &memoryData{seedAudit}
	exportData        = &memoryData{seedExport}
	reportData        = &memoryData{seedReport}
	sheetData         = &memoryData{seedSheet}
)

// memoryCases: every endpoint that returns data of unbounded size has a
// row. A new such endpoint adds its own.
var memoryCases = []memoryCase{
	{"populated list", populatedData, "", "/v1/time-entries?populate=project&limit=1000", 90 << 20, 0},
	{"list", memberEntriesData, "", "/v1/time-entries?limit=50000", 96 << 20, 0},
	{"list as CSV", memberEntriesData, "text/csv", "/v1/time-entries?limit=50000", 96 << 20, 0},
	{"list as CSV of many rows", sheetData, "text/csv", "/v1/time-entries?limit=50000", 30 << 20, 0},
	// The worksheet waits in excelize's buffer of 16 MiB (grown to 32)
	// before its temporary file: less than the rows (30 MiB as CSV) and
	// the archive (16 MiB) together, which a workbook held whole needs.
	{"list as XLSX", sheetData, xlsxType, "/v1/time-entries?limit=50000", 16 << 20, 48 << 20},
	{"change feed", memberEntriesData, "", "/v1/changes?limit=10000", 1 << 20, 0},
	{"audit log", auditData, "application/json", "/v1/audit-log?resource=projects&limit=10000", 40 << 20, 16 << 20},
	{"audit log as CSV", auditData, "text/csv", "/v1/audit-log?resource=projects&limit=10000", 40 << 20, 16 << 20},
	{"a record's history", auditData, "application/json", "/v1/projects/424242/history", 40 << 20, 16 << 20},
	{"an account export's archive", exportData, "", "", 24 << 20, 16 << 20},
	{"a report of the most groups", reportData, "application/json", "", 12 << 20, 0},
	{"a report of the most groups as CSV", reportData, "text/csv", "", 8 << 20, 0},
}

// TestMemory: reading an endpoint's largest page of large records, once
// and three times at once, grows the heap by less than 64 MiB per
// request: lists stream from a spool, populate holds a few records at a
// time, a feed page ends at its byte budget.
func TestMemory(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		// Memory is measured here, not time: three reports of the most
		// groups at once, beside the other tests on a loaded machine,
		// outlast the default request timeout of 30 s.
		srv := testenv.Start(t, b, func(c *config.Config) { c.RequestTimeout = 5 * time.Minute })
		type written struct {
			c    *testenv.Client
			path string
		}
		seeded := map[*memoryData]written{}
		for i, mc := range memoryCases {
			t.Run(mc.name, func(t *testing.T) {
				w, ok := seeded[mc.data]
				if !ok {
					w.c, w.path = mc.data.write(t, srv, srv.CreateTenant(t, fmt.Sprintf("mem%d", i)))
					seeded[mc.data] = w
				}
				c, path, atLeast := w.c, cmp.Or(mc.path, w.path), mc.atLeast
				if mc.accept != "" {
					c = c.With("Accept", mc.accept)
				}
				// get streams the answer away instead of reading it whole as
				// the client's Send does: an answer held in this process would
				// count in the heap the test measures. It runs beside the
				// test, so it reports instead of stopping the test.
				get := func() int64 {
					resp, err := http.DefaultClient.Do(c.Request(t, http.MethodGet, path, nil))
					if err != nil {
						t.Error(err)
						return 0
					}
					defer resp.Body.Close()
					n, err := io.Copy(io.Discard, resp.Body)
					if err != nil || resp.StatusCode != http.StatusOK {
						t.Errorf("GET %s: %d after %d bytes: %v", path, resp.StatusCode, n, err)
					}
					return n
				}
				var size int64
				one := testenv.HeapPeak(func() { size = get() })
				if size < atLeast {
					t.Fatalf("GET %s answered %d bytes, want at least %d", path, size, atLeast)
				}
				three := testenv.HeapPeak(func() {
					var wg sync.WaitGroup
					for range 3 {
						wg.Add(1)
						go func() { defer wg.Done(); get() }()
					}
					wg.Wait()
				})
				t.Logf("heap growth: %d MiB for one answer of %d MiB, %d MiB for three at once", one>>20, size>>20, three>>20)
				most := cmp.Or(mc.most, 64<<20)
				if one > most || three > 3*most {
					t.Errorf("heap grew by %d MiB for one request, %d MiB for three; at most %d MiB per request", one>>20, three>>20, most>>20)
				}
			})
		}
	})
}

// seedPopulated: 60 time entries referring to 6 projects of 1.5 MiB each
// (more than the expansion keeps at once), read with populate: an answer
// of 90 MB.
func seedPopulated(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	db, ctx := srv.Service.DB, context.Background()
	pad := strings.Repeat("m", 3<<19)
	var projects []int64
	err := db.Tx(ctx, func(q store.Querier) error {
		for i := 0; i < 6; i++ {
			id, err := db.NewID(ctx, q, tn.ID)
			if err != nil {
				return err
			}
			if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "projects"}, id, map[string]any{"name": fmt.Sprint("p", i), "pad": pad}); err != nil {
				return err
			}
			projects = append(projects, id)
		}
		for i := 0; i < 60; i++ {
			id, err := db.NewID(ctx, q, tn.ID)
			if err != nil {
				return err
			}
			doc := map[string]any{"trackingType": "WORK", "project": projects[i%len(projects)], "day": "2026-01-05", "duration": 60, "user": tn.AdminID}
			if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, id, doc); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return srv.SignIn(t, tn), ""
}

// seedMemberEntries: a member's 96 time entries, each with an attribute
// of 1 MiB (each also a change of the feed: the store records its
// writes), read by that member.
func seedMemberEntries(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	member := srv.SignIn(t, tn).Member(t, "member@"+tn.Slug+".test")
	db, ctx := srv.Service.DB, context.Background()
	notes := strings.Repeat("n", 1<<20)
	for range 12 {
		err := db.Tx(ctx, func(q store.Querier) error {
			for range 8 {
				id, err := db.NewID(ctx, q, tn.ID)
				if err != nil {
					return err
				}
				doc := map[string]any{"trackingType": "WORKTIME", "day": "2026-01-05", "user": member.UserID,
					"startTime": "2026-01-05T08:00:00.000Z", "endTime": "2026-01-05T09:00:00.000Z", "notes": notes}
				if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, id, doc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return member, ""
}

// seedSheet: 30,000 time entries of the admin, each with 1 KiB of notes
// that do not compress much (hex): a CSV of 32 MB, and an XLSX worksheet
// of more than it keeps in memory before it goes to its temporary file.
func seedSheet(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	db, ctx := srv.Service.DB, context.Background()
	for b := range 6 {
		docs := make([]map[string]any, 5000)
		for i := range docs {
			docs[i] = map[string]any{"trackingType": "BREAK", "day": "2026-01-05", "user": tn.AdminID, "duration": 60, "sorting": i,
				"notes": hex.EncodeToString(testenv.Data(uint64(b*5000+i), 512))}
		}
		err := db.Tx(ctx, func(q store.Querier) error {
			_, err := db.InsertRecords(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, docs)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return srv.SignIn(t, tn), ""
}

// seedReport: 100,000 time entries, each of a ticket of its own (64
// bytes), read as the report grouped by ticket: the most groups a report
// holds, summed over the entries.
func seedReport(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	db, ctx := srv.Service.DB, context.Background()
	admin := srv.SignIn(t, tn)
	for tx := range 10 {
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range 10000 {
				id, err := db.NewID(ctx, q, tn.ID)
				if err != nil {
					return err
				}
				doc := map[string]any{"trackingType": "WORK", "day": fmt.Sprintf("2026-01-%02d", 1+i%28), "user": admin.UserID,
					"duration": 60 + i, "sorting": 1, "ticket": fmt.Sprintf("%s-%06d", strings.Repeat("t", 56), tx*10000+i)}
				if _, err := db.InsertRecord(ctx, q, tn.ID, store.Collection{Table: "records", Resource: "time-entries"}, id, doc); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return admin, "/v1/reports/time?from=2026-01-01&to=2026-01-31&groupBy=ticket"
}

// seedAudit: 100,000 audit entries noted in ten transactions, 40 of them
// versions of 1 MiB of one record (projects 424242, which no longer
// exists), read by the admin (40 MB or more of the large ones).
func seedAudit(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	db, ctx := srv.Service.DB, context.Background()
	for tx := range 10 {
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range 10000 {
				n := store.AuditNote{Resource: "small", Record: int64(i + 1), Op: store.OpCreate, After: []byte(`{"n":1}`)}
				if i%2500 == 0 {
					version := fmt.Sprintf("%d-%d %s", tx, i, strings.Repeat("a", 1<<20))
					n = store.AuditNote{Resource: "projects", Record: 424242, Op: store.OpUpdate, After: fmt.Appendf(nil, `{"pad":%q}`, version)}
				}
				if err := db.Audit(ctx, q, tn.ID, n); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return srv.SignIn(t, tn), ""
}

// seedExport: an account export of a tenant with 24 files of 1 MiB that
// do not compress (one per document), downloaded through its signed
// link.
func seedExport(t *testing.T, srv *testenv.Server, tn testenv.Tenant) (*testenv.Client, string) {
	admin := srv.SignIn(t, tn)
	for i := range 24 {
		_, doc := admin.Document(t)
		admin.UploadFile(t, "document", doc, testenv.Part{Filename: fmt.Sprintf("f%d.bin", i), Data: testenv.Data(uint64(1000+i), 1<<20)})
	}
	e := admin.Object(t, http.MethodPost, "/v1/account/exports", nil, http.StatusAccepted)
	e = waitExport(t, admin, fmt.Sprintf("/v1/account/exports/%d", testenv.ID(t, e)))
	link, _ := e["url"].(string)
	u, err := url.Parse(link)
	if e["status"] != "done" || err != nil {
		t.Fatalf("export %v: link %q: %v", e["status"], link, err)
	}
	return admin, u.RequestURI()
}

// TestCompressedListMemory: a compressed list is compressed as it is
// written, never held whole: for a list of 64 MiB, sent in 32 MiB or
// more, the heap grows by far less than the compressed answer, with gzip
// and with zstd.
func TestCompressedListMemory(t *testing.T) {
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		acme := srv.CreateTenant(t, "acme")
		db, ctx := srv.Service.DB, context.Background()
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := range 32 {
				id, err := db.NewID(ctx, q, acme.ID)
				if err != nil {
					return err
				}
				pad := hex.EncodeToString(testenv.Data(uint64(i), 1<<20)) // 2 MiB; gzip halves them
				if _, err := db.InsertRecord(ctx, q, acme.ID, store.Collection{Table: "records", Resource: "projects"}, id,
					map[string]any{"name": fmt.Sprint("p", i), "pad": pad}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		c := srv.SignIn(t, acme)
		for _, enc := range []string{"gzip", "zstd"} {
			t.Run(enc, func(t *testing.T) {
				var wire, plain int64
				grew := testenv.HeapPeak(func() {
					req := c.Request(t, http.MethodGet, "/v1/projects", nil)
					req.Header.Set("Accept-Encoding", enc)
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						t.Error(err)
						return
					}
					defer resp.Body.Close()
					counted := &countingReader{r: resp.Body}
					var dec io.Reader
					switch resp.Header.Get("Content-Encoding") {
					case "gzip":
						dec, err = gzip.NewReader(counted)
					case "zstd":
						var zr *zstd.Decoder
						zr, err = zstd.NewReader(counted, zstd.WithDecoderLowmem(true), zstd.WithDecoderConcurrency(1))
						if zr != nil {
							defer zr.Close()
						}
						dec = zr
					}
					if ce := resp.Header.Get("Content-Encoding"); ce != enc {
						err = fmt.Errorf("Content-Encoding %q", ce)
					}
					if err == nil {
						plain, err = io.Copy(io.Discard, dec)
					}
					if err != nil || resp.StatusCode != http.StatusOK {
						t.Errorf("list: %d after %d bytes: %v", resp.StatusCode, plain, err)
					}
					wire = counted.n
				})
				t.Logf("%s: %d MiB sent for %d MiB; heap growth %d MiB", enc, wire>>20, plain>>20, grew>>20)
				if plain < 64<<20 || wire < 32<<20 {
					t.Fatalf("%d bytes sent for %d: want 64 MiB sent in 32 MiB or more", wire, plain)
				}
				if grew > 24<<20 {
					t.Errorf("heap grew by %d MiB for a list of %d MiB sent compressed in %d MiB; at most 24 MiB", grew>>20, plain>>20, wire>>20)
				}
			})
		}
	})
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

// TestPartHeaderMemory: four concurrent uploads whose file part has a 9
// MB header block are refused without the server buffering the header:
// the heap grows by far less than one such header, with and without an
// Idempotency-Key.
func TestPartHeaderMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 72 MB")
	}
	srv := testenv.Start(t, testenv.Backend{Name: "sqlite"})
	a := srv.SignIn(t, srv.CreateTenant(t, "acme"))
	ct, body := headerPart(9_000_000, false)
	for _, key := range []string{"", "huge-header"} {
		reqs := make([]*http.Request, 4)
		for i := range reqs {
			c := a
			if key != "" {
				c = keyed(a, fmt.Sprintf("%s-%d", key, i))
			}
			// A record each: the one-file rule refuses none of them
			// before its part is read.
			_, doc := a.Document(t)
			reqs[i] = c.Request(t, http.MethodPost, testenv.UploadPath("document", doc, false), bytes.NewReader(body))
			reqs[i].Header.Set("Content-Type", ct)
		}
		statuses := make([]int, len(reqs))
		grew := testenv.HeapPeak(func() {
			var wg sync.WaitGroup
			for i, req := range reqs {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := http.DefaultClient.Do(req)
					if err != nil {
						return // the server may close the connection on the unread rest
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					statuses[i] = resp.StatusCode
				}()
			}
			wg.Wait()
		})
		t.Logf("Idempotency-Key %q: heap grew by %.1f MiB for four uploads with a 9 MB part header; statuses %v", key, float64(grew)/(1<<20), statuses)
		for _, s := range statuses {
			if s != 0 && s != http.StatusBadRequest {
				t.Errorf("Idempotency-Key %q: status %d, want 400", key, s)
			}
		}
		if grew > 8<<20 {
			t.Errorf("Idempotency-Key %q: the heap grew by %d MiB for four uploads with a 9 MB part header; at most 8 MiB", key, grew>>20)
		}
	}
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
