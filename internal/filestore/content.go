package filestore

import (
	"mime"
	"strings"
)

// octetStream is the content type of bytes that a browser only saves.
const octetStream = "application/octet-stream"

// ActiveContent reports whether a browser sent contentType would render
// the file as a document or run it as a script: HTML and XML (which may
// carry script or style sheets that do), SVG, JavaScript and the like. A
// type that cannot be parsed counts as active, since a browser may then
// guess; an empty one does not (the file goes out as octetStream).
func ActiveContent(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return true
	}
	typ, sub, _ := strings.Cut(mt, "/")
	switch {
	case strings.Contains(sub, "html"), sub == "xml", strings.HasSuffix(sub, "+xml"),
		strings.Contains(sub, "javascript"), strings.Contains(sub, "ecmascript"),
		strings.Contains(sub, "jscript"), strings.Contains(sub, "livescript"):
		return true
	case typ == "text" && (sub == "xsl" || sub == "vnd.wap.wml"):
		return true
	case typ == "multipart" && sub == "x-mixed-replace":
		return true
	case mt == "application/x-shockwave-flash", mt == "application/futuresplash":
		return true
	}
	return false
}

// servedType is the content type a download from the store's own URLs
// answers with: the upload's type, normalised, unless a browser would
// render or run it.
func servedType(contentType string) string {
	if contentType == "" || ActiveContent(contentType) {
		return octetStream
	}
	mt, params, _ := mime.ParseMediaType(contentType)
	if v := mime.FormatMediaType(mt, params); v != "" {
		return v
	}
	return octetStream
}
