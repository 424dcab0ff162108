package httpapi

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"planwerk/internal/resource"
)

// TestPanicBecomesGeneric500 checks that a panic never reaches the client:
// the answer is a generic 500 and the log holds the cause and request id.
func TestPanicBecomesGeneric500(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	s := &Server{log: slog.New(slog.NewJSONHandler(&logs, nil))}
	h := s.observe(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("secret internal detail")
	}))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/anything", nil))
	if rec.Code != 500 {
		t.Fatalf("status %d", rec.Code)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if body["code"] != "internal_error" || body["message"] != "internal server error" {
		t.Errorf("body %v", body)
	}
	if strings.Contains(rec.Body.String(), "secret internal detail") {
		t.Error("panic value leaked to the client")
	}
	id := rec.Header().Get("X-Request-Id")
	if id == "" || !strings.Contains(logs.String(), id) || !strings.Contains(logs.String(), "secret internal detail") {
		t.Errorf("log lacks the request id %q or the cause:\n%s", id, logs.String())
	}
}

func TestRetryAfterRoundsUp(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   float64
		want string
	}{{0.001, "1"}, {1, "1"}, {1.2, "2"}, {59.9, "60"}} {
		if got := retryAfterSeconds(secs(c.in)); got != c.want {
			t.Errorf("retryAfterSeconds(%vs) = %s, want %s", c.in, got, c.want)
		}
	}
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// TestUnmatchedAsTheMuxDecides: a request no route matches gets the
// answer the standard library's mux would choose (404, or 405 with the
// same Allow header), as the API's JSON error, for every path of the route
// table with every method, and for paths of no route.
func TestUnmatchedAsTheMuxDecides(t *testing.T) {
	t.Parallel()
	s := New(Config{}, Deps{Registry: resource.New(), Log: slog.New(slog.DiscardHandler)})
	plain := http.NewServeMux()
	paths := []string{"/", "/nowhere", "/healthz/", "/v1", "/v1/files/download", "/v1/files/download/", "/docs/assets"}
	for _, rt := range s.Routes() {
		plain.Handle(rt.Method+" "+rt.Path, http.NotFoundHandler())
		paths = append(paths, strings.NewReplacer("{", "", "}", "").Replace(rt.Path))
	}
	methods := []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "ZZZ123"}
	checked := map[int]int{}
	for _, path := range paths {
		for _, method := range methods {
			r := httptest.NewRequest(method, path, nil)
			h, pattern := plain.Handler(r)
			if pattern != "" {
				continue // a route: not this test's business
			}
			want := httptest.NewRecorder()
			h.ServeHTTP(want, r)
			got := httptest.NewRecorder()
			s.ServeHTTP(got, httptest.NewRequest(method, path, nil))
			what := method + " " + path
			if got.Code != want.Code || got.Header().Get("Allow") != want.Header().Get("Allow") {
				t.Errorf("%s: %d Allow %q, the mux: %d Allow %q", what, got.Code, got.Header().Get("Allow"), want.Code, want.Header().Get("Allow"))
			}
			var body struct{ Code, Message string }
			if err := json.Unmarshal(got.Body.Bytes(), &body); err != nil || !strings.HasPrefix(got.Header().Get("Content-Type"), "application/json") {
				t.Errorf("%s: not the API's JSON error: %s %q", what, got.Header().Get("Content-Type"), got.Body)
			}
			wantBody := map[int]struct{ Code, Message string }{
				http.StatusNotFound:         {"not_found", "no endpoint at " + path},
				http.StatusMethodNotAllowed: {"method_not_allowed", method + " is not allowed on " + path},
			}[want.Code]
			if body != wantBody {
				t.Errorf("%s: %+v, want %+v", what, body, wantBody)
			}
			checked[want.Code]++
		}
	}
	if checked[http.StatusNotFound] == 0 || checked[http.StatusMethodNotAllowed] < 100 {
		t.Errorf("checked only %v", checked)
	}
}
