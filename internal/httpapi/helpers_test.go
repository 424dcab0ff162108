package httpapi_test

import (
	"bytes"
	"mime/multipart"
	"net"
	"testing"

	"planwerk/internal/testenv"
)

// dial opens a connection of its own to the server, closed when the
// test ends: for clients that read, or send, at the pace the test chooses.
func dial(t *testing.T, srv *testenv.Server) net.Conn {
	t.Helper()
	conn, err := net.Dial("tcp", srv.HTTP.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// uploadBody is a multipart body with one file part.
func uploadBody(t *testing.T, data []byte) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile("file", "f.bin")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	mw.Close()
	return mw.FormDataContentType(), &buf
}
