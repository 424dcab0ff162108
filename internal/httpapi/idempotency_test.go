package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/config"
	"planwerk/internal/idempotency"
	"planwerk/internal/testenv"
)

type M = testenv.M

const replayed = "Idempotent-Replayed"

// keyed is c sending the Idempotency-Key key with every request.
func keyed(c *testenv.Client, key string) *testenv.Client { return c.With("Idempotency-Key", key) }

// named lists the projects of c's tenant called name.
func named(t *testing.T, c *testenv.Client, name string) []M {
	t.Helper()
	return c.List(t, "/v1/projects?where="+url.QueryEscape(fmt.Sprintf(`{"name": %q}`, name)))
}

// wantReplay checks that a second answer repeats the first, marked as a
// replay, and that the first was not one.
func wantReplay(t *testing.T, what string, s1 int, h1 http.Header, b1 []byte, s2 int, h2 http.Header, b2 []byte) {
	t.Helper()
	if h1.Get(replayed) != "" {
		t.Errorf("%s: the first answer says %s: %q", what, replayed, h1.Get(replayed))
	}
	if s2 != s1 || !bytes.Equal(b2, b1) || h2.Get(replayed) != "true" {
		t.Fatalf("%s: second answer %d %s %q=%q, want %d %s replayed", what, s2, b2, replayed, h2.Get(replayed), s1, b1)
	}
	for _, name := range []string{"Location", "ETag", "Content-Type", "Cache-Control"} {
		if h2.Get(name) != h1.Get(name) {
			t.Errorf("%s: replayed %s %q, want %q", what, name, h2.Get(name), h1.Get(name))
		}
	}
}

// second signs in a second admin of c's tenant.
func secondAdmin(t *testing.T, c *testenv.Client, email string) *testenv.Client {
	t.Helper()
	const password = "second-password"
	u := c.Create(t, "users", M{"email": email, "password": password, "isAdmin": true})
	return &testenv.Client{Srv: c.Srv, Slug: c.Slug, UserID: testenv.ID(t, u), Token: c.Srv.Token(t, c.Slug, email, password)}
}

// TestIdempotencyKeys: a POST with an Idempotency-Key is done once; the
// same request again gets the first answer, another request with the key
// 422; keys belong to a tenant's user; malformed keys are refused before
// anything is done.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		a := srv.SignIn(t, tn)

		t.Run("replay", func(t *testing.T) {
			k := keyed(a, "create-once")
			s1, h1, b1 := k.Send(t, http.MethodPost, "/v1/projects", M{"name": "Once"})
			if s1 != http.StatusCreated || h1.Get("Location") == "" {
				t.Fatalf("first: %d %s, Location %q", s1, b1, h1.Get("Location"))
			}
			s2, h2, b2 := k.Send(t, http.MethodPost, "/v1/projects", M{"name": "Once"})
			wantReplay(t, "POST /v1/projects", s1, h1, b1, s2, h2, b2)
			if n := len(named(t, a, "Once")); n != 1 {
				t.Errorf("%d projects Once, want 1", n)
			}
			// Without the header nothing changes: a second project.
			a.Create(t, "projects", M{"name": "Once"})
			if n := len(named(t, a, "Once")); n != 2 {
				t.Errorf("%d projects Once after a POST without key, want 2", n)
			}
		})

		t.Run("another request", func(t *testing.T) {
			k := keyed(a, "reused")
			k.Create(t, "projects", M{"name": "First"})
			k.Fail(t, http.MethodPost, "/v1/projects", M{"name": "Second"}, http.StatusUnprocessableEntity, "idempotency_key_reused")
			k.Fail(t, http.MethodPost, "/v1/projects?x=1", M{"name": "First"}, http.StatusUnprocessableEntity, "idempotency_key_reused")
			k.Fail(t, http.MethodPost, "/v1/clients", M{"name": "First"}, http.StatusUnprocessableEntity, "idempotency_key_reused")
			if n := len(named(t, a, "Second")); n != 0 {
				t.Errorf("%d projects Second, want none", n)
			}
			if got := a.List(t, "/v1/clients?where="+url.QueryEscape(`{"name": "First"}`)); len(got) != 0 {
				t.Errorf("clients First: %v, want none", got)
			}
		})

		t.Run("scoped to tenant and user", func(t *testing.T) {
			other := srv.SignIn(t, srv.CreateTenant(t, "other"))
			second := secondAdmin(t, a, "second@acme.test")
			keyed(a, "shared-key").Create(t, "projects", M{"name": "Scoped"})
			for who, c := range map[string]*testenv.Client{"another user": second, "another tenant": other} {
				s, h, raw := keyed(c, "shared-key").Send(t, http.MethodPost, "/v1/projects", M{"name": "Scoped"})
				if s != http.StatusCreated || h.Get(replayed) != "" {
					t.Errorf("%s with the same key: %d %s (%s=%q), want a project of its own", who, s, raw, replayed, h.Get(replayed))
				}
			}
			if n := len(named(t, a, "Scoped")); n != 2 {
				t.Errorf("acme has %d projects Scoped, want 2 (one per user)", n)
			}
			if n := len(named(t, other, "Scoped")); n != 1 {
				t.Errorf("other has %d projects Scoped, want 1", n)
			}
		})

		t.Run("invalid keys", func(t *testing.T) {
			for name, key := range map[string]string{
				"empty":        "",
				"256 chars":    strings.Repeat("k", 256),
				"control char": "a\tb",
				"non-ASCII":    "schlüssel",
			} {
				keyed(a, key).Fail(t, http.MethodPost, "/v1/projects", M{"name": "Invalid " + name}, http.StatusBadRequest, "invalid_idempotency_key")
				if n := len(named(t, a, "Invalid "+name)); n != 0 {
					t.Errorf("%s key: %d projects made", name, n)
				}
			}
			req := a.Request(t, http.MethodPost, "/v1/projects", M{"name": "Invalid twice"})
			req.Header.Add("Idempotency-Key", "one")
			req.Header.Add("Idempotency-Key", "two")
			status, _, raw := testenv.Do(t, req)
			testenv.WantError(t, "two Idempotency-Key headers", status, raw, http.StatusBadRequest, "invalid_idempotency_key")
			// (Control characters but the tab, such as DEL, never get past
			// Go's HTTP server.) The longest key, spaces and every other printable character are fine.
			keyed(a, strings.Repeat("k", 255)).Create(t, "projects", M{"name": "Longest key"})
			keyed(a, `a key with spaces & "quotes" ~!`).Create(t, "projects", M{"name": "Spaces"})
		})

		t.Run("refusal replayed", func(t *testing.T) {
			k := keyed(a, "refused")
			s1, h1, b1 := k.Send(t, http.MethodPost, "/v1/projects", `["Refused"]`)
			testenv.WantError(t, "a project that is no object", s1, b1, http.StatusBadRequest, "invalid_json")
			s2, h2, b2 := k.Send(t, http.MethodPost, "/v1/projects", `["Refused"]`)
			wantReplay(t, "refused POST", s1, h1, b1, s2, h2, b2)
			// The key is spent on the refusal: a corrected body needs a new one.
			k.Fail(t, http.MethodPost, "/v1/projects", M{"name": "Corrected"}, http.StatusUnprocessableEntity, "idempotency_key_reused")
		})

		t.Run("token endpoint ignores the header", func(t *testing.T) {
			req := srv.TokenRequest(t, tn.Slug, testenv.PasswordForm(tn.AdminEmail, tn.Password))
			req.Header.Set("Idempotency-Key", "")
			if status, h, body := testenv.Answer(t, req); status != http.StatusOK || h.Get(replayed) != "" {
				t.Errorf("token with an empty Idempotency-Key: %d %v", status, body)
			}
		})

		t.Run("concurrent", func(t *testing.T) {
			const n = 8
			req := func() *http.Request {
				return keyed(a, "concurrent").Request(t, http.MethodPost, "/v1/projects", M{"name": "Concurrent"})
			}
			type answer struct {
				status   int
				code     string
				replayed bool
				err      error
			}
			answers := make([]answer, n)
			reqs := make([]*http.Request, n)
			for i := range reqs {
				reqs[i] = req()
			}
			start := make(chan struct{})
			var wg sync.WaitGroup
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					resp, err := http.DefaultClient.Do(reqs[i])
					if err != nil {
						answers[i].err = err
						return
					}
					defer resp.Body.Close()
					raw, _ := io.ReadAll(resp.Body)
					answers[i] = answer{status: resp.StatusCode, replayed: resp.Header.Get(replayed) == "true"}
					if resp.StatusCode != http.StatusCreated {
						answers[i].code = string(raw)
					}
				}()
			}
			close(start)
			wg.Wait()
			fresh := 0
			for i, an := range answers {
				switch {
				case an.err != nil:
					t.Errorf("request %d: %v", i, an.err)
				case an.status == http.StatusCreated && !an.replayed:
					fresh++
				case an.status == http.StatusCreated:
				case an.status == http.StatusConflict && strings.Contains(an.code, `"idempotency_key_in_use"`):
				default:
					t.Errorf("request %d: %d %s", i, an.status, an.code)
				}
			}
			if fresh != 1 {
				t.Errorf("%d requests ran, want 1: %+v", fresh, answers)
			}
			if got := len(named(t, a, "Concurrent")); got != 1 {
				t.Errorf("%d projects Concurrent, want 1", got)
			}
			// Once the first has finished, every retry gets its answer.
			if s, h, _ := keyed(a, "concurrent").Send(t, http.MethodPost, "/v1/projects", M{"name": "Concurrent"}); s != http.StatusCreated || h.Get(replayed) != "true" {
				t.Errorf("retry after the race: %d, %s %q", s, replayed, h.Get(replayed))
			}
		})

		t.Run("running elsewhere", func(t *testing.T) {
			// A key held by a running request (here: claimed straight in the
			// database, as another instance does) answers 409; once its
			// lease has run out (its process died) the next request takes
			// it over.
			db := srv.Service.DB
			keys := idempotency.NewKeys(db)
			k := idempotency.Key{TenantID: tn.ID, UserID: a.UserID, Name: "held"}
			ctx := context.Background()
			if ok, err := keys.Claim(ctx, k, []byte("elsewhere"), time.Now(), time.Hour, 24*time.Hour); err != nil || !ok {
				t.Fatalf("claim: %v %v", ok, err)
			}
			keyed(a, "held").Fail(t, http.MethodPost, "/v1/projects", M{"name": "Held"}, http.StatusConflict, "idempotency_key_in_use")
			if n := len(named(t, a, "Held")); n != 0 {
				t.Fatalf("%d projects Held while the key is in use", n)
			}
			if _, err := db.ExecContext(ctx, `UPDATE idempotency_keys SET locked_until = $1 WHERE tenant_id = $2 AND key = 'held'`,
				time.Now().Add(-time.Second).UnixMilli(), tn.ID); err != nil {
				t.Fatal(err)
			}
			s, h, raw := keyed(a, "held").Send(t, http.MethodPost, "/v1/projects", M{"name": "Held"})
			if s != http.StatusCreated || h.Get(replayed) != "" {
				t.Fatalf("after the holder's lease ran out: %d %s", s, raw)
			}
			// The dead holder can no longer store an answer under the key.
			if ok, err := keys.Finish(ctx, k, []byte("elsewhere"), idempotency.Answer{Status: 500}); ok || err != nil {
				t.Errorf("finish by the dead holder: %v %v, want false", ok, err)
			}
			s2, h2, raw2 := keyed(a, "held").Send(t, http.MethodPost, "/v1/projects", M{"name": "Held"})
			wantReplay(t, "after takeover", s, h, raw, s2, h2, raw2)
		})

		t.Run("expired key", func(t *testing.T) {
			keyed(a, "expiring").Create(t, "projects", M{"name": "Before expiry"})
			expire(t, srv, tn.ID, "expiring")
			s, h, raw := keyed(a, "expiring").Send(t, http.MethodPost, "/v1/projects", M{"name": "After expiry"})
			if s != http.StatusCreated || h.Get(replayed) != "" {
				t.Fatalf("an expired key used again: %d %s", s, raw)
			}
		})

		t.Run("purge", func(t *testing.T) {
			keyed(a, "purge-old").Create(t, "projects", M{"name": "Purge old"})
			keyed(a, "purge-new").Create(t, "projects", M{"name": "Purge new"})
			expire(t, srv, tn.ID, "purge-old")
			n, err := idempotency.NewKeys(srv.Service.DB).PurgeExpired(context.Background(), time.Now())
			if err != nil || n != 1 {
				t.Fatalf("purge: %d %v, want 1 key removed", n, err)
			}
			if got := keys(t, srv, tn.ID, "purge-old", "purge-new"); got != 1 {
				t.Errorf("%d of the keys left, want only purge-new", got)
			}
			s, h, _ := keyed(a, "purge-new").Send(t, http.MethodPost, "/v1/projects", M{"name": "Purge new"})
			if s != http.StatusCreated || h.Get(replayed) != "true" {
				t.Errorf("the key that had not expired: %d, %s %q", s, replayed, h.Get(replayed))
			}
		})
	})
}

// expire makes a tenant's key expire.
func expire(t *testing.T, srv *testenv.Server, tenantID int64, key string) {
	t.Helper()
	if _, err := srv.Service.DB.ExecContext(context.Background(),
		`UPDATE idempotency_keys SET expires_at = $1 WHERE tenant_id = $2 AND key = $3`,
		time.Now().Add(-time.Minute).UnixMilli(), tenantID, key); err != nil {
		t.Fatal(err)
	}
}

// keys counts which of the names are stored keys of the tenant.
func keys(t *testing.T, srv *testenv.Server, tenantID int64, names ...string) int {
	t.Helper()
	n := 0
	for _, name := range names {
		var c int
		if err := srv.Service.DB.QueryRowContext(context.Background(),
			`SELECT count(*) FROM idempotency_keys WHERE tenant_id = $1 AND key = $2`, tenantID, name).Scan(&c); err != nil {
			t.Fatal(err)
		}
		n += c
	}
	return n
}

// TestIdempotencyKeyEndpoints: the action endpoints and uploads take keys
// too; an upload is fingerprinted by its parts, whatever boundary the
// client picks.
func TestIdempotencyKeyEndpoints(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "acme")
		a := srv.SignIn(t, tn)
		twice := func(t *testing.T, key, path string, body any) (int, []byte) {
			t.Helper()
			k := keyed(a, key)
			s1, h1, b1 := k.Send(t, http.MethodPost, path, body)
			s2, h2, b2 := k.Send(t, http.MethodPost, path, body)
			wantReplay(t, "POST "+path, s1, h1, b1, s2, h2, b2)
			return s1, b1
		}

		t.Run("bulk approve", func(t *testing.T) {
			project := testenv.ID(t, a.Create(t, "projects", M{"name": "Approvals"}))
			body := M{"action": "approve", "items": []M{{"project": project, "day": "2026-02-09"}}}
			if s, raw := twice(t, "approve", "/v1/approval/bulk-approve", body); s != http.StatusOK {
				t.Fatalf("bulk approve: %d %s", s, raw)
			}
			if days := a.List(t, "/v1/project-days"); len(days) != 1 {
				t.Errorf("project days: %v, want one", days)
			}
		})

		t.Run("skill set apply", func(t *testing.T) {
			category := testenv.ID(t, a.Create(t, "skill-set-categories", M{"name": "Roles"}))
			set := testenv.ID(t, a.Create(t, "skill-sets", M{"name": "Backend", "category": category}))
			tags := testenv.ID(t, a.Create(t, "tag-categories", M{"name": "Tech"}))
			skill := testenv.ID(t, a.Create(t, "tags", M{"name": "Go", "type": 1, "category": tags}))
			a.Create(t, "tag-assignments", M{"tag": skill, "model": "skillSet", "record": set})
			user := testenv.ID(t, a.Create(t, "users", M{"email": "apply@acme.test"}))
			path := fmt.Sprintf("/v1/skill-sets/%d/apply", set)
			if s, raw := twice(t, "apply", path, M{"users": []int64{user}}); s != http.StatusOK {
				t.Fatalf("apply: %d %s", s, raw)
			}
			if got := a.List(t, "/v1/skill-assignments"); len(got) != 1 {
				t.Errorf("skill assignments: %v, want one", got)
			}
		})

		t.Run("api client", func(t *testing.T) {
			// The replay shows the secret again: it is the first answer,
			// kept for the key's 24 hours.
			s, raw := twice(t, "client", "/v1/api-clients", M{"name": "Export", "user": a.UserID, "scope": "read"})
			if s != http.StatusCreated || !strings.Contains(string(raw), `"clientSecret":"pws_`) {
				t.Fatalf("api client: %d %s", s, raw)
			}
			if got := a.List(t, "/v1/api-clients"); len(got) != 1 {
				t.Errorf("api clients: %v, want one", got)
			}
		})

		t.Run("upload", func(t *testing.T) {
			_, doc := a.Document(t)
			path := testenv.UploadPath("document", doc, false)
			data := testenv.Data(1, 300<<10)
			k := keyed(a, "upload")
			// testenv.Multipart picks a new boundary for each body.
			s1, h1, b1 := k.Upload(t, path, testenv.Part{Filename: "a.bin", Data: data})
			if s1 != http.StatusCreated {
				t.Fatalf("upload: %d %s", s1, b1)
			}
			s2, h2, b2 := k.Upload(t, path, testenv.Part{Filename: "a.bin", Data: data})
			wantReplay(t, "upload", s1, h1, b1, s2, h2, b2)
			other := bytes.Clone(data)
			other[len(other)-1]++
			s3, _, b3 := k.Upload(t, path, testenv.Part{Filename: "a.bin", Data: other})
			testenv.WantError(t, "another file under the key", s3, b3, http.StatusUnprocessableEntity, "idempotency_key_reused")
			s4, _, b4 := k.Upload(t, path, testenv.Part{Filename: "b.bin", Data: data})
			testenv.WantError(t, "another file name under the key", s4, b4, http.StatusUnprocessableEntity, "idempotency_key_reused")
			if got := a.List(t, fmt.Sprintf("/v1/files/document/%d", doc)); len(got) != 1 {
				t.Errorf("uploads: %v, want one", got)
			}
		})

		t.Run("5xx not kept", func(t *testing.T) {
			// The file store fails (the tenant's folder is a file): 503,
			// and the key is free again once the store works.
			_, doc := a.Document(t)
			path := testenv.UploadPath("document", doc, false)
			blocker := filepath.Join(srv.Config.Files, fmt.Sprintf("t%d", tn.ID))
			if err := os.RemoveAll(blocker); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(blocker, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			k := keyed(a, "fails")
			s, _, raw := k.Upload(t, path, testenv.Part{Filename: "a.bin", Data: []byte("content")})
			testenv.WantError(t, "upload to a failing store", s, raw, http.StatusServiceUnavailable, "file_store_unavailable")
			if err := os.Remove(blocker); err != nil {
				t.Fatal(err)
			}
			s, h, raw := k.Upload(t, path, testenv.Part{Filename: "a.bin", Data: []byte("content")})
			if s != http.StatusCreated || h.Get(replayed) != "" {
				t.Fatalf("the same upload once the store works: %d %s %s=%q", s, raw, replayed, h.Get(replayed))
			}
		})

		t.Run("client gone before the answer", func(t *testing.T) {
			// The client sends a whole upload and goes away. The upload
			// goes on (it no longer depends on the client) and its answer
			// is kept: the retry gets it, and there is one upload.
			_, doc := a.Document(t)
			path := testenv.UploadPath("document", doc, false)
			ct, body := testenv.Multipart(t, testenv.Part{Filename: "gone.bin", Data: testenv.Data(3, 256<<10)})
			h := hold(t, a, path, "gone", ct, body)
			h.cut(len(body))
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := srv.Service.Handler.Wait(ctx); err != nil {
				t.Fatalf("the request did not end: %v", err)
			}
			req := keyed(a, "gone").Request(t, http.MethodPost, path, body)
			req.Header.Set("Content-Type", ct)
			s, hdr, raw := testenv.Do(t, req)
			if s != http.StatusCreated || hdr.Get(replayed) != "true" {
				t.Fatalf("retry of the upload whose client went away: %d %s %s=%q", s, raw, replayed, hdr.Get(replayed))
			}
			if got := a.List(t, fmt.Sprintf("/v1/files/document/%d", doc)); len(got) != 1 {
				t.Errorf("uploads: %v, want one", got)
			}
		})

		t.Run("client cut off mid-upload", func(t *testing.T) {
			_, doc := a.Document(t)
			path := testenv.UploadPath("document", doc, false)
			ct, body := testenv.Multipart(t, testenv.Part{Filename: "cut.bin", Data: testenv.Data(2, 256<<10)})
			h := hold(t, a, path, "cut", ct, body)
			h.cut(len(body) / 2)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := srv.Service.Handler.Wait(ctx); err != nil {
				t.Fatalf("the cut request did not end: %v", err)
			}
			if n := keys(t, srv, tn.ID, "cut"); n != 0 {
				t.Fatalf("the cut request left its key behind")
			}
			req := keyed(a, "cut").Request(t, http.MethodPost, path, body)
			req.Header.Set("Content-Type", ct)
			s, hdr, raw := testenv.Do(t, req)
			if s != http.StatusCreated || hdr.Get(replayed) != "" {
				t.Fatalf("the whole upload after the cut one: %d %s", s, raw)
			}
		})
	})
}

// TestIdempotencyKeysAcrossInstances: instances on one database honour
// each other's keys, running and finished, and keys outlive a restart.
func TestIdempotencyKeysAcrossInstances(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		one := testenv.Start(t, b)
		two := testenv.Start(t, b, func(c *config.Config) { c.Database = one.Config.Database })
		tn := one.CreateTenant(t, "acme")
		a1 := one.SignIn(t, tn)
		a2 := &testenv.Client{Srv: two, Slug: a1.Slug, Token: a1.Token, UserID: a1.UserID}

		// A request held on one (it waits for its body) keeps the key
		// from two.
		body := []byte(`{"name": "Shared"}`)
		h := hold(t, a1, "/v1/projects", "shared", "application/json", body)
		keyed(a2, "shared").Fail(t, http.MethodPost, "/v1/projects", M{"name": "Shared"}, http.StatusConflict, "idempotency_key_in_use")
		s1, h1, b1 := h.finish(t)
		if s1 != http.StatusCreated {
			t.Fatalf("held request: %d %s", s1, b1)
		}
		req := keyed(a2, "shared").Request(t, http.MethodPost, "/v1/projects", body)
		s2, h2, b2 := testenv.Do(t, req)
		wantReplay(t, "replay on the other instance", s1, h1, b1, s2, h2, b2)

		// A restart: a new server on the same database replays the answer.
		one.HTTP.Close()
		two.HTTP.Close()
		three := testenv.Start(t, b, func(c *config.Config) { c.Database = one.Config.Database })
		a3 := &testenv.Client{Srv: three, Slug: a1.Slug, Token: a1.Token, UserID: a1.UserID}
		s3, h3, b3 := testenv.Do(t, keyed(a3, "shared").Request(t, http.MethodPost, "/v1/projects", body))
		wantReplay(t, "replay after a restart", s1, h1, b1, s3, h3, b3)
		if n := len(named(t, a3, "Shared")); n != 1 {
			t.Errorf("%d projects Shared, want 1", n)
		}
	})
}

// held is a keyed POST whose server has claimed the key and waits for the
// body: the request sent Expect: 100-continue, and the server asked for
// the body when its handler began to read it.
type held struct {
	conn net.Conn
	br   *bufio.Reader
	body []byte
}

func hold(t *testing.T, c *testenv.Client, path, key, contentType string, body []byte) *held {
	t.Helper()
	conn := dial(t, c.Srv)
	req := keyed(c, key).Request(t, http.MethodPost, path, nil)
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Content-Length", strconv.Itoa(len(body)))
	req.Header.Set("Expect", "100-continue")
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\n", path, req.URL.Host)
	if err := req.Header.Write(&head); err != nil {
		t.Fatal(err)
	}
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	// A bound for a broken server, not a timing the test relies on.
	_ = conn.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(conn)
	status, err := br.ReadString('\n')
	if err != nil || !strings.Contains(status, " 100 ") {
		t.Fatalf("held request: %q %v, want 100 Continue", status, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("held request: %q %v after 100 Continue", blank, err)
	}
	return &held{conn: conn, br: br, body: body}
}

// finish sends the body and reads the answer.
func (h *held) finish(t *testing.T) (int, http.Header, []byte) {
	t.Helper()
	if _, err := h.conn.Write(h.body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(h.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, raw
}

// cut sends the first n bytes of the body and closes the connection.
func (h *held) cut(n int) {
	_, _ = h.conn.Write(h.body[:n])
	h.conn.Close()
}
