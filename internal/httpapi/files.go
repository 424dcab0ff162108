package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"math"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"planwerk/internal/errs"
	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// fileRoutes registers the upload endpoints of docs/api.md "Files and
// uploads".
func (s *Server) fileRoutes() {
	s.data("POST /v1/files/upload/{model}/{record}", s.upload)
	s.data("GET /v1/files/{model}/{record}", s.listUploads)
	s.data("GET /v1/files/download/{uploadId}", s.downloadURL)
	s.data("DELETE /v1/files/{uploadId}", s.deleteUpload)
	// Signed download links are fetched without tenant header or token:
	// the signature is the credential.
	s.route("GET /v1/files/blob/{uploadId}", Public, s.handle(s.blob))
}

func pathInt(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id <= 0 {
		return 0, errs.New(errs.NotFound, "not_found", "no such record: ids are positive integers")
	}
	return id, nil
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) error {
	caller := principalOf(r)
	p, err := s.files.Limit(r.Context(), caller)
	setRateLimit(w.Header(), p)
	if err != nil {
		return err
	}
	record, err := pathInt(r, "record")
	if err != nil {
		return err
	}
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" {
		return errs.New(errs.Invalid, "invalid_upload", "send multipart/form-data with one part named file")
	}
	if !cleanText(r.Header.Get("Content-Type")) {
		return uncleanUpload("the Content-Type header")
	}
	replace := r.URL.Query().Get("delete_others")
	next := func() (*files.Part, error) {
		boundary, ok := multipartBoundary(r.Header.Get("Content-Type"))
		if !ok {
			return nil, errs.New(errs.Invalid, "invalid_upload", "send multipart/form-data with one part named file")
		}
		limit := newPartHeaderLimit(r.Body, boundary)
		mr := multipart.NewReader(limit, boundary)
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body has no part named file")
			}
			if err != nil {
				var mbe *http.MaxBytesError
				switch {
				case limit.exceeded():
					return nil, errPartHeader
				case errors.As(err, &mbe):
					return nil, err
				}
				return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body cannot be read: "+err.Error())
			}
			if part.FormName() != "file" {
				if _, err := io.Copy(io.Discard, part); err != nil {
					if limit.exceeded() {
						return nil, errPartHeader
					}
					return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body cannot be read")
				}
				continue
			}
			filename, ct, err := partText(part)
			if err != nil {
				return nil, err
			}
			if ct == "" {
				ct = "application/octet-stream"
			}
			return &files.Part{Filename: filename, ContentType: ct, Body: part}, nil
		}
	}
	up, err := s.files.Upload(r.Context(), caller, infoFrom(r.Context()).tenant, r.PathValue("model"), record,
		replace == "1" || strings.EqualFold(replace, "true"), next)
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusCreated, up)
	return nil
}

// multipartBoundary is the boundary of a multipart Content-Type.
func multipartBoundary(contentType string) (string, bool) {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return "", false
	}
	return params["boundary"], true
}

// maxPartHeader caps the header block of each part of a multipart body:
// its header lines and the empty line that ends them.
const maxPartHeader = 16 << 10

var errPartHeader = errs.New(errs.Invalid, "invalid_upload",
	"a part's header is larger than "+strconv.Itoa(maxPartHeader)+" bytes (its header lines and the empty line that ends them); send shorter part headers")

// partHeaderLimit passes a multipart body through and stops it with
// errPartHeader where the header block of a part grows past
// maxPartHeader. mime/multipart reads a part's header block whole, up to
// 10 MiB, before it hands out the part: the limit must stop it before it
// has buffered more. It follows the framing as multipart.Reader reads it:
// a header block follows a delimiter line ("--", the boundary, optional
// spaces and tabs, and the line end of the first delimiter line, CRLF or
// LF) and ends with an empty line. A delimiter line starts the body's
// first part wherever a line starts, the others after the line end of the
// first (CRLF: not after a bare LF) or right where a part's content
// starts. Lines after the closing delimiter are taken for parts too,
// which the reader never reads.
type partHeaderLimit struct {
	r     io.Reader
	delim []byte // "--" + boundary
	max   int    // maxPartHeader but in tests
	state int
	// nl is the line end of delimiter lines: 0 before the first one,
	// then '\r' (CRLF) or '\n' (LF).
	nl byte
	// prev is the last byte of the previous Read.
	prev byte
	// matched: bytes of delim matched at the start of the line (inDelim);
	// block: bytes of the header block so far, line: of its current
	// line, cr: the line is a lone CR so far (inHeader).
	matched, block, line int
	cr                   bool
	err                  error
}

// The states of partHeaderLimit.
const (
	inDelim    = iota // at the start of a line, which may be a delimiter line
	inLine            // within a line that is no delimiter line
	afterDelim        // after "--" and the boundary: spaces, tabs, then the line end
	afterCR           // a CR after the delimiter: an LF must follow
	inHeader          // within a header block
)

func newPartHeaderLimit(r io.Reader, boundary string) *partHeaderLimit {
	return &partHeaderLimit{r: r, delim: []byte("--" + boundary), max: maxPartHeader}
}

// exceeded reports whether the limit has stopped the body. The reader
// reading through it may fail with an error of its own then: the limit
// cuts a header line short.
func (l *partHeaderLimit) exceeded() bool { return l.err == errPartHeader }

func (l *partHeaderLimit) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	// before is the byte before p[i].
	before := func(i int) byte {
		if i == 0 {
			return l.prev
		}
		return p[i-1]
	}
	for i := 0; i < n; i++ {
		c := p[i]
		switch l.state {
		case inLine:
			j := bytes.IndexByte(p[i:n], '\n')
			if j < 0 {
				i = n
				continue
			}
			i += j
			l.lineStart(before(i) == '\r', false)
		case inDelim:
			switch {
			case c == l.delim[l.matched]:
				l.matched++
				if l.matched == len(l.delim) {
					l.state = afterDelim
				}
			case c == '\n':
				l.lineStart(before(i) == '\r', false)
			default:
				l.state = inLine
			}
		case afterDelim:
			switch {
			case c == ' ' || c == '\t':
			case c == '\r' && l.nl != '\n':
				l.state = afterCR
			case c == '\n' && l.nl != '\r':
				l.nl = '\n'
				l.state, l.block, l.line = inHeader, 0, 0
			default:
				l.state = inLine // the closing delimiter, or no delimiter line
			}
		case afterCR:
			if c == '\n' {
				l.nl = '\r'
				l.state, l.block, l.line = inHeader, 0, 0
			} else {
				l.state = inLine
			}
		case inHeader:
			l.block++
			if l.block > l.max {
				l.err = errPartHeader
				return i, l.err
			}
			if c != '\n' {
				l.cr = l.line == 0 && c == '\r'
				l.line++
				continue
			}
			if l.line == 0 || l.line == 1 && l.cr {
				l.lineStart(true, true) // the empty line: the part's content follows
			}
			l.line, l.cr = 0, false
		}
	}
	if n > 0 {
		l.prev = p[n-1]
	}
	return n, err
}

// lineStart starts a line after an LF: crlf, the LF ended a CRLF;
// content, the line is the first of a part's content. The line may be a
// delimiter line before the first delimiter line, at the start of a part's
// content, and after the line end of the first.
func (l *partHeaderLimit) lineStart(crlf, content bool) {
	l.matched = 0
	if l.nl == 0 || content || l.nl == '\n' || crlf {
		l.state = inDelim
	} else {
		l.state = inLine
	}
}

// partText is the filename and the Content-Type of the file part, which
// an upload keeps: each must be UTF-8 text without NUL, the filename once
// decoded too (RFC 2231 lets "filename*" spell any byte). mime/multipart
// takes header bytes from 0x80 up as they come.
func partText(part *multipart.Part) (filename, contentType string, err error) {
	contentType = part.Header.Get("Content-Type")
	if !cleanText(contentType) {
		return "", "", uncleanUpload("the file part's Content-Type")
	}
	if !cleanText(part.Header.Get("Content-Disposition")) {
		return "", "", uncleanUpload("the file part's Content-Disposition")
	}
	filename = partFilename(part)
	if !cleanText(filename) {
		return "", "", uncleanUpload("the file part's filename, once decoded,")
	}
	return filename, contentType, nil
}

func uncleanUpload(what string) error {
	return errs.New(errs.Invalid, "invalid_upload", what+" is not UTF-8 text without NUL characters")
}

// partFilename is the filename of a part exactly as the client sent it.
// multipart.Part.FileName strips directories with filepath.Base, which
// differs by platform and drops letters a stored filename keeps ("a/b.txt"
// would lose the "a"); files.Sanitize removes the separators instead.
func partFilename(part *multipart.Part) string {
	_, params, err := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
	if err != nil {
		return ""
	}
	return params["filename"]
}

func (s *Server) listUploads(w http.ResponseWriter, r *http.Request) error {
	record, err := pathInt(r, "record")
	if err != nil {
		return err
	}
	ups, err := s.files.List(r.Context(), principalOf(r), r.PathValue("model"), record)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, ups)
	return nil
}

func (s *Server) downloadURL(w http.ResponseWriter, r *http.Request) error {
	caller := principalOf(r)
	p, err := s.files.Limit(r.Context(), caller)
	setRateLimit(w.Header(), p)
	if err != nil {
		return err
	}
	id, err := pathInt(r, "uploadId")
	if err != nil {
		return err
	}
	u, err := s.files.DownloadURL(r.Context(), caller, id, s.baseURL(r))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, u)
	return nil
}

// baseURL is --public-url, or the host the request came in on when that
// is the base domain or one of its tenant hosts. Any other Host header is
// the client's to choose, so links then point at the base domain, on the
// port the request reached.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return strings.TrimRight(s.cfg.PublicURL, "/")
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if s.ownHost(r.Host) {
		return scheme + "://" + strings.ToLower(r.Host)
	}
	host := s.cfg.BaseDomain
	if addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		if _, port, err := net.SplitHostPort(addr.String()); err == nil {
			host = net.JoinHostPort(host, port)
		}
	}
	return scheme + "://" + host
}

// ownHost reports whether host (with an optional port) is the base domain
// or a tenant host of it.
func (s *Server) ownHost(host string) bool {
	name := host
	if h, port, err := net.SplitHostPort(host); err == nil {
		if _, err := strconv.ParseUint(port, 10, 16); err != nil {
			return false
		}
		name = h
	}
	if strings.EqualFold(strings.TrimSuffix(name, "."), s.cfg.BaseDomain) {
		return true
	}
	_, ok := tenancy.SlugFromHost(host, s.cfg.BaseDomain)
	return ok
}

func (s *Server) deleteUpload(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt(r, "uploadId")
	if err != nil {
		return err
	}
	up, err := s.files.Delete(r.Context(), principalOf(r), id, r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	writeRecordJSON(w, r, http.StatusOK, up)
	return nil
}

// blob answers a signed download link: the whole file, or one byte range
// of it (206, RFC 9110), with HEAD answering the same headers without the
// body. http.ServeContent handles the conditional requests (If-Range,
// If-None-Match and the like) against the upload's ETag and
// Last-Modified; byteRange decides which Range headers it sees.
func (s *Server) blob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt(r, "uploadId")
	if err != nil {
		return err
	}
	up, f, size, err := s.files.Blob(r.Context(), id, r.URL.Query())
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", up.ContentType)
	h.Set("Content-Disposition", contentDisposition(up))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// Whatever the file is, a browser that opens it runs nothing of it
	// with the service's origin.
	h.Set("Content-Security-Policy", "sandbox")
	// The bytes of an upload never change: a replacement is a new upload.
	h.Set("ETag", uploadETag(up))
	modified, _ := time.Parse(store.TimeFormat, up.CreatedAt)
	file := &storedFile{ReadSeeker: f}
	http.ServeContent(&blobWriter{ResponseWriter: w}, byteRange(r, size), "", modified, file)
	if file.err != nil {
		s.log.WarnContext(r.Context(), "download interrupted", "upload_id", id, "err", file.err)
	}
	return nil
}

// uploadETag is a strong entity tag of an upload's bytes, derived from
// its storage key (unique per stored file) without showing it.
func uploadETag(up files.Upload) string {
	sum := sha256.Sum256([]byte(up.StorageKey))
	return `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`
}

// storedFile remembers the first error of reading or seeking a stored
// file, which http.ServeContent does not report.
type storedFile struct {
	io.ReadSeeker
	err error
}

func (f *storedFile) Read(p []byte) (int, error) {
	n, err := f.ReadSeeker.Read(p)
	if err != nil && err != io.EOF && f.err == nil {
		f.err = err
	}
	return n, err
}

func (f *storedFile) Seek(offset int64, whence int) (int64, error) {
	n, err := f.ReadSeeker.Seek(offset, whence)
	if err != nil && f.err == nil {
		f.err = err
	}
	return n, err
}

// blobWriter keeps the headers of a download on every answer and gives
// the refusals of http.ServeContent (412, 416, 500), which it writes as
// plain text, the service's JSON error body.
type blobWriter struct {
	http.ResponseWriter
	refused bool
}

// downloadRefusals are the answers http.ServeContent refuses with.
var downloadRefusals = map[int]errorBody{
	http.StatusPreconditionFailed: {Code: "precondition_failed",
		Message: "a precondition (If-Match or If-Unmodified-Since) does not hold for this file"},
	http.StatusRequestedRangeNotSatisfiable: {Code: "range_not_satisfiable",
		Message: "the range starts past the end of the file; Content-Range gives its size"},
}

func (w *blobWriter) WriteHeader(status int) {
	if status < 400 {
		w.ResponseWriter.WriteHeader(status)
		return
	}
	w.refused = true
	body, ok := downloadRefusals[status]
	if !ok {
		body = errorBody{Code: errInternal.Code, Message: errInternal.Message}
	}
	// http.ServeContent drops these on its refusals.
	w.Header().Set("Cache-Control", "private, no-store")
	writeJSON(w.ResponseWriter, status, body)
}

func (w *blobWriter) Write(p []byte) (int, error) {
	if w.refused {
		return len(p), nil // http.ServeContent's plain-text body
	}
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *blobWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// byteRange returns the request http.ServeContent answers, for a file of
// size bytes. A GET's Range header asking for one byte range is kept, in
// net/http's spelling; any other is dropped and the whole file is sent
// (RFC 9110 §14.2 lets a server ignore Range): on HEAD (range handling is
// defined for GET only), with a unit other than bytes, when malformed,
// on an empty file, and when it asks for several ranges at once (no
// multipart/byteranges answers; S3 sends whole files for them too).
func byteRange(r *http.Request, size int64) *http.Request {
	values := r.Header.Values("Range")
	if len(values) == 0 {
		return r
	}
	spec := ""
	if r.Method == http.MethodGet && len(values) == 1 && size > 0 {
		spec = singleRange(values[0], size)
	}
	r = r.Clone(r.Context())
	if spec == "" {
		r.Header.Del("Range")
	} else {
		r.Header.Set("Range", "bytes="+spec)
	}
	return r
}

// singleRange parses a Range header of one byte range (RFC 9110 §14.1.2)
// and returns it for net/http, which answers "first-" past the end with
// 416: so is sent a suffix of zero bytes, which RFC 9110 counts as
// unsatisfiable and net/http would answer with an empty 206. Positions
// too big for int64 are clamped. "" means: not one byte range.
func singleRange(header string, size int64) string {
	unit, set, ok := strings.Cut(header, "=")
	if !ok || !strings.EqualFold(unit, "bytes") {
		return ""
	}
	var one string
	for _, el := range strings.Split(set, ",") {
		el = strings.Trim(el, " \t")
		if el == "" {
			continue
		}
		if one != "" {
			return "" // several ranges
		}
		one = el
	}
	first, last, ok := strings.Cut(one, "-")
	if !ok {
		return ""
	}
	if first == "" {
		n, ok := position(last)
		switch {
		case !ok:
			return ""
		case n == 0:
			return strconv.FormatInt(size, 10) + "-"
		}
		return "-" + strconv.FormatInt(min(n, size), 10)
	}
	from, ok := position(first)
	if !ok {
		return ""
	}
	if last == "" {
		return strconv.FormatInt(from, 10) + "-"
	}
	to, ok := position(last)
	if !ok || to < from {
		return ""
	}
	return strconv.FormatInt(from, 10) + "-" + strconv.FormatInt(min(to, size-1), 10)
}

// position parses the digits of a byte position, saturating at the
// largest int64.
func position(s string) (int64, bool) {
	if s == "" || strings.Trim(s, "0123456789") != "" {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return math.MaxInt64, true // only digits: too big
	}
	return n, true
}

func contentDisposition(up files.Upload) string { return filestore.ContentDisposition(up.Filename) }
