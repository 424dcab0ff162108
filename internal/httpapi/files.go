package httpapi

import (
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"planwerk/internal/errs"
	"strconv"
	"strings"

	"planwerk/internal/files"
	"planwerk/internal/filestore"
	"planwerk/internal/store"
	"planwerk/internal/tenancy"
)

// fileRoutes registers the upload endpoints of CONTRACT.md "Files".
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
	if err := s.files.Limit(r.Context(), caller); err != nil {
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
	replace := r.URL.Query().Get("delete_others")
	next := func() (*files.Part, error) {
		mr, err := r.MultipartReader()
		if err != nil {
			return nil, errs.New(errs.Invalid, "invalid_upload", "send multipart/form-data with one part named file")
		}
		for {
			part, err := mr.NextPart()
			if errors.Is(err, io.EOF) {
				return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body has no part named file")
			}
			if err != nil {
				var mbe *http.MaxBytesError
				if errors.As(err, &mbe) {
					return nil, err
				}
				return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body cannot be read: "+err.Error())
			}
			if part.FormName() != "file" {
				if _, err := io.Copy(io.Discard, part); err != nil {
					return nil, errs.New(errs.Invalid, "invalid_upload", "the multipart body cannot be read")
				}
				continue
			}
			ct := part.Header.Get("Content-Type")
			if ct == "" {
				ct = "application/octet-stream"
			}
			return &files.Part{Filename: partFilename(part), ContentType: ct, Body: part}, nil
		}
	}
	up, err := s.files.Upload(r.Context(), caller, infoFrom(r.Context()).tenant, r.PathValue("model"), record,
		replace == "1" || strings.EqualFold(replace, "true"), next)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, up)
	return nil
}

// partFilename is the filename of a part exactly as the client sent it.
// multipart.Part.FileName strips directories with filepath.Base, which
// differs by platform and drops letters SPEC.md says to keep ("a/b.txt"
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
	if err := s.files.Limit(r.Context(), caller); err != nil {
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
	up, err := s.files.Delete(r.Context(), principalOf(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, up)
	return nil
}

func (s *Server) blob(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt(r, "uploadId")
	if err != nil {
		return err
	}
	up, rc, size, err := s.files.Blob(r.Context(), id, r.URL.Query())
	if err != nil {
		return err
	}
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", up.ContentType)
	h.Set("Content-Length", strconv.FormatInt(size, 10))
	h.Set("Content-Disposition", contentDisposition(up))
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	// Whatever the file is, a browser that opens it runs nothing of it
	// with the service's origin.
	h.Set("Content-Security-Policy", "sandbox")
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := io.Copy(w, rc); err != nil {
		s.log.WarnContext(r.Context(), "download interrupted", "upload_id", id, "err", err)
	}
	return nil
}

func contentDisposition(up store.Upload) string { return filestore.ContentDisposition(up.Filename) }
