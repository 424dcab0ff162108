package httpapi

import (
	"net/http"
	"strings"

	"github.com/klauspost/compress/gzhttp"
)

// compressMinSize: smaller answers are sent as they are; compressing them
// saves less than it costs.
const compressMinSize = 1 << 10

// compress encodes answers of compressMinSize bytes or more with gzip or
// zstd, as the client's Accept-Encoding asks, while the handler writes
// them: a streamed list stays streamed, through a compressor that holds
// a window, not the answer. Downloads are sent as stored, so that Range
// requests and their Content-Length stay exact; /metrics compresses
// itself. Answers that are already encoded (the reference's files) or
// of compressed media types (XLSX workbooks too) pass through.
func (s *Server) compress(next http.Handler) http.Handler {
	// An XLSX workbook is a zip archive already.
	wrap, err := gzhttp.NewWrapper(gzhttp.MinSize(compressMinSize), gzhttp.ContentTypeFilter(func(ct string) bool {
		return gzhttp.DefaultContentTypeFilter(ct) && !strings.HasPrefix(ct, xlsxMedia)
	}))
	if err != nil {
		panic("httpapi: compression: " + err.Error()) // fixed options: a programming error
	}
	gz := wrap(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" || strings.HasPrefix(r.URL.Path, "/v1/files/blob/") {
			next.ServeHTTP(w, r)
			return
		}
		if _, asks := r.Header["Accept-Encoding"]; !asks {
			// Nothing to negotiate: the answer goes out as it is, saying
			// that it would differ for a client that asked.
			w.Header().Add("Vary", "Accept-Encoding")
			next.ServeHTTP(w, r)
			return
		}
		gz.ServeHTTP(w, r)
	})
}
