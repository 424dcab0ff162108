//go:build system

package app_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"

	"planwerk/internal/testenv"
)

// TestWritesSurviveKill: kill -9 the server while many clients create
// records, so that writes are caught in every phase (waiting for a
// batch, inside one, committed but not yet answered). After a restart,
// every record whose creation was acknowledged is there, as it was
// answered, and in the change feed; nothing the server did not
// acknowledge is half there.
func TestWritesSurviveKill(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills a server: skipped with -short")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.EachInTurn(t, func(t *testing.T, b testenv.Backend) {
		env := []string{"PLANWERK_DATABASE=" + testenv.DSN(t, b), "PLANWERK_FILES=" + t.TempDir()}
		create := exec.Command(bin, "tenant", "create", "--slug", "acme", "--admin-email", "admin@acme.test", "--admin-password", "acme-password")
		create.Env = append(os.Environ(), env...)
		if out, err := create.CombinedOutput(); err != nil {
			t.Fatalf("tenant create: %v\n%s", err, out)
		}
		in := startInstance(t, bin, env)
		in.waitReady(t)
		c := &testenv.Client{Srv: in.srv, Slug: "acme", Token: in.srv.Token(t, "acme", "admin@acme.test", "acme-password")}

		// acked maps each acknowledged record to the name it was created with.
		const workers, killAfter = 16, 300
		var (
			mu     sync.Mutex
			acked  = map[int64]string{}
			killed = make(chan struct{})
			once   sync.Once
			wg     sync.WaitGroup
		)
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
					name := fmt.Sprintf("w%d-%d", w, n)
					resp, err := http.DefaultClient.Do(c.Request(t, http.MethodPost, "/v1/projects", testenv.M{"name": name}))
					if err != nil {
						continue // the server is gone: no answer, no promise
					}
					raw, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusCreated {
						continue
					}
					var doc struct {
						ID   int64
						Name string
					}
					if err := json.Unmarshal(raw, &doc); err != nil || doc.Name != name {
						t.Errorf("201 with %s", raw)
						continue
					}
					mu.Lock()
					acked[doc.ID] = name
					if len(acked) >= killAfter {
						once.Do(func() {
							_ = in.cmd.Process.Kill()
							close(killed)
						})
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		_ = in.cmd.Wait()
		t.Logf("%d creations acknowledged before the kill", len(acked))

		again := startInstance(t, bin, env)
		again.waitReady(t)
		c = &testenv.Client{Srv: again.srv, Slug: "acme", Token: again.srv.Token(t, "acme", "admin@acme.test", "acme-password")}
		stored := map[int64]string{}
		for _, p := range c.List(t, "/v1/projects?limit=10000") {
			stored[testenv.ID(t, p)], _ = p["name"].(string)
		}
		for id, name := range acked {
			if stored[id] != name {
				t.Errorf("acknowledged project %d (%s) after the restart: %q", id, name, stored[id])
			}
		}
		created := map[int64]bool{}
		page := c.Object(t, http.MethodGet, "/v1/changes?limit=10000&resources=projects", nil, http.StatusOK)
		for _, ch := range page["changes"].([]any) {
			ch := ch.(map[string]any)
			if ch["op"] == "create" {
				created[int64(ch["id"].(float64))] = true
			}
		}
		for id := range stored {
			if !created[id] {
				t.Errorf("project %d is stored but its creation is not in the change feed", id)
			}
		}
		if len(created) != len(stored) {
			t.Errorf("%d creations in the feed, %d projects stored", len(created), len(stored))
		}
	})
}
