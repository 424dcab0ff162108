package httpapi

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"

	"planwerk/internal/errs"
	"planwerk/internal/openapi"
)

// docsAssets are the API reference page's renderer, Redoc 2.5.4 from the
// npm package "redoc" (bundles/redoc.standalone.js, MIT), with its licence
// and the licences of what it bundles. Served by the binary itself: the
// page loads nothing from elsewhere.
//
//go:embed docsassets/redoc.standalone.js docsassets/redoc.standalone.js.LICENSE.txt docsassets/LICENSE.txt
var docsAssets embed.FS

// docsPage is the API reference page. Redoc's standalone bundle renders
// every <redoc spec-url> element; the URLs are relative so the page also
// works behind a path prefix. No web fonts are loaded (Redoc falls back to
// the system's fonts), so the page renders offline.
const docsPage = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Planwerk API reference</title>
<link rel="icon" href="data:,">
<link rel="alternate" type="application/json" href="v1/openapi.json">
<style>
body { margin: 0; padding: 0; }
img[alt="redocly logo"] { display: none; } /* its CDN image is blocked: see docsCSP */
</style>
</head>
<body>
<noscript>This page needs JavaScript. The OpenAPI document is at <a href="v1/openapi.json">/v1/openapi.json</a>.</noscript>
<redoc spec-url="v1/openapi.json" path-in-middle-panel required-props-first expand-responses="200,201"></redoc>
<script src="docs/assets/redoc.standalone.js"></script>
</body>
</html>
`

// docsCSP keeps the page to its own origin. Redoc injects its styles
// (styled-components) and runs its search index in a blob: worker. Its
// sidebar credit shows a logo from Redocly's CDN; the policy blocks that
// request (nothing leaves for another host), and the page's style hides the image.
const docsCSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; " +
	"font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; " +
	"frame-ancestors 'none'"

// docsRoutes registers GET /v1/openapi.json, its 3.0 rendition and GET /docs. It runs last, so
// the document it generates once here, from the registry and the complete
// route table (these routes included), describes every route.
func (s *Server) docsRoutes() {
	var doc *openapiFiles // set below, before the server answers anything
	s.route("GET /v1/openapi.json", Public, s.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-cache")
		doc.v31.serve(w, r, "application/json; charset=utf-8")
		return nil
	}))
	// The same document in OpenAPI 3.0's dialect, for client generators
	// that do not read 3.1.
	s.route("GET /v1/openapi-3.0.json", Public, s.handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Cache-Control", "no-cache")
		doc.v30.serve(w, r, "application/json; charset=utf-8")
		return nil
	}))
	s.route("GET /docs", Public, s.handle(func(w http.ResponseWriter, _ *http.Request) error {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Content-Security-Policy", docsCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(docsPage))
		return nil
	}))
	s.route("GET /docs/assets/{file}", Public, s.handle(s.docsAsset))

	doc = s.openapiDocument()
}

// openapiDocs caches generated documents by what they are generated from,
// so processes that start many servers (tests) generate each only once.
var openapiDocs sync.Map // fingerprint → *openapiFiles

// openapiFiles are the OpenAPI document and its 3.0 rendition.
type openapiFiles struct{ v31, v30 *docsFile }

// openapiDocument generates the OpenAPI document of the registry and the
// route table, and its 3.0 rendition.
func (s *Server) openapiDocument() *openapiFiles {
	routes := s.Routes()
	table := make([]openapi.Route, len(routes))
	var key strings.Builder
	for i, rt := range routes {
		table[i] = openapi.Route{Method: rt.Method, Path: rt.Path, Auth: openapiAuth(rt.Auth)}
		fmt.Fprintf(&key, "%s %s %d\n", rt.Method, rt.Path, rt.Auth)
	}
	for _, r := range s.reg.All() {
		fmt.Fprintf(&key, "%+v\n", *r)
	}
	if f, ok := openapiDocs.Load(key.String()); ok {
		return f.(*openapiFiles)
	}
	doc := openapi.Build(s.reg, table)
	out, err := doc.JSON()
	if err != nil {
		panic(fmt.Sprintf("httpapi: OpenAPI document: %v", err)) // a programming error, seen by every test
	}
	doc30, err := doc.OpenAPI30()
	if err != nil {
		panic(fmt.Sprintf("httpapi: OpenAPI 3.0 document: %v", err))
	}
	out30, err := doc30.JSON()
	if err != nil {
		panic(fmt.Sprintf("httpapi: OpenAPI 3.0 document: %v", err))
	}
	f, _ := openapiDocs.LoadOrStore(key.String(), &openapiFiles{v31: newDocsFile(out), v30: newDocsFile(out30)})
	return f.(*openapiFiles)
}

func openapiAuth(a Auth) openapi.Auth {
	switch a {
	case Tenant:
		return openapi.Tenant
	case Bearer:
		return openapi.Bearer
	}
	return openapi.Public
}

// docsFile is a file of the reference page, gzipped on first demand.
type docsFile struct {
	body []byte
	etag string
	gz   func() []byte
}

func newDocsFile(body []byte) *docsFile {
	sum := sha256.Sum256(body)
	return &docsFile{body: body, etag: `"` + hex.EncodeToString(sum[:12]) + `"`, gz: sync.OnceValue(func() []byte {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		_, _ = zw.Write(body)
		_ = zw.Close()
		return buf.Bytes()
	})}
}

// serve answers with the file, gzipped when the client takes it.
func (f *docsFile) serve(w http.ResponseWriter, r *http.Request, contentType string) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Add("Vary", "Accept-Encoding")
	body, tag := f.body, f.etag
	gz := acceptsGzip(r)
	if gz {
		tag = strings.TrimSuffix(tag, `"`) + `-gzip"` // each representation has its own validator
	}
	h.Set("ETag", tag)
	if r.Header.Get("If-None-Match") == tag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	if gz {
		h.Set("Content-Encoding", "gzip")
		body = f.gz()
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip.
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}

// docsFiles reads the embedded assets once.
var docsFiles = sync.OnceValue(func() map[string]*docsFile {
	entries, err := docsAssets.ReadDir("docsassets")
	if err != nil {
		panic(fmt.Sprintf("httpapi: embedded docs assets: %v", err))
	}
	files := map[string]*docsFile{}
	for _, e := range entries {
		body, err := docsAssets.ReadFile("docsassets/" + e.Name())
		if err != nil {
			panic(fmt.Sprintf("httpapi: embedded docs assets: %v", err))
		}
		files[e.Name()] = newDocsFile(body)
	}
	return files
})

// docsAsset serves an embedded file of the reference page.
func (s *Server) docsAsset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	f, ok := docsFiles()[name]
	if !ok {
		return errs.New(errs.NotFound, "not_found", "no such asset: "+name)
	}
	ct := "text/plain; charset=utf-8"
	if path.Ext(name) == ".js" {
		ct = "text/javascript; charset=utf-8"
	}
	w.Header().Set("Cache-Control", "public, max-age=3600")
	f.serve(w, r, ct)
	return nil
}
