// Command planwerkexample signs in to Planwerk with the OAuth 2.0 password
// grant, renews the token, and uses the client oapi-codegen generates from
// the OpenAPI 3.0 rendition: it creates a project, lists projects with a
// where filter, records a time entry with start and end times, uploads a
// file to a document and downloads it through its signed link. It prints
// one line per step.
//
// Generate the client first (PLANWERK_OPENAPI is a file or URL of
// /v1/openapi-3.0.json):
//
//	PLANWERK_OPENAPI=http://127.0.0.1:8080/v1/openapi-3.0.json go generate
//	go run . -base http://127.0.0.1:8080 -tenant demo -user admin@demo.test -password demo-password
package main

//go:generate go run github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2 -generate types,client -package api -o api/api.gen.go $PLANWERK_OPENAPI

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"time"

	openapi_types "github.com/oapi-codegen/runtime/types"
	"golang.org/x/oauth2"

	"planwerkexample/api"
)

// tenantTransport names the tenant on every request: the token endpoint
// and the data API both need the companyurl header.
type tenantTransport struct {
	tenant string
	base   http.RoundTripper
}

func (t tenantTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("companyurl", t.tenant)
	return t.base.RoundTrip(req)
}

func main() {
	base := flag.String("base", "http://127.0.0.1:8080", "the service's base URL")
	tenant := flag.String("tenant", "demo", "the tenant's slug (companyurl header)")
	user := flag.String("user", "admin@demo.test", "e-mail address")
	password := flag.String("password", "demo-password", "password")
	flag.Parse()
	if err := run(context.Background(), *base, *tenant, *user, *password); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, base, tenant, user, password string) error {
	// The oauth2 package takes its HTTP client from the context, for the
	// token endpoint and as the base of the client it returns.
	httpClient := &http.Client{Timeout: 30 * time.Second, Transport: tenantTransport{tenant, http.DefaultTransport}}
	ctx = context.WithValue(ctx, oauth2.HTTPClient, httpClient)
	conf := &oauth2.Config{
		ClientID:     "planwerk-example",
		ClientSecret: "unused",
		Endpoint:     oauth2.Endpoint{TokenURL: base + "/oauth2/token", AuthStyle: oauth2.AuthStyleInParams},
	}

	tok, err := conf.PasswordCredentialsToken(ctx, user, password)
	if err != nil {
		return fmt.Errorf("password grant: %w", err)
	}
	fmt.Printf("token: password grant, expires in %s\n", time.Until(tok.Expiry).Round(time.Minute))

	// A token source renews an expired token with its refresh token; mark
	// this one expired to see it happen.
	expired := *tok
	expired.Expiry = time.Now().Add(-time.Minute)
	ts := conf.TokenSource(ctx, &expired)
	renewed, err := ts.Token()
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if renewed.AccessToken == tok.AccessToken || renewed.RefreshToken == tok.RefreshToken {
		return fmt.Errorf("refresh: the token was not renewed")
	}
	fmt.Println("token: renewed with the refresh token")

	c, err := api.NewClientWithResponses(base, api.WithHTTPClient(oauth2.NewClient(ctx, ts)))
	if err != nil {
		return err
	}

	// Project.
	name := fmt.Sprintf("Example %d", time.Now().UnixNano())
	pr, err := c.CreateProjectWithResponse(ctx, nil, api.ProjectCreate{"name": name})
	if err := check(pr, err); err != nil {
		return fmt.Errorf("create project: %w", err)
	}
	project := *pr.JSON201.Id
	fmt.Printf("project: created %d %q\n", project, name)

	where, err := json.Marshal(map[string]any{"name": name})
	if err != nil {
		return err
	}
	ws := string(where)
	lr, err := c.ListProjectsWithResponse(ctx, &api.ListProjectsParams{Where: &ws})
	if err := check(lr, err); err != nil {
		return fmt.Errorf("list projects: %w", err)
	}
	if n := len(*lr.JSON200); n != 1 || *(*lr.JSON200)[0].Id != project {
		return fmt.Errorf("list projects: where %s found %d projects", ws, n)
	}
	fmt.Printf("projects: where %s found %d\n", ws, len(*lr.JSON200))

	// Time entry with start and end times: the account records times.
	mode := api.SettingsUpdateTimerModeSTARTTIMEENDTIME
	sr, err := c.UpdateSettingsWithResponse(ctx, nil, api.SettingsUpdate{TimerMode: &mode})
	if err := check(sr, err); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	fmt.Printf("settings: timerMode %s\n", sr.JSON200.TimerMode)

	// project is declared for tasks: a field; name is one of the
	// attributes stored as sent.
	tr, err := c.CreateTaskWithResponse(ctx, nil, api.TaskCreate{Project: &project, AdditionalProperties: map[string]any{"name": "Planning"}})
	if err := check(tr, err); err != nil {
		return fmt.Errorf("create task: %w", err)
	}
	task := *tr.JSON201.Id
	fmt.Printf("task: created %d\n", task)

	berlin := time.FixedZone("+01:00", 60*60)
	start := time.Date(2026, 1, 5, 9, 0, 0, 0, berlin)
	end := time.Date(2026, 1, 5, 12, 30, 0, 0, berlin)
	work := api.TimeEntryCreateTrackingTypeWORK
	er, err := c.CreateTimeEntryWithResponse(ctx, nil, api.TimeEntryCreate{
		Day:          openapi_types.Date{Time: time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)},
		TrackingType: &work,
		Project:      &project,
		Task:         &task,
		StartTime:    &start,
		EndTime:      &end,
	})
	if err := check(er, err); err != nil {
		return fmt.Errorf("create time entry: %w", err)
	}
	e := er.JSON201
	fmt.Printf("time entry: created %d, sent %s–%s, stored %s–%s\n", *e.Id,
		start.Format(time.RFC3339), end.Format(time.RFC3339),
		e.StartTime.UTC().Format(time.RFC3339), e.EndTime.UTC().Format(time.RFC3339))

	// A document of the project, and a file for it.
	dr, err := c.CreateDocumentWithResponse(ctx, nil, api.DocumentCreate{Model: api.DocumentCreateModelProject, Record: project})
	if err := check(dr, err); err != nil {
		return fmt.Errorf("create document: %w", err)
	}
	document := *dr.JSON201.Id
	fmt.Printf("document: created %d\n", document)

	content := []byte("Übersicht: Planung 3,5 h\n")
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part := textproto.MIMEHeader{}
	// The filename in UTF-8, as browsers send it.
	part.Set("Content-Disposition", `form-data; name="file"; filename="Übersicht.txt"`)
	part.Set("Content-Type", "text/plain; charset=utf-8")
	fw, err := mw.CreatePart(part)
	if err != nil {
		return err
	}
	if _, err := fw.Write(content); err != nil {
		return err
	}
	if err := mw.Close(); err != nil {
		return err
	}
	replace := api.UploadFileParamsDeleteOthersN1
	ur, err := c.UploadFileWithBodyWithResponse(ctx, api.UploadFileParamsModelDocument, document,
		&api.UploadFileParams{DeleteOthers: &replace}, mw.FormDataContentType(), &body)
	if err := check(ur, err); err != nil {
		return fmt.Errorf("upload: %w", err)
	}
	up := ur.JSON201
	fmt.Printf("upload: %d %q, %d bytes, %s\n", up.Id, up.Filename, up.Size, up.ContentType)

	// The signed link needs no token: it can be handed to a browser.
	lnk, err := c.DownloadURLWithResponse(ctx, up.Id, nil)
	if err := check(lnk, err); err != nil {
		return fmt.Errorf("download URL: %w", err)
	}
	fmt.Println("download: signed link received")
	resp, err := http.Get(*lnk.JSON200)
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return fmt.Errorf("download: %w", err)
	}
	if resp.StatusCode != http.StatusOK || !bytes.Equal(got, content) {
		return fmt.Errorf("download: status %d, %d bytes, want the %d bytes uploaded", resp.StatusCode, len(got), len(content))
	}
	fmt.Printf("download: %d bytes, same as uploaded (%s)\n", len(got), resp.Header.Get("Content-Disposition"))
	return nil
}

// response is what every generated response has.
type response interface {
	StatusCode() int
	GetBody() []byte
}

// check turns a failed call or an answer other than 2xx into an error
// that shows the service's problem document.
func check(r response, err error) error {
	if err != nil {
		return err
	}
	if c := r.StatusCode(); c < 200 || c > 299 {
		return fmt.Errorf("status %d: %s", c, bytes.TrimSpace(r.GetBody()))
	}
	return nil
}
