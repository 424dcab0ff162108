//go:build system

package app_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"planwerk/internal/testenv"
)

// otlpReceiver is an OTLP/HTTP trace receiver on loopback: it keeps
// every span it is sent, with its resource's service.name.
type otlpReceiver struct {
	srv   *httptest.Server
	mu    sync.Mutex
	spans []receivedSpan
}

type receivedSpan struct {
	service string
	*tracepb.Span
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	rc := &otlpReceiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" {
			http.NotFound(w, r)
			return
		}
		var body io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		raw, err := io.ReadAll(body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var req collectortrace.ExportTraceServiceRequest
		if err := proto.Unmarshal(raw, &req); err != nil {
			t.Errorf("OTLP receiver: %v (Content-Type %s)", err, r.Header.Get("Content-Type"))
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		rc.mu.Lock()
		for _, rs := range req.ResourceSpans {
			service := ""
			for _, a := range rs.GetResource().GetAttributes() {
				if a.Key == "service.name" {
					service = a.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					rc.spans = append(rc.spans, receivedSpan{service, s})
				}
			}
		}
		rc.mu.Unlock()
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// trace is the spans received of the trace with id.
func (rc *otlpReceiver) trace(id []byte) []receivedSpan {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	var out []receivedSpan
	for _, s := range rc.spans {
		if bytes.Equal(s.TraceId, id) {
			out = append(out, s)
		}
	}
	return out
}

func (rc *otlpReceiver) all() []receivedSpan {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]receivedSpan(nil), rc.spans...)
}

// waitSpans waits until the spans of a trace include one that ok accepts.
func waitSpans(t *testing.T, rc *otlpReceiver, id []byte, what string, ok func(receivedSpan) bool) receivedSpan {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, s := range rc.trace(id) {
			if ok(s) {
				return s
			}
		}
		if time.Now().After(deadline) {
			var names []string
			for _, s := range rc.trace(id) {
				names = append(names, fmt.Sprintf("%q (%s)", s.Name, s.Kind))
			}
			t.Fatalf("no span %s in trace %x; it has %s", what, id, strings.Join(names, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func attr(s receivedSpan, key string) *commonpb.AnyValue {
	for _, a := range s.Attributes {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// descends reports whether span s descends from the span with id among
// the spans of its trace.
func descends(spans []receivedSpan, s receivedSpan, id []byte) bool {
	byID := map[string]receivedSpan{}
	for _, x := range spans {
		byID[string(x.SpanId)] = x
	}
	for hops := 0; hops < 32; hops++ {
		if bytes.Equal(s.ParentSpanId, id) {
			return true
		}
		p, ok := byID[string(s.ParentSpanId)]
		if !ok {
			return false
		}
		s = p
	}
	return false
}

// TestTracing: with OTEL_EXPORTER_OTLP_ENDPOINT set, `planwerk serve`
// sends its spans to an OTLP/HTTP receiver. A request with traceparent
// continues that trace: its server span has the trace id and the parent,
// is named by method and route pattern, and the database and file store
// work under it are child spans; the webhook delivery of the change it
// made is a span of the same trace, and the receiver gets traceparent of
// that trace. The request's log line names the trace. No span carries the
// password, a token or a secret. Without the variable, nothing is sent.
func TestTracing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		rc := newOTLPReceiver(t)
		hooks := make(chan http.Header, 16)
		receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			select {
			case hooks <- r.Header.Clone():
			default:
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		t.Cleanup(receiver.Close)
		env := []string{
			"PLANWERK_DATABASE=" + testenv.DSN(t, b),
			"PLANWERK_FILES=" + filepath.Join(t.TempDir(), "files"),
			"PLANWERK_WEBHOOK_ALLOW_PRIVATE=true",
			"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.srv.URL,
			"OTEL_BSP_SCHEDULE_DELAY=100",
		}
		in := startInstance(t, bin, env)
		in.waitReady(t)
		const slug, email, password = "traced", "admin@traced.test", "traced-password-7"
		create := exec.Command(bin, "tenant", "create", "--slug", slug, "--admin-email", email, "--admin-password", password)
		create.Env = append(os.Environ(), env...)
		if out, err := create.CombinedOutput(); err != nil {
			t.Fatalf("tenant create: %v\n%s", err, out)
		}
		admin := in.srv.SignIn(t, testenv.Tenant{Slug: slug, AdminEmail: email, Password: password})
		hook := admin.Object(t, http.MethodPost, "/v1/webhooks", testenv.M{"url": receiver.URL + "/hook", "resources": []string{"projects"}}, http.StatusCreated)
		secret, _ := hook["secret"].(string)
		me := admin.Object(t, http.MethodGet, "/v1/users/me", nil, http.StatusOK)
		apiClient := admin.APIClient(t, "sync", testenv.ID(t, me), "read write")
		clientSecret, _ := apiClient["clientSecret"].(string)

		// A request that continues a trace.
		traceID := []byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
		parent := []byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
		admin.Header = http.Header{"Traceparent": {fmt.Sprintf("00-%x-%x-01", traceID, parent)}}
		admin.Create(t, "projects", testenv.M{"name": "Traced"})
		server := waitSpans(t, rc, traceID, "POST /v1/projects", func(s receivedSpan) bool { return s.Name == "POST /v1/projects" })
		if server.Kind != tracepb.Span_SPAN_KIND_SERVER || !bytes.Equal(server.ParentSpanId, parent) {
			t.Errorf("server span: kind %s, parent %x; want a server span with parent %x", server.Kind, server.ParentSpanId, parent)
		}
		if server.service != "planwerk" {
			t.Errorf("service.name %q, want planwerk", server.service)
		}
		if v := attr(server, "http.route"); v.GetStringValue() != "/v1/projects" {
			t.Errorf("http.route %v, want /v1/projects", v)
		}
		db := waitSpans(t, rc, traceID, "of the database", func(s receivedSpan) bool {
			return s.Kind == tracepb.Span_SPAN_KIND_CLIENT && attr(s, "db.system.name") != nil
		})
		if !descends(rc.trace(traceID), db, server.SpanId) {
			t.Errorf("database span %q is not under the server span", db.Name)
		}

		// The webhook delivery goes on with the trace.
		select {
		case h := <-hooks:
			tp := h.Get("Traceparent")
			if !strings.HasPrefix(tp, fmt.Sprintf("00-%x-", traceID)) {
				t.Errorf("the delivery's traceparent %q, want one of trace %x", tp, traceID)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("no webhook delivery")
		}
		delivery := waitSpans(t, rc, traceID, "of the webhook delivery", func(s receivedSpan) bool {
			return s.Kind == tracepb.Span_SPAN_KIND_CLIENT && attr(s, "planwerk.webhook.id") != nil
		})
		if v := attr(delivery, "http.response.status_code"); v.GetIntValue() != http.StatusNoContent {
			t.Errorf("the delivery span's status %v, want 204", v)
		}

		// A file store call under a request of another trace.
		fileTrace := []byte{0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff, 0x01}
		admin.Header = http.Header{"Traceparent": {fmt.Sprintf("00-%x-%x-01", fileTrace, parent)}}
		_, doc := admin.Document(t)
		admin.UploadFile(t, "document", doc, testenv.Part{Filename: "scan.pdf", ContentType: "application/pdf", Data: []byte("%PDF traced")})
		upload := waitSpans(t, rc, fileTrace, "POST /v1/files/upload/{model}/{record}", func(s receivedSpan) bool {
			return s.Name == "POST /v1/files/upload/{model}/{record}"
		})
		put := waitSpans(t, rc, fileTrace, "folder put", func(s receivedSpan) bool { return s.Name == "folder put" })
		if !descends(rc.trace(fileTrace), put, upload.SpanId) {
			t.Errorf("the file store's span is not under the upload's")
		}
		admin.Header = nil

		// The request's log line names its trace.
		if !strings.Contains(in.log.String(), fmt.Sprintf(`"traceId":"%x"`, traceID)) {
			t.Errorf("no log line with traceId %x", traceID)
		}

		// Nothing secret in names or attributes of any span.
		secrets := map[string]string{"password": password, "access token": admin.Token, "webhook secret": secret, "client secret": clientSecret}
		for _, s := range rc.all() {
			texts := []string{s.Name}
			for _, a := range s.Attributes {
				texts = append(texts, a.Key+"="+a.Value.String())
			}
			for _, e := range s.Events {
				for _, a := range e.Attributes {
					texts = append(texts, a.Key+"="+a.Value.String())
				}
			}
			for what, v := range secrets {
				if v == "" {
					t.Fatalf("no %s to look for", what)
				}
				for _, text := range texts {
					if strings.Contains(text, v) {
						t.Errorf("span %q carries the %s: %s", s.Name, what, text)
					}
				}
			}
		}
	})
}

// TestTracingOff: OTEL_SDK_DISABLED=true turns tracing off even with an
// OTLP endpoint: a request with traceparent is answered, its log line
// names no trace, and the receiver has no span when the process has ended
// (which sends every span it holds).
func TestTracingOff(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := testenv.BuildBinary(t, t.TempDir())
	rc := newOTLPReceiver(t)
	env := []string{
		"PLANWERK_DATABASE=sqlite:" + filepath.Join(t.TempDir(), "p.db"),
		"PLANWERK_FILES=" + filepath.Join(t.TempDir(), "files"),
		"OTEL_EXPORTER_OTLP_ENDPOINT=" + rc.srv.URL,
		"OTEL_SDK_DISABLED=true",
	}
	in := startInstance(t, bin, env)
	in.waitReady(t)
	req, err := http.NewRequest(http.MethodGet, in.srv.URL+"/healthz", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	if status, _, _ := testenv.Do(t, req); status != http.StatusOK {
		t.Fatalf("healthz: %d", status)
	}
	if err := in.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := in.cmd.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, in.log.String())
	}
	if n := len(rc.all()); n > 0 {
		t.Errorf("%d spans sent while tracing is off", n)
	}
	if strings.Contains(in.log.String(), "traceId") {
		t.Errorf("a log line names a trace while tracing is off:\n%s", in.log.String())
	}
}
