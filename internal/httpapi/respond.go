package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// writeJSON encodes v completely before writing the status, so an encoding
// failure can still become a clean 500.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		buf.WriteString(`{"code":"internal_error","message":"internal server error"}` + "\n")
	}
	writeRawJSON(w, status, buf.Bytes())
}

// writeRawJSON writes an already encoded JSON body.
func writeRawJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
