//go:build system

package httpapi_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/store"
	"planwerk/internal/testenv"
)

// seedRecords stores n records of resource for the tenant, each with a
// pad attribute of size bytes, straight into the database.
func seedRecords(t *testing.T, srv *testenv.Server, tenantID int64, resource string, n, size int) {
	t.Helper()
	db := srv.Service.DB
	ctx := context.Background()
	pad := strings.Repeat("x", size)
	c := store.Collection{Table: "records", Resource: resource}
	for start := 0; start < n; start += 500 {
		err := db.Tx(ctx, func(q store.Querier) error {
			for i := start; i < min(start+500, n); i++ {
				id, err := db.NewID(ctx, q, tenantID)
				if err != nil {
					return err
				}
				if _, err := db.InsertRecord(ctx, q, tenantID, c, id, map[string]any{"name": fmt.Sprint("r", i), "pad": pad}); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("seed %s: %v", resource, err)
		}
	}
}

// rawRequest opens a connection that sends c's GET of path and reads at
// the pace the caller chooses: a client on a slow link. A connection
// whose client does not read takes only as much as the socket buffers
// hold.
func rawRequest(t *testing.T, c *testenv.Client, path string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn := dial(t, c.Srv)
	if err := c.Request(t, http.MethodGet, path, nil).Write(conn); err != nil {
		t.Fatal(err)
	}
	return conn, bufio.NewReaderSize(conn, 16)
}

// eventually polls cond until it holds, failing the test after limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", limit, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// poolsInUse is the number of database connections in use.
func poolsInUse(srv *testenv.Server) int {
	n := 0
	for _, p := range srv.Service.DB.Pools() {
		n += p.Stats().InUse
	}
	return n
}

// TestSlowReadersHoldNothing: clients that read a big list slowly hold
// neither a database connection nor (on SQLite) a read snapshot, so that
// another tenant's reads, writes and /readyz go on as usual and the WAL
// does not grow while they wait.
func TestSlowReadersHoldNothing(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.WriteIdleTimeout = 10 * time.Minute })
		acme, beta := srv.CreateTenant(t, "acme"), srv.CreateTenant(t, "beta")
		// 10 MB: more than the socket buffers of a stalled connection hold.
		seedRecords(t, srv, acme.ID, "projects", 1000, 10<<10)
		seedRecords(t, srv, beta.ID, "projects", 5, 100)
		acmeAdmin, betaAdmin := srv.SignIn(t, acme), srv.SignIn(t, beta)

		// More stalled readers than the database has read connections.
		const readers = 12
		conns := make([]net.Conn, readers)
		bufs := make([]*bufio.Reader, readers)
		for i := range conns {
			c, br := rawRequest(t, acmeAdmin, "/v1/projects?limit=50000")
			conns[i], bufs[i] = c, br
			// The first byte of the answer: the list was read from the
			// database and is being written. Then the reader stalls.
			_ = c.SetReadDeadline(time.Now().Add(2 * time.Minute))
			if _, err := br.Peek(1); err != nil {
				t.Fatalf("reader %d: no answer: %v", i, err)
			}
		}
		eventually(t, 30*time.Second, "database connections still in use by stalled readers", func() bool {
			return poolsInUse(srv) == 0
		})

		// The other tenant reads and writes as usual, each request within
		// 20 seconds; writes large enough that a held snapshot would make
		// the WAL grow past them.
		do := func(method, path string, body any) int {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			status, _, _ := testenv.Do(t, betaAdmin.Request(t, method, path, body).WithContext(ctx))
			return status
		}
		pad := strings.Repeat("y", 64<<10)
		for i := 0; i < 200; i++ { // 13 MB of documents
			if st := do(http.MethodPost, "/v1/projects", testenv.M{"name": "w", "pad": pad}); st != http.StatusCreated {
				t.Fatalf("write %d: %d", i, st)
			}
		}
		for _, path := range []string{"/v1/projects", "/v1/projects?where=%7B%22name%22%3A%22r1%22%7D", "/v1/users/me", "/readyz"} {
			if st := do(http.MethodGet, path, nil); st != http.StatusOK {
				t.Errorf("GET %s while acme's readers stall: %d", path, st)
			}
		}
		if b.Name == "sqlite" {
			st, err := os.Stat(strings.TrimPrefix(srv.Config.Database, "sqlite:") + "-wal")
			if err != nil {
				t.Fatal(err)
			}
			// Each write stores its record, its change and its audit
			// entry: 39 MB in all, which a held snapshot would keep in the
			// WAL; checkpoints keep it to a part of that.
			if st.Size() > 24<<20 {
				t.Errorf("WAL is %d MB after 39 MB of writes: a stalled reader holds a snapshot", st.Size()>>20)
			}
		}
		// A stalled reader still gets its whole answer when it reads on.
		_ = conns[0].SetReadDeadline(time.Now().Add(2 * time.Minute))
		resp, err := http.ReadResponse(bufs[0], nil)
		if err != nil {
			t.Fatal(err)
		}
		var list []struct{ ID int64 }
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || len(list) != 1000 {
			t.Errorf("the first reader: %d, %d records, %v; want the whole list", resp.StatusCode, len(list), err)
		}
	})
}

// TestWriteIdleTimeout: a client that takes no data for the write-idle
// timeout is cut off; the answer it got is visibly incomplete.
func TestWriteIdleTimeout(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		log := &testenv.SyncBuffer{}
		srv := testenv.StartLogged(t, b, log, func(c *config.Config) { c.WriteIdleTimeout = 300 * time.Millisecond })
		acme := srv.CreateTenant(t, "acme")
		seedRecords(t, srv, acme.ID, "projects", 1000, 10<<10)
		c, br := rawRequest(t, srv.SignIn(t, acme), "/v1/projects?limit=50000")
		_ = c.SetReadDeadline(time.Now().Add(time.Minute))
		if _, err := br.Peek(1); err != nil {
			t.Fatal(err)
		}
		eventually(t, time.Minute, "the server does not give up on a client that reads nothing", func() bool {
			return strings.Contains(log.String(), "client stopped reading a list")
		})
		// What was in the buffers arrives, then the cut: the body ends
		// before its end.
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil || n >= 10<<20 {
			t.Errorf("the cut-off client read %d bytes, error %v; want a truncated answer", n, err)
		}
	})
}

// TestBodyStall: a request body that stops arriving is answered 408
// after the idle timeout instead of holding the request open, for JSON
// bodies and for uploads.
func TestBodyStall(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b, func(c *config.Config) { c.WriteIdleTimeout = 300 * time.Millisecond })
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		exp := testenv.ID(t, admin.Create(t, "expenses", testenv.M{}))
		for _, c := range []struct {
			name, method, path, contentType, head string
		}{
			{"record", http.MethodPost, "/v1/projects", "application/json", `{"name": "`},
			{"upload", http.MethodPost, fmt.Sprintf("/v1/files/upload/expense/%d", exp), "multipart/form-data; boundary=XX",
				"--XX\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nsome bytes"},
		} {
			t.Run(c.name, func(t *testing.T) {
				// The head of the request and the start of its body, then nothing.
				conn := dial(t, srv)
				fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\ncompanyurl: %s\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: 100000\r\n\r\n%s",
					c.method, c.path, conn.RemoteAddr(), admin.Slug, admin.Token, c.contentType, c.head)
				_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
				resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
				if err != nil {
					t.Fatalf("no answer to a stalled body: %v", err)
				}
				raw, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(raw), "body_timeout") {
					t.Errorf("stalled body: %d %s, want 408 body_timeout", resp.StatusCode, raw)
				}
			})
		}
		// Nothing was written.
		for _, path := range []string{"/v1/projects", fmt.Sprintf("/v1/files/expense/%d", exp)} {
			status, _, raw := admin.Send(t, http.MethodGet, path, nil)
			if status != http.StatusOK || string(raw) != "[]\n" {
				t.Errorf("GET %s after stalled bodies: %d %s", path, status, raw)
			}
		}
	})
}
