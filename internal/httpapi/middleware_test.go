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
)

// TestPanicBecomesGeneric500 checks that a panic never reaches the client:
// the answer is a generic 500 and the log holds the cause and request id.
func TestPanicBecomesGeneric500(t *testing.T) {
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
