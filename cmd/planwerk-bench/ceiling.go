package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/pprof"
	"strconv"
)

// answer is a response exactly as it crossed the wire: its headers and
// its body before any decoding by the client (still compressed when the
// server compressed it).
type answer struct {
	header http.Header
	body   []byte
}

// capture fetches u once and keeps the answer as sent. The request asks
// for gzip itself, as the benchmark's client does implicitly, so the
// server answers as it answers the benchmark; the transport leaves the
// body encoded.
func capture(ctx context.Context, u, token string) (answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return answer{}, err
	}
	req.Header.Set("companyurl", "bench")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return answer{}, fmt.Errorf("capture %s: %d", u, resp.StatusCode)
	}
	h := resp.Header.Clone()
	h.Del("Date") // the server adds a fresh one
	if resp.ContentLength >= 0 {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	return answer{header: h, body: body}, nil
}

// decoded is a as a server answers that does not compress: the same
// headers without Content-Encoding and Content-Length, the body as the
// client reads it (plain), Content-Type application/json as before.
func (a answer) decoded(plain []byte) answer {
	h := a.header.Clone()
	h.Del("Content-Encoding")
	h.Del("Content-Length")
	return answer{header: h, body: plain}
}

// ceiling serves a from memory with a bare net/http handler, whatever the
// request: the most any handler can do for the same bytes on this machine
// with this client. A streamed answer (no Content-Length) is streamed
// here too.
func ceiling(a answer) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		h := w.Header()
		for k, v := range a.header {
			h[k] = v
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(a.body)
	}))
}

// profile writes a CPU profile of fn to path; with path empty it only
// runs fn.
func profile(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		return err
	}
	err = fn()
	pprof.StopCPUProfile()
	return err
}
