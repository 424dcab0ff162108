//go:build system

package httpapi_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// TestDocsBrowser loads /docs from the running server in headless
// chromium and checks that Redoc shows the token endpoint and the
// /v1/project-days operations, with every request staying on the server.
func TestDocsBrowser(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat(docChromium); err != nil {
		msg := docChromium + " is missing: browser test skipped (apt-get install chromium)"
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	c, _ := docStart(t)
	srvURL := c.Srv.URL
	if !strings.HasPrefix(srvURL, "http://127.0.0.1:") {
		t.Fatalf("server at %s, want 127.0.0.1", srvURL)
	}

	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(docChromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Nothing but the test server resolves: the page must work offline.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancel()

	var mu sync.Mutex
	var requests, problems []string
	offServer := map[network.RequestID]string{} // requests for other hosts, until the CSP blocks them
	// The first Run starts the browser; no timeout on it (a timeout there
	// would stop the browser), the actions below have their own.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start %s: %v", docChromium, err)
	}
	if err := chromedp.Listen(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			requests = append(requests, ev.Request.URL)
			if u := ev.Request.URL; !strings.HasPrefix(u, srvURL+"/") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "blob:") {
				offServer[ev.RequestID] = u
			}
		case *network.EventLoadingFailed:
			if ev.BlockedReason == network.BlockedReasonCsp {
				delete(offServer, ev.RequestID)
			}
		case *runtime.EventExceptionThrown:
			d := ev.ExceptionDetails
			desc := ""
			if d.Exception != nil {
				desc = d.Exception.Description
			}
			problems = append(problems, fmt.Sprintf("exception: %s %s (%s:%d)", d.Text, desc, d.URL, d.LineNumber))
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError && !docKnownBlocked.MatchString(ev.Entry.Text) {
				problems = append(problems, "console: "+ev.Entry.Text+" "+ev.Entry.URL)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value)+a.Description)
				}
				problems = append(problems, "console.error: "+strings.Join(parts, " "))
			}
		}
	}); err != nil {
		t.Fatal(err)
	}

	runCtx, stop := context.WithTimeout(ctx, 90*time.Second)
	defer stop()
	if err := chromedp.Do(runCtx, chromedp.Navigate(srvURL+"/docs")); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	// Redoc has rendered when the operations' paths are on the page.
	rendered := `document.body && document.body.innerText.includes("/oauth2/token") && document.body.innerText.includes("/v1/project-days/{id}")`
	if _, err := chromedp.Run(runCtx, chromedp.Poll[bool](rendered, chromedp.WithPollingTimeout(60*time.Second))); err != nil {
		text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText.slice(0, 2000) : ""`))
		t.Fatalf("Redoc did not render the operations: %v\npage text: %s\nproblems: %q", err, text, problems)
	}
	text, err := chromedp.Run(runCtx, chromedp.Evaluate[string](`document.body.innerText`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Planwerk API",
		"/oauth2/token", "Get or refresh a token",
		"/v1/project-days", "/v1/project-days/{id}", "List ProjectDay records", "Read a ProjectDay",
		"OAuth2Password", "BearerAuth",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
	if t.Failed() {
		t.Logf("page text: %.3000s", text)
	}
	if path := os.Getenv("PLANWERK_DOCS_SCREENSHOT"); path != "" {
		png, err := chromedp.Run(runCtx, chromedp.CaptureScreenshot())
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}

	mu.Lock()
	defer mu.Unlock()
	for _, u := range offServer {
		t.Errorf("the page requested %s, which is not on the server, and the CSP did not block it", u)
	}
	for _, want := range []string{"/docs", "/docs/assets/redoc.standalone.js", "/v1/openapi.json"} {
		if !slices.Contains(requests, srvURL+want) {
			t.Errorf("the page did not request %s; requests: %q", want, requests)
		}
	}
	for _, p := range problems {
		t.Errorf("browser: %s", p)
	}
}

// docKnownBlocked is the one request for another host that Redoc makes:
// the logo of its sidebar credit, which the page's CSP blocks (Redoc then
// hides the image).
var docKnownBlocked = regexp.MustCompile(`^Loading the image 'https://cdn\.redoc\.ly/redoc/logo-mini\.svg' violates the following Content Security Policy`)

// docChromium is Debian's chromium.
const docChromium = "/usr/bin/chromium"
