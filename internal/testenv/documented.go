package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// Every server a test starts checks its own error answers against the
// OpenAPI document it serves: an operation answers only the statuses it
// documents, and each error's code is named (`code`) in the description
// of that status. The whole test suite thus proves that the document lists
// every error an operation returns, not only the tests written for it.

// errorDocs is what the document says of each operation's errors.
type errorDocs struct {
	paths []docPath
}

type docPath struct {
	segments []string // "{...}" matches any one segment
	ops      map[string]map[int]string
}

var (
	docsOnce sync.Once
	docs     *errorDocs
	docsErr  error
)

// loadErrorDocs reads the served document once per test binary: it is the
// same whatever the configuration.
func loadErrorDocs(h http.Handler) (*errorDocs, error) {
	docsOnce.Do(func() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/v1/openapi.json", nil))
		if rec.Code != http.StatusOK {
			docsErr = fmt.Errorf("GET /v1/openapi.json: %d", rec.Code)
			return
		}
		docs, docsErr = parseErrorDocs(rec.Body.Bytes())
	})
	return docs, docsErr
}

func parseErrorDocs(raw []byte) (*errorDocs, error) {
	type response struct {
		Ref         string `json:"$ref"`
		Description string `json:"description"`
	}
	var doc struct {
		Paths      map[string]map[string]json.RawMessage
		Components struct{ Responses map[string]response }
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("openapi.json: %w", err)
	}
	d := &errorDocs{}
	for path, item := range doc.Paths {
		p := docPath{segments: strings.Split(path, "/"), ops: map[string]map[int]string{}}
		for method, rawOp := range item {
			var op struct{ Responses map[string]response }
			if json.Unmarshal(rawOp, &op) != nil || op.Responses == nil {
				continue // parameters, summaries
			}
			statuses := map[int]string{}
			for code, r := range op.Responses {
				status, err := strconv.Atoi(code)
				if err != nil {
					continue
				}
				if name, ok := strings.CutPrefix(r.Ref, "#/components/responses/"); ok {
					r = doc.Components.Responses[name]
				}
				statuses[status] = r.Description
			}
			p.ops[strings.ToUpper(method)] = statuses
		}
		d.paths = append(d.paths, p)
	}
	return d, nil
}

// operation finds the documented statuses of a request: the path whose
// segments match, the most literal one first (/v1/users/me before
// /v1/users/{id}).
func (d *errorDocs) operation(method, path string) (map[int]string, bool) {
	segs := strings.Split(path, "/")
	best, literals := -1, -1
	for i, p := range d.paths {
		if len(p.segments) != len(segs) {
			continue
		}
		n := 0
		for j, s := range p.segments {
			if strings.HasPrefix(s, "{") {
				if segs[j] == "" {
					n = -1
					break
				}
				continue
			}
			if s != segs[j] {
				n = -1
				break
			}
			n++
		}
		if n > literals {
			best, literals = i, n
		}
	}
	if best < 0 {
		return nil, false
	}
	statuses, ok := d.paths[best].ops[method]
	return statuses, ok
}

// check returns what is undocumented about one error answer, or "".
func (d *errorDocs) check(method, path string, status int, body []byte) string {
	statuses, ok := d.operation(method, path)
	if !ok {
		return "" // not an operation of the document: 404/405 of the router
	}
	desc, ok := statuses[status]
	if !ok {
		return fmt.Sprintf("%s %s answered %d, which its operation does not document: %.200s", method, path, status, body)
	}
	var e struct{ Code, Error string } // Error: the OAuth error form
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	for _, code := range []string{e.Code, e.Error} {
		if code != "" && !strings.Contains(desc, "`"+code+"`") {
			return fmt.Sprintf("%s %s answered %d %s, which the description of its %d does not name: %q", method, path, status, code, status, desc)
		}
	}
	return ""
}

// documentedErrors wraps a server's handler with the check; a finding
// fails t.
func documentedErrors(t testing.TB, h http.Handler) http.Handler {
	d, err := loadErrorDocs(h)
	if err != nil {
		t.Fatalf("error documentation: %v", err)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &captureWriter{ResponseWriter: w}
		h.ServeHTTP(cw, r)
		// 499 (the client went away) is only logged: no client reads it.
		if cw.status >= 400 && cw.status != 499 && r.Method != http.MethodHead && cw.Header().Get("Content-Encoding") == "" {
			if msg := d.check(r.Method, r.URL.Path, cw.status, cw.body.Bytes()); msg != "" {
				t.Errorf("undocumented error: %s", msg)
			}
		}
	})
}

// captureWriter keeps the status and the first bytes of an error answer.
type captureWriter struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
}

const captureMax = 8 << 10

func (c *captureWriter) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *captureWriter) Write(p []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	if c.status >= 400 && c.body.Len() < captureMax {
		c.body.Write(p[:min(len(p), captureMax-c.body.Len())])
	}
	return c.ResponseWriter.Write(p)
}

// Flush and Unwrap keep streaming and http.ResponseController working
// through the wrapper.
func (c *captureWriter) Flush() {
	_ = http.NewResponseController(c.ResponseWriter).Flush()
}

func (c *captureWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
