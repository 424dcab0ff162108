package records_test

import (
	"bytes"
	"fmt"
	"mime/multipart"
	"net/http"
	"testing"

	"planwerk/internal/testenv"
)

// tagOf reads a record and returns its entity tag.
func tagOf(t *testing.T, c *testenv.Client, path string) string {
	t.Helper()
	status, h, raw := send(t, c, http.MethodGet, path, nil)
	if status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, status, raw)
	}
	return strongTag(t, "GET "+path, h)
}

// uploadTo attaches a file to a document and returns the answer.
func uploadTo(t *testing.T, c *testenv.Client, doc int64, data string) (int, http.Header, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, _ := mw.CreateFormFile("file", "a.txt")
	fw.Write([]byte(data))
	mw.Close()
	return send(t, c, http.MethodPost, fmt.Sprintf("/v1/files/upload/document/%d?delete_others=1", doc), buf.Bytes(),
		"Content-Type", mw.FormDataContentType())
}

// TestETagFollowsIndirectChanges: a record's tag changes when the change
// comes from elsewhere: approval of its day, archiving of a skill
// assignment, a file attached, replaced or removed.
func TestETagFollowsIndirectChanges(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		bodies := newBodies(admin)

		// Approval sets a WORK entry's validationStatus.
		entries, _ := srv.Service.Registry.Get("time-entries")
		entry := admin.Create(t, "time-entries", bodies.body(t, entries, M{}))
		entryPath := fmt.Sprintf("/v1/time-entries/%d", testenv.ID(t, entry))
		before := tagOf(t, admin, entryPath)
		admin.Array(t, http.MethodPost, "/v1/approval/bulk-approve", M{"action": "approve",
			"items": []M{{"project": entry["project"], "day": entry["day"]}}}, http.StatusOK)
		if tagOf(t, admin, entryPath) == before {
			t.Error("approving the entry's day left its ETag")
		}

		// Removing a skill assignment archives it.
		assignments, _ := srv.Service.Registry.Get("skill-assignments")
		sa := admin.Create(t, "skill-assignments", bodies.body(t, assignments, M{}))
		saPath := fmt.Sprintf("/v1/skill-assignments/%d", testenv.ID(t, sa))
		before = tagOf(t, admin, saPath)
		status, h, _ := send(t, admin, http.MethodDelete, saPath, nil, "If-Match", before)
		if status != http.StatusOK || h.Get("ETag") == before || tagOf(t, admin, saPath) != h.Get("ETag") {
			t.Errorf("archiving: %d, ETag %q (before %q)", status, h.Get("ETag"), before)
		}

		// A document's file is part of it.
		documents, _ := srv.Service.Registry.Get("documents")
		doc := admin.Create(t, "documents", bodies.body(t, documents, M{}))
		docID := testenv.ID(t, doc)
		docPath := fmt.Sprintf("/v1/documents/%d", docID)
		seen := map[string]string{"created": tagOf(t, admin, docPath)}
		status, h, raw := uploadTo(t, admin, docID, "first")
		if status != http.StatusCreated {
			t.Fatalf("upload: %d %s", status, raw)
		}
		uploadTag := strongTag(t, "upload", h)
		seen["attached"] = tagOf(t, admin, docPath)
		if status, _, _ := uploadTo(t, admin, docID, "second"); status != http.StatusCreated {
			t.Fatal("replace")
		}
		seen["replaced"] = tagOf(t, admin, docPath)
		ups := admin.Array(t, http.MethodGet, fmt.Sprintf("/v1/files/document/%d", docID), nil, http.StatusOK)
		upPath := fmt.Sprintf("/v1/files/%d", testenv.ID(t, ups[0]))
		// The replaced upload's tag is not the current one's.
		status, _, raw = send(t, admin, http.MethodDelete, upPath, nil, "If-Match", uploadTag)
		testenv.WantError(t, "DELETE upload with another upload's tag", status, raw, http.StatusPreconditionFailed, "precondition_failed")
		status, h, _ = send(t, admin, http.MethodDelete, upPath, nil, "If-Match", "*")
		if status != http.StatusOK || h.Get("ETag") == "" {
			t.Fatalf("DELETE upload: %d", status)
		}
		seen["removed"] = tagOf(t, admin, docPath)
		distinct := map[string]bool{}
		for _, v := range seen {
			distinct[v] = true
		}
		if len(distinct) != len(seen) {
			t.Errorf("the document's ETags through its file's life: %v, want four different", seen)
		}
	})
}

// TestETagsBeyondResources: settings, the current user and API clients
// carry tags and honour the conditional headers.
func TestETagsBeyondResources(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "acme"))

		const settings = "/v1/account/settings"
		tag := tagOf(t, admin, settings)
		if status, _, _ := send(t, admin, http.MethodGet, settings, nil, "If-None-Match", tag); status != http.StatusNotModified {
			t.Errorf("settings If-None-Match: %d", status)
		}
		status, _, raw := send(t, admin, http.MethodPatch, settings, M{"useWorktime": true}, "If-Match", `"stale"`)
		testenv.WantError(t, "settings If-Match stale", status, raw, http.StatusPreconditionFailed, "precondition_failed")
		status, h, _ := send(t, admin, http.MethodPatch, settings, M{"useWorktime": true}, "If-Match", tag)
		if status != http.StatusOK || h.Get("ETag") == tag || tagOf(t, admin, settings) != h.Get("ETag") {
			t.Errorf("settings PATCH: %d, ETag %q (before %q)", status, h.Get("ETag"), tag)
		}
		status, _, raw = send(t, admin, http.MethodPut, settings, M{"useWorktime": false}, "If-Match", tag)
		testenv.WantError(t, "settings PUT with the old tag", status, raw, http.StatusPreconditionFailed, "precondition_failed")

		// The current user is the user record.
		me := tagOf(t, admin, "/v1/users/me")
		if me != tagOf(t, admin, fmt.Sprintf("/v1/users/%d", admin.UserID)) {
			t.Error("/v1/users/me and /v1/users/{id} disagree on the ETag")
		}
		if status, _, _ := send(t, admin, http.MethodGet, "/v1/users/me", nil, "If-None-Match", me); status != http.StatusNotModified {
			t.Errorf("users/me If-None-Match: %d", status)
		}

		// API clients: the tag of the created client is its reads' tag.
		status, h, raw = send(t, admin, http.MethodPost, "/v1/api-clients", M{"name": "sync", "user": admin.UserID, "scope": "read"})
		if status != http.StatusCreated {
			t.Fatalf("create client: %d %s", status, raw)
		}
		created := strongTag(t, "POST api-client", h)
		path := fmt.Sprintf("/v1/api-clients/%d", testenv.ID(t, testenv.Decode(t, raw)))
		if tagOf(t, admin, path) != created {
			t.Error("the created client's ETag is not its reads'")
		}
		if status, _, _ := send(t, admin, http.MethodGet, path, nil, "If-None-Match", created); status != http.StatusNotModified {
			t.Errorf("api-client If-None-Match: %d", status)
		}
		status, _, raw = send(t, admin, http.MethodDelete, path, nil, "If-Match", `"stale"`)
		testenv.WantError(t, "api-client DELETE stale", status, raw, http.StatusPreconditionFailed, "precondition_failed")
		if status, _, _ := send(t, admin, http.MethodDelete, path, nil, "If-Match", created); status != http.StatusOK {
			t.Errorf("api-client DELETE with its tag: %d", status)
		}
	})
}
