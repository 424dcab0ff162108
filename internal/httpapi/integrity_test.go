package httpapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// TestTextIntegrity: a query parameter (name or value) that is not UTF-8
// or holds NUL once percent-decoded is a 400 naming it on every engine,
// whatever the endpoint reads it for, the audit log's CSV included;
// at the token endpoint such a username (or password, or refresh token)
// is a wrong one (invalid_grant), such a client id an unknown client
// (401 invalid_client), in a form field or in Basic authentication, for
// every grant and for revocation, and any other such field a malformed
// request (invalid_request); an upload whose Content-Type, a part's
// Content-Type or its filename is such text is a 400 invalid_upload
// naming the header, and nothing is stored.
func TestTextIntegrity(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		tn := srv.CreateTenant(t, "bytes")
		admin := srv.SignIn(t, tn)
		for _, path := range []string{
			"/v1/audit-log?resource=%ff",
			"/v1/audit-log?resource=a%00b",
			"/v1/audit-log?op=%ff",
			"/v1/audit-log?from=%00",
			"/v1/projects/1/history?x=%ff",
			"/v1/projects?name=%ff",
			"/v1/projects?%ff=1",
			"/v1/projects?where=%7B%22name%22%3A%22%00%22%7D",
			"/v1/changes?resources=%ff",
			"/v1/changes?after=%00",
			"/v1/analytics/time-totals?from=2026-01-01&to=2026-01-31&groupBy=%ff",
			"/v1/reports/time?from=2026-01-01&to=2026-01-31&groupBy=%ff",
			"/v1/reports/time?from=2026-01-01&to=2026-01-31&where=%7B%22ticket%22%3A%22%00%22%7D",
			"/v1/users/me?x=%c3",
		} {
			for _, accept := range []string{"application/json", "text/csv"} {
				status, _, body := admin.With("Accept", accept).Call(t, http.MethodGet, path, nil)
				if status != http.StatusBadRequest || body["message"] == nil || body["code"] == nil {
					t.Errorf("GET %s (Accept %s): %d %v, want 400 with a code and a message", path, accept, status, body)
				}
			}
		}
		if status, _, body := admin.Call(t, http.MethodGet, "/v1/audit-log?resource=%ff", nil); status != http.StatusBadRequest ||
			body["code"] != "invalid_query" || !strings.Contains(body["message"].(string), `"resource"`) {
			t.Errorf("audit log with a resource of %%ff: %d %v, want invalid_query naming resource", status, body)
		}

		apiClient := admin.APIClient(t, "sync", admin.UserID, "read write")
		secret := apiClient["clientSecret"].(string)
		password := testenv.PasswordForm(tn.AdminEmail, tn.Password)
		form := func(base url.Values, key, value string) url.Values {
			f := url.Values{}
			for k, v := range base {
				f[k] = v
			}
			f.Set(key, value)
			return f
		}
		for _, c := range []struct {
			name   string
			path   string
			form   url.Values
			basic  []string // user and password of Basic authentication
			status int
			code   string
		}{
			{"username with NUL", "/oauth2/token", form(password, "username", "admin\x00@bytes.test"), nil, 400, "invalid_grant"},
			{"username not UTF-8", "/oauth2/token", form(password, "username", "admin\xff@bytes.test"), nil, 400, "invalid_grant"},
			{"client_id not UTF-8, password grant", "/oauth2/token", form(password, "client_id", "app\xff"), nil, 401, "invalid_client"},
			{"client_id with NUL, password grant", "/oauth2/token", form(password, "client_id", "app\x00"), nil, 401, "invalid_client"},
			{"client_id not UTF-8, client credentials", "/oauth2/token", testenv.ClientForm("pwc\xff", secret), nil, 401, "invalid_client"},
			{"client_id with NUL, client credentials", "/oauth2/token", testenv.ClientForm("pwc\x00", secret), nil, 401, "invalid_client"},
			{"client_id not UTF-8 in Basic", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, []string{"pwc%FF", secret}, 401, "invalid_client"},
			{"client_id with NUL in Basic", "/oauth2/token", url.Values{"grant_type": {"client_credentials"}}, []string{"pwc%00", secret}, 401, "invalid_client"},
			{"refresh token not UTF-8", "/oauth2/token", form(testenv.RefreshForm("pwr\xff"), "client_id", "app"), nil, 400, "invalid_grant"},
			{"revocation, client_id not UTF-8", "/oauth2/revoke", url.Values{"token": {"x"}, "client_id": {"pwc\xff"}, "client_secret": {secret}}, nil, 401, "invalid_client"},
			{"revocation, client_id with NUL", "/oauth2/revoke", url.Values{"token": {"x"}, "client_id": {"pwc\x00"}, "client_secret": {secret}}, nil, 401, "invalid_client"},
			{"revocation, token not UTF-8", "/oauth2/revoke", url.Values{"token": {"x\xff"}, "client_id": {"app"}, "client_secret": {"s"}}, nil, 400, "invalid_request"},
			{"another field with NUL", "/oauth2/token", form(password, "note", "a\x00"), nil, 400, "invalid_request"},
		} {
			req := srv.TokenRequest(t, tn.Slug, c.form)
			req.URL.Path = c.path
			if c.basic != nil {
				req.SetBasicAuth(c.basic[0], c.basic[1])
			}
			status, _, body := testenv.Answer(t, req)
			if status != c.status || body["error"] != c.code {
				t.Errorf("%s: %d %v, want %d %s", c.name, status, body, c.status, c.code)
			}
		}
		// The right credentials still work afterwards.
		if status, _, body := srv.Grant(t, tn.Slug, password); status != http.StatusOK {
			t.Errorf("the admin's password grant after the refusals: %d %v", status, body)
		}

		// An upload's headers, written byte for byte: Go's multipart
		// writer would quote or refuse some of them.
		_, doc := admin.Document(t)
		path := fmt.Sprintf("/v1/files/upload/document/%d?delete_others=1", doc)
		for _, c := range []struct {
			name        string
			contentType string // the request's
			disposition string
			partType    string
			fragment    string // of the message
		}{
			{"a part's Content-Type not UTF-8", "", `form-data; name="file"; filename="a.txt"`, "text/plain; charset=\xff", "Content-Type"},
			{"a part's Content-Type cut in a character", "", `form-data; name="file"; filename="a.txt"`, "text/\xc3", "Content-Type"},
			{"a filename not UTF-8", "", "form-data; name=\"file\"; filename=\"a\xffb.txt\"", "text/plain", "Content-Disposition"},
			{"an encoded filename with NUL", "", `form-data; name="file"; filename*=utf-8''a%00b.txt`, "text/plain", "filename"},
			{"an encoded filename not UTF-8", "", `form-data; name="file"; filename*=utf-8''a%ffb.txt`, "text/plain", "filename"},
			{"the request's Content-Type not UTF-8", "multipart/form-data; boundary=\"B\xff\"", `form-data; name="file"; filename="a.txt"`, "text/plain", "Content-Type"},
		} {
			ct := c.contentType
			boundary := "B"
			if ct == "" {
				ct = "multipart/form-data; boundary=B"
			} else {
				boundary = "B\xff"
			}
			multipart := "--" + boundary + "\r\nContent-Disposition: " + c.disposition + "\r\nContent-Type: " + c.partType +
				"\r\n\r\nhello\r\n--" + boundary + "--\r\n"
			req := admin.Request(t, http.MethodPost, path, multipart)
			req.Header.Set("Content-Type", ct)
			status, _, body := testenv.Answer(t, req)
			if msg, _ := body["message"].(string); status != http.StatusBadRequest || body["code"] != "invalid_upload" ||
				!strings.Contains(msg, c.fragment) || !strings.Contains(msg, "UTF-8") {
				t.Errorf("%s: %d %v, want 400 invalid_upload naming %s and UTF-8", c.name, status, body, c.fragment)
			}
		}
		if ups := admin.List(t, fmt.Sprintf("/v1/files/document/%d", doc)); len(ups) != 0 {
			t.Errorf("uploads after the refusals: %v", ups)
		}
		admin.UploadFile(t, "document", doc, testenv.Part{Filename: "a.txt", ContentType: "text/plain; charset=utf-8", Data: []byte("a")})
	})
}

// TestMarkupAsItself: JSON answers write <, > and & as themselves: a
// record's text in the answers of its create, GET, list and change feed,
// an error message naming the modifiers "<" and "<=", a signed download
// link with its query, the OpenAPI document.
func TestMarkupAsItself(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		admin := srv.SignIn(t, srv.CreateTenant(t, "markup"))
		escaped := func(what string, raw []byte) {
			t.Helper()
			for _, e := range []string{`\u003c`, `\u003e`, `\u0026`} {
				if strings.Contains(string(raw), e) {
					t.Errorf("%s holds %s: %s", what, e, raw)
				}
			}
		}
		const name = `<b>Tom & Jerry</b>`
		status, _, raw := admin.Send(t, http.MethodPost, "/v1/projects", testenv.M{"name": name})
		if status != http.StatusCreated || !strings.Contains(string(raw), name) {
			t.Fatalf("POST: %d %s", status, raw)
		}
		escaped("the create's answer", raw)
		var created testenv.M
		testenv.DecodeInto(t, raw, &created)
		id := testenv.ID(t, created)
		for _, path := range []string{fmt.Sprintf("/v1/projects/%d", id), "/v1/projects", "/v1/changes", fmt.Sprintf("/v1/projects/%d/history", id)} {
			status, _, raw := admin.Send(t, http.MethodGet, path, nil)
			if status != http.StatusOK || !strings.Contains(string(raw), name) {
				t.Errorf("GET %s: %d %s", path, status, raw)
			}
			escaped("GET "+path, raw)
		}
		status, _, raw = admin.Send(t, http.MethodGet, "/v1/projects?where="+url.QueryEscape(`{"name":{"<<":1}}`), nil)
		if status != http.StatusBadRequest || !strings.Contains(string(raw), "use one of <, <=, >, >=") {
			t.Errorf("an unknown modifier: %d %s", status, raw)
		}
		escaped("the refusal of an unknown modifier", raw)
		_, doc := admin.Document(t)
		upload := admin.UploadFile(t, "document", doc, testenv.Part{Filename: "a.txt", Data: []byte("a")})
		status, _, raw = admin.Send(t, http.MethodGet, fmt.Sprintf("/v1/files/download/%d", upload), nil)
		if status != http.StatusOK || !strings.Contains(string(raw), "&") {
			t.Errorf("the download link: %d %s", status, raw)
		}
		escaped("the download link", raw)
		status, _, raw = admin.Send(t, http.MethodGet, "/v1/openapi.json", nil)
		if status != http.StatusOK {
			t.Fatalf("the OpenAPI document: %d", status)
		}
		escaped("the OpenAPI document", raw)
	})
}
