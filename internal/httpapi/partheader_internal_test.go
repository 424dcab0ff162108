package httpapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"strings"
	"testing"
	"testing/iotest"
)

// parsed is what a multipart.Reader makes of a body: each part's header
// and content, and how the parts ended.
type parsed struct {
	parts []string
	// minHeader is, per part, the fewest bytes its header block can have
	// had: "Key:value\n" per value and the empty line "\n".
	minHeader []int
	end       error
}

// parseParts reads every part of body with boundary, through a
// partHeaderLimit of max bytes when max > 0; oneByte feeds the limit one
// byte per read.
func parseParts(body []byte, boundary string, max int, oneByte bool) parsed {
	var r io.Reader = bytes.NewReader(body)
	if oneByte {
		r = iotest.OneByteReader(r)
	}
	var l *partHeaderLimit
	if max > 0 {
		l = newPartHeaderLimit(r, boundary)
		l.max = max
		r = l
	}
	mr := multipart.NewReader(r, boundary)
	var out parsed
	end := func(err error) parsed {
		out.end = err
		if l != nil && l.exceeded() {
			out.end = errPartHeader
		}
		return out
	}
	for {
		part, err := mr.NextRawPart()
		if err != nil {
			return end(err)
		}
		n := 1
		for k, vs := range part.Header {
			for _, v := range vs {
				n += len(k) + 1 + len(v) + 1
			}
		}
		content, err := io.ReadAll(part)
		out.parts = append(out.parts, fmt.Sprintf("%v %q", part.Header, content))
		out.minHeader = append(out.minHeader, n)
		if err != nil {
			return end(err)
		}
	}
}

// samePartsOr checks the limit's part in reading body: the parts are
// those the reader makes of it without the limit, until the limit stops
// it with errPartHeader; and it stops it wherever a part's header block
// must have been longer than max.
func samePartsOr(t *testing.T, body []byte, boundary string, max int) (limited bool) {
	t.Helper()
	plain := parseParts(body, boundary, 0, false)
	for _, oneByte := range []bool{false, true} {
		got := parseParts(body, boundary, max, oneByte)
		limited = errors.Is(got.end, errPartHeader)
		n := len(got.parts)
		if n > len(plain.parts) || fmt.Sprint(got.parts) != fmt.Sprint(plain.parts[:n]) {
			t.Fatalf("%q (one byte per read %v): parts %q, without the limit %q", body, oneByte, got.parts, plain.parts)
		}
		if !limited && (n != len(plain.parts) || fmt.Sprint(got.end) != fmt.Sprint(plain.end)) {
			t.Fatalf("%q (one byte per read %v): parts end with %v after %d, without the limit %v after %d", body, oneByte, got.end, n, plain.end, len(plain.parts))
		}
		for i, size := range plain.minHeader {
			if size > max && i >= n && !limited {
				t.Fatalf("%q (one byte per read %v): part %d has a header of %d bytes or more, over %d, and passed", body, oneByte, i, size, max)
			}
		}
	}
	return limited
}

// TestPartHeaderLimit: the limit finds header blocks as multipart.Reader
// does (CRLF or LF lines, spaces after the delimiter, a preamble, a part
// whose content is empty or holds lines like delimiters) and stops a
// block past the limit, however the body arrives.
func TestPartHeaderLimit(t *testing.T) {
	t.Parallel()
	const b = "bnd"
	pad := func(n int) string { return "X-Pad: " + strings.Repeat("p", n) }
	for _, c := range []struct {
		name    string
		body    string
		max     int
		limited bool
	}{
		{"CRLF, under", "--bnd\r\n" + pad(20) + "\r\n\r\nx\r\n--bnd--\r\n", 40, false},
		{"CRLF, exactly at the limit", "--bnd\r\n" + pad(21) + "\r\n\r\nx\r\n--bnd--\r\n", 32, false},
		{"CRLF, one over", "--bnd\r\n" + pad(21) + "\r\n\r\nx\r\n--bnd--\r\n", 31, true},
		{"LF lines", "--bnd\n" + pad(40) + "\n\nx\n--bnd--\n", 30, true},
		{"spaces after the delimiter", "--bnd \t \r\n" + pad(40) + "\r\n\r\nx\r\n--bnd--\r\n", 30, true},
		{"after a preamble", "preamble\r\n--bndx\r\n--bnd\r\n" + pad(40) + "\r\n\r\nx\r\n--bnd--\r\n", 30, true},
		{"second part", "--bnd\r\nA: 1\r\n\r\nx\r\n--bnd\r\n" + pad(40) + "\r\n\r\ny\r\n--bnd--\r\n", 30, true},
		{"after an empty part", "--bnd\r\nA: 1\r\n\r\n--bnd\r\n" + pad(40) + "\r\n\r\ny\r\n--bnd--\r\n", 30, true},
		{"content like a delimiter", "--bnd\r\nA: 1\r\n\r\n--bndx\r\n" + strings.Repeat("c", 60) + "\r\n--bnd--\r\n", 30, false},
		{"many short lines", "--bnd\r\n" + strings.Repeat("A: 1\r\n", 8) + "\r\nx\r\n--bnd--\r\n", 30, true},
		{"after the closing delimiter", "--bnd\r\nA: 1\r\n\r\nx\r\n--bnd--\r\n--bnd\r\n" + pad(40) + "\r\n", 30, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := samePartsOr(t, []byte(c.body), b, c.max); got != c.limited {
				t.Errorf("limited %v, want %v", got, c.limited)
			}
		})
	}
}

// FuzzPartHeaderLimit holds the limit to multipart.Reader on any body:
// the parts are the same until the limit stops the body, and it stops
// every body with a header block past the limit.
func FuzzPartHeaderLimit(f *testing.F) {
	for _, seed := range []string{
		"--b\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\ndata\r\n--b--\r\n",
		"--b\nA: 1\nB: 2\n\nx\n--b\nC: 333333333333333333333333333333333\n\ny\n--b--\n",
		"pre\r\n--b  \r\nA: 1\r\n  folded\r\n\r\n\r\n--b\r\n\r\n--b--",
		"--b\r\nA: 1\r\n\r\n\r\n--bx\r\n--b\r\nB: " + strings.Repeat("v", 70) + "\r\n\r\n--b--\r\n",
		"--b\r\n\r\r\n\r\n--b--\r\n",
		"--b\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\na=3Db\r\n--b--\r\n",
	} {
		f.Add([]byte(seed), uint8(48))
	}
	f.Fuzz(func(t *testing.T, body []byte, max uint8) {
		samePartsOr(t, body, "b", int(max)+1)
	})
}
