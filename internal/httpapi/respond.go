package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"planwerk/internal/etag"
	"planwerk/internal/jsontext"
	"planwerk/internal/store"
)

// writeJSON encodes v completely before writing the status, so an encoding
// failure can still become a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := jsontext.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":"internal_error","message":"internal server error"}` + "\n")
	}
	writeRawJSON(w, status, buf.Bytes())
}

// writeRawJSON writes an already encoded JSON body.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentTypeValues
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// jsonContentTypeValues is the Content-Type of JSON answers, one value shared
// by all of them rather than a slice made for each. Its capacity is its
// length, so a handler that adds a value appends to a copy.
var jsonContentTypeValues = []string{jsonContentType}

// writeRecord writes an answer that carries one record, with its entity
// tag (the one stored with it, see store.Record.Tag). A GET whose
// If-None-Match names the tag gets 304 without the body.
func writeRecord(w http.ResponseWriter, r *http.Request, status int, rec store.Record) {
	tag, doc := rec.Tag(), rec.Doc
	w.Header().Set("ETag", tag)
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		if etag.NoneMatch(r.Header.Get("If-None-Match"), tag) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	h := w.Header()
	h["Content-Type"] = jsonContentTypeValues
	h.Set("Content-Length", strconv.Itoa(len(doc)+1))
	w.WriteHeader(status)
	// The document as read, then its newline: no copy of it to append to.
	if _, err := w.Write(doc); err == nil {
		_, _ = w.Write(newline)
	}
}

var newline = []byte{'\n'}

// writeRecordJSON is writeRecord for a value encoded here.
func writeRecordJSON(w http.ResponseWriter, r *http.Request, status int, v any) {
	b, err := jsontext.Marshal(v)
	if err != nil {
		writeJSON(w, http.StatusInternalServerError, map[string]string{"code": "internal_error", "message": "internal server error"})
		return
	}
	writeRecord(w, r, status, store.Record{Doc: b})
}
