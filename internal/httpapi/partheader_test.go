package httpapi_test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"planwerk/internal/testenv"
)

// headerPart is a multipart/form-data body whose first part is the file,
// its header block padded by an X-Pad header line to pad bytes in all:
// the header lines up to and including the empty line that ends them.
// before, if set, is a part named "note" sent ahead of the file, padded
// instead.
func headerPart(pad int, before bool) (string, []byte) {
	const boundary = "part-header-boundary"
	file := "Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n"
	note := "Content-Disposition: form-data; name=\"note\"\r\n"
	padded := file
	if before {
		padded = note
	}
	// "X-Pad: " + value + "\r\n", then the empty line "\r\n".
	fill := pad - len(padded) - len("X-Pad: \r\n") - len("\r\n")
	padded += "X-Pad: " + strings.Repeat("p", max(fill, 0)) + "\r\n"
	var b bytes.Buffer
	if before {
		fmt.Fprintf(&b, "--%s\r\n%s\r\nnote text\r\n", boundary, padded)
		fmt.Fprintf(&b, "--%s\r\n%s\r\nfile text\r\n", boundary, file)
	} else {
		fmt.Fprintf(&b, "--%s\r\n%s\r\nfile text\r\n", boundary, padded)
	}
	fmt.Fprintf(&b, "--%s--\r\n", boundary)
	return "multipart/form-data; boundary=" + boundary, b.Bytes()
}

// TestPartHeaderCap: the header block of a multipart part is at most 16
// KiB. A file part or another part ahead of it with a 17 KiB header block
// is refused with 400 invalid_upload, saying so, and stores nothing; 15
// KiB is fine. With an Idempotency-Key too, whose fingerprint reads the
// parts on its own.
func TestPartHeaderCap(t *testing.T) {
	t.Parallel()
	testenv.Each(t, func(t *testing.T, b testenv.Backend) {
		srv := testenv.Start(t, b)
		a := srv.SignIn(t, srv.CreateTenant(t, "acme"))
		for _, key := range []string{"", "with-key"} {
			for _, before := range []bool{false, true} {
				name := fmt.Sprintf("key %q, padded part ahead of the file %v", key, before)
				t.Run(name, func(t *testing.T) {
					_, doc := a.Document(t)
					path := testenv.UploadPath("document", doc, false)
					send := func(pad int, key string) (int, []byte) {
						ct, body := headerPart(pad, before)
						c := a
						if key != "" {
							c = keyed(a, key)
						}
						req := c.Request(t, http.MethodPost, path, body)
						req.Header.Set("Content-Type", ct)
						status, _, raw := testenv.Do(t, req)
						return status, raw
					}
					k17, k15 := "", ""
					if key != "" {
						k17, k15 = fmt.Sprintf("%s-17-%v", key, before), fmt.Sprintf("%s-15-%v", key, before)
					}
					status, raw := send(17<<10, k17)
					e := testenv.WantError(t, "17 KiB part header", status, raw, http.StatusBadRequest, "invalid_upload")
					if msg, _ := e["message"].(string); !strings.Contains(msg, "header") || !strings.Contains(msg, "16384") {
						t.Errorf("message %q does not say the part header is over 16384 bytes", msg)
					}
					if got := a.List(t, fmt.Sprintf("/v1/files/document/%d", doc)); len(got) != 0 {
						t.Fatalf("uploads after the refusal: %v", got)
					}
					if status, raw := send(15<<10, k15); status != http.StatusCreated {
						t.Fatalf("15 KiB part header: %d %s", status, raw)
					}
				})
			}
		}
	})
}
