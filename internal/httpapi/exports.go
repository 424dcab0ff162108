package httpapi

import (
	"net/http"
	"strconv"
	"time"
)

// exportRoutes registers the account exports' endpoints (admins only),
// and the target of their signed download links.
func (s *Server) exportRoutes() {
	if s.exports == nil {
		return
	}
	s.data("POST /v1/account/exports", s.startExport)
	s.data("GET /v1/account/exports/{id}", s.getExport)
	s.route("GET /v1/account/exports/{id}/archive", Public, s.handle(s.exportArchive))
}

func (s *Server) startExport(w http.ResponseWriter, r *http.Request) error {
	e, err := s.exports.Start(r.Context(), principalOf(r))
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/account/exports/"+strconv.FormatInt(e.ID, 10))
	writeJSON(w, http.StatusAccepted, e)
	return nil
}

func (s *Server) getExport(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt(r, "id")
	if err != nil {
		return err
	}
	e, err := s.exports.Get(r.Context(), principalOf(r), id, s.baseURL(r))
	if err != nil {
		return err
	}
	// The link in it is fresh on each GET.
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, e)
	return nil
}

func (s *Server) exportArchive(w http.ResponseWriter, r *http.Request) error {
	id, err := pathInt(r, "id")
	if err != nil {
		return err
	}
	f, size, err := s.exports.Archive(r.Context(), id, r.URL.Query())
	if err != nil {
		return err
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", "application/zstd")
	h.Set("Content-Disposition", `attachment; filename="export-`+strconv.FormatInt(id, 10)+`.tar.zst"`)
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	file := &storedFile{ReadSeeker: f}
	http.ServeContent(&blobWriter{ResponseWriter: w}, byteRange(r, size), "", time.Time{}, file)
	if file.err != nil {
		s.log.WarnContext(r.Context(), "export download interrupted", "export_id", id, "err", file.err)
	}
	return nil
}
