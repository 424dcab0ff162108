package idempotency_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/idempotency"
	"planwerk/internal/store"
)

// memKeys is a Store in memory: keys without time (a lease runs out when
// a test says so) and a log of the calls.
type memKeys struct {
	mu    sync.Mutex
	keys  map[idempotency.Key]*memKey
	calls []string
	// claimLost makes the next claims fail as if another request had
	// claimed the key and let it go before the look-up.
	claimLost int
	// finishLost makes Finish find the key taken over.
	finishLost bool
	// stuck makes Finish and Release wait until their context ends, as
	// a database that does not answer does.
	stuck bool
}

type memKey struct {
	holder  []byte
	running bool
	answer  idempotency.Answer
}

func newMemKeys() *memKeys { return &memKeys{keys: map[idempotency.Key]*memKey{}} }

func (m *memKeys) note(call string) {
	m.calls = append(m.calls, call)
}

func (m *memKeys) Claim(_ context.Context, k idempotency.Key, holder []byte, _ time.Time, _, _ time.Duration) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("claim")
	if m.claimLost > 0 {
		m.claimLost--
		return false, nil
	}
	if _, taken := m.keys[k]; taken {
		return false, nil
	}
	m.keys[k] = &memKey{holder: bytes.Clone(holder), running: true}
	return true, nil
}

func (m *memKeys) Entry(_ context.Context, k idempotency.Key, _ time.Time) (idempotency.Entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("entry")
	e, ok := m.keys[k]
	if !ok {
		return idempotency.Entry{}, fmt.Errorf("idempotency key: %w", store.ErrNotFound)
	}
	if e.running {
		return idempotency.Entry{Running: true}, nil
	}
	return idempotency.Entry{Answer: e.answer}, nil
}

// held returns k's entry if holder holds it.
func (m *memKeys) held(k idempotency.Key, holder []byte) (*memKey, bool) {
	e, ok := m.keys[k]
	if !ok || !e.running || !bytes.Equal(e.holder, holder) {
		return nil, false
	}
	return e, true
}

func (m *memKeys) Renew(_ context.Context, k idempotency.Key, holder []byte, _ time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("renew")
	_, ok := m.held(k, holder)
	return ok, nil
}

func (m *memKeys) Finish(ctx context.Context, k idempotency.Key, holder []byte, a idempotency.Answer) (bool, error) {
	if err := m.wait(ctx); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("finish")
	e, ok := m.held(k, holder)
	if !ok || m.finishLost {
		return false, nil
	}
	e.running, e.holder, e.answer = false, nil, a
	return true, nil
}

func (m *memKeys) Release(ctx context.Context, k idempotency.Key, holder []byte) (bool, error) {
	if err := m.wait(ctx); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note("release")
	if _, ok := m.held(k, holder); !ok {
		return false, nil
	}
	delete(m.keys, k)
	return true, nil
}

// wait waits for ctx to end when the store is stuck.
func (m *memKeys) wait(ctx context.Context) error {
	m.mu.Lock()
	stuck := m.stuck
	m.mu.Unlock()
	if !stuck {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

// took returns the calls made since the last look and forgets them.
func (m *memKeys) took() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	calls := strings.Join(m.calls, " ")
	m.calls = nil
	return calls
}

// app is a handler that answers with status and counts its runs; it reads
// the body first, as handlers do.
type app struct {
	mu     sync.Mutex
	runs   int
	status int
}

func (a *app) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.runs++
	n, status := a.runs, a.status
	a.mu.Unlock()
	body := new(bytes.Buffer)
	_, _ = body.ReadFrom(r.Body)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Location", fmt.Sprintf("/v1/projects/%d", n))
	w.Header().Set("X-Not-Replayed", "yes")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"id":%d,"got":%q}`, n, body.String())
}

func (a *app) ran() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.runs
}

// request is a POST with the given Idempotency-Key headers.
func request(body string, keys ...string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/v1/projects", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	for _, k := range keys {
		r.Header.Add(idempotency.Header, k)
	}
	return r
}

// serve runs r through s for user 1 of tenant 1.
func serve(s *idempotency.Service, r *http.Request, next http.Handler, shows idempotency.Shows) (*httptest.ResponseRecorder, error) {
	w := httptest.NewRecorder()
	err := s.Serve(w, r, 1, 1, next, shows)
	return w, err
}

// wantCode checks that err is the refusal code.
func wantCode(t *testing.T, what string, err error, code string) {
	t.Helper()
	var e *errs.Error
	if !errors.As(err, &e) || e.Code != code {
		t.Errorf("%s: %v, want %s", what, err, code)
	}
}

// TestServe walks a key through its states on a Store in memory: the
// first request runs and its answer is kept, the same request again gets
// it replayed, another request with the key is refused, a request while
// the key's holder runs waits, and an answer that is not kept frees the
// key for the next request.
func TestServe(t *testing.T) {
	t.Parallel()
	keys := newMemKeys()
	s := idempotency.New(keys, idempotency.Config{}, slog.New(slog.DiscardHandler))
	next := &app{status: http.StatusCreated}

	// Without the header, nothing but the handler.
	if w, err := serve(s, request(`{"name":"a"}`), next, nil); err != nil || w.Code != http.StatusCreated {
		t.Fatalf("without a key: %d %v", w.Code, err)
	}
	if calls := keys.took(); calls != "" {
		t.Errorf("without a key the store saw %q", calls)
	}

	// Invalid keys are refused before anything runs.
	for what, values := range map[string][]string{
		"two headers": {"a", "b"}, "empty": {""}, "a control character": {"a\tb"}, "too long": {strings.Repeat("k", 256)},
	} {
		_, err := serve(s, request(`{}`, values...), next, nil)
		wantCode(t, what, err, "invalid_idempotency_key")
	}
	if next.ran() != 1 || keys.took() != "" {
		t.Fatalf("an invalid key ran the handler or reached the store")
	}

	// The first request runs and its answer is kept.
	first, err := serve(s, request(`{"name":"a"}`, "k1"), next, nil)
	if err != nil || first.Code != http.StatusCreated || next.ran() != 2 {
		t.Fatalf("first request: %d %v, %d runs", first.Code, err, next.ran())
	}
	if calls := keys.took(); calls != "claim finish" {
		t.Errorf("first request: store calls %q", calls)
	}

	// The same request again is answered from the store, the handler idle.
	again, err := serve(s, request(`{"name":"a"}`, "k1"), next, nil)
	if err != nil || next.ran() != 2 {
		t.Fatalf("replay: %v, %d runs", err, next.ran())
	}
	if again.Code != first.Code || again.Body.String() != first.Body.String() ||
		again.Header().Get("Location") != first.Header().Get("Location") || again.Header().Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s %v, want the first answer %d %s", again.Code, again.Body, again.Header(), first.Code, first.Body)
	}
	if again.Header().Get("X-Not-Replayed") != "" {
		t.Error("replay repeated a header it does not keep")
	}
	if calls := keys.took(); calls != "claim entry" {
		t.Errorf("replay: store calls %q", calls)
	}

	// Another request with the key: 422, the handler idle.
	_, err = serve(s, request(`{"name":"b"}`, "k1"), next, nil)
	wantCode(t, "another body", err, "idempotency_key_reused")

	// A replay the caller may not see is refused as shows says.
	hidden := errs.New(errs.NotFound, "not_found", "no such record")
	var shown []byte
	_, err = serve(s, request(`{"name":"a"}`, "k1"), next, func(_ *http.Request, body []byte) error {
		shown = body
		return hidden
	})
	if !errors.Is(err, hidden) || string(shown) != first.Body.String() {
		t.Errorf("replay hidden by shows: %v, shows saw %q", err, shown)
	}

	// A key held by a running request: 409.
	if ok, _ := keys.Claim(context.Background(), idempotency.Key{TenantID: 1, UserID: 1, Name: "held"}, []byte("elsewhere"), time.Now(), 0, 0); !ok {
		t.Fatal("claim held")
	}
	_, err = serve(s, request(`{}`, "held"), next, nil)
	wantCode(t, "a running key", err, "idempotency_key_in_use")
	if next.ran() != 2 {
		t.Errorf("the handler ran %d times, want 2", next.ran())
	}
	keys.took()

	// Answers that say to retry, and failures, are not kept: the key is
	// free for the next request. Other refusals are kept.
	for _, c := range []struct {
		status int
		kept   bool
	}{{http.StatusInternalServerError, false}, {http.StatusTooManyRequests, false}, {http.StatusRequestTimeout, false},
		{499, false}, {http.StatusServiceUnavailable, false}, {http.StatusBadRequest, true}, {http.StatusOK, true}} {
		key := fmt.Sprintf("status-%d", c.status)
		next := &app{status: c.status}
		if w, err := serve(s, request(`{}`, key), next, nil); err != nil || w.Code != c.status {
			t.Fatalf("%d: %d %v", c.status, w.Code, err)
		}
		want := "claim release"
		if c.kept {
			want = "claim finish"
		}
		if calls := keys.took(); calls != want {
			t.Errorf("answer %d: store calls %q, want %q", c.status, calls, want)
		}
		w, err := serve(s, request(`{}`, key), next, nil)
		if err != nil || w.Code != c.status || (w.Header().Get("Idempotent-Replayed") == "true") != c.kept || next.ran() != map[bool]int{true: 1, false: 2}[c.kept] {
			t.Errorf("answer %d again: %d %v, replayed %q, %d runs", c.status, w.Code, err, w.Header().Get("Idempotent-Replayed"), next.ran())
		}
		keys.took()
	}
}

// TestServeFreedBetween: a key let go between a lost claim and the look-up
// is claimed again; a key that keeps slipping away ends in 409.
func TestServeFreedBetween(t *testing.T) {
	t.Parallel()
	keys := newMemKeys()
	s := idempotency.New(keys, idempotency.Config{}, slog.New(slog.DiscardHandler))
	next := &app{status: http.StatusCreated}

	keys.claimLost = 2
	if w, err := serve(s, request(`{}`, "k"), next, nil); err != nil || w.Code != http.StatusCreated || next.ran() != 1 {
		t.Fatalf("after two lost claims: %d %v, %d runs", w.Code, err, next.ran())
	}
	if calls := keys.took(); calls != "claim entry claim entry claim finish" {
		t.Errorf("store calls %q", calls)
	}

	keys.claimLost = 3
	_, err := serve(s, request(`{}`, "k2"), next, nil)
	wantCode(t, "three lost claims", err, "idempotency_key_in_use")
	if next.ran() != 1 {
		t.Errorf("the handler ran %d times, want 1", next.ran())
	}
}

// TestServeReleasesOnPanic: a handler that panics (an aborted answer
// included) frees its key on the way up.
func TestServeReleasesOnPanic(t *testing.T) {
	t.Parallel()
	keys := newMemKeys()
	s := idempotency.New(keys, idempotency.Config{}, slog.New(slog.DiscardHandler))
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) })
	func() {
		defer func() {
			if p := recover(); p != http.ErrAbortHandler {
				t.Errorf("panic %v, want http.ErrAbortHandler passed on", p)
			}
		}()
		_, _ = serve(s, request(`{}`, "k"), boom, nil)
	}()
	if calls := keys.took(); calls != "claim release" {
		t.Errorf("store calls %q, want the key released", calls)
	}
	next := &app{status: http.StatusCreated}
	if w, err := serve(s, request(`{}`, "k"), next, nil); err != nil || w.Code != http.StatusCreated || next.ran() != 1 {
		t.Errorf("after the panic: %d %v, %d runs", w.Code, err, next.ran())
	}
}

// TestServeTakenOver: an answer whose key was taken over while it ran is
// still sent, and not kept.
func TestServeTakenOver(t *testing.T) {
	t.Parallel()
	keys := newMemKeys()
	keys.finishLost = true
	s := idempotency.New(keys, idempotency.Config{}, slog.New(slog.DiscardHandler))
	next := &app{status: http.StatusCreated}
	if w, err := serve(s, request(`{}`, "k"), next, nil); err != nil || w.Code != http.StatusCreated {
		t.Fatalf("taken over: %d %v", w.Code, err)
	}
	if e, err := keys.Entry(context.Background(), idempotency.Key{TenantID: 1, UserID: 1, Name: "k"}, time.Now()); err != nil || !e.Running {
		t.Errorf("the key after its answer was not stored: %+v %v, want it still running", e, err)
	}
}

// TestServeWithinTheDeadline: when the store does not answer, keeping
// the answer or releasing the key ends within a second of the request's
// deadline, so that the request is answered by then: a success (kept)
// and a failure (released) alike.
func TestServeWithinTheDeadline(t *testing.T) {
	t.Parallel()
	for _, status := range []int{http.StatusCreated, http.StatusServiceUnavailable} {
		keys := newMemKeys()
		s := idempotency.New(keys, idempotency.Config{}, slog.New(slog.DiscardHandler))
		keys.stuck = true
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		deadline, _ := ctx.Deadline()
		r := request(`{}`, fmt.Sprint("k", status)).WithContext(ctx)
		w, err := serve(s, r, &app{status: status}, nil)
		cancel()
		if late := time.Since(deadline); late > time.Second {
			t.Errorf("answer %d: done %s after the request's deadline, more than a second", status, late)
		}
		if err != nil || w.Code != status {
			t.Errorf("answer %d: %d %v", status, w.Code, err)
		}
	}
}
